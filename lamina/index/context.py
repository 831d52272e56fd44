"""What one build of one branch/worktree identity knows: kept free of heavy imports, because the no-op
path (`prepare --check`, a fresh `prepare`) creates it and must answer in milliseconds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lamina.config import Config
from lamina.errors import LaminaError
from lamina.index.memory import BuildMemory
from lamina.index.progress import Progress
from lamina.repo.git import Identity, WorkingState
from lamina.workspace import Workspace

if TYPE_CHECKING:
    from lamina.graphd.client import GraphdClient
    from lamina.index.cas import ContentStore


@dataclass
class BuildContext:
    ws: Workspace
    config: Config
    identity: Identity
    state: WorkingState
    model_digest: str  # "" for a lexical-only build
    compute_fingerprint: Callable[[], str]  # the full fingerprint, computed on first use (it costs ~40 ms)
    quick: str = ""  # the no-op path's quick key of the same working tree (lamina/index/freshness.py)
    pointer: str = ""  # the runtime pointer file the quick key covers
    require_cached: bool = False
    progress: Progress = field(default_factory=Progress)
    stats: dict[str, Any] = field(default_factory=dict)
    error: BaseException | None = None
    hosted: bool = False  # run by graphd (lamina.graphd.hosting), not by the client's own process
    shared_embedder: Any = None  # graphd's loaded model, used by a hosted build
    shards_to_chunk: dict[str, int] = field(default_factory=dict)  # shard -> files, for the progress total
    # (embedding key, text digest) pairs each due shard lacks, listed once when embedding starts
    due_embeddings: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    remote_cache: Any = None  # lamina.cache.remote.RemoteCache once opened; False when none is configured
    prepared_packet: dict[str, Any] | None = None  # the packet a hosted build was asked to prepare after it
    # What builds remember between runs: graphd's build host passes its own; otherwise a fresh one.
    memory: BuildMemory = field(default_factory=BuildMemory)
    _fingerprint: str | None = None
    _store: ContentStore | None = None
    _embedder: Any = None
    _client: GraphdClient | None = None

    @property
    def fingerprint(self) -> str:
        """What the index is built from (lamina/index/manifest.py); the quick key often answers first."""
        if self._fingerprint is None:
            self._fingerprint = self.compute_fingerprint()
        return self._fingerprint

    @property
    def build_dir(self) -> Path:
        return self.ws.build_dir(self.identity.key)

    def path(self, *parts: str) -> Path:
        return self.build_dir.joinpath(*parts)

    def graphd(self) -> GraphdClient:
        """A connection to this repository's graphd, started when absent — except from a build that graphd
        hosts, which must never start a second graphd (it would wait for its own lock)."""
        from lamina.graphd.client import connect

        return connect(
            self.ws, autostart=not self.hosted, idle_timeout=self.config.graphd.idle_timeout_seconds
        )

    def build_client(self) -> GraphdClient:
        """One connection to graphd for the whole build (a new one costs a handshake and a ping each time);
        closed by close_build_client when the build ends."""
        if self._client is None:
            self._client = self.graphd()
        return self._client

    def close_build_client(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def store(self) -> ContentStore:
        if self._store is None:
            from lamina.index.cas import ContentStore

            self._store = ContentStore(self.ws.store_dir)
        return self._store

    def embedder(self) -> Any:
        if self._embedder is None and self.shared_embedder is not None:
            self._embedder = self.shared_embedder
        if self._embedder is None:
            from lamina.runtime.embedder import load_embedder

            self._embedder = load_embedder(threads=self.config.runtime.threads)
            if self._embedder.info.model_digest != self.model_digest:
                raise LaminaError("LAMINA_RETRIEVAL_INTEGRITY", "the runtime changed during the build")
        return self._embedder

    def fingerprint_record(self, generation: str | None) -> dict[str, Any]:
        """What the fingerprint file holds: the full fingerprint and what the quick check needs."""
        return {
            "fingerprint": self.fingerprint,
            "generation": generation,
            "quick": self.quick,
            "graph_paths": list(self.config.graph.paths),
            "pointer": self.pointer,
            "label": self.identity.label,
        }

    @property
    def lexical_only(self) -> bool:
        return not self.model_digest

    @property
    def model(self) -> str:
        """ "<model id>@<revision>" (reads and checks the installed manifest), or "none" when lexical-only."""
        if self.lexical_only:
            return "none"
        from lamina.runtime.install import installed_runtime

        info = installed_runtime()
        if info.model_digest != self.model_digest:
            raise LaminaError("LAMINA_RETRIEVAL_INTEGRITY", "the runtime changed during the build")
        return f"{info.model_id}@{info.revision}"
