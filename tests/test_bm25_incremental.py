"""Incremental BM25: counts made in batches with one TermTable, stacked, selected and reordered, then
assembled, must give exactly the index a from-scratch build of the same documents gives."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp

from lamina.constants import BM25_FIELD_WEIGHTS
from lamina.retrieval.bm25 import (
    BM25Index,
    TermCounts,
    TermTable,
    assemble_bm25,
    bm25_scores,
    build_bm25,
    count_terms,
    matched_terms,
    stack_counts,
    take_rows,
)
from lamina.retrieval.tokenize import query_terms, tokenize

FIELDS = tuple(BM25_FIELD_WEIGHTS)  # path, symbol, body
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ou")]
KEYWORDS = "if for while return class import with try except raise yield await not in the of".split()
ODD_WORDS = ["café", "naïve", "Größe", "ｆｕｌｌ", "x86_64", "HTTPServer", "a1b2", "__init__", "--flag"]


def make_words(rng: random.Random, n: int) -> list[str]:
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3))))
    return sorted(words)


def identifier(rng: random.Random, words: list[str]) -> str:
    parts = [rng.choice(words) for _ in range(rng.randint(1, 3))]
    style = rng.random()
    if style < 0.4:
        return "_".join(parts)
    if style < 0.7:
        return parts[0] + "".join(p.capitalize() for p in parts[1:])
    if style < 0.9:
        return "".join(p.capitalize() for p in parts)
    return "-".join(parts)


def make_doc(rng: random.Random, words: list[str], serial: int) -> dict[str, str]:
    """A code-like chunk. Most carry a word of their own (`rare<serial>…`), so removing the document
    removes terms from the corpus; some fields are empty or missing."""
    method = identifier(rng, words)
    lines = [f"def {method}(self, {identifier(rng, words)}):"]
    for _ in range(rng.randint(0, 8)):
        target, call = identifier(rng, words), identifier(rng, words)
        comment = rng.choice(ODD_WORDS) if rng.random() < 0.2 else rng.choice(words)
        lines.append(f"    {rng.choice(KEYWORDS)} {target} = self.{call}({rng.randint(0, 99)})  # {comment}")
    if rng.random() < 0.8:
        lines.append(f"    return rare{serial}Value")
    doc = {
        "path": f"src/{rng.choice(words)}/{identifier(rng, words).lower()}.py",
        "symbol": f"{identifier(rng, words).capitalize()}.{method}" if rng.random() < 0.8 else "",
        "body": "\n".join(lines),
    }
    if rng.random() < 0.15:
        del doc["symbol"]
    if rng.random() < 0.05:
        doc["body"] = ""
    return doc


def assert_same_index(got: BM25Index, want: BM25Index) -> None:
    assert dict(got.vocabulary) == dict(want.vocabulary)
    assert list(got.vocabulary) == sorted(got.vocabulary)  # canonical: columns in sorted term order
    assert list(got.vocabulary.values()) == list(range(got.n_terms))
    assert got.weights.shape == want.weights.shape
    assert got.weights.dtype == want.weights.dtype == np.float32
    assert got.weights.has_sorted_indices
    for name in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(got.weights, name), getattr(want.weights, name)), name
    assert np.array_equal(got.doc_lengths, want.doc_lengths)
    assert list(got.field_lengths) == list(want.field_lengths)
    for name in want.field_lengths:
        assert np.array_equal(got.field_lengths[name], want.field_lengths[name]), name
    assert dict(got.field_weights) == dict(want.field_weights)
    assert (got.k1, got.b) == (want.k1, want.b)


def assert_same_answers(got: BM25Index, want: BM25Index, queries: list[list[str]]) -> None:
    for query in queries:
        assert np.array_equal(bm25_scores(got, query), bm25_scores(want, query)), query
        for doc in range(0, got.n_docs, max(1, got.n_docs // 7)):
            assert matched_terms(got, doc, query) == matched_terms(want, doc, query)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_batches_with_a_shared_table_assemble_to_the_from_scratch_index(seed: int) -> None:
    """Models graphd's version cache: each generation counts a batch of new documents into the cache,
    then indexes a random subset of the cache in a random order; now and then the cache forgets rows.
    The first batch is never indexed at all: its terms stay in the table only."""
    rng = random.Random(seed)
    words = make_words(rng, rng.randint(40, 150))
    table = TermTable()
    serial = iter(range(10**6))
    cache_docs: list[dict[str, str]] = []
    cache: TermCounts | None = None
    saw_absent_terms = saw_narrow_part = False

    for generation in range(rng.randint(3, 5)):  # 2-4 batches that are indexed, after the unused one
        batch = [make_doc(rng, words, next(serial)) for _ in range(rng.randint(1, 40))]
        width_before = len(table)
        part = count_terms(batch, table, FIELDS)
        assert part.n_docs == len(batch)
        if cache is None:
            cache = part
        else:
            saw_narrow_part |= any(m.shape[1] == width_before < len(table) for m in cache.fields.values())
            cache = stack_counts([cache, part], len(table))
        cache_docs += batch
        assert cache.n_docs == len(cache_docs)
        if generation == 0:
            continue

        rows = rng.sample(range(len(cache_docs)), rng.randint(1, len(cache_docs)))
        final = [cache_docs[r] for r in rows]
        got = assemble_bm25(take_rows(cache, np.asarray(rows)), table)
        want = build_bm25(final)
        assert_same_index(got, want)
        saw_absent_terms |= got.n_terms < len(table)

        known = sorted(want.vocabulary)
        absent = sorted(set(table.ids) - set(want.vocabulary))
        queries = [rng.sample(known, min(len(known), rng.randint(1, 6))) for _ in range(6)]
        queries += [absent[:3] + known[:2], query_terms(final[0].get("body", "")), ["refund", "zzz"]]
        assert_same_answers(got, want, queries)

        if rng.random() < 0.6:  # forget part of the cache, keeping the order of what stays
            keep = sorted(rng.sample(range(len(cache_docs)), rng.randint(1, len(cache_docs))))
            cache = take_rows(cache, keep)
            cache_docs = [cache_docs[r] for r in keep]

    assert saw_absent_terms  # the scenario really left table terms that no indexed document uses
    assert saw_narrow_part  # and stacked an earlier, narrower part with a wider one


def test_assembly_does_not_depend_on_the_history_of_the_table() -> None:
    rng = random.Random(11)
    words = make_words(rng, 80)
    docs = [make_doc(rng, words, i) for i in range(30)]
    fresh = TermTable()
    polluted = TermTable()  # first numbers many other terms, so the same terms get other ids
    count_terms([make_doc(rng, make_words(rng, 200), 1000 + i) for i in range(50)], polluted, FIELDS)
    index_fresh = assemble_bm25(count_terms(docs, fresh, FIELDS), fresh)
    index_polluted = assemble_bm25(count_terms(docs, polluted, FIELDS), polluted)
    assert fresh.ids != {t: polluted.ids[t] for t in fresh.ids}
    assert_same_index(index_polluted, index_fresh)
    assert_same_index(index_fresh, build_bm25(docs))


def test_counts_are_the_raw_term_counts_of_each_field() -> None:
    rng = random.Random(5)
    words = make_words(rng, 60)
    docs = [make_doc(rng, words, i) for i in range(25)]
    table = TermTable()
    counts = count_terms(docs, table, FIELDS)
    assert list(counts.fields) == list(FIELDS)
    assert len(table) == len(table.ids) == len(set(table.terms))
    assert all(table.terms[i] == term for term, i in table.ids.items())
    for name, matrix in counts.fields.items():
        assert matrix.shape == (len(docs), len(table)) and matrix.dtype == np.int32
        for d, doc in enumerate(docs):
            row = matrix.getrow(d)
            got = {table.terms[int(j)]: int(v) for j, v in zip(row.indices, row.data, strict=True)}
            assert got == dict(Counter(tokenize(doc.get(name, ""))))


def test_terms_added_one_document_at_a_time_keep_the_vocabulary_sorted() -> None:
    """Many small additions: new terms sort before, between and after the known ones."""
    rng = random.Random(7)
    words = make_words(rng, 120)
    table = TermTable()
    docs: list[dict[str, str]] = []
    cache: TermCounts | None = None
    for i in range(40):
        doc = make_doc(rng, words, i)
        doc["body"] += f"\n# {rng.choice(['aaa', 'mmm', 'zzz'])}{i}x{rng.choice(words)}"
        part = count_terms([doc], table, FIELDS)
        cache = part if cache is None else stack_counts([cache, part], len(table))
        docs.append(doc)
        order = list(range(len(docs)))[::-1]
        assert_same_index(assemble_bm25(take_rows(cache, order), table), build_bm25(docs[::-1]))


def test_a_term_of_a_removed_document_leaves_the_vocabulary() -> None:
    docs = [
        {"path": "src/refunds.py", "symbol": "issue_refund", "body": "refund the zyzzyvaQuux payment"},
        {"path": "src/orders.py", "symbol": "ship", "body": "ship order refund"},
        {"path": "src/util.py", "body": "nothing relevant"},
    ]
    table = TermTable()
    counts = count_terms(docs, table, FIELDS)
    assert {"zyzzyva", "quux", "zyzzyvaquux"} <= table.ids.keys()
    full = assemble_bm25(counts, table)
    assert "zyzzyvaquux" in full.vocabulary and bm25_scores(full, ["quux"])[0] > 0

    index = assemble_bm25(take_rows(counts, [2, 1]), table)
    for term in ("zyzzyva", "quux", "zyzzyvaquux", "issu"):
        assert term in table.ids and term not in index.vocabulary
    assert index.n_terms == len(index.vocabulary) < len(table)
    assert_same_index(index, build_bm25([docs[2], docs[1]]))
    assert bm25_scores(index, ["quux"]).tolist() == [0.0, 0.0]
    assert bm25_scores(index, ["refund"]).tolist()[0] == 0.0 < bm25_scores(index, ["refund"]).tolist()[1]


def test_stack_counts_pads_narrower_earlier_parts() -> None:
    table = TermTable()
    first = count_terms([{"body": "refund order"}, {"path": "src/a.py"}], table, FIELDS)
    narrow = len(table)
    second = count_terms([{"body": "ship the parcel"}, {"symbol": "OrderService"}], table, FIELDS)
    assert len(table) > narrow
    assert all(m.shape == (2, narrow) for m in first.fields.values())

    stacked = stack_counts([first, second], len(table))
    assert stacked.n_docs == 4
    for name in FIELDS:
        matrix = stacked.fields[name]
        assert isinstance(matrix, sp.csr_matrix) and matrix.shape == (4, len(table))
        dense = matrix.toarray()
        assert np.array_equal(dense[:2, :narrow], first.fields[name].toarray())
        assert not dense[:2, narrow:].any()
        assert np.array_equal(dense[2:], second.fields[name].toarray())

    wider = stack_counts([first, second], len(table) + 3)  # extra empty columns are harmless
    assert wider.fields["body"].shape == (4, len(table) + 3)
    docs = [
        {"body": "refund order"},
        {"path": "src/a.py"},
        {"body": "ship the parcel"},
        {"symbol": "OrderService"},
    ]
    assert_same_index(assemble_bm25(wider, table), build_bm25(docs))
    assert_same_index(assemble_bm25(stacked, table), build_bm25(docs))

    with pytest.raises(ValueError, match="width"):
        stack_counts([first, second], narrow)
    with pytest.raises(ValueError, match="fields"):
        stack_counts([first, count_terms([{"body": "x"}], table, ["body"])], len(table))
    with pytest.raises(ValueError):
        stack_counts([], len(table))


def test_take_rows_selects_reorders_and_repeats() -> None:
    docs = [{"body": "refund order"}, {"body": "ship order"}, {"body": "cancel payment"}]
    table = TermTable()
    counts = count_terms(docs, table, FIELDS)
    picked = take_rows(counts, [2, 0, 2])
    assert picked.n_docs == 3
    assert np.array_equal(picked.fields["body"].toarray(), counts.fields["body"].toarray()[[2, 0, 2]])
    assert_same_index(assemble_bm25(picked, table), build_bm25([docs[2], docs[0], docs[2]]))
    with pytest.raises(IndexError):
        take_rows(counts, [3])
    with pytest.raises(IndexError):
        take_rows(counts, [-1])
    with pytest.raises(TypeError):
        take_rows(counts, np.array([0.0, 1.0]))


@pytest.mark.parametrize("rows", [[], np.zeros(0, dtype=np.int64)])
def test_take_rows_with_an_empty_selection_gives_an_empty_index(rows: list[int] | np.ndarray) -> None:
    table = TermTable()
    counts = count_terms([{"body": "refund order"}, {"path": "src/ship.py"}], table, FIELDS)
    empty = take_rows(counts, rows)
    assert empty.n_docs == 0 and all(m.shape == (0, len(table)) for m in empty.fields.values())
    index = assemble_bm25(empty, table)
    assert index.n_docs == 0 and index.n_terms == 0 and dict(index.vocabulary) == {}
    scores = bm25_scores(index, ["refund", "order"])
    assert scores.shape == (0,) and scores.dtype == np.float32
    assert_same_index(index, build_bm25([]))
    assert_same_index(assemble_bm25(count_terms([], table, FIELDS), table), build_bm25([]))


def test_weights_and_parameters_are_those_of_build_bm25() -> None:
    rng = random.Random(9)
    words = make_words(rng, 50)
    docs = [{k: v for k, v in make_doc(rng, words, i).items() if k != "symbol"} for i in range(20)]
    weights = {"body": 1.5, "path": 4.0}  # a different order than the fields were counted in
    table = TermTable()
    counts = count_terms(docs, table, ["path", "body"])
    got = assemble_bm25(counts, table, weights, k1=0.9, b=0.4)
    assert_same_index(got, build_bm25(docs, weights, k1=0.9, b=0.4))
    assert list(got.field_lengths) == ["body", "path"]
    # A weighted field that was not counted is empty everywhere, as a missing field is in build_bm25.
    with_symbol = assemble_bm25(counts, table)
    assert_same_index(with_symbol, build_bm25(docs))
    assert not with_symbol.field_lengths["symbol"].any()


def test_unknown_fields_are_refused() -> None:
    table = TermTable()
    with pytest.raises(ValueError, match="titel"):
        count_terms([{"body": "refund"}, {"titel": "refund"}], table, FIELDS)
    with pytest.raises(ValueError, match="titel"):
        build_bm25([{"titel": "refund"}])
    counts = count_terms([{"body": "refund"}], table, ["body", "title"])
    with pytest.raises(ValueError, match="title"):
        assemble_bm25(counts, table)  # "title" has no weight
    with pytest.raises(ValueError):
        assemble_bm25(counts, table, {"body": 1.0, "title": 0.0})
    with pytest.raises(TypeError):
        count_terms([{"body": "refund"}], table, "body")


def test_stored_zeros_and_foreign_columns() -> None:
    table = TermTable()
    counts = count_terms([{"body": "refund order"}, {"body": "ship order"}], table, ["body"])
    body = counts.fields["body"].copy()
    body.data[body.indices == table.ids["refund"]] = 0  # a stored zero is not an occurrence
    index = assemble_bm25(TermCounts({"body": body}), table, {"body": 1.0})
    assert_same_index(index, build_bm25([{"body": "order"}, {"body": "ship order"}], {"body": 1.0}))

    foreign = sp.csr_matrix(([1], [len(table)], [0, 1]), shape=(1, len(table) + 1), dtype=np.int32)
    with pytest.raises(ValueError, match="beyond"):
        assemble_bm25(TermCounts({"body": foreign}), table, {"body": 1.0})
    with pytest.raises(ValueError, match="disagree"):
        TermCounts({"body": body, "path": foreign})
