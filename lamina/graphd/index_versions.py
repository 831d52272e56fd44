"""The index store's document versions: storing uploads (small ones into RecentVersion, folded when
idle), which are stored, and reading them back for ranking."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from lamina.constants import RECENT_PART_BYTES, RECENT_VERSIONS_MAX_ROWS
from lamina.errors import LaminaError
from lamina.graphd import protocol
from lamina.graphd.index_tables import (
    IndexTables,
    _plain_keys,
    _require_version_ids,
)
from lamina.index.document import DOCUMENT_COLUMNS, VERSION_COLUMNS


class IndexVersions(IndexTables):
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
            self._copy("Text", t)
        if emb_idx:
            idx = list(emb_idx.values())
            e = pa.table({"key": list(emb_idx), "vector": vectors.take(idx).cast(pa.binary())})
            self._copy("Embedding", e)
        self._copy("DocVersion", table.select(list(VERSION_COLUMNS)))

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
