// Footer newsletter form and the unsubscribe landing page.

import { api } from "./api/client";

export async function subscribe(email: string, source: "footer" | "checkout" | "popup" = "footer"): Promise<string> {
  await api.post("/newsletter", { email, source });
  return "Check your inbox and confirm your subscription.";
}

export async function unsubscribeFromLink(url: string): Promise<string> {
  const params = new URL(url).searchParams;
  const email = params.get("email");
  const sig = params.get("sig");
  if (!email || !sig) return "This unsubscribe link is incomplete.";
  await api.get(`/newsletter/unsubscribe?email=${encodeURIComponent(email)}&sig=${sig}`);
  return "You will not receive marketing emails any more.";
}

export type Topic = "new_arrivals" | "sales" | "seller_spotlights";

export interface Preferences {
  topics: Topic[];
  frequency: "weekly" | "monthly";
}

export function isLikelyEmail(value: string): boolean {
  return /^[^@\s]+@[^@\s]+\.[^@\s]{2,}$/.test(value.trim());
}

// Preference centre: fewer topics instead of unsubscribing altogether.
export async function savePreferences(email: string, sig: string, prefs: Preferences): Promise<void> {
  if (prefs.topics.length === 0) throw new Error("Choose at least one topic, or unsubscribe instead.");
  await api.put(`/newsletter/preferences?email=${encodeURIComponent(email)}&sig=${sig}`, prefs);
}
