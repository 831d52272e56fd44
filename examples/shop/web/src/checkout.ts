// Checkout flow: review totals, address, card tokenization, submit. The cart id is the idempotency key,
// so a double click or a network retry never places two orders.

import { api, ApiRequestError } from "./api/client";
import type { Address } from "./types";

export interface Totals {
  subtotal: number;
  discount: number;
  total: number;
}

export interface CheckoutResult {
  orderId: string;
  status: "paid" | "out_of_stock" | "payment_failed";
  message?: string;
}

export type CheckoutStep = "review" | "address" | "payment" | "done";

export async function reviewCart(cartId: string): Promise<Totals> {
  return api.get<Totals>(`/checkout/${cartId}/review`);
}

export function validateAddress(address: Address): string[] {
  const problems: string[] = [];
  if (!address.name.trim()) problems.push("Enter the recipient's name.");
  if (!address.line1.trim()) problems.push("Enter a street address.");
  if (!/^[A-Z0-9 -]{3,10}$/i.test(address.postcode)) problems.push("Enter a valid postcode.");
  if (address.country.length !== 2) problems.push("Choose a country.");
  return problems;
}

// The card form belongs to the payment provider's iframe; we only ever see a token.
export async function tokenizeCard(cardElement: HTMLElement): Promise<string> {
  const provider = (window as unknown as { PaymentProvider: { tokenize(el: HTMLElement): Promise<string> } })
    .PaymentProvider;
  return provider.tokenize(cardElement);
}

export async function submitOrder(cartId: string, address: Address, cardToken: string): Promise<CheckoutResult> {
  try {
    return await api.post<CheckoutResult>(`/checkout/${cartId}/submit`, { address, cardToken });
  } catch (err) {
    if (err instanceof ApiRequestError && err.status === 409) {
      return { orderId: "", status: "out_of_stock", message: err.error.message };
    }
    throw err;
  }
}

export function nextStep(step: CheckoutStep): CheckoutStep {
  const order: CheckoutStep[] = ["review", "address", "payment", "done"];
  return order[Math.min(order.indexOf(step) + 1, order.length - 1)];
}
