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
