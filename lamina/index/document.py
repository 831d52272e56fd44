"""A document version, defined once: its fields, their types, and the column sets each layer uses.

A document version is one chunk of a source file at one position, or one Workflow root's document; its id
is a content address of every field here but `text_digest`'s text (lamina/index/membership.py,
version_id). The worker writes shard files with SHARD_COLUMNS and uploads UPLOAD_COLUMNS; the index store
keeps VERSION_COLUMNS in `DocVersion` (its DDL is made from these fields) and answers DOCUMENT_COLUMNS;
the pointer journal's restore reads VERSION_COLUMNS back from the content store. Adding a field is one
row below (and a RETRIEVAL_SCHEMA_VERSION bump with its changelog entry, lamina/constants.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    name: str
    cypher: str  # its Ladybug column type
    meaning: str


VERSION_FIELDS: tuple[Field, ...] = (
    Field("id", "STRING", "the version id (content address), primary key"),
    Field(
        "kind", "STRING", "chunk | workflow | facet (one fact of a root; selection embeds it, not the build)"
    ),
    Field("path", "STRING", "the file (chunks), workflow:<id> (roots) or facet:<root>:<node> (facets)"),
    Field("symbol", "STRING", "the enclosing symbol, qualified; <module> or <file> for none"),
    Field(
        "symbol_kind",
        "STRING",
        "function, method, class, … (chunks); the root's status (roots); the facet's kind (facets)",
    ),
    Field("language", "STRING", "tree-sitter language, or text"),
    Field("start_line", "INT64", "first line, 1-based"),
    Field("end_line", "INT64", "last line, inclusive"),
    Field("part", "INT64", "window number of a long symbol"),
    Field("text_digest", "STRING", "blake3 of the text (the text lives in the content store and `Text`)"),
    Field(
        "emb_key",
        "STRING",
        "the embedding's key blake3(model digest, text); empty when not embedded (roots, facets)",
    ),
    Field(
        "meta",
        "STRING",
        "a chunk's role (its file's, lamina/repo/roles.py chunk_role); a root's terms and aliases (JSON)",
    ),
)
VERSION_COLUMNS: tuple[str, ...] = tuple(f.name for f in VERSION_FIELDS)
# A shard file's columns: the embedding key is derived from the model when the shard is uploaded.
SHARD_COLUMNS: tuple[str, ...] = tuple(n for n in VERSION_COLUMNS if n != "emb_key")
# An upload to graphd (index.put): the version's fields, its text and its vector.
UPLOAD_COLUMNS: tuple[str, ...] = (*VERSION_COLUMNS, "text", "vector")
# What the index store answers per version for ranking: its own fields, then its text and its vector.
DOCUMENT_COLUMNS: tuple[str, ...] = (
    *(n for n in VERSION_COLUMNS if n not in ("text_digest", "emb_key")),
    "text",
    "vector",
)


def docversion_ddl() -> str:
    """The Ladybug table of stored document versions, made from VERSION_FIELDS."""
    columns = ", ".join(
        f"{f.name} {f.cypher}{' PRIMARY KEY' if f.name == 'id' else ''}" for f in VERSION_FIELDS
    )
    return f"CREATE NODE TABLE IF NOT EXISTS DocVersion({columns})"
