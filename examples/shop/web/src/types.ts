// Shapes returned by the shop API. Money is integer cents, like the backend.

export type OrderStatus =
  | "draft" | "placed" | "paid" | "packed" | "shipped" | "delivered" | "cancelled" | "refunded";

export interface Address {
  name: string;
  line1: string;
  line2?: string;
  city: string;
  postcode: string;
  country: string;
}

export interface CartItem {
  sku: string;
  title: string;
  quantity: number;
  unitPrice: number;
  imageUrl?: string;
}

export interface Cart {
  id: string;
  items: CartItem[];
  couponCode?: string;
  giftCardAmount: number;
}

export interface OrderSummary {
  id: string;
  status: OrderStatus;
  total: number;
  placedAt: string;
  trackingNumber?: string;
}

export interface Review {
  id: string;
  sku: string;
  stars: number;
  title: string;
  body: string;
  authorName: string;
  state: "submitted" | "published" | "flagged" | "removed";
}

export interface ApiError {
  code: string;
  message: string;
}
