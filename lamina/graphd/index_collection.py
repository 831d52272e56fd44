"""The index store's garbage collection: versions no kept generation references."""

from __future__ import annotations

from lamina.constants import GC_BATCH_ROWS
from lamina.graphd.index_generations import IndexGenerations


class IndexCollection(IndexGenerations):
    def collect_garbage(self, full: bool = True) -> dict[str, int]:
        """Remove generations no identity points at and content no remaining generation uses.

        A full sweep looks at every stored version, so it also finds uploads of builds that never
        activated; graphd runs one at start. Otherwise only the members of the dropped generations are
        candidates, which keeps the collection after each build to a few queries. Skipped while any
        generation is pending: its uploaded versions are not members yet."""
        if self.pending():
            return {"skipped": 1}
        keep_gens = {r[0] for r in self._rows("MATCH (c:Current) RETURN c.generation")}
        all_gens = {r[0] for r in self._rows("MATCH (g:Generation) RETURN g.id")}
        # Keep the newest failed/abandoned generation per identity for `context status` (last failure).
        keep_gens |= {
            r[0]
            for r in self._rows(
                "MATCH (g:Generation) WHERE g.state IN ['failed', 'abandoned'] WITH g.identity AS i, "
                "max(g.created) AS t MATCH (h:Generation) WHERE h.identity = i AND h.created = t RETURN h.id"
            )
        }
        drop = sorted(all_gens - keep_gens)
        used: set[str] = set()
        for gen_id in keep_gens:
            used.update(self.members(gen_id))
        if full:
            candidates = [
                r
                for where in ("DocVersion)", "RecentVersion) WHERE v.seq = 0")
                for r in self._rows(f"MATCH (v:{where} RETURN v.id, v.text_digest, v.emb_key")
            ]
        else:
            dropped = {version for gen_id in drop for version in self.members(gen_id)} - used
            candidates = [
                r
                for match in ("MATCH (v:DocVersion {id: i})", "MATCH (v:RecentVersion {id: i, seq: 0})")
                for r in self._rows(
                    f"UNWIND $ids AS i {match} RETURN v.id, v.text_digest, v.emb_key",
                    {"ids": sorted(dropped)},
                )
            ]
        dead = [r for r in candidates if r[0] not in used]
        stats = {"generations": len(drop), "versions": len(dead), "texts": 0, "embeddings": 0}
        # Deleted by primary key (a `WHERE x IN $list` scan compares every row with the whole list: 100,000
        # dead versions took 6.5 minutes) and in transactions of at most GC_BATCH_ROWS rows (one
        # transaction holding 100,000 deleted rows with their BLOBs filled the 1 GiB buffer pool, and the
        # next commit's checkpoint failed). Order keeps every step safe to interrupt: generations, then
        # their versions, then the content no version refers to any more; what a crash leaves behind is
        # unreferenced and the full sweep at graphd's start removes it.
        if drop:
            with self.transaction():
                self.conn.execute("MATCH (g:Generation) WHERE g.id IN $g DELETE g", {"g": drop})
        if dead:
            self._remembered.clear()  # before any commit: forgetting is always safe
            ids = sorted(r[0] for r in dead)
            self._delete_keys("DocVersion", "id", ids)
            self._delete_keys("RecentVersion", "id", ids)
        texts = self._unreferenced("Text", "digest", "text_digest", {r[1] for r in dead}, full)
        embs = self._unreferenced("Embedding", "key", "emb_key", {r[2] for r in dead if r[2]}, full)
        self._delete_keys("Text", "digest", texts)
        self._delete_keys("Embedding", "key", embs)
        stats.update(texts=len(texts), embeddings=len(embs))
        if self._kinds is not None:
            for row in dead:
                self._kinds.pop(row[0], None)
        return stats

    def _unreferenced(self, table: str, key: str, column: str, candidates: set[str], full: bool) -> list[str]:
        """Keys of `table` no remaining DocVersion refers to through `column` (all of them, or among
        `candidates`)."""
        versions = ("DocVersion", "RecentVersion")  # a recent version may refer to a stored embedding
        if full:
            referenced = {
                r[0] for v in versions for r in self._rows(f"MATCH (v:{v}) RETURN DISTINCT v.{column}")
            }
            return [r[0] for r in self._rows(f"MATCH (x:{table}) RETURN x.{key}") if r[0] not in referenced]
        if not candidates:
            return []
        # One scan of the referring column, compared in Python: `WHERE v.col IN $candidates` compares
        # every row with the whole list.
        referenced = {r[0] for v in versions for r in self._rows(f"MATCH (v:{v}) RETURN DISTINCT v.{column}")}
        return sorted(candidates - referenced)

    def _delete_keys(self, table: str, key: str, keys: list[str]) -> None:
        """Delete the rows of `table` with these primary keys (RecentVersion: every part of each id), a
        batch per transaction."""
        for start in range(0, len(keys), GC_BATCH_ROWS):
            with self.transaction():
                self.conn.execute(
                    f"UNWIND $keys AS k MATCH (x:{table}) WHERE x.{key} = k DELETE x",
                    {"keys": keys[start : start + GC_BATCH_ROWS]},
                )
