// Thin fetch wrapper for the shop API: JSON in and out, CSRF header, typed errors, one retry on 503.

import type { ApiError } from "../types";

const BASE_URL = import.meta.env?.VITE_API_URL ?? "/api";

export class ApiRequestError extends Error {
  constructor(public status: number, public error: ApiError) {
    super(error.message);
  }
}

function csrfToken(): string {
  const match = document.cookie.match(/(?:^|; )csrf=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

export async function request<T>(method: string, path: string, body?: unknown, retries = 1): Promise<T> {
  const response = await fetch(`${BASE_URL}${path}`, {
    method,
    credentials: "include",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 503 && retries > 0) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    return request<T>(method, path, body, retries - 1);
  }
  if (!response.ok) {
    const error: ApiError = await response
      .json()
      .catch(() => ({ code: "network", message: response.statusText }));
    throw new ApiRequestError(response.status, error);
  }
  return response.status === 204 ? (undefined as T) : ((await response.json()) as T);
}

export const api = {
  get: <T>(path: string) => request<T>("GET", path),
  post: <T>(path: string, body?: unknown) => request<T>("POST", path, body),
  put: <T>(path: string, body?: unknown) => request<T>("PUT", path, body),
  delete: <T>(path: string) => request<T>("DELETE", path),
};
