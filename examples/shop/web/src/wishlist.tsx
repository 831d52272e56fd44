// Saved items: a heart button on product cards and the wishlist page with "move to basket".

import { useState } from "react";
import { api } from "./api/client";

export function SaveButton({ sku, saved }: { sku: string; saved: boolean }) {
  const [isSaved, setSaved] = useState(saved);
  async function toggle() {
    if (isSaved) await api.delete(`/wishlist/${sku}`);
    else await api.post(`/wishlist/${sku}`);
    setSaved(!isSaved);
  }
  return (
    <button aria-pressed={isSaved} onClick={toggle} title={isSaved ? "Remove from saved items" : "Save for later"}>
      {isSaved ? "♥" : "♡"}
    </button>
  );
}

export function WishlistPage({ skus, cartId }: { skus: string[]; cartId: string }) {
  const [items, setItems] = useState(skus);
  async function moveToBasket(sku: string) {
    await api.post(`/wishlist/${sku}/move-to-cart`, { cartId });
    setItems(items.filter((s) => s !== sku));
  }
  if (items.length === 0) return <p>Nothing saved yet. Tap the heart on any product.</p>;
  return (
    <ul>
      {items.map((sku) => (
        <li key={sku}>
          {sku} <button onClick={() => moveToBasket(sku)}>Move to basket</button>
        </li>
      ))}
    </ul>
  );
}
