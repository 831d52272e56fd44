// Seller portal: application status, listings, and the payouts table.

import { useEffect, useState } from "react";
import { api } from "../api/client";
import { formatDate, formatMoney } from "../format";

interface Payout {
  id: string;
  amount: number;
  periodEnd: string;
  state: "scheduled" | "sent" | "failed";
}

interface SellerStatus {
  state: "applied" | "verified" | "active" | "suspended";
  identityCheck: "pending" | "passed" | "failed" | null;
}

export function SellerDashboard() {
  const [status, setStatus] = useState<SellerStatus | null>(null);
  const [payouts, setPayouts] = useState<Payout[]>([]);

  useEffect(() => {
    void api.get<SellerStatus>("/seller/status").then(setStatus);
    void api.get<Payout[]>("/seller/payouts").then(setPayouts);
  }, []);

  if (!status) return <p>Loading…</p>;
  return (
    <main>
      {status.identityCheck !== "passed" && (
        <p role="alert">Verify your identity to receive payouts. <a href="/seller/verify">Upload documents</a></p>
      )}
      <h2>Payouts</h2>
      <table>
        <thead><tr><th>Period</th><th>Amount</th><th>Status</th></tr></thead>
        <tbody>
          {payouts.map((p) => (
            <tr key={p.id}>
              <td>{formatDate(p.periodEnd)}</td>
              <td>{formatMoney(p.amount)}</td>
              <td>{p.state}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <a href="/seller/listings/new">New listing</a>
    </main>
  );
}

export async function applyToSell(businessName: string, vatNumber: string, iban: string): Promise<void> {
  await api.post("/sellers", { businessName, vatNumber, iban });
}
