"""The pointer journal: each branch/worktree identity's current generation, outside the index database.

After every activation commits, graphd writes the identity's current generation (id, manifest, member
count, membership digest and the sorted member ids) to one small file, replaced atomically (temp file,
fsync, rename, fsync of the directory). The member rows themselves (path, symbol, lines, text digest,
embedding key: everything but text and vector) are kept in the content store (lamina/index/cas.py,
`versions`), and texts and vectors are there already. So when the index store cannot be opened after a
crash, graphd replaces it and re-activates every journalled generation with its same id and digest,
without embedding anything (GraphDaemon.restore_journalled).

The journal is written after the database commit: a kill between the two leaves the journal one
generation behind the database, which only matters when the database is lost too (then the previous
complete generation is restored — never an incomplete one).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import blake3

log = logging.getLogger("lamina.graphd")

JOURNAL_DIR_NAME = "current"  # under the data directory, next to index.lbug
JOURNAL_FORMAT = 1


@dataclass(frozen=True)
class JournalledGeneration:
    identity: str
    generation: str
    manifest: dict[str, Any]
    count: int
    digest: str
    activated: float  # when it was activated (a database newer than the journal wins over it)
    members: tuple[str, ...]  # sorted version ids

    def to_json(self) -> dict[str, Any]:
        return {
            "format": JOURNAL_FORMAT,
            "identity": self.identity,
            "generation": self.generation,
            "manifest": self.manifest,
            "count": self.count,
            "digest": self.digest,
            "activated": self.activated,
            "members": list(self.members),
        }

    @staticmethod
    def from_json(value: Any) -> JournalledGeneration:
        if not isinstance(value, dict) or value.get("format") != JOURNAL_FORMAT:
            raise ValueError("not a pointer journal entry of this format")
        members = value["members"]
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members):
            raise ValueError("members must be a list of version ids")
        return JournalledGeneration(
            identity=str(value["identity"]),
            generation=str(value["generation"]),
            manifest=dict(value["manifest"]),
            count=int(value["count"]),
            digest=str(value["digest"]),
            activated=float(value["activated"]),
            members=tuple(members),
        )


def journal_dir(data_dir: Path) -> Path:
    return data_dir / JOURNAL_DIR_NAME


def _entry_path(directory: Path, identity: str) -> Path:
    return directory / f"{blake3.blake3(identity.encode()).hexdigest()[:32]}.json"


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_entry(directory: Path, entry: JournalledGeneration) -> None:
    """Replace the identity's entry atomically and durably: temp file, fsync, rename, directory fsync."""
    directory.mkdir(parents=True, exist_ok=True)
    path = _entry_path(directory, entry.identity)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = json.dumps(entry.to_json(), separators=(",", ":")).encode()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    _fsync_dir(directory)


def read_entries(directory: Path) -> list[JournalledGeneration]:
    """Every identity's journalled generation; an unreadable entry is logged and skipped (temp files of a
    writer that was killed are not entries)."""
    entries = []
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            entry = JournalledGeneration.from_json(json.loads(path.read_bytes()))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("skipping unreadable pointer journal entry %s: %s", path, exc)
            continue
        if path != _entry_path(directory, entry.identity):
            log.warning("skipping pointer journal entry %s: it names another identity", path)
            continue
        entries.append(entry)
    return entries
