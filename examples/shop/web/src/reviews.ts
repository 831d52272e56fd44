// Product reviews on the product page: list, average, submit, report.

import { api } from "./api/client";
import type { Review } from "./types";

export async function reviewsFor(sku: string, page = 1): Promise<Review[]> {
  return api.get<Review[]>(`/products/${sku}/reviews?page=${page}`);
}

export function averageStars(reviews: Review[]): number | null {
  const published = reviews.filter((r) => r.state === "published");
  if (published.length === 0) return null;
  return Math.round((published.reduce((sum, r) => sum + r.stars, 0) / published.length) * 10) / 10;
}

export function starLabel(stars: number): string {
  return "★".repeat(stars) + "☆".repeat(5 - stars);
}

export async function submitReview(sku: string, stars: number, title: string, body: string): Promise<Review> {
  if (stars < 1 || stars > 5) throw new Error("Choose between one and five stars.");
  if (title.trim().length < 3) throw new Error("Add a short title.");
  return api.post<Review>(`/products/${sku}/reviews`, { stars, title, body });
}

export async function reportReview(reviewId: string, reason: "spam" | "offensive" | "fake" | "other"): Promise<void> {
  await api.post(`/reviews/${reviewId}/report`, { reason });
}
