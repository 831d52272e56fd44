"""The derived index store (Ladybug): texts, embeddings, document versions, generations with their
memberships, and one current-generation pointer per branch/worktree identity. Only graphd uses this module.

Bulk writes use COPY from Arrow tables (row-at-a-time UNWIND measured 75x slower). Every mutation runs in
one transaction, so a SIGKILL at any point leaves the last committed state, and activation flips the
identity's pointer in a single transaction.

A generation's membership is one string column of its Generation row (sorted version ids, one per line),
written in the activation transaction: a one-file edit then writes one row, not one row per member
(16,675 Member rows cost ~300 ms plus a checkpoint on the next write; bench/prepare.py). Members of a
pending generation live in graphd's memory until activation: a graphd restart abandons pending
generations anyway. graphd is the only process that opens this database, so it keeps the id -> kind map
of every stored version in memory (loaded once) instead of asking Ladybug 16,000 lookups per build.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from lamina.constants import RECENT_PART_BYTES, RECENT_VERSIONS_MAX_ROWS, RETRIEVAL_SCHEMA_VERSION
from lamina.errors import LaminaError
from lamina.graph.ladybug import StorageFailure, transaction
from lamina.graph.queries import Queries
from lamina.index.document import DOCUMENT_COLUMNS, VERSION_COLUMNS, docversion_ddl

__all__ = ["IndexStore", "StorageFailure"]
from lamina.graphd import protocol
from lamina.index.membership import (
    SortedMembership,
    all_version_ids,
    is_version_id,
    sorted_membership_digest,
)

SCHEMA = [
    "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING PRIMARY KEY, value STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Text(digest STRING PRIMARY KEY, text STRING)",
    # Vectors are raw little-endian float32 BLOBs: 30% faster to COPY and 2.5x faster to read than FLOAT[],
    # and FLOAT[384] crashes real_ladybug 0.15.3 on COPY (bench/graphd.py, docs/architecture.md).
    "CREATE NODE TABLE IF NOT EXISTS Embedding(key STRING PRIMARY KEY, vector BLOB)",
    docversion_ddl(),
    # Small uploads land here whole (see RECENT_VERSIONS_MAX_ROWS) until graphd folds them into the three
    # tables above; a version id is in DocVersion or here, never both.
    # One row per part of an uploaded row (metadata, text, vector as one Arrow IPC stream, cut into parts
    # of RECENT_PART_BYTES): a BLOB parameter round-trips exactly, which a string that looks like JSON
    # does not, and real_ladybug 0.15.3 wrote a write-ahead log it could not replay after a crash when one
    # BLOB value passed to CREATE exceeded ~3.5 KB (0.22.0 replays it; docs/decisions.md).
    "CREATE NODE TABLE IF NOT EXISTS RecentVersion(key STRING PRIMARY KEY, id STRING, seq INT64, kind STRING, "
    "text_digest STRING, emb_key STRING, part BLOB)",
    "CREATE NODE TABLE IF NOT EXISTS Generation(id STRING PRIMARY KEY, identity STRING, state STRING, "
    "manifest STRING, expected_count INT64, expected_digest STRING, committed_count INT64, "
    "committed_digest STRING, created DOUBLE, activated DOUBLE, failure STRING, members STRING, "
    "workflow_count INT64, chunk_count INT64)",
    "CREATE NODE TABLE IF NOT EXISTS Current(identity STRING PRIMARY KEY, generation STRING)",
]

# The stored fields (VERSION_COLUMNS) and what documents() returns per version (DOCUMENT_COLUMNS), in
# that order: defined once, in lamina/index/document.py.


_HEX = re.compile(r"[0-9a-f]{16,128}")


def _plain_keys(upload: pa.Table) -> bool:
    """Whether every string a RecentVersion CREATE passes as a parameter is plain (a known kind, hex
    digests): only such strings are safe outside COPY (docs/decisions.md, "Measured decisions")."""
    kinds = set(upload.column("kind").to_pylist())
    digests = upload.column("text_digest").to_pylist() + [
        k for k in upload.column("emb_key").to_pylist() if k
    ]
    return kinds <= {"chunk", "workflow"} and all(isinstance(d, str) and _HEX.fullmatch(d) for d in digests)


def _encode_json(value: Any) -> str:
    # real_ladybug rewrites scalar string parameters that look like JSON maps or lists ('{"x": 1}' comes back
    # as '{x: 1}'); base64 keeps the manifest byte-exact. Arrow COPY does not have this problem.
    return base64.b64encode(json.dumps(value, sort_keys=True).encode()).decode()


def _decode_json(value: str) -> Any:
    return json.loads(base64.b64decode(value))


def _require_version_ids(ids: Sequence[Any]) -> None:
    if all_version_ids(ids):
        return
    bad = next((i for i in ids if not is_version_id(i)), None)
    raise LaminaError("LAMINA_PROTOCOL", f"not a document version id: {str(bad)[:80]!r}")


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
    counts: dict[str, int]  # kind -> members (set at activation)


class IndexStore:
    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._queries = Queries(conn)
        self._pending_members: dict[str, SortedMembership] = {}
        self._kinds: dict[str, str] | None = None  # version id -> kind of every stored version
        # Versions this process put into RecentVersion since the last fold, as documents() returns them:
        # the ranking state of a new generation reads a small build's new versions right after it, and
        # reading them back through Ladybug costs ~30 ms (what a one-file edit's build is measured in).
        self._remembered: dict[str, pa.Table] = {}
        self._last_activated: tuple[str, list[str]] | None = None  # (generation, its sorted members)
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

    def release_statements(self) -> None:
        """Drop the prepared statements: Ladybug does not close a database while one is alive."""
        self._queries.forget()

    # --- small helpers -------------------------------------------------------------------------
    def _rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        return self._queries.rows(query, params)

    def _scalar(self, query: str, params: dict[str, Any] | None = None) -> Any:
        rows = self._rows(query, params)
        return rows[0][0] if rows else None

    def transaction(self) -> AbstractContextManager[None]:
        """One transaction of the index store; a failed commit or rollback is StorageFailure (ladybug.py)."""
        return transaction(self.conn)

    def _existing(self, table: str, key: str, values: Sequence[str]) -> set[str]:
        if not values:
            return set()
        rows = self._rows(
            f"UNWIND $vals AS k MATCH (x:{table} {{{key}: k}}) RETURN x.{key}", {"vals": list(values)}
        )
        return {r[0] for r in rows}

    # --- content ---------------------------------------------------------------------------------
    def _version_kinds(self) -> dict[str, str]:
        if self._kinds is None:
            self._kinds = {
                r[0]: r[1]
                for r in self._rows("MATCH (v:DocVersion) RETURN v.id, v.kind")
                + self._rows("MATCH (v:RecentVersion) WHERE v.seq = 0 RETURN v.id, v.kind")
            }
        return self._kinds

    def missing_versions(self, ids: Sequence[str]) -> list[str]:
        kinds = self._version_kinds()
        return [i for i in ids if i not in kinds]

    def put_versions(self, table: pa.Table) -> int:
        """Upsert document versions with their texts and embeddings; returns rows added.

        A version with an embedding key must bring its vector unless the store has it already, so that
        every stored version is complete and activation need only check that its members exist."""
        ids = table.column("id").to_pylist()
        _require_version_ids(ids)
        new_ids = set(self.missing_versions(ids))
        if not new_ids:
            return 0
        mask = pa.array([i in new_ids for i in ids])
        table = table.filter(mask)
        emb_keys = table.column("emb_key").to_pylist()
        vectors = table.column("vector")
        if table.column("text").null_count:
            raise LaminaError("LAMINA_PROTOCOL", "a new version must bring its text")
        # A vector may be left out only when the Embedding table has it (never the worker's case).
        unsent = sorted({k for i, k in enumerate(emb_keys) if k and not vectors[i].is_valid})
        if unsent:
            self.fold_recent_versions()  # so that a vector only a recent version carries is found below
        missing_vectors = set(unsent) - self._existing("Embedding", "key", unsent)
        if missing_vectors:
            raise LaminaError(
                "LAMINA_PROTOCOL",
                f"{len(missing_vectors)} version(s) have an embedding key but no vector, and the store has none",
            )
        upload = table.select([*VERSION_COLUMNS, "text"]).append_column("vector", vectors.cast(pa.binary()))
        if table.num_rows <= RECENT_VERSIONS_MAX_ROWS and not unsent and _plain_keys(upload):
            remembered: dict[str, pa.Table] = {}
            with self.transaction():
                for i in range(upload.num_rows):
                    row = upload.slice(i, 1)
                    version = row.column("id")[0].as_py()
                    remembered[version] = row.select(DOCUMENT_COLUMNS)
                    blob = protocol.encode_table(row)
                    for seq, start in enumerate(range(0, len(blob), RECENT_PART_BYTES)):
                        self.conn.execute(
                            "CREATE (:RecentVersion {key: $key, id: $id, seq: $seq, kind: $kind, "
                            "text_digest: $d, emb_key: $k, part: $part})",
                            {
                                "key": f"{version}/{seq}",
                                "id": version,
                                "seq": seq,
                                "kind": row.column("kind")[0].as_py(),
                                "d": row.column("text_digest")[0].as_py(),
                                "k": row.column("emb_key")[0].as_py(),
                                "part": blob[start : start + RECENT_PART_BYTES],
                            },
                        )
            self._remembered.update(remembered)  # committed: now documents() may answer from memory
        else:
            with self.transaction():
                self._copy_into_main(table)
        kinds = self._version_kinds()
        kinds.update(zip(table.column("id").to_pylist(), table.column("kind").to_pylist(), strict=True))
        return table.num_rows

    def _copy_into_main(self, table: pa.Table) -> None:
        """COPY versions (with `text` and `vector` columns) into Text, Embedding and DocVersion, adding only
        the texts and embeddings those tables lack. Call inside a transaction."""
        digests = table.column("text_digest").to_pylist()
        texts = table.column("text").to_pylist()
        have_text = self._existing("Text", "digest", sorted(set(digests)))
        text_rows: dict[str, str] = {}
        for d, t in zip(digests, texts, strict=True):
            if d not in have_text and t is not None:
                text_rows.setdefault(d, t)
        emb_keys = table.column("emb_key").to_pylist()
        vectors = table.column("vector")
        have_emb = self._existing("Embedding", "key", sorted({k for k in emb_keys if k}))
        emb_idx: dict[str, int] = {}
        for i, k in enumerate(emb_keys):
            if k and k not in have_emb and vectors[i].is_valid:
                emb_idx.setdefault(k, i)
        if text_rows:
            t = pa.table({"digest": list(text_rows), "text": list(text_rows.values())})
            self.conn.execute("COPY Text FROM $t", {"t": t})
        if emb_idx:
            idx = list(emb_idx.values())
            e = pa.table({"key": list(emb_idx), "vector": vectors.take(idx).cast(pa.binary())})
            self.conn.execute("COPY Embedding FROM $t", {"t": e})
        self.conn.execute("COPY DocVersion FROM $t", {"t": table.select(list(VERSION_COLUMNS))})

    def fold_recent_versions(self) -> int:
        """Move RecentVersion rows into Text, Embedding and DocVersion (graphd does it when idle, off any
        build's path). Reads are the same before and after.

        Two transactions, never one: a SIGKILL during a transaction that COPYs into the main tables and
        DELETEs RecentVersion sometimes left, on ladybug 0.22.0, the DELETE replayed without the COPYs
        (bench/fold_kill.py: 7 of 31 kills in the fold; split: 0 of 74). A kill between the two leaves a
        version in both tables: reads take it once, and the next fold copies only what DocVersion lacks."""
        recent = self._recent_rows(self._rows("MATCH (r:RecentVersion) RETURN r.id, r.seq, r.part"))
        if recent is None:
            return 0
        folded = self._existing("DocVersion", "id", recent.column("id").to_pylist())  # by a killed fold
        if folded:
            recent = recent.filter(pa.array([i not in folded for i in recent.column("id").to_pylist()]))
        if recent.num_rows:
            with self.transaction():
                self._copy_into_main(recent)
        with self.transaction():
            self.conn.execute("MATCH (r:RecentVersion) DELETE r")
        self._remembered.clear()
        return int(recent.num_rows)

    # --- generations -----------------------------------------------------------------------------
    def begin(
        self,
        gen_id: str,
        identity: str,
        manifest: dict[str, Any],
        count: int,
        digest: str,
        base: str | None = None,
    ) -> bool:
        """Create a pending generation. With `base` (the identity's current generation, nothing else) its
        members start as the base's, so the builder declares only what changed (`remove_members`,
        `add_members`); returns whether the base was taken. Activation checks the declared count and digest
        either way."""
        based = base is not None and base == self.current(identity)
        self.conn.execute(
            "CREATE (:Generation {id: $id, identity: $identity, state: 'pending', manifest: $m, "
            "expected_count: $c, expected_digest: $d, committed_count: 0, committed_digest: '', "
            "created: $t, activated: 0.0, failure: '', members: '', workflow_count: 0, chunk_count: 0})",
            {
                "id": gen_id,
                "identity": identity,
                "m": _encode_json(manifest),
                "c": count,
                "d": digest,
                "t": time.time(),
            },
        )
        self._pending_members[gen_id] = SortedMembership(
            self.activated_members(base) if based and base else ()
        )
        return based

    def activated_members(self, gen_id: str) -> list[str]:
        """members(), answered without a read (of a 1 MB property at 16,700 members) for the generation this
        store activated last: the base of the identity's next build and the next ranking state. Callers
        never mutate the list."""
        last = self._last_activated
        return last[1] if last is not None and last[0] == gen_id else self.members(gen_id)

    def generation(self, gen_id: str) -> GenerationInfo | None:
        rows = self._rows(
            "MATCH (g:Generation {id: $id}) RETURN g.id, g.identity, g.state, g.manifest, g.expected_count, "
            "g.expected_digest, g.committed_count, g.committed_digest, g.created, g.activated, g.failure, "
            "g.workflow_count, g.chunk_count",
            {"id": gen_id},
        )
        if not rows:
            return None
        r = rows[0]
        counts = {kind: int(n) for kind, n in (("workflow", r[11]), ("chunk", r[12])) if n}
        return GenerationInfo(
            r[0], r[1], r[2], _decode_json(r[3]), r[4], r[5], r[6], r[7], r[8], r[9], r[10], counts
        )

    def add_members(self, gen_id: str, version_ids: Sequence[str]) -> None:
        """Declare members of a pending generation (kept in memory until activation; repeats are fine)."""
        _require_version_ids(version_ids)
        self._pending(gen_id).update(version_ids)

    def remove_members(self, gen_id: str, version_ids: Sequence[str]) -> None:
        """Withdraw members of a pending generation that started from a base (absent ones are ignored)."""
        _require_version_ids(version_ids)
        self._pending(gen_id).difference_update(version_ids)

    def _pending(self, gen_id: str) -> SortedMembership:
        members = self._pending_members.get(gen_id)
        if members is None:
            info = self.generation(gen_id)
            state = "unknown" if info is None else info.state
            raise LaminaError("LAMINA_PROTOCOL", f"generation {gen_id} is {state}, not pending")
        return members

    def members(self, gen_id: str) -> list[str]:
        """The sorted member version ids of an activated generation ([] for any other)."""
        value = self._scalar("MATCH (g:Generation {id: $id}) RETURN g.members", {"id": gen_id})
        return value.split("\n") if value else []

    def commit_and_activate(self, gen_id: str, graph_version: str | None = None) -> GenerationInfo:
        """Activate only when the declared membership is complete and every member is stored; else fail,
        changing no pointer. `graph_version`, when given, must be the one the generation was built for."""
        info = self.generation(gen_id)
        if info is None:
            raise LaminaError("LAMINA_PROTOCOL", f"unknown generation {gen_id}")
        members = self._pending_members.get(gen_id)
        if info.state != "pending" or members is None:
            raise LaminaError("LAMINA_PROTOCOL", f"generation {gen_id} is {info.state}, not pending")
        ids = members.sorted_ids()
        count, digest = sorted_membership_digest(ids)
        kinds = self._version_kinds()
        problems = []
        if graph_version is not None and info.manifest.get("graph_version") != graph_version:
            problems.append(
                f"built for graph {info.manifest.get('graph_version')}, but graphd holds {graph_version} "
                "(the product graph changed during the build)"
            )
        if count != info.expected_count:
            problems.append(f"count {count} != expected {info.expected_count}")
        if digest != info.expected_digest:
            problems.append("membership digest differs from the expected one")
        missing_versions = sum(1 for i in ids if i not in kinds)
        if missing_versions:
            problems.append(f"{missing_versions} member versions were never uploaded")
        if problems:
            failure = "; ".join(problems)
            self._pending_members.pop(gen_id, None)
            self.conn.execute(
                "MATCH (g:Generation {id: $id}) SET g.state = 'failed', g.failure = $f, g.committed_count = $c, "
                "g.committed_digest = $d",
                {"id": gen_id, "f": failure, "c": count, "d": digest},
            )
            raise LaminaError("LAMINA_GENERATION_MISMATCH", f"generation {gen_id} not activated: {failure}")
        member_kinds = [kinds[i] for i in ids]
        previous = self.current(info.identity)
        with self.transaction():
            self.conn.execute(
                "MATCH (g:Generation {id: $id}) SET g.state = 'active', g.activated = $t, g.committed_count = $c, "
                "g.committed_digest = $d, g.members = $members, g.workflow_count = $w, g.chunk_count = $n",
                {
                    "id": gen_id,
                    "t": time.time(),
                    "c": count,
                    "d": digest,
                    "members": "\n".join(ids),  # version ids never contain a newline (_require_version_ids)
                    "w": member_kinds.count("workflow"),
                    "n": member_kinds.count("chunk"),
                },
            )
            if previous is not None and previous != gen_id:
                self.conn.execute(
                    "MATCH (g:Generation {id: $id}) SET g.state = 'superseded'", {"id": previous}
                )
            self.conn.execute(
                "MERGE (c:Current {identity: $i}) SET c.generation = $g", {"i": info.identity, "g": gen_id}
            )
        self._pending_members.pop(gen_id, None)
        self._last_activated = (gen_id, ids)  # the base of the identity's next build, without a read
        result = self.generation(gen_id)
        assert result is not None
        return result

    def restore_generation(
        self, gen_id: str, identity: str, manifest: dict[str, Any], members: Sequence[str], digest: str
    ) -> GenerationInfo:
        """Re-activate a journalled generation (lamina/graphd/journal.py) under its own id, once its member
        versions are stored again (put_versions): the same checks as a build's activation."""
        if self.current(identity) == gen_id:
            raise LaminaError("LAMINA_PROTOCOL", f"generation {gen_id} is current already")
        self.conn.execute("MATCH (g:Generation {id: $id}) DELETE g", {"id": gen_id})  # a stale row of it
        self.begin(gen_id, identity, manifest, len(members), digest)
        self.add_members(gen_id, members)
        return self.commit_and_activate(gen_id)

    def record_recovery(self, record: dict[str, Any]) -> None:
        """What graphd's last crash recovery did (replaced, restored, when), for `context status`."""
        self.conn.execute("MERGE (m:Meta {key: 'recovery'}) SET m.value = $v", {"v": _encode_json(record)})

    def recovery(self) -> dict[str, Any] | None:
        value = self._scalar("MATCH (m:Meta {key: 'recovery'}) RETURN m.value")
        return _decode_json(value) if value else None

    def fail(self, gen_id: str, failure: str) -> None:
        self._pending_members.pop(gen_id, None)
        self.conn.execute(
            "MATCH (g:Generation {id: $id}) WHERE g.state = 'pending' SET g.state = 'failed', g.failure = $f",
            {"id": gen_id, "f": failure},
        )

    def current(self, identity: str) -> str | None:
        value = self._scalar("MATCH (c:Current {identity: $i}) RETURN c.generation", {"i": identity})
        return value or None

    def current_pointers(self) -> list[tuple[str, str]]:
        """(identity, current generation) of every identity."""
        return [(r[0], r[1]) for r in self._rows("MATCH (c:Current) RETURN c.identity, c.generation")]

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
            self._pending_members.pop(gen_id, None)
            self.conn.execute(
                "MATCH (g:Generation {id: $id}) SET g.state = 'abandoned', g.failure = $f",
                {"id": gen_id, "f": reason},
            )
        return ids

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

    # --- reads for retrieval ---------------------------------------------------------------------
    def documents(self, version_ids: Sequence[str]) -> pa.Table:
        """The given versions with their text and (possibly null) embedding, in no particular order."""
        remembered = [self._remembered[i] for i in version_ids if i in self._remembered]
        if remembered and len(remembered) == len(version_ids):
            return pa.concat_tables(remembered)
        rest = [i for i in version_ids if i not in self._remembered]
        stored = self._stored_documents(rest)
        if not remembered:
            return stored
        return pa.concat_tables([stored, *(row.cast(stored.schema) for row in remembered)])

    def _stored_documents(self, version_ids: Sequence[str]) -> pa.Table:
        *own, text, vector = DOCUMENT_COLUMNS  # the version's own fields, then its text and vector
        columns = ", ".join(f"v.{name} AS {name}" for name in own)
        main = self.conn.execute(
            "UNWIND $ids AS i MATCH (v:DocVersion {id: i}) MATCH (t:Text {digest: v.text_digest}) "
            f"OPTIONAL MATCH (e:Embedding {{key: v.emb_key}}) RETURN {columns}, t.text AS {text}, e.vector AS {vector}",
            {"ids": list(version_ids)},
        ).get_as_arrow()
        parts = self._rows(
            "UNWIND $ids AS i MATCH (v:RecentVersion) WHERE v.id = i RETURN v.id, v.seq, v.part",
            {"ids": list(version_ids)},
        )
        recent = self._recent_rows(parts)
        if recent is None:
            return main
        if main.num_rows:  # a version in both tables (a fold killed between its two commits) counts once
            in_main = set(main.column("id").to_pylist())
            recent = recent.filter(pa.array([i not in in_main for i in recent.column("id").to_pylist()]))
        recent = recent.select(DOCUMENT_COLUMNS)
        return pa.concat_tables([main, recent.cast(main.schema)]) if main.num_rows else recent

    @staticmethod
    def _recent_rows(parts: list[list[Any]]) -> pa.Table | None:
        """(id, seq, part) rows of RecentVersion as one upload-shaped table (VERSION_COLUMNS, text,
        vector); None when there are none."""
        if not parts:
            return None
        blobs: dict[str, list[tuple[int, bytes]]] = {}
        for version, seq, part in parts:
            blobs.setdefault(version, []).append((seq, part))
        rows = [b"".join(part for _, part in sorted(pieces)) for pieces in blobs.values()]
        return pa.concat_tables([protocol.decode_table(row) for row in rows])
