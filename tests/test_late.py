"""Late interaction for Workflow selection (lamina/retrieval/late.py): which tokens count, how roots are
grouped and weighted, and, with the real model, that a task's words find the root whose texts say them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lamina.retrieval.late import build_late_index, content_rows, late_scores
from lamina.retrieval.selection import RootDoc, TextScores, rank_roots
from lamina.runtime.embedder import TokenStates, load_embedder


def _states(pieces: list[str], rows: list[list[float]]) -> TokenStates:
    return TokenStates(tuple(pieces), np.asarray(rows, dtype=np.float32))


def test_content_rows_skip_markers_punctuation_and_stopwords_but_keep_word_continuations() -> None:
    pieces = ["[CLS]", "ref", "##und", "the", "order", ",", "to", "##s", "[SEP]"]
    assert content_rows(pieces) == [1, 2, 4, 7]


def test_the_index_groups_each_roots_tokens_and_counts_pieces_once_per_root() -> None:
    a = [_states(["[CLS]", "refund", "refund", "[SEP]"], [[0, 0], [1, 0], [1, 0], [0, 0]])]
    b = [_states(["ship"], [[0, 2]]), _states(["refund", "the"], [[3, 4], [1, 1]])]
    index = build_late_index([a, b])
    assert index is not None
    assert index.starts.tolist() == [0, 2] and index.matrix.shape == (4, 2)
    assert np.allclose(np.linalg.norm(index.matrix, axis=1), 1.0)  # rows are unit vectors
    assert index.piece_roots == {"refund": 2, "ship": 1}  # "the" is a stopword; a piece counts once per root
    # a root without one content token: late interaction takes no part
    assert build_late_index([a, [_states(["[CLS]", "the"], [[1, 0], [0, 1]])]]) is None


def test_a_task_token_takes_its_best_match_in_each_root_weighted_by_how_few_roots_have_it() -> None:
    refund, ship, cancel = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]
    roots = [
        [_states(["refund", "cancel"], [refund, cancel])],
        [_states(["ship", "cancel"], [ship, cancel])],
    ]
    index = build_late_index(roots)
    assert index is not None
    got = late_scores(index, _states(["[CLS]", "refund", "cancel", "[SEP]"], [cancel, refund, cancel, ship]))
    assert got is not None
    rare, common = np.log1p((2 - 1 + 0.5) / 1.5), np.log1p((2 - 2 + 0.5) / 2.5)  # BM25 idf over 2 roots
    # root 0 has both tokens; root 1 only "cancel" (its best cosine with "refund" is 0)
    assert got.tolist() == pytest.approx([1.0, common / (rare + common)])
    assert late_scores(index, _states(["[CLS]", "the", "[SEP]"], [refund, ship, cancel])) is None


def test_the_late_ranking_joins_the_fusion_and_each_candidate_shows_its_rank() -> None:
    roots = [RootDoc(w, "active", (), {}) for w in ("a-root", "b-root", "c-root")]
    lexical = np.array([0.0, 0.0, 0.0], dtype=np.float32)
    dense = np.array([0.5, 0.4, 0.3], dtype=np.float32)
    coverage = np.zeros(3, dtype=np.float32)
    without = rank_roots(TextScores("t", lexical, coverage, dense), roots)
    assert [c.workflow for c in without] == ["a-root", "b-root", "c-root"]
    assert all(c.late_rank is None for c in without)
    late = np.array([0.1, 0.9, 0.2], dtype=np.float32)
    with_late = rank_roots(TextScores("t", lexical, coverage, dense, late=late), roots)
    # b-root: dense 2nd + late 1st beats a-root: dense 1st + late 3rd (RRF)
    assert [c.workflow for c in with_late] == ["b-root", "a-root", "c-root"]
    assert {c.workflow: c.late_rank for c in with_late} == {"a-root": 3, "b-root": 1, "c-root": 2}


def test_with_the_real_model_a_task_finds_the_root_that_says_its_step(lamina_home: Path) -> None:
    embedder = load_embedder(home=lamina_home)
    text = "Refund a paid order to the buyer's card"
    vector, states = embedder.embed_with_states(text)
    assert vector.tobytes() == embedder.embed([text])[0].tobytes()  # one pass, the same vector bit for bit
    assert states.pieces[0] == "[CLS]" and states.states.shape == (len(states.pieces), 384)
    roots = {
        "refund-order": ["Refund order", "Issue a refund to the original payment method after cancellation"],
        "ship-order": ["Ship order", "Pick, pack and hand the parcel to the carrier"],
        "gift-cards": ["Gift cards", "Sell a gift card and redeem its balance at checkout"],
    }
    index = build_late_index([[embedder.embed_with_states(t)[1] for t in texts] for texts in roots.values()])
    assert index is not None
    task = embedder.embed_with_states("The invoice must say the money went back to the buyer's card")[1]
    scores = late_scores(index, task)
    assert scores is not None and list(roots)[int(np.argmax(scores))] == "refund-order"
    again = late_scores(
        index, embedder.embed_with_states("The invoice must say the money went back to the buyer's card")[1]
    )
    assert again is not None and again.tobytes() == scores.tobytes()  # the same inputs, the same bytes


def test_late_interaction_applies_to_graphs_up_to_its_root_bound() -> None:
    from lamina.constants import LATE_MAX_ROOTS
    from lamina.retrieval.late import applies

    assert applies(1) and applies(LATE_MAX_ROOTS)
    assert not applies(0) and not applies(LATE_MAX_ROOTS + 1)  # larger graphs: no token states held


class _CountingEmbedder:
    """Token states from a digest of the text (a stand-in for the model: this test is about caching)."""

    def __init__(self, digest: str) -> None:
        self.info = type("Info", (), {"model_digest": digest})()
        self.calls: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.extend(texts)
        return np.stack(
            [np.random.default_rng(sum(t.encode())).standard_normal(4).astype(np.float32) for t in texts]
        )

    def embed_with_states(self, text: str) -> tuple[np.ndarray, TokenStates]:
        self.calls.append(text)
        rng = np.random.default_rng(sum(text.encode()))
        pieces = ("[CLS]", *text.lower().split(), "[SEP]")
        return np.zeros(4, np.float32), TokenStates(
            pieces, rng.standard_normal((len(pieces), 4)).astype(np.float32)
        )


def test_graphd_builds_the_roots_vectors_and_token_states_once_per_model_and_texts() -> None:
    from types import SimpleNamespace

    from lamina.retrieval.service import WARM_GENERATIONS, RetrievalService

    service = RetrievalService(None, None, threads=1)  # type: ignore[arg-type]  # only the root vectors are used
    texts = (("refund order", "refund a paid order"), ("ship order", "ship a parcel"), ("ship order",))
    model = _CountingEmbedder("m1")
    first = service._root_vectors_of(SimpleNamespace(root_texts=texts), model)  # type: ignore[arg-type]
    assert first is not None and first.late is not None and first.late.n_roots == 3
    assert first.matrix.shape == (3, 4) and first.facets is not None and first.facets.owner.tolist() == [0, 1]
    assert sorted(model.calls) == sorted({t for root in texts for t in root})  # each distinct text once
    assert service.late_index_bytes() == first.late.matrix.nbytes
    # a new generation with the same product graph (a code edit, a branch switch): nothing is embedded
    assert service._root_vectors_of(SimpleNamespace(root_texts=texts), model) is first  # type: ignore[arg-type]
    assert len(model.calls) == 4
    # another model, or other texts: built again; at most WARM_GENERATIONS are held
    other = service._root_vectors_of(SimpleNamespace(root_texts=texts), _CountingEmbedder("m2"))  # type: ignore[arg-type]
    assert other is not first
    for n in range(WARM_GENERATIONS + 1):
        service._root_vectors_of(SimpleNamespace(root_texts=((f"root {n}",),)), model)  # type: ignore[arg-type]
    assert len(service._root_vectors) == WARM_GENERATIONS
    held = service.late_index_bytes()
    service.forget_all()  # graphd going dormant keeps them: rebuilding costs model time on waking
    assert service.late_index_bytes() == held > 0


def test_a_large_graphs_root_vectors_are_kept_in_the_content_store_across_graphd_starts(
    tmp_path: Path,
) -> None:
    """A graph of 3,000 workflows took two minutes on the first `prepare` after every graphd start (a new
    user's graph, session 36). Without late interaction (more than LATE_MAX_ROOTS roots) the vectors are plain,
    so the content store keeps them, and a graphd started later embeds nothing; a small graph's are not
    stored (its token states are not)."""
    from types import SimpleNamespace

    from lamina.constants import LATE_MAX_ROOTS
    from lamina.index.cas import ContentStore
    from lamina.retrieval.service import RetrievalService

    texts = tuple((f"facet {n}", f"root document {n}") for n in range(LATE_MAX_ROOTS + 1))
    first_model = _CountingEmbedder("sel")
    first = RetrievalService(None, None, threads=1, store_dir=tmp_path)  # type: ignore[arg-type]
    built = first._root_vectors_of(SimpleNamespace(root_texts=texts), first_model)  # type: ignore[arg-type]
    assert built is not None and built.late is None and len(first_model.calls) == 2 * len(texts)
    later_model = _CountingEmbedder("sel")  # graphd started again: a new service, the same store
    later = RetrievalService(None, None, threads=1, store_dir=tmp_path)  # type: ignore[arg-type]
    again = later._root_vectors_of(SimpleNamespace(root_texts=texts), later_model)  # type: ignore[arg-type]
    assert again is not None and later_model.calls == []
    assert (
        np.array_equal(again.matrix, built.matrix) and again.facets is not None and built.facets is not None
    )
    assert np.array_equal(again.facets.matrix, built.facets.matrix)

    def stored() -> int:
        return int(ContentStore(tmp_path).db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])

    assert stored() == 2 * len(texts)
    small = (("refund order",), ("ship order",))
    later._root_vectors_of(SimpleNamespace(root_texts=small), later_model)  # type: ignore[arg-type]
    assert later_model.calls and stored() == 2 * len(texts)  # the small graph ran the model, stored nothing


def test_graphd_warms_the_root_vectors_after_a_build_only_when_a_model_is_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import SimpleNamespace

    from lamina.retrieval.service import RetrievalService

    service = RetrievalService(None, None, threads=1)  # type: ignore[arg-type]  # only the root vectors are used
    service._states["main"] = SimpleNamespace(root_texts=(("refund order",), ("ship order",)))  # type: ignore[assignment]
    code_model, selection_model = _CountingEmbedder("code"), _CountingEmbedder("selection")
    monkeypatch.setattr(service, "_query_embedder", lambda state: (code_model, None))
    monkeypatch.setattr(service, "selection_embedder", lambda: selection_model)
    service.warm_root_vectors("main")  # no model loaded: a build that only indexes must not load one
    assert selection_model.calls == [] and service.late_index_bytes() == 0
    service._embedder = code_model
    service.warm_root_vectors("main")
    # the roots are read by the selection model, never by the code model
    assert sorted(selection_model.calls) == ["refund order", "ship order"] and code_model.calls == []
    assert service.late_index_bytes() > 0
    service.warm_root_vectors("elsewhere")  # an identity without a ranking state: nothing
    assert len(selection_model.calls) == 2
