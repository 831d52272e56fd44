"""The worker's steps, called by the doit rules in rules/: repository files → chunks → embeddings →
a generation that graphd activates. The worker never opens a database; it talks to graphd.

Each step reads and writes small files under builds/<identity>/ (the doit file dependencies) and the
content-addressed store (the real results, committed batch by batch so interrupted work resumes).
"""

from __future__ import annotations

import functools
import json
import os
import time
from pathlib import Path
from typing import Any

import blake3

from lamina.constants import (
    CHUNKER_VERSION,
    GRAPHD_EMBED_MAX_TEXTS,
    RETRIEVAL_SCHEMA_VERSION,
    SHARD_COUNT,
    UPLOAD_BATCH_ROWS,
)
from lamina.errors import LaminaError
from lamina.index.context import BuildContext
from lamina.index.document import SHARD_COLUMNS, UPLOAD_COLUMNS
from lamina.index.freshness import FINGERPRINT_FILE
from lamina.index.manifest import (
    ACTIVE_FILE,
    Manifest,
    index_settings,
    read_json,
    source_revision,
    write_json_atomic,
)
from lamina.index.membership import (
    SortedMembership,
    embedding_key,
    sorted_membership_digest,
    text_digest,
    version_id,
)
from lamina.index.memory import Activated, RowsKey
from lamina.repo.roles import EMBEDDED_ROLES, chunk_role, file_role, role_rules

# Texts per embedder call and per store commit: also how much work a cancelled or killed build can lose,
# and how long a hosted build takes to notice that its client went away (~2–4 s on 2 cores).
EMBED_CHUNK = 64
WORKFLOWS = "workflows"


@functools.lru_cache(maxsize=1 << 18)  # graphd shards every selected path on every build it hosts
def shard_of(path: str) -> int:
    return blake3.blake3(path.encode("utf-8", errors="surrogateescape")).digest()[0] % SHARD_COUNT


def shard_names() -> list[str]:
    return [f"{i:02d}" for i in range(SHARD_COUNT)]


def _write_if_changed(path: Path, content: str) -> bool:
    """Rewrite only on change, so doit's md5/mtime check keeps unchanged shards up to date."""
    try:
        if path.read_text() == content:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(content)
    os.replace(tmp, path)
    return True


def _write_records(path: Path, records: list[dict[str, Any]]) -> None:
    """A shard's document versions as JSON columns: parsing 16,675 versions takes 17 ms this way and
    150 ms as one JSON object per line (every prepare that changed anything reads all shards)."""
    columns = {name: [r[name] for r in records] for name in SHARD_COLUMNS}
    _write_if_changed(path, json.dumps(columns, sort_keys=True, separators=(",", ":")))


def _read_columns(ctx: BuildContext, path: Path) -> dict[str, list[Any]]:
    """A shard's columns; graphd, which hosts build after build, parses a shard again only when the file
    changed (the generation step reads all 33 shards: ~17 ms of JSON at 16,700 versions). Shard files are
    replaced, never edited in place (_write_if_changed), so a changed shard always has a new inode or
    mtime. The columns are shared between builds: callers must not mutate them."""
    st = os.stat(path)
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    cached = ctx.memory.shard_columns.get(str(path))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    columns: dict[str, list[Any]] = json.loads(path.read_text())
    ctx.memory.shard_columns.put(str(path), (stamp, columns))
    return columns


def _record(columns: dict[str, list[Any]], row: int) -> dict[str, Any]:
    return {name: columns[name][row] for name in SHARD_COLUMNS}


def chunks_file(ctx: BuildContext, shard: str) -> Path:
    return ctx.path("chunks", f"{shard}.json")


def _emb_key(ctx: BuildContext, digest: str) -> str:
    """The embedding a version carries: none in a lexical-only build."""
    return "" if ctx.lexical_only else embedding_key(ctx.model_digest, digest)


def workflow_meta(doc: Any) -> str:
    """What selection needs of a root besides its text: status, aliases and direct terms (JSON)."""
    return json.dumps(
        {
            "status": doc.status,
            "aliases": list(doc.aliases),
            "terms": {k: list(v) for k, v in sorted(doc.terms.items())},
        },
        sort_keys=True,
    )


def _accepted_blobs(ctx: BuildContext) -> dict[str, int]:
    """Blob id -> size of every file the previous selection of this identity accepted (its shard lists), when
    that selection ran under this retrieval schema. Every change of the selection rules bumps the schema (schema
    13's generator markers): under another one nothing is known, so each file is read and judged again — else a
    bison parser.c accepted before its marker existed would stay accepted as long as its content did."""
    if (read_json(ctx.path("manifest.json")) or {}).get("schema_version") != RETRIEVAL_SCHEMA_VERSION:
        return {}
    return {blob: size for _path, blob, size in listed_files(ctx)}


def listed_files(ctx: BuildContext) -> list[tuple[str, str, int]]:
    """(path, blob, size) of every file the last manifest step of this identity selected (its shard lists)."""
    return _parse_listing(_shard_lists(ctx))


def _shard_lists(ctx: BuildContext) -> str:
    """The shard lists the last manifest step wrote, one after the other (a missing one counts as empty)."""
    texts = []
    for name in shard_names():
        try:
            texts.append(ctx.path("files", f"{name}.tsv").read_text())
        except FileNotFoundError:
            continue
    return "".join(texts)


ACTIVE_FILES = "active-files.tsv"  # the shard lists of the generation this build dir last activated


def active_listed_files(ctx_dir: Path) -> list[tuple[str, str, int]] | None:
    """(path, blob, size) of every file of the generation this build dir last activated; None before the
    first activation that kept them. A later build rewrites the shard lists as it starts, so only these say
    what the active generation read while another build runs, failed or was interrupted."""
    try:
        return _parse_listing((ctx_dir / ACTIVE_FILES).read_text())
    except FileNotFoundError:
        return None


def _parse_listing(text: str) -> list[tuple[str, str, int]]:
    listed = []
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) != 4 or not fields[2].isdigit():
            continue  # a line an older Lamina wrote for a name with a tab or newline: that file is read again
        listed.append((fields[0], fields[1], int(fields[2])))
    return listed


# --- step 1: manifest ------------------------------------------------------------------------------
def step_manifest(ctx: BuildContext) -> None:
    """Select files (git + lamina.toml), assign them to shards, load the graph, write the manifest."""
    from lamina.graph.documents import workflow_documents, workflow_facets
    from lamina.graph.load import load_graph
    from lamina.graph.version import graph_version
    from lamina.repo.files import reselect_files

    selection = reselect_files(
        ctx.ws.root,
        ctx.config,
        ctx.state.head,
        ctx.state.changed,
        known=lambda: _accepted_blobs(ctx),
        status_raw=ctx.state.status_raw,
        memory=ctx.memory.selection,
    )
    shards: dict[str, list[str]] = {name: [] for name in shard_names()}
    rules = role_rules(ctx.config)
    for f in selection.files:  # the role column: a [roles] change re-chunks the shards it touches
        shards[f"{shard_of(f.path):02d}"].append(
            f"{f.path}\t{f.blob}\t{f.size}\t{file_role(f.path, rules)}\n"
        )
    for name, lines in shards.items():
        if _write_if_changed(ctx.path("files", f"{name}.tsv"), "".join(lines)):
            ctx.shards_to_chunk[name] = len(lines)  # its chunks task will run: the progress total

    graph = load_graph(ctx.ws.root, ctx.config.graph.paths)
    version = graph_version(graph)
    records, texts = [], {}
    for doc in workflow_documents(graph):
        meta = workflow_meta(doc)
        digest = text_digest(doc.text)
        texts[digest] = doc.text
        records.append({
            "id": version_id("workflow", f"workflow:{doc.workflow}", doc.workflow, doc.status, 0, 0, 0, digest, meta),
            "kind": "workflow", "path": f"workflow:{doc.workflow}", "symbol": doc.workflow,
            "symbol_kind": doc.status, "language": "", "start_line": 0, "end_line": 0, "part": 0,
            "text_digest": digest, "meta": meta,
        })  # fmt: skip
    # Facets: selection scores a root by its best one. Neither they nor the roots' documents are embedded here:
    # graphd reads them with the selection model (lamina/retrieval/root_vectors.py), not the runtime's.
    for facet in workflow_facets(graph):
        meta = json.dumps({"kind": facet.kind, "key": facet.key}, sort_keys=True)
        digest = text_digest(facet.text)
        texts[digest] = facet.text
        path = f"facet:{facet.workflow}:{facet.key}"
        records.append({
            "id": version_id("facet", path, facet.workflow, facet.kind, 0, 0, 0, digest, meta),
            "kind": "facet", "path": path, "symbol": facet.workflow,
            "symbol_kind": facet.kind, "language": "", "start_line": 0, "end_line": 0, "part": 0,
            "text_digest": digest, "meta": meta,
        })  # fmt: skip
    ctx.store().put_texts(texts)
    _write_records(chunks_file(ctx, WORKFLOWS), records)

    manifest = Manifest(
        graph_version=version,
        source_revision=source_revision(ctx.ws.root, ctx.state),
        identity=ctx.identity.key,
        branch=ctx.identity.branch,
        worktree=ctx.identity.worktree,
        schema_version=RETRIEVAL_SCHEMA_VERSION,
        model=ctx.model,
        model_digest=ctx.model_digest,
        index_settings=index_settings(ctx.config),
    )
    _write_if_changed(ctx.path("manifest.json"), json.dumps(manifest.to_json(), indent=2, sort_keys=True))
    ctx.stats.update(
        files_scanned=len(selection.files),
        files_skipped=sum(selection.skipped.values()),
        skipped_by_reason=dict(selection.skipped),
    )


# --- step 2: chunks --------------------------------------------------------------------------------
def step_chunks(ctx: BuildContext, shard: str) -> None:
    """Chunk this shard's files; a file content already chunked (same blob) is taken from the store."""
    from lamina.chunking import chunk_file, language_for

    store = ctx.store()
    lines = ctx.path("files", f"{shard}.tsv").read_text().splitlines()
    out: list[dict[str, Any]] = []
    pending: list[tuple[str, list[dict[str, Any]]]] = []
    pending_texts: dict[str, str] = {}
    if ctx.progress.phase != "chunking files":
        ctx.progress.start("chunking files", sum(ctx.shards_to_chunk.values()))
    if shard not in ctx.shards_to_chunk:  # doit runs it for another reason (e.g. a missing target)
        ctx.shards_to_chunk[shard] = len(lines)
        ctx.progress.total += len(lines)
    unstored: list[tuple[RowsKey, list[dict[str, Any]]]] = []
    for line in lines:
        path, blob, _size, role = line.split("\t")
        remembered_key = (store.identity, path, blob, ctx.model_digest, role)
        remembered = ctx.memory.file_rows.get(remembered_key)
        if remembered is not None:  # this file content at this path, chunked by an earlier build
            out.extend(remembered)
            ctx.progress.advance()
            continue
        language = language_for(path) or "text"
        key = f"{blob}:{language}:c{CHUNKER_VERSION}"
        recs = store.get_chunks(key)
        chunked_now = recs is None
        if recs is None:
            try:
                data = (ctx.ws.root / path).read_bytes()
            except OSError:
                ctx.stats["files_vanished"] = ctx.stats.get("files_vanished", 0) + 1
                ctx.progress.advance()
                continue
            recs = []
            for c in chunk_file(path, data):
                digest = text_digest(c.text)
                pending_texts[digest] = c.text
                recs.append(
                    {
                        "symbol": c.symbol,
                        "symbol_kind": c.kind,
                        "language": c.language,
                        "start_line": c.start_line,
                        "end_line": c.end_line,
                        "part": c.part,
                        "text_digest": digest,
                    }
                )
            pending.append((key, recs))
        rows = [
            {
                "id": version_id("chunk", path, r["symbol"], r["symbol_kind"], r["start_line"], r["end_line"],
                                 r["part"], r["text_digest"], chunk,
                                 _emb_key(ctx, r["text_digest"]) if chunk in EMBEDDED_ROLES else ""),
                "kind": "chunk", "path": path, "meta": chunk, **r,
            }
            for r in recs
            for chunk in (chunk_role(role, path, r["symbol"]),)
        ]  # fmt: skip
        if chunked_now:  # remembered once the store holds its texts
            unstored.append((remembered_key, rows))
        else:
            ctx.memory.file_rows.put(remembered_key, rows)
        out.extend(rows)
        if len(pending) >= 200:
            store.put_chunks(pending, pending_texts)
            pending, pending_texts = [], {}
            _remember_all(ctx, unstored)
        ctx.progress.advance()
    if pending:
        store.put_chunks(pending, pending_texts)
    _remember_all(ctx, unstored)
    _write_records(chunks_file(ctx, shard), out)


# Each file's shard rows (BuildMemory.file_rows): graphd chunks a whole shard again after an edit of one
# of its files (~300 at 10,000 files); the other files' rows are the same as last time, and reading and
# re-deriving them (a store lookup, version ids) cost ~10 ms a shard. Keyed by the store's id, so a
# replaced or another store is asked again; rows are only remembered once the store holds their texts.
# Rows are shared, never mutated.
def _remember_all(ctx: BuildContext, items: list[tuple[RowsKey, list[dict[str, Any]]]]) -> None:
    for key, rows in items:
        ctx.memory.file_rows.put(key, rows)
    items.clear()


# --- step 3: embeddings ----------------------------------------------------------------------------
# The text digests whose embedding a store was seen to hold (BuildMemory.known_embedded). The store only
# ever grows, so a digest seen embedded stays embedded: a build that re-checks whole shards (a new
# branch's first build, a rebuild) asks the store only about the rest (16,900 lookups were ~0.15 s).


def _embeds(kind: str, meta: str) -> bool:
    """Whether a version carries an embedding: chunks of EMBEDDED_ROLES only (the meta of a chunk version is
    its role, lamina/repo/roles.py chunk_role). Workflow and facet versions never do: selection reads the roots
    with its own model (lamina/retrieval/root_vectors.py), so the runtime's vectors of them went unread."""
    return kind == "chunk" and meta in EMBEDDED_ROLES


def _known_embedded(ctx: BuildContext) -> set[str]:
    return ctx.memory.known_embedded(ctx.store().identity, ctx.model_digest)


def _missing_for(ctx: BuildContext, shard: str) -> list[tuple[str, str]]:
    """(embedding key, text digest) of this shard's texts the store has no embedding for."""
    columns = _read_columns(ctx, chunks_file(ctx, shard))
    digests = [
        d for d, kind, meta in zip(columns["text_digest"], columns["kind"], columns["meta"], strict=True)
        if _embeds(kind, meta)
    ]  # fmt: skip
    known = _known_embedded(ctx)
    wanted = {embedding_key(ctx.model_digest, d): d for d in dict.fromkeys(digests) if d not in known}
    missing = ctx.store().missing_embeddings(list(wanted))
    absent = set(missing)
    known.update(d for k, d in wanted.items() if k not in absent)
    return [(k, wanted[k]) for k in missing]


def _embedding_due(ctx: BuildContext, shard: str) -> bool:
    """Whether doit will run this shard's embedding task (its chunks changed since its stamp, or the
    stamp is another model's): only those count towards the progress total."""
    stamp, chunks = ctx.path("embedded", f"{shard}.ok"), chunks_file(ctx, shard)
    try:
        return (
            stamp.read_text().strip() != ctx.model_digest
            or chunks.stat().st_mtime_ns > stamp.stat().st_mtime_ns
        )
    except FileNotFoundError:
        return True


def _embed(ctx: BuildContext, texts: list[str]) -> Any:
    """Vectors for texts. A small build asks graphd, whose model is warm (it answers queries), instead of
    loading the model here; the vectors are the same bit for bit (one text per call, any thread count).
    A build hosted by graphd uses graphd's model directly."""
    if ctx.hosted and ctx.shared_embedder is not None:
        ctx.stats["embedded_by"] = "graphd"
        return ctx.embedder().embed(texts)
    if ctx.stats.get("to_embed", GRAPHD_EMBED_MAX_TEXTS + 1) <= GRAPHD_EMBED_MAX_TEXTS:
        from lamina.graphd.protocol import decode_table, vector_rows

        try:
            with ctx.graphd() as client:
                payload = client.request("embed", texts=texts, model_digest=ctx.model_digest)[1]
            blobs = decode_table(payload).column("vector").to_pylist()
            if len(blobs) != len(texts):
                raise LaminaError("LAMINA_PROTOCOL", f"graphd embedded {len(blobs)} of {len(texts)} texts")
            ctx.stats["embedded_by"] = "graphd"
            return vector_rows(blobs)
        except LaminaError as err:  # e.g. graphd cannot load the model: embed here, and say why in the log
            ctx.stats["graphd_embed_error"] = err.code
    ctx.stats["embedded_by"] = "worker"
    return ctx.embedder().embed(texts)


def step_embeddings(ctx: BuildContext, shard: str) -> None:
    """Embed the texts of this shard that the store has no embedding for (for this model)."""
    stamp = ctx.path("embedded", f"{shard}.ok")
    if ctx.lexical_only:
        _write_if_changed(stamp, "lexical-only\n")
        return
    if ctx.progress.phase != "embedding chunks":
        due = [s for s in shard_names() if _embedding_due(ctx, s)]
        ctx.due_embeddings = {s: _missing_for(ctx, s) for s in due}  # each due shard's list, once
        if ctx.config.cache.remote or os.environ.get("LAMINA_CACHE_REMOTE"):  # a shared remote cache
            from lamina.cache.step import fetch_due

            fetch_due(ctx)  # into the store; what it fetched leaves the lists
        total = sum(len(missing) for missing in ctx.due_embeddings.values())
        ctx.stats["to_embed"] = total
        ctx.progress.start("embedding chunks", total)
    missing = ctx.due_embeddings.pop(shard, None)
    if missing is None:
        missing = _missing_for(ctx, shard)
    if missing and ctx.require_cached:
        raise LaminaError("LAMINA_NOT_CACHED", f"{len(missing)} chunk(s) of shard {shard} would be embedded")
    store = ctx.store()
    for i in range(0, len(missing), EMBED_CHUNK):
        batch = missing[i : i + EMBED_CHUNK]
        texts = store.texts([d for _, d in batch])
        started = time.perf_counter()
        vectors = _embed(ctx, [texts[d] for _, d in batch])
        ctx.stats["embedding_seconds"] = (
            ctx.stats.get("embedding_seconds", 0.0) + time.perf_counter() - started
        )
        store.put_embeddings([k for k, _ in batch], vectors)
        if ctx.remote_cache:  # read-write mode writes what it embedded back (lamina/cache/step.py)
            from lamina.cache.step import upload_embedded

            upload_embedded(ctx, [k for k, _ in batch], vectors)
        _known_embedded(ctx).update(d for _, d in batch)  # committed: the store holds them now
        ctx.stats["chunks_embedded"] = ctx.stats.get("chunks_embedded", 0) + len(batch)
        ctx.progress.advance(len(batch))
    _write_if_changed(stamp, f"{ctx.model_digest}\n")
    os.utime(stamp)  # newer than the shard's chunks: _embedding_due compares the two


# --- step 4: generation ----------------------------------------------------------------------------
def _version_table(ctx: BuildContext, records: list[dict[str, Any]]) -> Any:
    import pyarrow as pa

    from lamina.graphd.protocol import vector_column

    store = ctx.store()
    texts = store.texts(sorted({r["text_digest"] for r in records}))
    keys = [_emb_key(ctx, r["text_digest"]) if _embeds(r["kind"], r["meta"]) else "" for r in records]
    vectors = store.embeddings([k for k in keys if k]) if not ctx.lexical_only else {}
    if not ctx.lexical_only and len(vectors) < len({k for k in keys if k}):
        raise LaminaError(
            "LAMINA_INTERNAL", "an embedding disappeared from the content store during the build"
        )
    columns: dict[str, Any] = {name: [r[name] for r in records] for name in SHARD_COLUMNS}
    columns["emb_key"] = keys
    columns["text"] = [texts[r["text_digest"]] for r in records]
    columns["vector"] = vector_column([vectors[k] if k else None for k in keys])
    return pa.table({name: columns[name] for name in UPLOAD_COLUMNS})


def step_generation(ctx: BuildContext) -> None:
    """Declare the membership to graphd, upload what it lacks, and have it commit and activate."""
    import pyarrow as pa

    from lamina.graph.load import read_graph_files

    manifest = json.loads(ctx.path("manifest.json").read_text())
    shards = [_read_columns(ctx, chunks_file(ctx, shard)) for shard in [WORKFLOWS, *shard_names()]]
    base = _delta_base(ctx)
    ids, added, removed, searched = _membership(base, shards)
    if base is not None and len(added) + len(removed) > DELTA_MAX_FRACTION * len(ids):
        base = None  # declaring every member is as cheap
    count, digest = sorted_membership_digest(ids)  # ids: sorted, unique
    ctx.progress.finish()
    client = ctx.build_client()
    if client.call("ping").get("graph_version") != manifest["graph_version"]:  # else: graphd has this graph
        client.call("graph.import", files=read_graph_files(ctx.ws.root, ctx.config.graph.paths))
    begun = client.call(
        "gen.begin",
        identity=ctx.identity.key,
        manifest=manifest,
        expected_count=count,
        expected_digest=digest,
        base=base.generation if base else None,
    )
    gen = begun["generation"]
    try:
        missing: list[str] = []  # members the index store lacks: graphd answers with each batch
        delta = base is not None and begun.get("based_on") == base.generation
        if delta:  # declare only what changed
            batch = pa.table({"id": pa.array(added, type=pa.string())})
            missing = client.call_table("gen.members", batch, generation=gen, remove=removed)["missing"]
            ctx.stats["members_sent"] = len(added) + len(removed)
        else:
            for i in range(0, len(ids), 20_000):
                batch = pa.table({"id": ids[i : i + 20_000]})
                missing += client.call_table("gen.members", batch, generation=gen)["missing"]
            ctx.stats["members_sent"] = len(ids)
        wanted = set(missing)  # where each version to upload sits (a small set after an edit)
        where = {
            version: (n, i)
            for n in (searched if delta else range(len(shards)))  # new versions sit in changed shards
            for i, version in enumerate(shards[n]["id"])
            if version in wanted
        }
        ctx.progress.start("indexing chunks", len(missing))  # graphd stores each new chunk version
        for i in range(0, len(missing), UPLOAD_BATCH_ROWS):
            batch = [
                _record(shards[n], row)
                for n, row in map(where.__getitem__, missing[i : i + UPLOAD_BATCH_ROWS])
            ]
            client.call_table("index.put", _version_table(ctx, batch))
            ctx.progress.advance(len(batch))
        ctx.progress.finish()
        ctx.progress.check()  # a cancelled build must not activate anything
        result = client.call("gen.commit", generation=gen)
    except BaseException as exc:
        try:
            client.call("gen.fail", generation=gen, reason=f"{type(exc).__name__}: {exc}")
        except (LaminaError, OSError):
            pass
        raise
    chunks_total = sum(len(columns["id"]) for columns in shards[1:])
    embedded = ctx.stats.get("chunks_embedded", 0)
    with_embedding = 0
    if not ctx.lexical_only:  # _embeds, the one rule of which versions carry an embedding (~5 ms at 50,000)
        with_embedding = sum(sum(map(_embeds, columns["kind"], columns["meta"])) for columns in shards[1:])
    ctx.stats.update(
        generation=result["generation"],
        workflows=len(shards[0]["id"]),
        chunks_total=chunks_total,
        chunks_with_embedding=with_embedding,
        versions_uploaded=len(missing),
    )
    # reused: vectors this build did not compute (the local store, the remote cache). Chunks without a vector
    # (tests, docs, config: roles.EMBEDDED_ROLES) are not reuse: counting them so claimed two thirds of a
    # first build (session 33, starlette: "606 embedded, 1197 reused").
    ctx.stats["chunks_reused"] = max(0, with_embedding - embedded)
    _keep_active_listing(ctx)
    write_json_atomic(
        ctx.path(ACTIVE_FILE),
        {"generation": result["generation"], "manifest": manifest, "digest": result["digest"]},
    )
    # Each remembered generation holds its shards' columns: ~10 MB at 16,700 chunks.
    ctx.memory.activated.put(str(ctx.build_dir), Activated(result["generation"], tuple(shards), ids))
    write_json_atomic(ctx.path(FINGERPRINT_FILE), ctx.fingerprint_record(result["generation"]))


def _keep_active_listing(ctx: BuildContext) -> None:
    """The shard lists as the activated generation read them, in one file (written before active.json names
    the generation, so the two never disagree for long: a crash between leaves the newer list, which the
    build that follows rewrites)."""
    _write_if_changed(ctx.path(ACTIVE_FILES), _shard_lists(ctx))


def active_record(ctx_dir: Path) -> dict[str, Any] | None:
    return read_json(ctx_dir / ACTIVE_FILE)


# The generation last activated per build dir (BuildMemory.activated). graphd hosts build after build of
# the same identity: the next one declares only the members that changed since (a one-file edit at 16,700
# chunks: 2 ids instead of 16,700; graphd starts the pending set from the current generation's), and works
# them out from the shards whose columns changed rather than from a set of all 16,700.
DELTA_MAX_FRACTION = 0.25  # beyond this share of changed members, declaring them all is as cheap


def _delta_base(ctx: BuildContext) -> Activated | None:
    """The generation to declare members against: the one this process last activated for this identity,
    if it is still the current one (as far as this build dir knows; graphd checks it too)."""
    last = ctx.memory.activated.get(str(ctx.build_dir))
    active = active_record(ctx.build_dir)
    if last is None or not active or active.get("generation") != last.generation:
        return None
    return last


def _membership(
    base: Activated | None, shards: list[dict[str, Any]]
) -> tuple[list[str], list[str], list[str], list[int]]:
    """(sorted members, added and removed since `base`, the shards that changed). A shard whose columns
    are the very object `base` was built from (_read_columns caches them by file identity) has the same
    ids, so only the changed shards are compared. A version id names its path, hence one shard."""
    if base is None or len(base.shards) != len(shards):
        return sorted({version for columns in shards for version in columns["id"]}), [], [], []
    changed = [n for n, (old, new) in enumerate(zip(base.shards, shards, strict=True)) if old is not new]
    before = {version for n in changed for version in base.shards[n]["id"]}
    after = {version for n in changed for version in shards[n]["id"]}
    added, removed = sorted(after - before), sorted(before - after)
    members = SortedMembership(base.ids)
    members.difference_update(removed)
    members.update(added)
    return members.sorted_ids(), added, removed, changed
