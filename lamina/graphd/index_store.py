"""The derived index store (Ladybug): texts, embeddings, document versions, generations, memberships and
one current-generation pointer per branch/worktree identity. Only graphd uses this module.

Bulk writes use COPY from Arrow tables (row-at-a-time UNWIND measured 75x slower). Every mutation runs in
one transaction, so a SIGKILL at any point leaves the last committed state, and activation flips the
identity's pointer in a single transaction.
"""

from __future__ import annotations

import base64
import importlib.util  # noqa: F401  (real_ladybug needs it imported before Arrow parameters are passed)
import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from lamina.constants import RETRIEVAL_SCHEMA_VERSION
from lamina.errors import LaminaError
from lamina.index.membership import membership_digest

SCHEMA = [
    "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING PRIMARY KEY, value STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Text(digest STRING PRIMARY KEY, text STRING)",
    # Vectors are raw little-endian float32 BLOBs: 30% faster to COPY and 2.5x faster to read than FLOAT[],
    # and FLOAT[384] crashes real_ladybug 0.15.3 on COPY (bench/graphd.py, docs/architecture.md).
    "CREATE NODE TABLE IF NOT EXISTS Embedding(key STRING PRIMARY KEY, vector BLOB)",
    "CREATE NODE TABLE IF NOT EXISTS DocVersion(id STRING PRIMARY KEY, kind STRING, path STRING, "
    "symbol STRING, symbol_kind STRING, language STRING, start_line INT64, end_line INT64, part INT64, "
    "text_digest STRING, emb_key STRING, meta STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Generation(id STRING PRIMARY KEY, identity STRING, state STRING, "
    "manifest STRING, expected_count INT64, expected_digest STRING, committed_count INT64, "
    "committed_digest STRING, created DOUBLE, activated DOUBLE, failure STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Member(key STRING PRIMARY KEY, gen STRING, version STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Current(identity STRING PRIMARY KEY, generation STRING)",
]

VERSION_COLUMNS = (
    "id", "kind", "path", "symbol", "symbol_kind", "language", "start_line", "end_line", "part",
    "text_digest", "emb_key", "meta",
)  # fmt: skip


class StorageFailure(Exception):
    """The database handle can no longer be trusted (a failed commit or rollback). graphd answers, then
    exits; the next graphd reopens the database, which recovers the last committed state."""


def _encode_json(value: Any) -> str:
    # real_ladybug rewrites scalar string parameters that look like JSON maps or lists ('{"x": 1}' comes back
    # as '{x: 1}'); base64 keeps the manifest byte-exact. Arrow COPY does not have this problem.
    return base64.b64encode(json.dumps(value, sort_keys=True).encode()).decode()


def _decode_json(value: str) -> Any:
    return json.loads(base64.b64decode(value))


@dataclass(frozen=True)
class GenerationInfo:
    id: str
    identity: str
    state: str  # pending | active | superseded | failed | abandoned
    manifest: dict[str, Any]
    expected_count: int
    expected_digest: str
    committed_count: int
    committed_digest: str
    created: float
    activated: float
    failure: str


class IndexStore:
    def __init__(self, conn: Any) -> None:
        self.conn = conn
        for stmt in SCHEMA:
            conn.execute(stmt)
        found = self._scalar("MATCH (m:Meta {key: 'schema_version'}) RETURN m.value")
        if found is None:
            conn.execute(
                "CREATE (:Meta {key: 'schema_version', value: $v})", {"v": str(RETRIEVAL_SCHEMA_VERSION)}
            )
        elif found != str(RETRIEVAL_SCHEMA_VERSION):
            raise LaminaError(
                "LAMINA_SCHEMA_MISMATCH",
                f"the index store has retrieval schema {found}; this Lamina uses {RETRIEVAL_SCHEMA_VERSION}",
                "Delete <git-common-dir>/lamina/index.lbug (derived data) and run `lamina context rebuild`.",
            )

    # --- small helpers -------------------------------------------------------------------------
    def _rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        result = self.conn.execute(query, params or {})
        rows = []
        while result.has_next():
            rows.append(result.get_next())
        return rows

    def _scalar(self, query: str, params: dict[str, Any] | None = None) -> Any:
        rows = self._rows(query, params)
        return rows[0][0] if rows else None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.conn.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException as exc:
            try:
                self.conn.execute("ROLLBACK")
            except RuntimeError as rollback_error:
                raise StorageFailure(f"rollback failed after {exc!r}: {rollback_error}") from exc
            raise
        try:
            self.conn.execute("COMMIT")
        except RuntimeError as exc:  # e.g. ENOSPC: Ladybug cannot roll back either; the handle is unusable
            raise StorageFailure(f"commit failed: {exc}") from exc

    def _existing(self, table: str, key: str, values: Sequence[str]) -> set[str]:
        if not values:
            return set()
        rows = self._rows(
            f"UNWIND $vals AS k MATCH (x:{table} {{{key}: k}}) RETURN x.{key}", {"vals": list(values)}
        )
        return {r[0] for r in rows}

    # --- content ---------------------------------------------------------------------------------
    def missing_versions(self, ids: Sequence[str]) -> list[str]:
        have = self._existing("DocVersion", "id", ids)
        return [i for i in ids if i not in have]

    def put_versions(self, table: pa.Table) -> int:
        """Upsert document versions with their texts and (optional) embeddings; returns rows added."""
        ids = table.column("id").to_pylist()
        new_ids = set(self.missing_versions(ids))
        if not new_ids:
            return 0
        mask = pa.array([i in new_ids for i in ids])
        table = table.filter(mask)
        digests = table.column("text_digest").to_pylist()
        texts = table.column("text").to_pylist()
        have_text = self._existing("Text", "digest", sorted(set(digests)))
        text_rows: dict[str, str] = {}
        for d, t in zip(digests, texts, strict=True):
            if d not in have_text:
                text_rows.setdefault(d, t)
        emb_keys = table.column("emb_key").to_pylist()
        vectors = table.column("vector")
        have_emb = self._existing("Embedding", "key", sorted({k for k in emb_keys if k}))
        emb_idx: dict[str, int] = {}
        for i, k in enumerate(emb_keys):
            if k and k not in have_emb and vectors[i].is_valid:
                emb_idx.setdefault(k, i)
        with self.transaction():
            if text_rows:
                t = pa.table({"digest": list(text_rows), "text": list(text_rows.values())})
                self.conn.execute("COPY Text FROM $t", {"t": t})
            if emb_idx:
                idx = list(emb_idx.values())
                e = pa.table({"key": list(emb_idx), "vector": vectors.take(idx).cast(pa.binary())})
                self.conn.execute("COPY Embedding FROM $t", {"t": e})
            v = table.select(list(VERSION_COLUMNS))
            self.conn.execute("COPY DocVersion FROM $t", {"t": v})
        return table.num_rows

    # --- generations -----------------------------------------------------------------------------
    def begin(self, gen_id: str, identity: str, manifest: dict[str, Any], count: int, digest: str) -> None:
        self.conn.execute(
            "CREATE (:Generation {id: $id, identity: $identity, state: 'pending', manifest: $m, "
            "expected_count: $c, expected_digest: $d, committed_count: 0, committed_digest: '', "
            "created: $t, activated: 0.0, failure: ''})",
            {
                "id": gen_id,
                "identity": identity,
                "m": _encode_json(manifest),
                "c": count,
                "d": digest,
                "t": time.time(),
            },
        )

    def generation(self, gen_id: str) -> GenerationInfo | None:
        rows = self._rows(
            "MATCH (g:Generation {id: $id}) RETURN g.id, g.identity, g.state, g.manifest, g.expected_count, "
            "g.expected_digest, g.committed_count, g.committed_digest, g.created, g.activated, g.failure",
            {"id": gen_id},
        )
        if not rows:
            return None
        r = rows[0]
        return GenerationInfo(r[0], r[1], r[2], _decode_json(r[3]), r[4], r[5], r[6], r[7], r[8], r[9], r[10])

    def add_members(self, gen_id: str, version_ids: Sequence[str]) -> None:
        info = self.generation(gen_id)
        if info is None or info.state != "pending":
            raise LaminaError("LAMINA_PROTOCOL", f"generation {gen_id} is not pending")
        keys = [f"{gen_id}:{v}" for v in version_ids]
        have = self._existing("Member", "key", keys)
        fresh = [(k, v) for k, v in zip(keys, version_ids, strict=True) if k not in have]
        if not fresh:
            return
        t = pa.table(
            {"key": [k for k, _ in fresh], "gen": [gen_id] * len(fresh), "version": [v for _, v in fresh]}
        )
        with self.transaction():
            self.conn.execute("COPY Member FROM $t", {"t": t})

    def _committed_membership(self, gen_id: str) -> tuple[int, str, int, int]:
        """(count, digest, members whose version is missing, members whose embedding is missing)."""
        members = self._rows("MATCH (m:Member) WHERE m.gen = $g RETURN m.version", {"g": gen_id})
        ids = [r[0] for r in members]
        count, digest = membership_digest(ids)
        present = self._scalar(
            "MATCH (m:Member) WHERE m.gen = $g MATCH (v:DocVersion {id: m.version}) RETURN count(*)",
            {"g": gen_id},
        )
        missing_emb = self._scalar(
            "MATCH (m:Member) WHERE m.gen = $g MATCH (v:DocVersion {id: m.version}) WHERE v.emb_key <> '' "
            "OPTIONAL MATCH (e:Embedding {key: v.emb_key}) WITH e WHERE e IS NULL RETURN count(*)",
            {"g": gen_id},
        )
        return count, digest, len(ids) - int(present or 0), int(missing_emb or 0)

    def commit_and_activate(self, gen_id: str) -> GenerationInfo:
        """Activate only when committed membership equals the declared one; else fail, changing no pointer."""
        info = self.generation(gen_id)
        if info is None:
            raise LaminaError("LAMINA_PROTOCOL", f"unknown generation {gen_id}")
        if info.state != "pending":
            raise LaminaError("LAMINA_PROTOCOL", f"generation {gen_id} is {info.state}, not pending")
        count, digest, missing_versions, missing_emb = self._committed_membership(gen_id)
        problems = []
        if count != info.expected_count:
            problems.append(f"count {count} != expected {info.expected_count}")
        if digest != info.expected_digest:
            problems.append("membership digest differs from the expected one")
        if missing_versions:
            problems.append(f"{missing_versions} member versions were never uploaded")
        if missing_emb:
            problems.append(f"{missing_emb} member embeddings were never uploaded")
        if problems:
            failure = "; ".join(problems)
            self.conn.execute(
                "MATCH (g:Generation {id: $id}) SET g.state = 'failed', g.failure = $f, g.committed_count = $c, "
                "g.committed_digest = $d",
                {"id": gen_id, "f": failure, "c": count, "d": digest},
            )
            raise LaminaError("LAMINA_GENERATION_MISMATCH", f"generation {gen_id} not activated: {failure}")
        previous = self.current(info.identity)
        with self.transaction():
            self.conn.execute(
                "MATCH (g:Generation {id: $id}) SET g.state = 'active', g.activated = $t, g.committed_count = $c, "
                "g.committed_digest = $d",
                {"id": gen_id, "t": time.time(), "c": count, "d": digest},
            )
            if previous is not None and previous != gen_id:
                self.conn.execute(
                    "MATCH (g:Generation {id: $id}) SET g.state = 'superseded'", {"id": previous}
                )
            self.conn.execute(
                "MERGE (c:Current {identity: $i}) SET c.generation = $g", {"i": info.identity, "g": gen_id}
            )
        result = self.generation(gen_id)
        assert result is not None
        return result

    def fail(self, gen_id: str, failure: str) -> None:
        self.conn.execute(
            "MATCH (g:Generation {id: $id}) WHERE g.state = 'pending' SET g.state = 'failed', g.failure = $f",
            {"id": gen_id, "f": failure},
        )

    def current(self, identity: str) -> str | None:
        value = self._scalar("MATCH (c:Current {identity: $i}) RETURN c.generation", {"i": identity})
        return value or None

    def invalidate(self, identity: str) -> str | None:
        """Drop the identity's current pointer (rebuild); the generation itself is collected later."""
        gen = self.current(identity)
        with self.transaction():
            self.conn.execute("MATCH (c:Current {identity: $i}) DELETE c", {"i": identity})
            if gen:
                self.conn.execute("MATCH (g:Generation {id: $id}) SET g.state = 'superseded'", {"id": gen})
        return gen

    def last_failure(self, identity: str) -> GenerationInfo | None:
        rows = self._rows(
            "MATCH (g:Generation) WHERE g.identity = $i AND g.state IN ['failed', 'abandoned'] "
            "RETURN g.id ORDER BY g.created DESC LIMIT 1",
            {"i": identity},
        )
        return self.generation(rows[0][0]) if rows else None

    def pending(self, identity: str | None = None) -> list[str]:
        if identity is None:
            rows = self._rows("MATCH (g:Generation) WHERE g.state = 'pending' RETURN g.id")
        else:
            rows = self._rows(
                "MATCH (g:Generation) WHERE g.state = 'pending' AND g.identity = $i RETURN g.id",
                {"i": identity},
            )
        return [r[0] for r in rows]

    def abandon_pending(self, reason: str, identity: str | None = None) -> list[str]:
        """Generations whose writer died: mark abandoned (their uploaded versions stay, so a retry resumes)."""
        ids = self.pending(identity)
        for gen_id in ids:
            self.conn.execute(
                "MATCH (g:Generation {id: $id}) SET g.state = 'abandoned', g.failure = $f",
                {"id": gen_id, "f": reason},
            )
        return ids

    def collect_garbage(self) -> dict[str, int]:
        """Remove generations no identity points at and content no remaining generation uses.

        Skipped while any generation is pending: its uploaded versions are not members yet."""
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
        stats = {"generations": len(drop), "versions": 0, "texts": 0, "embeddings": 0}
        with self.transaction():
            if drop:
                self.conn.execute("MATCH (m:Member) WHERE m.gen IN $g DELETE m", {"g": drop})
                self.conn.execute("MATCH (g:Generation) WHERE g.id IN $g DELETE g", {"g": drop})
            used = {r[0] for r in self._rows("MATCH (m:Member) RETURN DISTINCT m.version")}
            versions = self._rows("MATCH (v:DocVersion) RETURN v.id, v.text_digest, v.emb_key")
            dead = [r[0] for r in versions if r[0] not in used]
            live = [r for r in versions if r[0] in used]
            if dead:
                self.conn.execute("MATCH (v:DocVersion) WHERE v.id IN $ids DELETE v", {"ids": dead})
            live_texts = {r[1] for r in live}
            live_embs = {r[2] for r in live if r[2]}
            texts = [r[0] for r in self._rows("MATCH (t:Text) RETURN t.digest") if r[0] not in live_texts]
            embs = [r[0] for r in self._rows("MATCH (e:Embedding) RETURN e.key") if r[0] not in live_embs]
            if texts:
                self.conn.execute("MATCH (t:Text) WHERE t.digest IN $ids DELETE t", {"ids": texts})
            if embs:
                self.conn.execute("MATCH (e:Embedding) WHERE e.key IN $ids DELETE e", {"ids": embs})
            stats.update(versions=len(dead), texts=len(texts), embeddings=len(embs))
        return stats

    # --- reads for retrieval ---------------------------------------------------------------------
    def generation_documents(self, gen_id: str) -> pa.Table:
        """Every member version of a generation with its text and (possibly null) embedding."""
        result = self.conn.execute(
            "MATCH (m:Member) WHERE m.gen = $g MATCH (v:DocVersion {id: m.version}) "
            "MATCH (t:Text {digest: v.text_digest}) OPTIONAL MATCH (e:Embedding {key: v.emb_key}) "
            "RETURN v.id AS id, v.kind AS kind, v.path AS path, v.symbol AS symbol, v.symbol_kind AS symbol_kind, "
            "v.language AS language, v.start_line AS start_line, v.end_line AS end_line, v.part AS part, "
            "v.meta AS meta, t.text AS text, e.vector AS vector ORDER BY v.id",
            {"g": gen_id},
        )
        return result.get_as_arrow()

    def counts(self, gen_id: str) -> dict[str, int]:
        rows = self._rows(
            "MATCH (m:Member) WHERE m.gen = $g MATCH (v:DocVersion {id: m.version}) RETURN v.kind, count(*)",
            {"g": gen_id},
        )
        return {r[0]: int(r[1]) for r in rows}
