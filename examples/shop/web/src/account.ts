// Account pages: registration with email confirmation, login, and closing the account.

import { api } from "./api/client";

export interface AccountInfo {
  id: string;
  email: string;
  displayName: string;
  state: "pending_verification" | "active" | "locked" | "closed";
}

export function passwordProblems(password: string): string[] {
  const problems: string[] = [];
  if (password.length < 10) problems.push("Use at least 10 characters.");
  if (!/[0-9]/.test(password)) problems.push("Add a number.");
  if (password.toLowerCase() === password) problems.push("Add a capital letter.");
  return problems;
}

export async function register(email: string, password: string, displayName: string): Promise<AccountInfo> {
  const problems = passwordProblems(password);
  if (problems.length) throw new Error(problems.join(" "));
  return api.post<AccountInfo>("/accounts", { email, password, displayName });
}

export async function confirmEmail(accountId: string, token: string): Promise<AccountInfo> {
  return api.post<AccountInfo>(`/accounts/${accountId}/confirm`, { token });
}

export async function login(email: string, password: string): Promise<AccountInfo> {
  return api.post<AccountInfo>("/session", { email, password });
}

export async function logout(): Promise<void> {
  await api.delete("/session");
}

// Closing is permanent: personal data is anonymized once no order is open.
export async function closeAccount(accountId: string, typedConfirmation: string): Promise<void> {
  if (typedConfirmation !== "DELETE") throw new Error('Type DELETE to confirm.');
  await api.delete(`/accounts/${accountId}`);
}
