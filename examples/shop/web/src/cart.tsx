// Cart page: line items, quantity changes, coupon and gift card fields, and the totals box.

import { useEffect, useState } from "react";
import { api, ApiRequestError } from "./api/client";
import { reviewCart, type Totals } from "./checkout";
import { formatMoney, pluralize } from "./format";
import type { Cart } from "./types";

export function CartPage({ cartId }: { cartId: string }) {
  const [cart, setCart] = useState<Cart | null>(null);
  const [totals, setTotals] = useState<Totals | null>(null);
  const [code, setCode] = useState("");
  const [codeError, setCodeError] = useState<string | null>(null);

  async function refresh() {
    setCart(await api.get<Cart>(`/cart/${cartId}`));
    setTotals(await reviewCart(cartId));
  }

  useEffect(() => {
    void refresh();
  }, [cartId]);

  async function applyCode() {
    setCodeError(null);
    try {
      await api.post(`/cart/${cartId}/coupon`, { code });
      await refresh();
    } catch (err) {
      // The backend writes coupon messages for people ("This code has expired.").
      setCodeError(err instanceof ApiRequestError ? err.error.message : "Something went wrong.");
    }
  }

  async function changeQuantity(sku: string, quantity: number) {
    await api.put(`/cart/${cartId}/items/${sku}`, { quantity });
    await refresh();
  }

  if (!cart || !totals) return <p>Loading your basket…</p>;
  const count = cart.items.reduce((n, item) => n + item.quantity, 0);

  return (
    <section>
      <h1>Your basket ({pluralize(count, "item", "items")})</h1>
      <ul>
        {cart.items.map((item) => (
          <li key={item.sku}>
            {item.title} — {formatMoney(item.unitPrice)}
            <input
              type="number"
              min={0}
              value={item.quantity}
              onChange={(e) => changeQuantity(item.sku, Number(e.target.value))}
            />
          </li>
        ))}
      </ul>
      <label>
        Discount code <input value={code} onChange={(e) => setCode(e.target.value)} />
      </label>
      <button onClick={applyCode}>Apply</button>
      {codeError && <p role="alert">{codeError}</p>}
      <dl>
        <dt>Subtotal</dt><dd>{formatMoney(totals.subtotal)}</dd>
        <dt>Discount</dt><dd>-{formatMoney(totals.discount)}</dd>
        <dt>Total</dt><dd>{formatMoney(totals.total)}</dd>
      </dl>
      <a href={`/checkout/${cartId}`}>Continue to payment</a>
    </section>
  );
}
