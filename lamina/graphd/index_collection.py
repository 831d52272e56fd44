"""The index store's garbage collection: versions no kept generation references."""

from __future__ import annotations

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
        with self.transaction():
            if drop:
                self.conn.execute("MATCH (g:Generation) WHERE g.id IN $g DELETE g", {"g": drop})
            if dead:
                ids = [r[0] for r in dead]
                self.conn.execute("MATCH (v:DocVersion) WHERE v.id IN $ids DELETE v", {"ids": ids})
                self.conn.execute("MATCH (v:RecentVersion) WHERE v.id IN $ids DELETE v", {"ids": ids})
                self._remembered.clear()  # before the commit: forgetting is always safe
            texts = self._unreferenced("Text", "digest", "text_digest", {r[1] for r in dead}, full)
            embs = self._unreferenced("Embedding", "key", "emb_key", {r[2] for r in dead if r[2]}, full)
            if texts:
                self.conn.execute("MATCH (t:Text) WHERE t.digest IN $ids DELETE t", {"ids": texts})
            if embs:
                self.conn.execute("MATCH (e:Embedding) WHERE e.key IN $ids DELETE e", {"ids": embs})
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
        referenced = {
            r[0]
            for v in versions
            for r in self._rows(
                f"MATCH (v:{v}) WHERE v.{column} IN $c RETURN DISTINCT v.{column}",
                {"c": sorted(candidates)},
            )
        }
        return sorted(candidates - referenced)
