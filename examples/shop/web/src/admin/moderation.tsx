// Back-office moderation queue for reported reviews.

import { useEffect, useState } from "react";
import { api } from "../api/client";
import { starLabel } from "../reviews";
import type { Review } from "../types";

export function ModerationQueue() {
  const [queue, setQueue] = useState<Review[]>([]);
  const [reason, setReason] = useState("");

  useEffect(() => {
    void api.get<Review[]>("/admin/reviews?state=flagged").then(setQueue);
  }, []);

  async function decide(review: Review, action: "remove" | "restore") {
    if (!reason.trim()) return alert("Write a reason; decisions are audited.");
    await api.post(`/admin/reviews/${review.id}/${action}`, { reason });
    setQueue(queue.filter((r) => r.id !== review.id));
    setReason("");
  }

  return (
    <section>
      <h1>Reported reviews ({queue.length})</h1>
      <textarea placeholder="Reason" value={reason} onChange={(e) => setReason(e.target.value)} />
      {queue.map((review) => (
        <article key={review.id}>
          <h3>{starLabel(review.stars)} {review.title}</h3>
          <p>{review.body}</p>
          <button onClick={() => decide(review, "remove")}>Remove</button>
          <button onClick={() => decide(review, "restore")}>Restore</button>
        </article>
      ))}
    </section>
  );
}
