// Support's refund approvals: pending requests with the order context needed to decide.

import { useEffect, useState } from "react";
import { api } from "../api/client";
import { formatMoney } from "../format";

interface PendingRefund {
  id: string;
  orderId: string;
  amount: number;
  orderTotal: number;
  alreadyRefunded: number;
  reason: string;
}

export function RefundApprovals() {
  const [pending, setPending] = useState<PendingRefund[]>([]);

  useEffect(() => {
    void api.get<PendingRefund[]>("/admin/refunds?state=requested").then(setPending);
  }, []);

  async function approve(refund: PendingRefund) {
    await api.post(`/admin/refunds/${refund.id}/approve`);
    setPending(pending.filter((r) => r.id !== refund.id));
  }

  async function reject(refund: PendingRefund) {
    const why = prompt("Why is this refund rejected? The customer will see this.");
    if (!why) return;
    await api.post(`/admin/refunds/${refund.id}/reject`, { why });
    setPending(pending.filter((r) => r.id !== refund.id));
  }

  return (
    <table>
      <thead>
        <tr><th>Order</th><th>Requested</th><th>Left to refund</th><th>Reason</th><th /></tr>
      </thead>
      <tbody>
        {pending.map((r) => (
          <tr key={r.id}>
            <td>{r.orderId}</td>
            <td>{formatMoney(r.amount)}</td>
            <td>{formatMoney(r.orderTotal - r.alreadyRefunded)}</td>
            <td>{r.reason}</td>
            <td>
              <button disabled={r.amount > r.orderTotal - r.alreadyRefunded} onClick={() => approve(r)}>Approve</button>
              <button onClick={() => reject(r)}>Reject</button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
