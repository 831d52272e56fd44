"""What builds remember between runs, in one bounded object with an owner.

graphd's build host (lamina/graphd/hosting.py, BuildHost.memory) owns one for every build it hosts: it
runs build after build of the same repository, and each of these memories saves what a small build would
otherwise redo (docs/architecture.md, "Hosted builds"). A build in a command's own process gets a fresh
one (BuildContext's default), so nothing outlives the process that owns it, and tests build their own
instead of clearing globals. Every memory is only an optimisation: a miss re-derives or asks the store.
Keys that name a content store use the id written into the store when it was created
(ContentStore.identity), never its file's device and inode, which a deleted and recreated store gets
again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lamina.bounded import Bounded
from lamina.constants import (
    EMBEDDED_DIGESTS_MAX,
    FILE_ROWS_MAX,
    HOSTED_IDENTITIES_REMEMBERED,
    SHARD_COUNT,
)
from lamina.repo.files import SelectionMemory

# (content store id, path, blob, model digest, role): one file content's shard rows at one path.
RowsKey = tuple[str, str, str, str, str]
# A shard file's (mtime ns, size, inode): shard files are replaced, never edited in place.
FileStamp = tuple[int, int, int]


@dataclass(frozen=True)
class Activated:
    """A generation a build activated for a build dir, and what it was built from."""

    generation: str
    shards: tuple[dict[str, Any], ...]  # the chunk columns of each shard (shared with shard_columns)
    ids: list[str]  # its members, sorted (never mutated)


@dataclass
class BuildMemory:
    # Shard file -> (its stamp, its parsed columns): every shard file of the identities remembered.
    shard_columns: Bounded[str, tuple[FileStamp, dict[str, list[Any]]]] = field(
        default_factory=lambda: Bounded(HOSTED_IDENTITIES_REMEMBERED * (SHARD_COUNT + 1))
    )
    # Each file's shard rows, remembered once the store holds their texts (lamina/index/worker.py).
    file_rows: Bounded[RowsKey, list[dict[str, Any]]] = field(default_factory=lambda: Bounded(FILE_ROWS_MAX))
    # (content store id, model digest) -> text digests the store was seen to hold an embedding for.
    embedded: Bounded[tuple[str, str], set[str]] = field(default_factory=lambda: Bounded(4))
    # Build dir -> the generation last activated there: the next build declares only what changed.
    activated: Bounded[str, Activated] = field(default_factory=lambda: Bounded(HOSTED_IDENTITIES_REMEMBERED))
    # Each worktree's last file selection and the path rules' decisions (lamina/repo/files.py).
    selection: SelectionMemory = field(default_factory=SelectionMemory)

    def known_embedded(self, store_id: str, model_digest: str) -> set[str]:
        """The digests a store (with this model) was seen to hold embeddings for; it only ever grows, so
        the set is added to and, past EMBEDDED_DIGESTS_MAX, started over."""
        key = (store_id, model_digest)
        known = self.embedded.get(key)
        if known is None or len(known) > EMBEDDED_DIGESTS_MAX:
            known = set()
            self.embedded.put(key, known)
        return known
