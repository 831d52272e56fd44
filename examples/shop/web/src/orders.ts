// Order history and what a buyer can do with an order: cancel, change the address, request a refund
// or a return.

import { api } from "./api/client";
import type { Address, OrderStatus, OrderSummary } from "./types";

const CANCELLABLE: OrderStatus[] = ["placed", "paid", "packed"];
const ADDRESS_EDITABLE: OrderStatus[] = ["placed", "paid", "packed"];
const RETURN_WINDOW_DAYS = 30;

export async function orderHistory(): Promise<OrderSummary[]> {
  return api.get<OrderSummary[]>("/orders?mine=1");
}

export function canCancel(order: OrderSummary): boolean {
  return CANCELLABLE.includes(order.status);
}

export function canChangeAddress(order: OrderSummary): boolean {
  return ADDRESS_EDITABLE.includes(order.status);
}

export function canReturn(order: OrderSummary, deliveredAt: Date, now = new Date()): boolean {
  const days = (now.getTime() - deliveredAt.getTime()) / 86_400_000;
  return order.status === "delivered" && days <= RETURN_WINDOW_DAYS;
}

export async function cancelOrder(orderId: string): Promise<OrderSummary> {
  return api.post<OrderSummary>(`/orders/${orderId}/cancel`);
}

export async function changeShippingAddress(orderId: string, address: Address): Promise<OrderSummary> {
  return api.put<OrderSummary>(`/orders/${orderId}/address`, address);
}

export async function requestRefund(orderId: string, amount: number, reason: string): Promise<{ id: string }> {
  return api.post(`/orders/${orderId}/refunds`, { amount, reason });
}

export async function requestReturn(orderId: string, sku: string, reason: string): Promise<{ id: string }> {
  return api.post(`/orders/${orderId}/returns`, { sku, reason });
}

export function trackingUrl(order: OrderSummary): string | null {
  return order.trackingNumber ? `https://track.carrier.example/${order.trackingNumber}` : null;
}
