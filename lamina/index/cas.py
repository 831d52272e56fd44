"""The content-addressed store: chunks per file content, texts, and embeddings per (model, text).

It is the source of truth for work already done (doit's state is only a cache of what is up to date):
every batch is committed as soon as it exists, so an interrupted build resumes without redoing it.
Keys are portable across machines and clones (git blob ids, blake3 digests), so CI can cache the
directory. One sqlite file: atomic commits, safe under concurrent writers (WAL), survives kill -9.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lamina.errors import LaminaError

if TYPE_CHECKING:
    import numpy as np

CAS_FILE = "cas.sqlite"


class ContentStore:
    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / CAS_FILE
        self.db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(
            "CREATE TABLE IF NOT EXISTS chunks(file_key TEXT PRIMARY KEY, records TEXT NOT NULL);"
            "CREATE TABLE IF NOT EXISTS texts(digest TEXT PRIMARY KEY, text TEXT NOT NULL);"
            "CREATE TABLE IF NOT EXISTS embeddings(key TEXT PRIMARY KEY, dim INTEGER NOT NULL, vector BLOB NOT NULL);"
            "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            # What graphd needs to re-activate a journalled generation without the index store: each
            # uploaded document version's fields but its text and vector, as JSON (lamina/graphd/journal.py).
            "CREATE TABLE IF NOT EXISTS versions(id TEXT PRIMARY KEY, fields TEXT NOT NULL);"
        )
        # Which store this is, for what a long-lived process remembers about it (lamina/index/memory.py):
        # a random id written when the store is created. Not its file's (device, inode): a store deleted
        # and made again under the same path got the same inode 20 times out of 20 here.
        self._write("INSERT OR IGNORE INTO meta VALUES ('store_id', ?)", [(uuid.uuid4().hex,)])
        self.identity: str = self.db.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()[0]

    def close(self) -> None:
        self.db.close()

    def _write(self, sql: str, rows: Iterable[tuple[Any, ...]]) -> None:
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.executemany(sql, rows)
        except sqlite3.OperationalError as exc:
            if "full" in str(exc).lower():
                raise LaminaError("LAMINA_DISK_FULL", f"the content store is full: {exc}") from exc
            raise

    # chunks: records of one file content (positions and text digests, no path)
    def get_chunks(self, file_key: str) -> list[dict[str, Any]] | None:
        row = self.db.execute("SELECT records FROM chunks WHERE file_key = ?", (file_key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_chunks(self, items: Sequence[tuple[str, list[dict[str, Any]]]], texts: dict[str, str]) -> None:
        self._write("INSERT OR IGNORE INTO texts VALUES (?, ?)", texts.items())
        self._write("INSERT OR REPLACE INTO chunks VALUES (?, ?)", ((k, json.dumps(r)) for k, r in items))

    def put_texts(self, texts: dict[str, str]) -> None:
        self._write("INSERT OR IGNORE INTO texts VALUES (?, ?)", texts.items())

    def texts(self, digests: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for i in range(0, len(digests), 500):
            part = list(digests[i : i + 500])
            q = f"SELECT digest, text FROM texts WHERE digest IN ({','.join('?' * len(part))})"
            out.update(self.db.execute(q, part).fetchall())
        return out

    # embeddings
    def missing_embeddings(self, keys: Sequence[str]) -> list[str]:
        have: set[str] = set()
        for i in range(0, len(keys), 500):
            part = list(keys[i : i + 500])
            q = f"SELECT key FROM embeddings WHERE key IN ({','.join('?' * len(part))})"
            have.update(r[0] for r in self.db.execute(q, part))
        return [k for k in keys if k not in have]

    def put_embeddings(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        rows = ((k, int(v.shape[0]), v.astype("<f4").tobytes()) for k, v in zip(keys, vectors, strict=True))
        self._write("INSERT OR IGNORE INTO embeddings VALUES (?, ?, ?)", rows)

    def embeddings(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        import numpy as np

        out: dict[str, np.ndarray] = {}
        for i in range(0, len(keys), 500):
            part = list(keys[i : i + 500])
            q = f"SELECT key, vector FROM embeddings WHERE key IN ({','.join('?' * len(part))})"
            for key, blob in self.db.execute(q, part):
                out[key] = np.frombuffer(blob, dtype=np.float32)
        return out

    # document versions (graphd writes them as they are uploaded; read back only to restore a generation)
    def put_versions(self, rows: Iterable[tuple[str, str]]) -> None:
        """(version id, its fields as JSON) pairs; a version id names its fields, so repeats are ignored."""
        self._write("INSERT OR IGNORE INTO versions VALUES (?, ?)", rows)

    def versions(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(ids), 500):
            part = list(ids[i : i + 500])
            q = f"SELECT id, fields FROM versions WHERE id IN ({','.join('?' * len(part))})"
            out.update((version, json.loads(fields)) for version, fields in self.db.execute(q, part))
        return out
