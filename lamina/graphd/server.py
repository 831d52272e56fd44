"""The graphd daemon: one per repository, the only opener of the product and index databases.

Start it through the client (`lamina.graphd.client.connect` starts it when absent). Run directly as
`python -m lamina.graphd.server --root REPO [--ready-fd N] [--idle-timeout S]`.
"""

from __future__ import annotations

import argparse
import ctypes
import faulthandler
import fcntl
import gc
import json
import logging
import os
import shutil
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lamina.constants import (
    GRAPHD_DORMANT_SECONDS,
    GRAPHD_EMBED_MAX_TEXTS,
    GRAPHD_IDLE_TIMEOUT_SECONDS,
    GRAPHD_MODEL_IDLE_SECONDS,
    INDEX_BUFFER_POOL_BYTES,
    INDEX_CHECKPOINT_THRESHOLD_BYTES,
    INDEX_REOPEN_VERSIONS,
    PRODUCT_BUFFER_POOL_BYTES,
    RESTORE_BATCH_ROWS,
    RETRIEVAL_SCHEMA_VERSION,
)
from lamina.errors import LaminaError
from lamina.graphd import address, protocol
from lamina.graphd.hosting import BuildHost, SendProgress
from lamina.graphd.index_store import IndexStore, StorageFailure
from lamina.graphd.requests import BY_NAME, PROTOCOL_VERSION, REQUESTS
from lamina.workspace import (
    InstanceStamp,
    Workspace,
    ensure_dirs,
    instance_change,
    instance_stamp,
    open_workspace,
    read_or_create_secret,
)

log = logging.getLogger("lamina.graphd")

Reply = tuple[dict[str, Any], bytes]
INDEX_SETTINGS: dict[str, Any] = {
    "buffer_pool_size": INDEX_BUFFER_POOL_BYTES,
    "checkpoint_threshold": INDEX_CHECKPOINT_THRESHOLD_BYTES,
}
GC_IDLE_SECONDS = 2.0  # garbage collection waits for this much quiet
LOW_DISK_BYTES = 64 * 1024 * 1024  # free space kept in reserve; below it a storage failure means a full disk
# A write needs several times its payload on disk (WAL, pages, shadow pages) before it can commit.
WRITE_SPACE_FACTOR = 4
# Requests that write (`Request.writes`, lamina/graphd/requests.py) are refused up front when the disk
# cannot hold them: Ladybug (0.15.3, measured) cannot roll back a commit that hit ENOSPC, and a database recovered
# from that state segfaults on the next write (measured: tests/test_disk_full.py). So Lamina never lets a
# write reach a full disk.


def _require(header: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = header.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise LaminaError("LAMINA_PROTOCOL", f"request field {name!r} is missing or has the wrong type")
    return value


def configured_threads(root: Path) -> int:
    """The repository's [runtime].threads for graphd's model; each hosted build then passes its own. A
    lamina.toml that does not load must not keep graphd from starting: the command reports it."""
    from lamina.config import RuntimeConfig, load_config

    try:
        return load_config(root).runtime.threads
    except LaminaError:
        return RuntimeConfig().threads


class ClientGone(Exception):
    """The client of a hosted build went away while progress was sent to it (not an OSError of the build's own:
    a missing file or a full disk is the build's failure, reported as such, session 37)."""


class GraphDaemon:
    # The repository instance graphd serves (watch_instance); graphd exits when it is no longer there.
    stamp: InstanceStamp | None = None
    repository_gone: str | None = None  # why, once it is gone
    model_idle_seconds: float = GRAPHD_MODEL_IDLE_SECONDS
    dormant_seconds: float = GRAPHD_DORMANT_SECONDS
    dormant = False  # databases closed, ranking state and model dropped: opened again by the next request
    dormant_graph_version: str | None = None

    def __init__(self, ws: Workspace, idle_timeout: float) -> None:
        from lamina.graph import ladybug as lb
        from lamina.graph.store import ProductStore

        self.ws = ws
        self.key = read_or_create_secret(ws)
        self.idle_timeout = idle_timeout
        self.started = time.time()
        self.code = address.code_identity()  # which Lamina this is: a client running other code replaces it
        self.last_activity = time.monotonic()
        self.db_lock = threading.RLock()  # one writer/reader at a time on the databases
        self.stopping = threading.Event()
        self.workers: list[threading.Thread] = []
        # Connections waiting for their next request; woken at stop (close_idle_connections).
        self.idle_connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        self.gc_due = True  # also collect what a previous graphd left
        self.index_churn = 0  # versions stored or collected since the index database was opened
        self.index_reopened = 0  # times reopen_index ran (ping reports it)
        self.gc_full = True  # the first collection sweeps everything (uploads of builds that never finished)
        # Bounded buffer pools: the default takes a share of all RAM, which a per-repository daemon must not.
        self.recovered: dict[str, str] = {}  # store -> what happened to it at this start (crash recovery)
        # why the index store was replaced at this start (another retrieval schema, or unopenable), for status
        self.index_replaced: str | None = None
        self.index_was_missing = False
        self.product_db = self.open_product_db()
        self.index_db, index_conn, self.index = self.open_index_store()
        self.connections = [lb.Connection(self.product_db), index_conn]
        self.product = ProductStore(self.connections[0])
        abandoned = self.index.abandon_pending("graphd restarted while the generation was pending")
        if abandoned:
            log.info(
                "abandoned %d pending generation(s) left by a previous run: %s", len(abandoned), abandoned
            )
        self.restore_journalled()  # before anything is answered
        from lamina.retrieval.service import RetrievalService

        self.retrieval = RetrievalService(
            self.product,
            self.index,
            threads=configured_threads(ws.root),
            git_dir=ws.common_dir,
            store_dir=ws.store_dir,
        )
        self.builds = BuildHost(ws.data_dir, self.retrieval.embedder_for)
        # Every request of the table (lamina/graphd/requests.py) by its handler method.
        self.handlers: dict[str, Callable[[dict[str, Any], bytes], Reply]] = {
            request.name: getattr(self, request.method) for request in REQUESTS if request.databases
        }

    def open_product_db(self) -> Any:
        """The product database. It holds only what the repository's TOML files say (every build imports
        them again when graphd's GraphVersion differs), so one that cannot be opened is replaced empty."""
        from lamina.graph import ladybug as lb

        try:
            opened = lb.open_database(self.ws.product_db, buffer_pool_size=PRODUCT_BUFFER_POOL_BYTES)
        except RuntimeError as exc:
            reason = f"it cannot be opened: {exc}"
            log.warning("replacing the product store (%s); the next build imports the graph again", reason)
            self.recovered["product"] = (
                f"replaced ({reason}); re-imported from the graph files by the next build"
            )
            _remove_database(self.ws.product_db)
            return lb.Database(str(self.ws.product_db), buffer_pool_size=PRODUCT_BUFFER_POOL_BYTES)
        if opened.lenient_because:
            self.recovered["product"] = (
                f"reopened without an unreplayable log tail ({opened.lenient_because})"
            )
        return opened.database

    def open_index_store(self) -> tuple[Any, Any, IndexStore]:
        """The index database, a connection and its store. The index store is derived data and the
        content store keeps every chunk, vector and version, so one written by another retrieval schema, or
        one that cannot be opened at all (a write-ahead log Ladybug cannot replay after a crash), is
        replaced; restore_journalled then re-activates the journalled generations without embedding."""
        from lamina.graph import ladybug as lb

        self.index_was_missing = not self.ws.index_db.exists()
        try:
            opened = lb.open_database(self.ws.index_db, **INDEX_SETTINGS)
        except RuntimeError as exc:
            reason = f"it cannot be opened: {exc}"
            self.recovered["index"] = f"replaced ({reason})"
        else:
            if opened.lenient_because:
                self.recovered["index"] = (
                    f"reopened without an unreplayable log tail ({opened.lenient_because})"
                )
            db = opened.database
            conn = lb.Connection(db)
            try:
                return db, conn, IndexStore(conn)
            except LaminaError as err:
                if err.code != "LAMINA_SCHEMA_MISMATCH":
                    raise
                reason = err.message
                self.recovered.pop("index", None)  # an upgrade, not a crash: nothing of it is restored
            conn.close()
            db.close()
        log.warning("replacing the derived index store (%s)", reason)
        self.index_replaced = reason
        _remove_database(self.ws.index_db)
        db = lb.Database(str(self.ws.index_db), **INDEX_SETTINGS)
        conn = lb.Connection(db)
        return db, conn, IndexStore(conn)

    def restore_journalled(self) -> None:
        """Make the index store's current generations agree with the pointer journal (lamina/graphd/
        journal.py): a journalled generation the store lacks, or holds an older one than, is re-activated
        from the content store under its own id (nothing is embedded); a current generation the journal
        lacks or has an older one of is journalled. A crash recovery is recorded for `context status`."""
        from lamina.graphd import journal

        directory = journal.journal_dir(self.ws.data_dir)
        restored: list[str] = []
        lost: list[str] = []
        entries = journal.read_entries(directory)
        if entries and self.index_was_missing:
            self.recovered.setdefault(
                "index", "missing (deleted while graphd was not running); created empty"
            )
        repaired: list[str] = []
        for entry in entries:
            current = self.index.current(entry.identity)
            if current == entry.generation:
                # Current, but is every member still stored? A kill during the fold transaction (COPY and
                # DELETE) can replay the DELETE without the COPYs on 0.22.0 (bench/fold_kill.py).
                absent = self.index.missing_versions(entry.members)
                if absent:
                    log.error(
                        "%s lacks %d member versions; storing them again", entry.generation, len(absent)
                    )
                    try:
                        self.store_versions(absent)
                    except RESTORE_FAILURES as err:  # graphd must start anyway: the next build rebuilds
                        log.error("could not store them again: %s", err)
                        lost.append(f"{entry.generation} ({_message(err)})")
                        continue
                    repaired.append(f"{entry.generation} ({len(absent)} member versions)")
                continue
            info = self.index.generation(current) if current else None
            if info is not None and info.activated >= entry.activated:
                continue  # the store is newer (killed between its commit and the journal): journalled below
            if entry.manifest.get("schema_version") != RETRIEVAL_SCHEMA_VERSION:
                log.info("not restoring %s: built for another retrieval schema", entry.generation)
                continue
            started = time.perf_counter()
            try:
                self.restore_generation(entry)
            except RESTORE_FAILURES as err:  # graphd must start anyway: the next build rebuilds
                log.error("could not restore %s of %s: %s", entry.generation, entry.identity, err)
                lost.append(f"{entry.generation} ({_message(err)})")
                continue
            log.info(
                "restored %s of %s (%d members) in %.0f ms", entry.generation, entry.identity, entry.count,
                (time.perf_counter() - started) * 1000,
            )  # fmt: skip
            restored.append(entry.generation)
        self.journal_current(directory)
        if self.recovered or restored or lost or repaired:
            record = {
                "at": time.time(),
                "replaced": self.recovered,
                "restored": restored,
                "repaired": repaired,
                "lost": lost,
            }
            self.index.record_recovery(record)
            log.warning("crash recovery: %s", record)

    def restore_generation(self, entry: Any) -> None:
        """Store the entry's member versions again from the content store, then re-activate it."""
        self.store_versions(entry.members)
        self.index.restore_generation(
            entry.generation, entry.identity, entry.manifest, entry.members, entry.digest
        )

    def store_versions(self, version_ids: Any) -> None:
        """Put these versions into the index store again (those it lacks), from the content store's
        fields, texts and vectors; nothing is embedded."""
        import pyarrow as pa

        from lamina.index.cas import ContentStore
        from lamina.index.document import VERSION_COLUMNS

        store = ContentStore(self.ws.store_dir)
        try:
            fields = store.versions(version_ids)
            absent = [m for m in version_ids if m not in fields]
            if absent:
                raise LaminaError(
                    "LAMINA_INTERNAL", f"the content store lacks {len(absent)} of its member versions"
                )
            rows = [{"id": m, **fields[m]} for m in version_ids]
            texts = store.texts(sorted({r["text_digest"] for r in rows}))
            vectors = store.embeddings(sorted({r["emb_key"] for r in rows if r["emb_key"]}))
        finally:
            store.close()
        unembedded = sum(1 for r in rows if r["emb_key"] and r["emb_key"] not in vectors)
        untexted = sum(1 for r in rows if r["text_digest"] not in texts)
        if unembedded or untexted:
            raise LaminaError(
                "LAMINA_INTERNAL",
                f"the content store lacks {untexted} texts and {unembedded} vectors of its members",
            )
        for i in range(0, len(rows), RESTORE_BATCH_ROWS):
            part = rows[i : i + RESTORE_BATCH_ROWS]
            columns: dict[str, Any] = {name: [r[name] for r in part] for name in VERSION_COLUMNS}
            columns["text"] = [texts[r["text_digest"]] for r in part]
            columns["vector"] = protocol.vector_column(
                [vectors[r["emb_key"]] if r["emb_key"] else None for r in part]
            )
            self.index_churn += self.index.put_versions(pa.table(columns))

    def journal_current(self, directory: Path) -> None:
        """Journal every current generation the journal lacks or holds an older one of."""
        from lamina.graphd import journal

        journalled = {e.identity: e for e in journal.read_entries(directory)}
        for identity, gen_id in self.index.current_pointers():
            entry = journalled.get(identity)
            if entry is not None and entry.generation == gen_id:
                continue
            self.journal_generation(gen_id)

    def journal_generation(self, gen_id: str) -> None:
        """Write the activated generation's pointer to the journal (after its commit). A failure to write is
        logged: the database holds the truth, the journal only what a lost database is restored to."""
        from lamina.graphd import journal

        info = self.index.generation(gen_id)
        if info is None:
            return
        entry = journal.JournalledGeneration(
            identity=info.identity,
            generation=gen_id,
            manifest=info.manifest,
            count=info.committed_count,
            digest=info.committed_digest,
            activated=info.activated,
            members=tuple(self.index.activated_members(gen_id)),
        )
        try:
            journal.write_entry(journal.journal_dir(self.ws.data_dir), entry)
        except OSError as exc:
            log.error("could not journal %s: %s", gen_id, exc)

    # --- the repository instance, memory at rest -----------------------------------------------------
    def watch_instance(self, stamp: InstanceStamp, model_idle_seconds: float, dormant_seconds: float) -> None:
        self.stamp = stamp
        self.model_idle_seconds = model_idle_seconds
        self.dormant_seconds = dormant_seconds

    def repository_changed(self) -> bool:
        """Whether the repository instance graphd serves is gone or replaced (deleted, cloned again, moved);
        if so graphd stops. Two stats: asked on every idle tick and before every request."""
        if self.stamp is None:
            return False
        reason = instance_change(self.ws, self.stamp)
        if reason is None:
            return False
        if self.repository_gone is None:
            log.warning("the repository this graphd serves is no longer there: %s; exiting", reason)
            self.repository_gone = reason
        self.stopping.set()
        return True

    def rest_when_idle(self) -> None:
        """Give back what an idle graphd can reload on demand: the model after model_idle_seconds without
        an embedding (reloading costs ~0.3 s and gives the same vectors bit for bit), and its databases and
        ranking state after dormant_seconds without any request (see go_dormant)."""
        if self.builds.busy:
            return
        now = time.monotonic()
        if self.retrieval.model_loaded and now - self.retrieval.model_used >= self.model_idle_seconds:
            with self.db_lock:
                self.release_memory()
        if not self.dormant and now - self.last_activity >= self.dormant_seconds:
            with self.db_lock:
                if not self.builds.busy:
                    self.go_dormant()

    def go_dormant(self) -> bool:
        """Close both databases (checkpointing them), drop the ranking state and the model, and give the
        heap back: Ladybug holds ~5.5 MB per node table while a database is open, whatever it stores
        (bench/graphd_memory.py). The next request that needs them opens them again. Under db_lock."""
        if self.dormant or self.repository_changed():  # closing writes by path (see run)
            return False
        self.dormant_graph_version = self.product.graph_version()
        self.retrieval.release_model()
        self.retrieval.forget_all()
        self.close()
        self.dormant = True
        gc.collect()
        trim_heap()
        log.info(
            "dormant: databases closed, ranking state and model dropped (%s bytes resident)", resident_bytes()
        )
        return True

    def wake(self) -> None:
        """Open the databases again after go_dormant (under db_lock)."""
        if not self.dormant:
            return
        from lamina.graph import ladybug as lb
        from lamina.graph.store import ProductStore

        started = time.perf_counter()
        self.product_db = self.open_product_db()
        self.index_db, index_conn, self.index = self.open_index_store()
        self.connections = [lb.Connection(self.product_db), index_conn]
        self.product = ProductStore(self.connections[0])
        self.retrieval.reopened(self.product, self.index)
        self.index_churn = 0
        self.dormant = False
        log.info("awake: databases opened again in %.0f ms", (time.perf_counter() - started) * 1000)

    def op_rest(self, header: dict[str, Any], payload: bytes) -> Reply:
        """Go dormant now (what graphd does by itself after dormant_seconds without a request)."""
        if not self.builds.busy:
            self.go_dormant()
        return {"dormant": self.dormant, "rss_bytes": resident_bytes()}, b""

    def release_memory(self) -> bool:
        released = self.retrieval.release_model()
        gc.collect()
        trim_heap()
        if released:
            log.info("model unloaded after %.0f s without an embedding", self.model_idle_seconds)
        return released

    def op_model_release(self, header: dict[str, Any], payload: bytes) -> Reply:
        """Unload the model now (what graphd does by itself after model_idle_seconds of no embedding)."""
        released = self.release_memory()
        return {"released": released, "rss_bytes": resident_bytes()}, b""

    # --- operations ------------------------------------------------------------------------------
    def op_ping(self, header: dict[str, Any], payload: bytes) -> Reply:
        return {
            "pid": os.getpid(),
            "instance": self.ws.instance,
            "root": str(self.ws.root),
            "rss_bytes": resident_bytes(),
            "model_loaded": self.retrieval.model_loaded,
            "dormant": self.dormant,
            "socket": str(self.ws.socket_path),
            "uptime_seconds": round(time.time() - self.started, 3),
            "databases": {"product": str(self.ws.product_db), "index": str(self.ws.index_db)},
            "log": str(self.ws.log_path),
            "idle_timeout_seconds": self.idle_timeout,
            "graph_version": self.dormant_graph_version if self.dormant else self.product.graph_version(),
            "model_threads": self.retrieval.model_threads,
            # What graphd's memory at rest holds besides the databases (bench/graphd.py reports them).
            "ranking_states": self.retrieval.warm_generations(),
            "cached_versions": self.retrieval.cached_versions(),
            "late_index_bytes": self.retrieval.late_index_bytes(),
            "arrow_bytes": _arrow_bytes(),
            "index_reopened": self.index_reopened,
            "protocol": PROTOCOL_VERSION,
            "operations": [request.name for request in REQUESTS],
            "code": self.code,
        }, b""

    def op_stop(self, header: dict[str, Any], payload: bytes) -> Reply:
        self.stopping.set()
        return {"stopping": True}, b""

    def op_graph_import(self, header: dict[str, Any], payload: bytes) -> Reply:
        from lamina.graph.load import load_graph_files
        from lamina.graph.version import graph_version

        files = _require(header, "files", dict)
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
            raise LaminaError("LAMINA_PROTOCOL", "graph files must map paths to text")
        graph = load_graph_files(files)  # raises LAMINA_GRAPH_INVALID listing every problem; nothing written
        version = graph_version(graph)
        changed = version != self.product.graph_version()
        if changed:
            self.product.replace(graph, version)
            self.retrieval.forget()
        return {"graph_version": version, "changed": changed}, b""

    def op_graph_roots(self, header: dict[str, Any], payload: bytes) -> Reply:
        return {"roots": self.product.roots(), "graph_version": self.product.graph_version()}, b""

    def op_graph_closure(self, header: dict[str, Any], payload: bytes) -> Reply:
        """One workflow's stored closure and its obligations (`lamina mcp`'s show_workflow)."""
        from lamina.graph.closure import obligations

        workflow = _require(header, "workflow", str)
        status = self.product.workflow_exists(workflow)
        if status is None:
            raise self.product.unknown_workflow(workflow)
        closure = self.product.closure([workflow])
        return {
            "workflow": workflow,
            "status": status,
            "root": any(r["id"] == workflow for r in self.product.roots()),
            "graph": closure,
            "obligations": obligations(closure),
            "graph_version": self.product.graph_version(),
        }, b""

    def op_index_put(self, header: dict[str, Any], payload: bytes) -> Reply:
        table = protocol.decode_table(payload)
        self.remember_versions(table)
        added = self.index.put_versions(table)
        self.index_churn += added
        return {"added": added}, b""

    def remember_versions(self, table: Any) -> None:
        """Put the fields of the versions the index store lacks (all but text and vector) into the content
        store, first: what a journalled generation is restored from (restore_generation)."""
        import json

        import pyarrow as pa

        from lamina.index.cas import ContentStore
        from lamina.index.document import VERSION_COLUMNS

        if "id" not in table.column_names:
            return  # put_versions reports the malformed table
        new = set(self.index.missing_versions(table.column("id").to_pylist()))
        if not new:
            return
        fields = table.filter(pa.array([i in new for i in table.column("id").to_pylist()]))
        fields = fields.select([c for c in VERSION_COLUMNS if c in fields.column_names])
        rows = [(row.pop("id"), json.dumps(row, sort_keys=True)) for row in fields.to_pylist()]
        store = ContentStore(self.ws.store_dir)
        try:
            store.put_versions(rows)
        finally:
            store.close()

    def op_gen_begin(self, header: dict[str, Any], payload: bytes) -> Reply:
        import secrets

        identity = _require(header, "identity", str)
        manifest = _require(header, "manifest", dict)
        count = _require(header, "expected_count", int)
        digest = _require(header, "expected_digest", str)
        base = header.get("base")
        if base is not None and not isinstance(base, str):
            raise LaminaError("LAMINA_PROTOCOL", "request field 'base' must be a generation id")
        # One writer per identity holds the client-side lock, so a pending generation here is a dead one.
        self.index.abandon_pending("superseded by a new build of the same identity", identity)
        gen_id = "g-" + time.strftime("%Y%m%d%H%M%S") + "-" + secrets.token_hex(4)
        based = self.index.begin(gen_id, identity, manifest, count, digest, base=base)
        return {"generation": gen_id, "based_on": base if based else None}, b""

    def op_gen_members(self, header: dict[str, Any], payload: bytes) -> Reply:
        """Declare members; the reply names those the index store lacks (what the worker must upload), so
        a build needs no second pass over its ids to learn what to upload."""
        gen_id = _require(header, "generation", str)
        removed = header.get("remove", [])
        if not isinstance(removed, list):
            raise LaminaError("LAMINA_PROTOCOL", "request field 'remove' must be a list of version ids")
        ids = protocol.decode_table(payload).column("id").to_pylist()
        self.index.remove_members(gen_id, removed)
        self.index.add_members(gen_id, ids)
        return {"missing": self.index.missing_versions(ids)}, b""

    def op_gen_commit(self, header: dict[str, Any], payload: bytes) -> Reply:
        gen_id = _require(header, "generation", str)
        info = self.index.commit_and_activate(gen_id, graph_version=self.product.graph_version())
        self.journal_generation(gen_id)
        self.gc_due = True  # collected when graphd is idle, off the critical path of the build
        log.info("activated %s for %s (%d members)", gen_id, info.identity, info.committed_count)
        # The query that follows a build needs the new ranking state: start on it as soon as this reply
        # is out (the thread waits for the database lock), while the worker finishes and reconnects.
        threading.Thread(
            target=self.warm_state, args=(info.identity,), name="warm-state", daemon=True
        ).start()
        # The head's history is git's work, not the databases': read beside the ranking state, not after it.
        threading.Thread(
            target=self.warm_history, args=(info.manifest,), name="warm-history", daemon=True
        ).start()
        return {"generation": gen_id, "count": info.committed_count, "digest": info.committed_digest}, b""

    def warm_state(self, identity: str) -> None:
        with self.db_lock:
            try:
                self.wake()
                self.retrieval.state(identity)
            except StorageFailure as exc:
                self.storage_failed("preparing the ranking state", exc)
                return
            except Exception:  # the query will meet (and report) the same problem
                log.exception("preparing the ranking state of %s failed", identity)
                return
        try:  # the roots' vectors need the selection model, not the databases: computed outside their lock
            self.retrieval.warm_root_vectors(identity)
        except Exception:  # the query will meet (and report) the same problem
            log.exception("preparing the roots' vectors of %s failed", identity)

    def warm_history(self, manifest: dict[str, Any]) -> None:
        try:
            self.retrieval.warm_history(manifest)
        except Exception:  # the query will meet (and report) the same problem
            log.exception("reading the history of %s failed", manifest.get("source_revision"))

    def op_gen_fail(self, header: dict[str, Any], payload: bytes) -> Reply:
        self.index.fail(_require(header, "generation", str), str(header.get("reason", "failed")))
        return {}, b""

    def op_gen_status(self, header: dict[str, Any], payload: bytes) -> Reply:
        identity = _require(header, "identity", str)
        current = self.index.current(identity)
        info = self.index.generation(current) if current else None
        failure = self.index.last_failure(identity)
        last_failure = (
            {
                "generation": failure.id,
                "state": failure.state,
                "reason": failure.failure,
                "at": failure.created,
            }
            if failure
            else None
        )
        recovery = self.index.recovery()
        if recovery is not None and (last_failure is None or recovery["at"] >= last_failure["at"]):
            last_failure = _recovery_failure(recovery)
        return {
            "generation": current,
            # why this identity has no generation when graphd replaced the store at its start
            "index_replaced": self.index_replaced if current is None else None,
            "manifest": info.manifest if info else None,
            "digest": info.committed_digest if info else None,
            "activated": info.activated if info else None,
            "counts": info.counts if info else {},
            "pending": self.index.pending(identity),
            "last_failure": last_failure,
            "restored": bool(recovery and current and current in recovery["restored"]),
            "graph_version": self.product.graph_version(),
        }, b""

    def op_query_prepare(self, header: dict[str, Any], payload: bytes) -> Reply:
        identity = _require(header, "identity", str)
        task = _require(header, "task", str)
        workflow = header.get("workflow")
        if workflow is not None and not isinstance(workflow, str):
            raise LaminaError("LAMINA_PROTOCOL", "workflow must be a string")
        return self.retrieval.prepare(identity, task, workflow, header.get("fresh")), b""

    def op_query_search(self, header: dict[str, Any], payload: bytes) -> Reply:
        identity = _require(header, "identity", str)
        text = _require(header, "text", str)
        ranker = header.get("ranker", "hybrid")
        if ranker not in ("hybrid", "lexical", "dense"):
            raise LaminaError("LAMINA_PROTOCOL", f"unknown ranker {ranker!r}")
        return self.retrieval.search(identity, text, ranker), b""

    def op_embed(self, header: dict[str, Any], payload: bytes) -> Reply:
        import pyarrow as pa

        texts = _require(header, "texts", list)
        model_digest = _require(header, "model_digest", str)
        if len(texts) > GRAPHD_EMBED_MAX_TEXTS or not all(isinstance(t, str) for t in texts):
            raise LaminaError("LAMINA_PROTOCOL", f"embed takes at most {GRAPHD_EMBED_MAX_TEXTS} strings")
        vectors = self.retrieval.embed_texts(texts, model_digest)
        table = pa.table({"vector": protocol.vector_column(vectors)})
        return {"count": len(texts)}, protocol.encode_table(table)

    def close(self) -> None:
        """Close both databases (checkpointing them) while graphd still holds its lock. A prepared statement
        still alive keeps Ladybug from closing (it would close, and checkpoint, at interpreter exit, after
        the lock is gone, while the next graphd opens the files): drop them first."""
        if self.dormant:
            return
        self.product.release_statements()
        self.index.release_statements()
        for conn in self.connections:
            try:
                conn.close()
            except Exception:  # a failed database must not keep the others open
                log.exception("closing a connection failed")
        for db, path in ((self.product_db, self.ws.product_db), (self.index_db, self.ws.index_db)):
            try:
                db.close()
            except Exception:
                log.exception("closing a database failed")
            if Path(str(path) + ".wal").exists():
                log.warning("%s still has a write-ahead log after closing (not checkpointed)", path)

    def collect_when_idle(self) -> None:
        """Garbage-collect superseded generations once no request has come for GC_IDLE_SECONDS."""
        if (
            self.dormant
            or not self.gc_due
            or self.builds.busy
            or time.monotonic() - self.last_activity < GC_IDLE_SECONDS
        ):
            return
        with self.db_lock:
            try:
                stats = self.index.collect_garbage(full=self.gc_full)
                self.gc_full = self.gc_full and bool(stats.get("skipped"))
                # Ranking states of generations no identity points at any more (another identity's
                # build, an invalidation), with the cached versions only they used.
                self.retrieval.keep_current(dict(self.index.current_pointers()))
            except StorageFailure as exc:
                self.storage_failed("garbage collection", exc)
                return
            except Exception:  # collection is an optimisation: a bug in it must not take graphd down
                log.exception("garbage collection failed")
                stats = {}
            self.gc_due = bool(stats.get("skipped"))  # a pending build blocks collection: retry later
            try:
                stats["recent_versions_folded"] = self.index.fold_recent_versions()
            except StorageFailure as exc:
                self.storage_failed("folding recent versions", exc)
                return
            except Exception:
                log.exception("folding recent versions failed")
            log.info("garbage collection: %s", stats)
            if self.repository_changed():  # a checkpoint removes `<db>.wal` by path: maybe a new clone's
                return
            try:  # fold the write-ahead log into the database now, not inside the next build's commit
                self.connections[1].execute("CHECKPOINT")
            except RuntimeError:
                log.exception("checkpoint failed")
            self.index_churn += int(stats.get("versions", 0))
            if self.index_churn >= INDEX_REOPEN_VERSIONS and not stats.get("skipped"):
                self.reopen_index()
            trim_heap()  # what the collection and the build before it freed
            log.info("idle work done: %s bytes resident", resident_bytes())  # bench/graphd.py waits for it

    def reopen_index(self) -> None:
        """Close the index database and open it again, keeping the store's memory (under db_lock, after an
        idle collection that followed INDEX_REOPEN_VERSIONS of uploads or collection): Ladybug hands its
        buffer pool's pages back only when the database closes, and at rest they serve nothing (the ranking
        state is in graphd's memory). Not while a generation is pending (its members live in the store)."""
        from lamina.graph import ladybug as lb

        if self.dormant or self.index.pending() or self.repository_changed():  # closing writes by path
            return
        started, before = time.perf_counter(), resident_bytes()
        previous = self.index
        previous.release_statements()
        self.connections[1].close()
        self.index_db.close()
        try:  # the database was closed cleanly a moment ago: failing to open it is a storage failure
            database = lb.open_database(self.ws.index_db, **INDEX_SETTINGS).database
            index_conn = lb.Connection(database)
            store = IndexStore(index_conn)
        except (RuntimeError, LaminaError) as exc:
            self.storage_failed("reopening the index database", StorageFailure(str(exc)))
            return
        store.adopt_memory(previous)
        self.index_db, self.index = database, store
        self.connections[1] = index_conn
        self.retrieval.index = self.index
        self.index_churn = 0
        self.index_reopened += 1
        gc.collect()
        trim_heap()
        log.info(
            "index database reopened to hand back its buffer pool in %.0f ms (%s -> %s bytes resident)",
            (time.perf_counter() - started) * 1000, before, resident_bytes(),
        )  # fmt: skip

    def require_space(self, op: str, needed: int) -> None:
        free = shutil.disk_usage(self.ws.data_dir).free
        if free < needed + LOW_DISK_BYTES:
            raise LaminaError(
                "LAMINA_DISK_FULL",
                f"{op} refused: {free} bytes free under {self.ws.data_dir}, "
                f"{needed + LOW_DISK_BYTES} needed (with a {LOW_DISK_BYTES}-byte reserve); nothing was written",
            )

    def storage_failed(self, op: str, exc: StorageFailure) -> None:
        """The one policy for a storage failure, in either store and on any path (a request, collection,
        folding, the ranking state): answer what is in flight, then exit, so that the next graphd reopens
        the databases at their last committed state (and restores the journalled generations)."""
        log.error("%s: storage failure, exiting so the next graphd recovers the databases: %s", op, exc)
        self.stopping.set()

    def storage_error(self, op: str, exc: Exception) -> LaminaError:
        free = shutil.disk_usage(self.ws.data_dir).free
        if free < LOW_DISK_BYTES:
            return LaminaError(
                "LAMINA_DISK_FULL", f"{op}: the disk under {self.ws.data_dir} is full ({free} bytes free)"
            )
        return LaminaError("LAMINA_INTERNAL", f"{op}: the index database failed: {exc}")

    # --- connection handling ---------------------------------------------------------------------
    def handle_connection(self, conn: socket.socket) -> None:
        nonce = protocol.new_nonce()
        last_seq = 0
        try:
            conn.sendall(protocol.GREETING + nonce)
            while not self.stopping.is_set():
                with self.connections_lock:
                    self.idle_connections.add(conn)
                try:
                    body = protocol.read_body(conn)
                except EOFError:
                    return
                except LaminaError as err:  # oversized, short or truncated: answer, then drop the connection
                    self._refuse(conn, nonce, last_seq + 1, err)
                    return
                finally:
                    with self.connections_lock:
                        self.idle_connections.discard(conn)
                try:
                    frame = protocol.open_body(self.key, nonce, protocol.TO_SERVER, body, last_seq)
                except LaminaError as err:
                    self.repository_changed()  # a client of a new clone at this path would not verify
                    self._refuse(conn, nonce, last_seq + 1, err)
                    return
                last_seq = frame.seq
                if self.repository_changed():
                    gone = LaminaError(
                        "LAMINA_GRAPHD_UNAVAILABLE",
                        f"graphd serves a repository that no longer exists: {self.repository_gone}",
                        "Run the command again: it starts a graphd for the repository now at this path.",
                    )
                    self._refuse(conn, nonce, frame.seq, gone)
                    return
                self.last_activity = time.monotonic()
                request = BY_NAME.get(str(frame.header.get("op")))
                if request is not None and request.streams:
                    header, out_payload = self.host_build(conn, nonce, frame)
                else:
                    header, out_payload = self.dispatch(frame)
                conn.sendall(
                    protocol.encode_frame(self.key, nonce, protocol.TO_CLIENT, frame.seq, header, out_payload)
                )
                self.last_activity = time.monotonic()
        except (BrokenPipeError, ConnectionResetError, EOFError):
            return
        finally:
            conn.close()

    def _refuse(self, conn: socket.socket, nonce: bytes, seq: int, err: LaminaError) -> None:
        log.warning("refused a frame: %s", err)
        reply = {"ok": False, **err.to_json()}
        try:
            conn.sendall(protocol.encode_frame(self.key, nonce, protocol.TO_CLIENT, seq, reply))
        except OSError:
            pass

    def host_build(self, conn: socket.socket, nonce: bytes, frame: protocol.Frame) -> Reply:
        """Run a client's build here (lamina/graphd/hosting.py). Unlike other requests it does not hold
        the database lock: the build talks to graphd through the socket like any worker."""
        sent = 0

        def send_progress(text: str) -> None:
            nonlocal sent
            sent += 1
            header = {"ok": True, "more": True, "n": sent, "progress": text}
            try:
                conn.sendall(protocol.encode_frame(self.key, nonce, protocol.TO_CLIENT, frame.seq, header))
            except OSError as exc:
                raise ClientGone(str(exc)) from exc
            self.last_activity = time.monotonic()

        started = time.perf_counter()
        try:
            if frame.header["op"] == "prepare":
                header = self.builds.prepare(frame.header, conn, send_progress)
            else:
                header = self.builds.run(frame.header, conn, send_progress)
            built = time.perf_counter()
            if frame.header["op"] == "prepare" and header.get("hosted"):
                header["packet"] = self.packet_after_prepare(frame.header, header, conn, send_progress)
            then = frame.header.get("then_prepare")
            if frame.header["op"] == "build" and header.get("hosted") and isinstance(then, dict):
                header["packet"] = self.prepare_after_build(then)
            if header.get("hosted") and header.get("stats") is not None:
                stats = header["stats"]
                log.info(
                    "hosted build: %.0f ms to fresh (doit %s s, steps %s), then %.0f ms to the packet",
                    (built - started) * 1000, stats.get("seconds", "-"), stats.get("step_seconds", "-"),
                    (time.perf_counter() - built) * 1000,
                )  # fmt: skip
        except LaminaError as err:
            log.info("build failed: %s", err)
            return {"ok": False, **err.to_json()}, b""
        except ClientGone as exc:  # the client went away while progress was being sent to it
            log.info("build stopped: %s", exc)
            gone = LaminaError("LAMINA_INTERRUPTED", "the build was cancelled: its client went away")
            return {"ok": False, **gone.to_json()}, b""
        except Exception as exc:
            log.exception("build crashed")
            bug = LaminaError("LAMINA_INTERNAL", f"build failed: {type(exc).__name__}: {exc}")
            return {"ok": False, **bug.to_json()}, b""
        finally:
            self.last_activity = time.monotonic()
        return {"ok": True, **header, "server_ms": round((time.perf_counter() - started) * 1000, 3)}, b""

    def packet_after_prepare(
        self, request: dict[str, Any], built: dict[str, Any], conn: socket.socket, send: SendProgress
    ) -> dict[str, Any]:
        """The packet of a `prepare` request, once its index is fresh. When graphd has no generation
        although the fingerprint said the index was fresh (its derived store was replaced after a schema
        change or a corruption), rebuild once from the content store (nothing is embedded again) and ask
        again, as the full path does (lamina/commands/common.py)."""
        question = {
            "task": request.get("task"), "workflow": request.get("workflow"),
            "fresh": True, "identity": built["identity"],
        }  # fmt: skip
        try:
            with self.db_lock:
                self.wake()
                return self.op_query_prepare(question, b"")[0]
        except LaminaError as err:
            if err.code != "LAMINA_NO_INDEX":
                raise
        if not request.get("quiet"):
            send("graphd has no generation for this branch/worktree; rebuilding it\n")
        rebuilt = self.builds.prepare(request, conn, send, force=True)
        built["stats"] = rebuilt.get("stats")
        with self.db_lock:
            self.wake()
            return self.op_query_prepare(question, b"")[0]

    def prepare_after_build(self, question: dict[str, Any]) -> dict[str, Any] | None:
        """The packet a client asked for with its build (the fields of a `query.prepare` request), in the
        same round trip; None (the client then asks with `query.prepare`) when it cannot be answered here."""
        try:
            with self.db_lock:
                self.wake()
                packet, _ = self.op_query_prepare(question, b"")
        except LaminaError as err:
            log.info("prepare after build: %s", err)
            return None
        return packet

    def dispatch(self, frame: protocol.Frame) -> Reply:
        op = frame.header.get("op")
        handler = self.handlers.get(op) if isinstance(op, str) else None
        if handler is None or not isinstance(op, str):
            err = LaminaError("LAMINA_PROTOCOL", f"unknown request {op!r}")
            return {"ok": False, **err.to_json()}, b""
        started = time.perf_counter()
        try:
            request = BY_NAME[op]
            if request.writes:
                self.require_space(op, frame.size * WRITE_SPACE_FACTOR)
            with self.db_lock:
                if not request.resting:
                    self.wake()
                header, payload = handler(frame.header, frame.payload)
        except LaminaError as err:
            log.info("%s failed: %s", op, err)
            return {"ok": False, **err.to_json()}, b""
        except StorageFailure as exc:
            self.storage_failed(op, exc)
            return {"ok": False, **self.storage_error(op, exc).to_json()}, b""
        except Exception as exc:  # a bug must not kill the daemon or leave the client hanging
            log.exception("%s crashed", op)
            bug = LaminaError("LAMINA_INTERNAL", f"{op} failed: {type(exc).__name__}: {exc}")
            return {"ok": False, **bug.to_json()}, b""
        return {"ok": True, **header, "server_ms": round((time.perf_counter() - started) * 1000, 3)}, payload

    def close_idle_connections(self) -> None:
        """Wake every connection thread waiting for a request: its read ends (EOF) and the thread exits,
        so stopping never waits on clients that merely keep a connection open. A thread in the middle
        of a request is not idle: it finishes and sends its reply."""
        with self.connections_lock:
            idle = list(self.idle_connections)
        for conn in idle:
            try:
                conn.shutdown(socket.SHUT_RD)
            except OSError:  # closed meanwhile
                pass
        if idle:
            log.info("stopping: closed %d idle connection(s)", len(idle))

    def serve(self, listener: socket.socket) -> None:
        listener.settimeout(0.5)  # wake up to notice stop requests and the idle timeout
        while not self.stopping.is_set():
            if time.monotonic() - self.last_activity > self.idle_timeout and not self.builds.busy:
                log.info("idle for %.0f s; exiting", self.idle_timeout)
                break
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if self.repository_changed():  # before any idle work: it writes by path (see run)
                    break
                self.collect_when_idle()
                self.rest_when_idle()
                continue
            conn.settimeout(None)
            self.last_activity = time.monotonic()
            worker = threading.Thread(target=self.handle_connection, args=(conn,), daemon=True)
            self.workers = [w for w in self.workers if w.is_alive()] + [worker]
            worker.start()
        self.builds.cancel_all()  # each stops at its next unit of work, before activating anything
        self.close_idle_connections()
        for worker in self.workers:  # let in-flight replies (such as the answer to `stop`) go out
            worker.join(timeout=None if self.builds.busy else 2.0)


def resident_bytes() -> int | None:
    """This process's resident set (VmRSS), or None where /proc does not tell."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _arrow_bytes() -> int:
    """Bytes Arrow's memory pools hold (uploads, reads); 0 when pyarrow is not imported yet."""
    pa = sys.modules.get("pyarrow")
    return int(pa.total_allocated_bytes()) if pa is not None else 0


def trim_heap() -> None:
    """Return the free pages of the C heap to the system (glibc keeps them otherwise: a closed or
    emptied Ladybug structure, a dropped model). No-op without glibc."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def write_info(ws: Workspace) -> None:
    """graphd.json: what this graphd serves, for a client that cannot verify frames with its key (a new
    clone at the same path) to describe it (lamina/graphd/client.py::other_graphds)."""
    info = {
        "pid": os.getpid(),
        "instance": ws.instance,
        "root": str(ws.root),
        "common_dir": str(ws.common_dir),
        "data_dir": str(ws.data_dir),
        "started": time.time(),
    }
    tmp = ws.info_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(info) + "\n")
    tmp.replace(ws.info_path)


def exit_for_a_vanished_repository(ws: Workspace, lock_fd: int) -> None:
    """Exit without closing (so without checkpointing) the databases: their directory is gone or holds
    another clone's, and real_ladybug 0.15.3's close removes `<database>.wal` by path — measured: it
    deletes the write-ahead log of the database now at that path. What graphd wrote is in the files it
    holds open, which belong to the deleted (or moved) data directory."""
    for path in (ws.socket_path, ws.pid_path, ws.info_path):
        try:
            path.unlink()
        except FileNotFoundError:
            pass
    log.info("stopped (databases left unclosed: the repository is no longer at %s)", ws.root)
    logging.shutdown()
    os.close(lock_fd)
    os._exit(0)


# What restoring a journalled generation may meet; none of it may keep graphd from starting.
RESTORE_FAILURES = (LaminaError, StorageFailure, RuntimeError, OSError, ValueError, KeyError)


def _message(err: Exception) -> str:
    return err.message if isinstance(err, LaminaError) else f"{type(err).__name__}: {err}"


def _remove_database(path: Path) -> None:
    """Delete a Ladybug database and its side files (write-ahead log, shadow pages)."""
    for stale in path.parent.glob(path.name + "*"):
        stale.unlink()


_UNREPLACED_RECOVERY = {
    False: "the pointer journal was ahead of the index store",
    True: "the index store lacked member versions of a current generation",
}


def _recovery_failure(recovery: dict[str, Any]) -> dict[str, Any]:
    """A crash recovery, as `context status` reports a last failure."""
    replaced = "; ".join(f"{store} store {what}" for store, what in sorted(recovery["replaced"].items()))
    restored = ", ".join(recovery["restored"]) or "nothing"
    lost = f"; not restored: {', '.join(recovery['lost'])}" if recovery["lost"] else ""
    repaired = recovery.get("repaired") or []
    lost += f"; stored again: {', '.join(repaired)}" if repaired else ""
    return {
        "state": "crash recovery",
        "reason": f"{replaced or _UNREPLACED_RECOVERY[bool(repaired)]}; restored {restored}{lost}",
        "at": recovery["at"],
        "replaced": recovery["replaced"],
        "restored": recovery["restored"],
        "repaired": repaired,
        "lost": recovery["lost"],
    }


def acquire_daemon_lock(ws: Workspace) -> int:
    fd = os.open(ws.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        holder = ws.pid_path.read_text().strip() if ws.pid_path.exists() else "unknown"
        raise LaminaError(
            "LAMINA_LOCKED",
            f"graphd is already running for this repository (pid {holder})",
            "Use `lamina graphd status` or `lamina graphd stop`.",
        ) from None
    return fd


def run(
    root: Path,
    ready_fd: int | None,
    idle_timeout: float,
    instance: str | None = None,
    model_idle_seconds: float = GRAPHD_MODEL_IDLE_SECONDS,
    dormant_seconds: float = GRAPHD_DORMANT_SECONDS,
) -> int:
    ws = open_workspace(root)
    ensure_dirs(ws)
    if instance is not None and instance != ws.instance:
        sys.stderr.write(
            f"LAMINA_GRAPHD_UNAVAILABLE: the repository at {root} is instance {ws.instance}, not {instance} "
            "(it was replaced since the client looked)\n"
        )
        return 1
    stamp = instance_stamp(ws)  # taken before anything is opened: what graphd serves from now on
    logging.basicConfig(
        filename=str(ws.log_path),
        level=logging.INFO,
        format="%(asctime)s graphd[%(process)d] %(levelname)s %(message)s",
    )
    try:
        lock_fd = acquire_daemon_lock(ws)
    except LaminaError as err:
        sys.stderr.write(f"{err.code}: {err.message}\n")
        return err.exit_status
    # We hold the lock, so any socket or pid file left behind belongs to a dead graphd.
    for stale in (ws.socket_path, ws.pid_path):
        if stale.exists() or stale.is_symlink():
            log.info("removing stale %s", stale)
            stale.unlink()
    try:
        daemon = GraphDaemon(ws, idle_timeout)
    except LaminaError as err:
        log.error("cannot start: %s", err)
        sys.stderr.write(f"{err.code}: {err.message}\nhint: {err.effective_hint}\n")
        return err.exit_status
    daemon.watch_instance(stamp, model_idle_seconds, dormant_seconds)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)  # the socket file is 0600
    try:
        listener.bind(str(ws.socket_path))
    finally:
        os.umask(old_umask)
    listener.listen(64)
    ws.pid_path.write_text(f"{os.getpid()}\n")
    write_info(ws)
    signal.signal(signal.SIGTERM, lambda *_: daemon.stopping.set())
    log.info("listening on %s (idle timeout %.0f s)", ws.socket_path, idle_timeout)
    if ready_fd is not None:
        os.write(ready_fd, b"ready\n")
        os.close(ready_fd)
    try:
        daemon.serve(listener)
    finally:
        listener.close()
        # Checked again here, whatever stopped graphd (a SIGTERM from a new clone's client comes before
        # graphd's own check): closing the databases of a vanished repository removes files by path.
        if daemon.repository_gone is not None or daemon.repository_changed():
            exit_for_a_vanished_repository(ws, lock_fd)
        with daemon.db_lock:
            for path in (ws.socket_path, ws.pid_path, ws.info_path):
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass
            daemon.close()  # before the lock goes: whoever waits on it may open the databases at once
        log.info("stopped")
        os.close(lock_fd)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lamina-graphd")
    parser.add_argument("--root", required=True)
    parser.add_argument("--ready-fd", type=int, default=None)
    parser.add_argument("--idle-timeout", type=float, default=GRAPHD_IDLE_TIMEOUT_SECONDS)
    parser.add_argument("--instance", default=None, help="refuse to serve another repository instance")
    parser.add_argument("--model-idle-seconds", type=float, default=GRAPHD_MODEL_IDLE_SECONDS)
    parser.add_argument("--dormant-seconds", type=float, default=GRAPHD_DORMANT_SECONDS)
    args = parser.parse_args(argv)
    # graphd's stderr is its log: a crash inside a native extension (Ladybug, onnxruntime) leaves every
    # thread's Python stack there instead of nothing.
    faulthandler.enable(all_threads=True)
    return run(
        Path(args.root),
        args.ready_fd,
        args.idle_timeout,
        args.instance,
        args.model_idle_seconds,
        args.dormant_seconds,
    )


if __name__ == "__main__":
    sys.exit(main())
