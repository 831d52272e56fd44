// Gift cards: buy one for someone (emailed code) and apply a code at checkout.

import { api } from "./api/client";

export const GIFT_CARD_AMOUNTS = [2500, 5000, 10000, 20000] as const;

export interface GiftCardPurchase {
  amount: (typeof GIFT_CARD_AMOUNTS)[number];
  recipientEmail: string;
  message: string;
  cardToken: string;
}

export function normalizeCode(code: string): string {
  return code.toUpperCase().replace(/[^A-Z0-9]/g, "").replace(/(.{4})(?=.)/g, "$1-");
}

export async function buyGiftCard(purchase: GiftCardPurchase): Promise<{ code: string }> {
  if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(purchase.recipientEmail)) {
    throw new Error("Enter the recipient's email address.");
  }
  if (purchase.message.length > 300) throw new Error("Keep the message under 300 characters.");
  return api.post("/gift-cards", purchase);
}

export async function applyGiftCard(cartId: string, code: string): Promise<{ applied: number }> {
  return api.post(`/cart/${cartId}/gift-card`, { code: normalizeCode(code) });
}
