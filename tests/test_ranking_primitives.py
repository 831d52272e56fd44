"""Ranking primitives: tokenizer, BM25F, cosine, top-k and reciprocal-rank fusion.

Expected BM25 numbers are computed here from the formula (plain Python over token lists, and a few
literal values worked out by hand), never by calling the code under test.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from lamina.constants import BM25_B, BM25_K1, RRF_K, TOKEN_MAX_CHARS
from lamina.retrieval.bm25 import bm25_scores, build_bm25, matched_terms
from lamina.retrieval.dense import as_unit_matrix, cosine_scores, l2_normalize
from lamina.retrieval.fusion import rrf, top_k
from lamina.retrieval.tokenize import STOPWORDS, count_terms, query_terms, stem, tokenize

# --- tokenize ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("RefundService", ["refund", "servic", "refundservic"]),
        ("refund_service", ["refund", "servic", "refundservic"]),
        ("refund-service", ["refund", "servic", "refundservic"]),
        ("HTTPServerError", ["http", "server", "error", "httpservererror"]),
        ("parseJSON", ["pars", "json", "parsejson"]),
        # an acronym's plural is the acronym (session 38: "URLs" split as "UR", "Ls"; "APIs" never met `API`)
        ("URLs", ["url"]),
        ("APIs IDs PRs", ["api", "id", "pr"]),
        ("getURLsFor", ["get", "url", "geturlfor"]),
        ("IDsToRemove", ["id", "remov", "idtoremov"]),
        ("URLSafe", ["url", "saf", "urlsaf"]),
        ("src/shop/refunds.py", ["src", "shop", "refund", "py"]),
        ("__init__", ["init"]),
        ("sha256 v2 2024", ["sha", "256", "sha256", "2", "v2", "2024"]),
        ("order.total_amount", ["order", "total", "amount", "totalamount"]),
    ],
)
def test_tokenize_code_identifiers(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_whole_identifier_normal_form_is_shared_by_all_spellings() -> None:
    spellings = ["ShippedOrders", "shipped_orders", "shipped-orders", "SHIPPED_ORDERS", "shippedOrders"]
    wholes = {tokenize(s)[-1] for s in spellings}
    assert wholes == {"shippedorder"}


def test_stopwords_and_single_letters_are_dropped_but_domain_words_stay() -> None:
    assert tokenize("def refund(self, x): return the order to a customer") == [
        "refund",
        "return",
        "order",
        "customer",
    ]
    assert {"the", "self", "def", "a"} <= STOPWORDS
    assert not {"return", "order", "not", "no", "new"} & STOPWORDS


def test_unicode_is_normalised_and_case_folded() -> None:
    assert tokenize("Café") == tokenize("CAFÉ") == tokenize("cafe\u0301") == ["café"]
    assert tokenize("ＲｅｆｕｎｄＳｅｒｖｉｃｅ") == tokenize("RefundService")  # full-width -> NFKC
    assert tokenize("ÜberGröße") == ["über", "grösse", "übergrösse"]  # case split in any script
    assert tokenize("Straße") == tokenize("STRASSE")  # casefold
    assert tokenize("日本語") == ["日本語"]


def test_numbers_are_kept() -> None:
    assert tokenize("retry 3 times after 500 ms") == ["retry", "3", "tim", "after", "500", "ms"]
    assert tokenize("HTTP_404_NOT_FOUND") == ["http", "404", "not", "found", "http404notfound"]


def test_over_long_runs_are_dropped_whole() -> None:
    digest = "3f9a0c" * (TOKEN_MAX_CHARS // 6 + 1)  # longer than the limit, no separator: a hash
    assert tokenize(f"key {digest} value") == ["key", "valu"]
    assert tokenize(f"key_{digest}") == ["key"]
    count = TOKEN_MAX_CHARS // 7 + 1
    long_name = "_".join(["segment"] * count)  # over the limit: parts kept, whole identifier dropped
    assert tokenize(long_name) == ["segment"] * count


# The small check behind the stemming decision (docs/ranking.md): words a task and code write
# differently that should meet, and words that must stay apart.
SHOULD_MEET = [
    ("refund", "refunds"),
    ("refund", "refunded"),
    ("ship", "shipped"),
    ("ship", "shipping"),
    ("cancel", "cancelled"),
    ("cancel", "canceled"),
    ("place", "placed"),
    ("cache", "caches"),
    ("match", "matches"),
    ("policy", "policies"),
    ("apply", "applied"),
    ("address", "addresses"),
    ("status", "statuses"),
    ("alias", "aliases"),
    ("add", "added"),
    ("add", "adding"),
    ("create", "creating"),
    ("index", "indexes"),
    ("install", "installed"),
]
MUST_DIFFER = [("string", "str"), ("thing", "th"), ("status", "stat"), ("need", "ne"), ("class", "cla")]


def test_light_stemming_conflates_inflections() -> None:
    for a, b in SHOULD_MEET:
        assert stem(a) == stem(b), (a, b)
    for a, b in MUST_DIFFER:
        assert stem(a) != stem(b), (a, b)
    assert stem("naïve") == "naïve"  # only ASCII words are stemmed
    assert stem("utf8") == "utf8"


def test_tokenize_is_deterministic_and_count_terms_agrees() -> None:
    text = "class RefundService:\n    def issue(self, order_id): return refunds.issue(order_id) # émis"
    assert tokenize(text) == tokenize(text)
    assert count_terms(text) == dict(Counter(tokenize(text)))


def test_query_terms_are_distinct_in_first_seen_order() -> None:
    assert query_terms("refund the refunds of a paid order, refund now") == ["refund", "paid", "order", "now"]
    assert query_terms("") == []
    assert query_terms("the a of") == []


# --- BM25 ----------------------------------------------------------------------------------------


def _idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def _okapi(docs: list[list[str]], query: list[str], k1: float, b: float) -> list[float]:
    """Classic Okapi BM25 written out from the textbook formula."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    out = []
    for d in docs:
        total = 0.0
        for t in set(query):
            tf = d.count(t)
            if tf:
                df = sum(1 for x in docs if t in x)
                total += _idf(n, df) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avgdl))
        out.append(total)
    return out


TINY = ["refund order order", "ship order", "refund payment payment payment", "warehous"]


def test_tiny_corpus_tokens_are_what_the_hand_computation_assumes() -> None:
    assert [tokenize(t) for t in TINY] == [
        ["refund", "order", "order"],
        ["ship", "order"],
        ["refund", "payment", "payment", "payment"],
        ["warehous"],
    ]


def test_bm25_single_field_matches_okapi_by_hand() -> None:
    index = build_bm25([{"body": t} for t in TINY], weights={"body": 1.0}, k1=1.2, b=0.75)
    scores = bm25_scores(index, ["refund", "order"])
    assert scores.dtype == np.float32 and scores.shape == (4,)

    # By hand: N=4, avgdl = (3+2+4+1)/4 = 2.5; df(refund)=2, df(order)=2 -> idf = ln(1 + 2.5/2.5) = ln 2.
    # d0: refund tf=1, order tf=2, dl=3: norm = 1.2*(0.25 + 0.75*3/2.5) = 1.38
    #     ln2 * (1*2.2/(1+1.38) + 2*2.2/(2+1.38)) = 0.693147 * (0.924370 + 1.301775) = 1.543048
    # d1: order tf=1, dl=2: norm = 1.2*(0.25 + 0.6) = 1.02 -> ln2 * 2.2/2.02 = 0.754913
    # d2: refund tf=1, dl=4: norm = 1.2*(0.25 + 1.2) = 1.74 -> ln2 * 2.2/2.74 = 0.556538
    assert scores.tolist() == pytest.approx([1.543048, 0.754913, 0.556538, 0.0], abs=1e-5)
    expected = _okapi([tokenize(t) for t in TINY], ["refund", "order"], 1.2, 0.75)
    assert scores.tolist() == pytest.approx(expected, rel=1e-6)


def test_bm25_uses_constants_by_default_and_idf_stays_positive() -> None:
    docs = [{"body": "order refund"}, {"body": "order ship"}, {"body": "order"}]
    index = build_bm25(docs)
    assert (index.k1, index.b) == (BM25_K1, BM25_B)
    scores = bm25_scores(index, ["order"])  # in every document: Lucene's idf is still > 0
    assert (scores > 0).all()
    expected = _okapi([tokenize(d["body"]) for d in docs], ["order"], BM25_K1, BM25_B)
    assert scores.tolist() == pytest.approx(expected, rel=1e-6)


def test_bm25f_combines_fields_before_saturation() -> None:
    docs = [
        {"path": "src/refunds.py", "symbol": "issue_refund", "body": "refund the payment"},
        {"path": "src/orders.py", "symbol": "ship", "body": "ship order refund"},
        {"path": "src/util.py", "symbol": "helper", "body": "nothing relevant"},
    ]
    weights = {"path": 2.0, "symbol": 3.0, "body": 1.0}
    k1, b = 1.2, 0.75
    index = build_bm25(docs, weights=weights, k1=k1, b=b)

    fields = {f: [tokenize(d[f]) for d in docs] for f in weights}
    avg = {f: sum(len(t) for t in fields[f]) / len(docs) for f in weights}
    df = sum(1 for i in range(len(docs)) if any("refund" in fields[f][i] for f in weights))
    expected = []
    for i in range(len(docs)):
        tf_tilde = sum(
            weights[f] * fields[f][i].count("refund") / ((1 - b) + b * len(fields[f][i]) / avg[f])
            for f in weights
        )
        expected.append(_idf(len(docs), df) * tf_tilde * (k1 + 1) / (k1 + tf_tilde) if tf_tilde else 0.0)
    assert bm25_scores(index, ["refund"]).tolist() == pytest.approx(expected, rel=1e-6)
    assert index.doc_lengths.tolist() == [sum(len(fields[f][i]) for f in weights) for i in range(3)]


def _bm25f_reference(docs: list[dict[str, str]], weights: dict[str, float], query: list[str]) -> list[float]:
    """BM25F straight from the formula, over tokenize() of each field."""
    k1, b = BM25_K1, BM25_B
    n = len(docs)
    fields = {f: [tokenize(d.get(f, "")) for d in docs] for f in weights}
    avg = {f: sum(len(t) for t in fields[f]) / n for f in weights}
    out = []
    for i in range(n):
        total = 0.0
        for term in set(query):
            tf_tilde = sum(
                weights[f] * fields[f][i].count(term) / ((1 - b) + b * len(fields[f][i]) / avg[f])
                for f in weights
                if avg[f] > 0
            )
            if tf_tilde:
                df = sum(1 for j in range(n) if any(term in fields[f][j] for f in weights))
                total += _idf(n, df) * tf_tilde * (k1 + 1) / (k1 + tf_tilde)
        out.append(total)
    return out


def test_bm25_build_matches_the_formula_on_a_random_corpus() -> None:
    # Words that exercise the build: repeats inside one identifier, stopword-only identifiers,
    # camelCase, unicode, digits, and fields that are empty or missing.
    pool = ["order_order", "the_a", "RefundService", "refunds", "ship", "shippedOrders", "café", "x86", "of"]
    rng = np.random.default_rng(3)
    docs: list[dict[str, str]] = []
    for _ in range(40):
        doc = {
            f: " ".join(rng.choice(pool, size=int(rng.integers(0, 6)))) for f in ("path", "symbol", "body")
        }
        if rng.random() < 0.2:
            del doc["symbol"]
        docs.append(doc)
    weights = {"path": 2.0, "symbol": 3.0, "body": 1.0}
    index = build_bm25(docs, weights=weights)
    assert index.weights.has_sorted_indices
    for query in (["order"], ["refund", "servic", "refundservic"], ["café", "86", "ship", "shippedorder"]):
        expected = _bm25f_reference(docs, weights, query)
        assert bm25_scores(index, query).tolist() == pytest.approx(expected, rel=1e-5, abs=1e-7)
        for doc_id in range(len(docs)):
            in_doc = [t for t in query if any(t in tokenize(docs[doc_id].get(f, "")) for f in weights)]
            assert matched_terms(index, doc_id, query) == in_doc


def test_field_weights_change_the_order() -> None:
    docs = [
        {"path": "src/refunds.py", "body": "issue a credit note for the customer"},
        {"path": "src/notes.py", "body": "issue the refund for the customer"},
    ]
    by_path = bm25_scores(build_bm25(docs, weights={"path": 5.0, "body": 1.0}), ["refund"])
    by_body = bm25_scores(build_bm25(docs, weights={"path": 1.0, "body": 5.0}), ["refund"])
    assert by_path[0] > by_path[1] > 0
    assert by_body[1] > by_body[0] > 0


def test_repeated_query_terms_count_once_and_unknown_terms_are_ignored() -> None:
    index = build_bm25([{"body": t} for t in TINY])
    once = bm25_scores(index, ["refund", "order"])
    assert np.array_equal(bm25_scores(index, ["order", "refund", "refund", "zebra"]), once)


def test_empty_corpus_and_empty_query_give_zero_scores() -> None:
    empty = build_bm25([])
    assert empty.n_docs == 0 and bm25_scores(empty, ["refund"]).shape == (0,)
    index = build_bm25([{"body": t} for t in TINY])
    assert not bm25_scores(index, []).any()
    assert not bm25_scores(index, query_terms("the of a")).any()
    blank = build_bm25([{"body": ""}, {"path": "", "body": "   "}])
    assert blank.n_terms == 0 and bm25_scores(blank, ["x"]).tolist() == [0.0, 0.0]


def test_unknown_field_and_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="titel"):
        build_bm25([{"titel": "refund"}], weights={"title": 1.0})
    with pytest.raises(ValueError):
        build_bm25([{"body": "x"}], weights={"body": 0.0})
    with pytest.raises(ValueError):
        build_bm25([{"body": "x"}], b=1.5)


def test_matched_terms_names_the_query_terms_in_a_document() -> None:
    index = build_bm25([{"body": t} for t in TINY])
    query = query_terms("Refund the ordered payments, refund")
    assert query == ["refund", "order", "payment"]
    assert matched_terms(index, 0, query) == ["refund", "order"]
    assert matched_terms(index, 2, query) == ["refund", "payment"]
    assert matched_terms(index, 3, query) == []
    with pytest.raises(IndexError):
        matched_terms(index, 4, query)


# --- dense ---------------------------------------------------------------------------------------


def test_cosine_scores_are_exact_cosines() -> None:
    rng = np.random.default_rng(7)
    raw = rng.standard_normal((20, 8))
    matrix = as_unit_matrix(raw)
    assert matrix.dtype == np.float32 and matrix.flags.c_contiguous
    query = l2_normalize(raw[3] + 0.1)
    expected = [
        float(np.dot(r, raw[3] + 0.1) / np.linalg.norm(r) / np.linalg.norm(raw[3] + 0.1)) for r in raw
    ]
    scores = cosine_scores(matrix, query)
    assert scores.dtype == np.float32
    assert scores.tolist() == pytest.approx(expected, abs=1e-5)
    assert int(np.argmax(scores)) == 3


def test_cosine_shape_and_layout_errors() -> None:
    matrix = as_unit_matrix(np.eye(4, 3))
    with pytest.raises(ValueError, match="dimension"):
        cosine_scores(matrix, np.ones(4, dtype=np.float32))
    with pytest.raises(ValueError, match="1-D"):
        cosine_scores(matrix, np.ones((1, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="2-D"):
        cosine_scores(np.ones(3, dtype=np.float32), np.ones(3, dtype=np.float32))
    with pytest.raises(ValueError, match="float32"):
        cosine_scores(matrix.astype(np.float64), np.ones(3))
    with pytest.raises(ValueError, match="C-contiguous"):
        cosine_scores(np.asfortranarray(matrix), np.ones(3, dtype=np.float32))
    with pytest.raises(ValueError, match="dimension"):
        as_unit_matrix(np.ones((2, 5)), dim=3)
    with pytest.raises(ValueError, match="NaN"):
        as_unit_matrix(np.array([[np.nan, 1.0]]))


def test_empty_matrix_and_zero_vectors() -> None:
    empty = as_unit_matrix([], dim=3)
    assert empty.shape == (0, 3)
    assert cosine_scores(empty, l2_normalize([1.0, 0.0, 0.0])).shape == (0,)
    matrix = as_unit_matrix([[0.0, 0.0], [3.0, 4.0]])
    assert matrix.ravel().tolist() == pytest.approx([0.0, 0.0, 0.6, 0.8])
    assert not l2_normalize([0.0, 0.0]).any()


# --- top_k ---------------------------------------------------------------------------------------


def test_top_k_orders_best_first_and_breaks_ties_by_index() -> None:
    scores = np.array([1.0, 3.0, 3.0, 2.0, 3.0, 0.0], dtype=np.float32)
    assert top_k(scores, 2) == [(1, 3.0), (2, 3.0)]
    assert top_k(scores, 4) == [(1, 3.0), (2, 3.0), (4, 3.0), (3, 2.0)]
    assert top_k(scores, 100) == [(1, 3.0), (2, 3.0), (4, 3.0), (3, 2.0), (0, 1.0), (5, 0.0)]
    assert top_k(scores, 100, min_score=0.0) == [(1, 3.0), (2, 3.0), (4, 3.0), (3, 2.0), (0, 1.0)]
    assert top_k(scores, 2, min_score=2.5) == [(1, 3.0), (2, 3.0)]
    assert top_k(scores, 0) == [] and top_k(np.zeros(0), 5) == []
    assert top_k(np.zeros(5), 3, min_score=0.0) == []


def test_top_k_matches_a_full_sort_on_many_ties() -> None:
    rng = np.random.default_rng(11)
    for trial in range(50):
        scores = rng.integers(0, 6, size=300).astype(np.float32)  # many ties
        k = int(rng.integers(1, 40))
        min_score = None if trial % 2 else 1.0
        reference = sorted(
            ((i, float(s)) for i, s in enumerate(scores) if min_score is None or s > min_score),
            key=lambda pair: (-pair[1], pair[0]),
        )[:k]
        assert top_k(scores, k, min_score) == reference


def test_top_k_refuses_nan() -> None:
    with pytest.raises(ValueError, match="NaN"):
        top_k(np.array([1.0, np.nan]), 1)


# --- rrf -----------------------------------------------------------------------------------------


def test_rrf_numbers_and_order() -> None:
    fused = rrf({"bm25": [3, 1, 2], "dense": [1, 4]}, k=60)
    assert [doc for doc, _, _ in fused] == [1, 3, 4, 2]
    scores = {doc: score for doc, score, _ in fused}
    assert scores[1] == pytest.approx(1 / 62 + 1 / 61)
    assert scores[3] == pytest.approx(1 / 61)
    assert scores[4] == pytest.approx(1 / 62)
    assert scores[2] == pytest.approx(1 / 63)
    assert fused[0][2] == {"bm25": 2, "dense": 1}
    assert fused[1][2] == {"bm25": 1}


def test_rrf_default_k_ties_and_ranker_order() -> None:
    fused = rrf({"a": [5, 7], "b": [2, 7]})
    assert [(doc, ranks) for doc, _, ranks in fused] == [(7, {"a": 2, "b": 2}), (2, {"b": 1}), (5, {"a": 1})]
    assert fused[0][1] == pytest.approx(2 / (RRF_K + 2))
    assert fused[1][1] == fused[2][1] == pytest.approx(1 / (RRF_K + 1))
    # exactly rounded sums: swapping ranker order changes neither scores nor order
    three = {"x": [1, 2, 3], "y": [3, 1, 2], "z": [2, 3, 1]}
    reordered = {"z": three["z"], "x": three["x"], "y": three["y"]}
    assert [(d, s) for d, s, _ in rrf(three)] == [(d, s) for d, s, _ in rrf(reordered)]
    assert [d for d, _, _ in rrf(three)] == [1, 2, 3]  # all tied: by doc


def test_rrf_edge_cases() -> None:
    assert rrf({}) == [] and rrf({"bm25": []}) == []
    with pytest.raises(ValueError, match="twice"):
        rrf({"bm25": [1, 2, 1]})
    assert [doc for doc, _, _ in rrf({"a": list(np.array([4, 2]))})] == [4, 2]  # numpy indices accepted


@pytest.mark.parametrize(
    ("task", "folders"),
    [
        ("fix(examples): use updated progress bar blend api", ("examples",)),
        ("examples/textinput: support a virtual cursor", ("examples/textinput",)),
        ("docs(Examples/TextInput): support a virtual cursor", ("examples/textinput",)),
        ("tpl/collections, net/http: fix the index", ("tpl/collections", "net/http")),
        ("docs: fix a typo", ()),  # a commit type, not a folder
        ("Fix the preview window: it scrolls too far", ()),  # no scope: words before a colon
        ("Use updated progress bar blend api", ()),
    ],
)
def test_a_tasks_commit_scope_names_folders(task: str, folders: tuple[str, ...]) -> None:
    from lamina.retrieval.tokenize import read_task

    assert read_task(task).folders == folders
