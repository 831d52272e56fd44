// Forgotten password: request a link by email, then choose a new password from the link.

import { api, ApiRequestError } from "../api/client";
import { passwordProblems } from "../account";

export async function requestResetLink(email: string): Promise<string> {
  await api.post("/password/forgot", { email });
  // Same answer whether or not the address exists, so the form cannot be used to find accounts.
  return "If an account exists for that address, we have emailed a link. It is valid for one hour.";
}

export function tokenFromUrl(url: string): string | null {
  return new URL(url).searchParams.get("token");
}

export async function setNewPassword(token: string, password: string, repeat: string): Promise<string> {
  if (password !== repeat) throw new Error("The passwords do not match.");
  const problems = passwordProblems(password);
  if (problems.length) throw new Error(problems.join(" "));
  try {
    await api.post("/password/reset", { token, password });
    return "Your password was changed. You can sign in now.";
  } catch (err) {
    if (err instanceof ApiRequestError && err.status === 403) {
      return "This link has expired or was already used. Request a new one.";
    }
    throw err;
  }
}
