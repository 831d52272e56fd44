"""The index store's generations: begin, members, commit and activation, the current pointers, failure,
invalidation and the crash-recovery record."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from lamina.errors import LaminaError
from lamina.graphd.index_tables import (
    GenerationInfo,
    _decode_json,
    _encode_json,
    _require_version_ids,
)
from lamina.graphd.index_versions import IndexVersions
from lamina.index.membership import SortedMembership, sorted_membership_digest


class IndexGenerations(IndexVersions):
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
