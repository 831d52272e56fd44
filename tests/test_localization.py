"""Source localization policy (lamina/retrieval/localization.py) and reading a task (tokenize.read_task)."""

from __future__ import annotations

import numpy as np
import pytest

from lamina.retrieval.localization import LocalizeParams, build_chunk_corpus, localize, localize_all
from lamina.retrieval.tokenize import commit_hashes, read_task, strip_commit_noise, tokenize


def test_read_task_drops_stopwords_and_quotes_the_tasks_words() -> None:
    task = read_task("Do not make the cache fail when it is full")
    assert "not" not in task.terms and "do" not in task.terms and "when" not in task.terms
    assert task.words["mak"] == "make"  # the stem scores, the word is quoted
    assert tokenize("Do not make") == ["do", "not", "mak"]  # the index side is unchanged


def test_read_task_recognises_identifiers_paths_and_scopes() -> None:
    task = read_task(
        "fix(query-builder): `getMany()` drops rows in SelectQueryBuilder.getRawMany; see src/util/order_by.ts"
    )
    assert {"querybuilder", "getmany", "selectquerybuilder", "getrawmany", "orderby"} <= task.names
    assert "fix" not in task.terms  # a conventional-commit type says nothing about the code
    assert "ts" not in task.names  # a file suffix is no name
    scoped = read_task("tpl/collections: Fix where with nil values")
    assert "collection" in scoped.names and "tpl/collections" in scoped.folders
    # a path names its file, not each folder: `rich` of rich/live_render.py named `RichCast.__rich__`
    path = read_task("In rich/live_render.py the ellipsis line is drawn even when the output fits")
    assert path.names == {"liverender"} and {"rich", "liv", "render"} <= set(path.terms)
    assert path.written == {"live_render"}
    # a path's file suffix is no word of the task ("lexical: rich, ratio, py"), in a path or before a line number
    assert "py" not in read_task("Refactor `rich/_ratio.py` to use fractions").terms
    assert "py" not in read_task("fix the loop at cells.py:207").terms
    assert "py" in read_task("lint every .py file").terms  # a suffix named as such stays
    assert not read_task("Refund a paid order when the warehouse cannot ship it").names
    # `fix: …` is a commit type, not a scope: it was read as an identifier (excalidraw's "symbol name: fix")
    typed = read_task("fix: rerender the preview when the mermaid code changes")
    assert "fix" not in typed.terms and not typed.names and not typed.folders


def test_read_task_leaves_out_commit_hashes_and_backport_boilerplate() -> None:
    task = read_task(
        "[PR /ed8b040c backport][3.15] Escape backslashes in digest auth\n"
        "**This is a backport of PR #12 as merged into master (ee53d6558083e245f3aae7e864ed5523d138c9db).**\n"
        "(cherry picked from commit c4de98382fb641cf3ffb26739920cc9d58ff0295)"
    )
    assert task.terms == ("escap", "backslash", "digest", "auth")
    # words that only look like hashes stay: no digit, no letter a-f, or shorter than seven characters
    kept = read_task("Fix deadbeef, sha256 and the 20241204 fixture; bump 1a2b3c to v2.0")
    assert {"deadbeef", "sha", "256", "20241204", "1", "2", "3"} <= set(kept.terms)
    assert strip_commit_noise("keep [v3.15] but not [3.15]") == "keep [v3.15] but not  "


def test_a_commit_hash_in_the_task_cannot_pull_a_file_up() -> None:
    paths = ["src/auth.py", "src/colors.py"]
    corpus = build_chunk_corpus(
        paths, ["digest_auth", "palette"], ["function"] * 2, [1, 1], [5, 5],
        ["def digest_auth(user): escape backslashes", "PALETTE = {'de': 1, 'fb': 2, 'cf': 3, 'ff': 4}"],
        None, roles=["code", "code"],
    )  # fmt: skip
    task = (
        "Escape backslashes in digest auth (cherry picked from commit c4de98382fb641cf3ffb26739920cc9d58ff0)"
    )
    files = [s["file"] for s in localize(corpus, task, None)]
    assert files == ["src/auth.py"]  # the hash's pieces (de, fb, cf, ff) no longer match the palette


def test_commit_hashes_are_the_hashes_the_task_names_once_each_lower_case() -> None:
    task = (
        "Revert 55FCFFE7 and 83b06e48159c697b13741983d9c1f24d6a179fc5\n"
        "This reverts commit 55fcffe7; not deadbeef, 20241204, 1a2b3c or v2.0"
    )
    assert commit_hashes(task) == ("55fcffe7", "83b06e48159c697b13741983d9c1f24d6a179fc5")
    assert commit_hashes("Refund a paid order") == ()


def _named_commit_corpus():
    paths = ["shop/orders.py", "shop/totals.py", "shop/format.py", "docs/totals.md", "tests/test_orders.py",
             "tests/test_sums.py"]  # fmt: skip
    return build_chunk_corpus(
        paths, ["cancel_order", "line_sum", "money", "<file>", "test_cancel_order", "test_lines_add_up"],
        ["function", "function", "function", "file", "function", "function"], [1] * 6, [5] * 6,
        ["def cancel_order(order): cancel the order and refund it", "def line_sum(lines): add the lines up",
         "def money(cents): format an amount", "# Totals\nhow totals are summed",
         "def test_cancel_order(): cancel_order(order) twice", "def test_lines_add_up(): assert line_sum([1]) == 1"],
        None, roles=["code", "code", "code", "docs", "test", "test"],
    )  # fmt: skip


def test_a_task_that_names_a_commit_lists_the_code_it_changed_first() -> None:
    """By its words, "Revert 55fcffe: cancel the order" finds orders.py; the commit it names changed totals.py
    (and docs, which are no source): that file comes first, with the reason, though no ranker found it."""
    corpus = _named_commit_corpus()
    task = "Revert 55fcffe: cancel the order twice"
    plain = [s["file"] for s in localize(corpus, task, None)]
    assert plain[0] == "shop/orders.py" and "shop/totals.py" not in plain
    assert [r["file"] for r in localize_all(corpus, task, None).related] == ["tests/test_orders.py"]
    changed = {"55fcffe": ("shop/totals.py", "docs/totals.md", "tests/test_sums.py", "gone/deleted.py")}
    found = localize_all(corpus, task, None, commit_paths=changed)
    sources, related = found.sources, found.related
    assert [s["file"] for s in sources][:2] == ["shop/totals.py", "shop/orders.py"]
    assert "in a file commit 55fcffe changed, which the task names" in sources[0]["reasons"]
    assert not any("commit" in r for s in sources[1:] for r in s["reasons"])
    # what the named commit changed leads `related`, its test first, tied to the code that commit changed
    assert [(r["file"], r["for"]["file"]) for r in related][:2] == [
        ("tests/test_sums.py", "shop/totals.py"),
        ("docs/totals.md", "shop/totals.py"),
    ]
    # a commit that changed more code files than named_commit_max_files says little: nothing moves
    broad = {"55fcffe": ("shop/totals.py", "shop/format.py")}
    p = LocalizeParams(named_commit_max_files=1)
    assert [
        s["file"] for s in localize_all(corpus, task, None, params=p, commit_paths=broad).sources
    ] == plain
    # a commit that changed no code file moves nothing either
    docs_only = {"55fcffe": ("docs/totals.md",)}
    assert [s["file"] for s in localize_all(corpus, task, None, commit_paths=docs_only).sources] == plain


def _corpus(with_vectors: bool = True):
    paths = ["src/refund.py", "src/refund.py", "src/refund.py", "tests/test_refund.py", "CHANGELOG.md",
             "src/ship.py", "product/refund.toml"]  # fmt: skip
    symbols = [
        "RefundService.issue",
        "RefundService.undo",
        "<module>",
        "test_issue",
        "Changes",
        "ship",
        "refund",
    ]
    texts = [
        "def issue(self, order): refund the paid order",
        "def undo(self, refund): cancel a refund",
        "import refunds",
        "def test_issue(): RefundService().issue(order)",
        "## 1.2\nRefund a paid order when the warehouse cannot ship it",
        "def ship(order): warehouse ships the order",
        "[workflow]\nid = 'refund'\ntitle = 'Refund a paid order'",
    ]
    roles = ["code", "code", "code", "test", "docs", "code", "graph"]
    matrix = np.eye(len(paths), 8, dtype=np.float32) if with_vectors else None
    n = len(paths)
    return build_chunk_corpus(paths, symbols, ["method"] * n, [1] * n, [5] * n, texts, matrix, roles=roles)


def test_sources_are_code_files_first_and_related_are_tied_tests_and_docs() -> None:
    corpus = _corpus()
    found = localize_all(corpus, "Refund a paid order when the warehouse cannot ship it", None)
    sources, related = found.sources, found.related
    assert {s["role"] for s in sources} == {"code"}
    assert [s["file"] for s in sources][0] in ("src/refund.py", "src/ship.py")
    ranks = [s["file_rank"] for s in sources]
    assert ranks == sorted(ranks)
    assert "product/refund.toml" not in {s["file"] for s in sources}
    assert "CHANGELOG.md" not in {s["file"] for s in sources}
    # named symbols of a file before its <module> chunk
    refund = [s["symbol"] for s in sources if s["file"] == "src/refund.py"]
    assert refund.index("RefundService.issue") < refund.index("<module>") if "<module>" in refund else True
    assert related and related[0]["file"] == "tests/test_refund.py" and related[0]["role"] == "test"
    assert related[0]["for"]["file"] == "src/refund.py"
    for s in sources:  # reasons quote the task's own words, never stems or stopwords
        for reason in s["reasons"]:
            assert "mak" not in reason.split() and "when," not in reason


def test_files_fill_up_when_fewer_files_match_and_a_small_limit_lists_both_files() -> None:
    corpus = _corpus(with_vectors=False)
    both = localize(corpus, "refund order ship", None)
    # two code files match a limit of 10: every symbol of both is listed, files in rank order
    assert sorted((s["file"], s["symbol"]) for s in both) == [
        ("src/refund.py", "<module>"), ("src/refund.py", "RefundService.issue"),
        ("src/refund.py", "RefundService.undo"), ("src/ship.py", "ship"),
    ]  # fmt: skip
    assert [s["file_rank"] for s in both] == sorted(s["file_rank"] for s in both)
    # the refund file's weak second symbol does not keep the ship file out of two slots
    two = localize(corpus, "refund order ship", None, limit=2)
    assert sorted(s["file"] for s in two) == ["src/refund.py", "src/ship.py"]
    # with a penalty for a new file, the first file's second symbol takes the slot instead
    refund_first = localize(corpus, "refund order", None, limit=2)
    assert [s["file"] for s in refund_first] == ["src/refund.py", "src/ship.py"]
    greedy = localize(corpus, "refund order", None, limit=2, params=LocalizeParams(new_file_bonus=-10.0))
    assert [s["file"] for s in greedy] == ["src/refund.py", "src/refund.py"]


def test_slot_allocation_gives_a_slot_to_the_best_offer_files_in_rank_order() -> None:
    from lamina.retrieval.slots import allocate_slots

    first = [(0.0, False), (-0.5, False), (-3.0, False), (5.0, True)]  # the placeholder comes last
    second = [(-1.2, False), (-1.3, False)]
    third = [(-4.0, False)]
    # bonus 1: the next file bids -0.2 (second) against the first file's -0.5: the second file enters;
    # then -0.5 (first's 2nd), then -1.3 (second's 2nd) beats -3.0 + 1 = -2.0 (third's bid)
    assert allocate_slots([first, second, third], 4, 1.0) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    # a bigger bonus lists more files; files come in rank order, each file's picks in its own order
    assert allocate_slots([first, second, third], 4, 3.0) == [(0, 0), (0, 1), (1, 0), (2, 0)]
    # fewer candidates than slots: all of them, the placeholder last in its file
    assert allocate_slots([first, [], third], 10, 0.0) == [(0, 0), (0, 1), (0, 2), (0, 3), (2, 0)]
    assert allocate_slots([], 10, 1.0) == [] and allocate_slots([first], 0, 1.0) == []


def test_a_per_file_cap_leaves_slots_to_other_files_unless_none_can_fill_them() -> None:
    """excalidraw's 13,949-line App.tsx took all ten entries: a file gives at most `per_file_max` while other
    files have candidates, and more only when they run out."""
    from lamina.retrieval.slots import allocate_slots

    huge = [(5.0 - i * 0.1, False) for i in range(12)]  # every symbol outbids the next file's first
    other = [(-2.0, False), (-3.0, False)]
    uncapped = allocate_slots([huge, other], 10, 1.0)
    assert [f for f, _ in uncapped] == [0] * 10
    capped = allocate_slots([huge, other], 10, 1.0, per_file_max=6)
    assert [f for f, _ in capped] == [0] * 8 + [1] * 2  # six by the cap, two more once the other runs out
    assert [p for f, p in capped if f == 0] == list(range(8))  # the huge file's best eight, in order
    assert allocate_slots([huge], 10, 1.0, per_file_max=6) == [(0, p) for p in range(10)]  # nobody else


def test_slot_features_are_one_row_per_candidate_and_scores_are_linear_in_them() -> None:
    from lamina.retrieval.slots import SLOT_FEATURES, slot_features, slot_scores

    rows = slot_features(
        2, 0.9, np.asarray([1.0, 0.3]), np.asarray([0.0, -0.2]), np.asarray([20, 0]), ["method", "class"]
    )
    assert rows.shape == (2, len(SLOT_FEATURES))
    column = {f: rows[:, i].tolist() for i, f in enumerate(SLOT_FEATURES)}
    assert column["within_logrank"] == pytest.approx([np.log(2), np.log(3)])  # places 1 and 2
    assert column["file_logrank"] == pytest.approx([np.log(3)] * 2)
    assert column["is_type"] == [0.0, 1.0] and column["log_lines"] == pytest.approx([np.log(20), 0.0])
    scores = slot_scores(rows, {"lexical_rel": 2.0, "file_score": 1.0}, -1.0)
    assert scores.tolist() == pytest.approx([2.0 + 0.9 - 1.0, 0.6 + 0.9 - 1.0])
    with pytest.raises(ValueError, match="unknown slot features"):
        slot_scores(rows, {"lexical": 1.0}, 0.0)


def test_an_identifier_the_task_names_outranks_word_overlap() -> None:
    corpus = _corpus(with_vectors=False)
    sources = localize(corpus, "the warehouse order flow breaks in `RefundService.undo`", None)
    assert sources[0]["file"] == "src/refund.py" and sources[0]["symbol"] == "RefundService.undo"
    assert any("names what the task names" in r for r in sources[0]["reasons"])


def test_same_inputs_same_sources() -> None:
    corpus = _corpus()
    q = np.eye(1, 8, dtype=np.float32)[0]
    assert localize(corpus, "refund a paid order", q) == localize(corpus, "refund a paid order", q)


# --- the file scorer (lamina/retrieval/file_scorer.py) ----------------------------------------------
def test_rescore_files_orders_by_the_linear_score_ties_in_fused_order() -> None:
    from lamina.retrieval.file_scorer import FILE_FEATURES, rescore_files

    candidates = [(7, 0.05, {"lexical": 1}), (3, 0.04, {"dense": 1}), (9, 0.03, {"lexical": 2})]
    features = np.zeros((3, len(FILE_FEATURES)))
    features[:, FILE_FEATURES.index("path_match")] = [0.0, 1.0, 0.0]
    out = rescore_files(candidates, features, {"path_match": 2.0}, -1.0)
    assert [f for f, _, _ in out] == [3, 7, 9]  # 7 and 9 tie: fused order
    assert out[0][1] == pytest.approx(1 / (1 + np.exp(-1.0)))  # the probability is the score
    assert out[0][2] == {"dense": 1}  # ranks travel with their file
    with pytest.raises(ValueError, match="path_mach"):
        rescore_files(candidates, features, {"path_mach": 1.0}, 0.0)


def test_file_features_measure_strength_and_names_not_only_ranks() -> None:
    from lamina.retrieval.file_scorer import FILE_FEATURES, file_features

    lexical = np.array([4.0, 1.0, 2.0, 0.0])
    dense = np.array([0.2, 0.6, 0.5, 0.1])
    code = np.array([True, True, True, False])  # chunk 3 is a test: never the best of anything
    candidates = [(0, 0.03, {"lexical": 1, "names": 2}), (1, 0.015, {"dense": 1})]
    rows = [np.array([0]), np.array([1, 2])]
    got = file_features(
        candidates, rows, {"lexical": lexical, "dense": dense}, code, ["cache", "evict"],
        [{"src", "cache", "py"}, {"src", "store", "py"}], [{"lru", "evict"}, set()], 200,
        np.array([0.4, 0.9]),
    )  # fmt: skip
    row = dict(zip(FILE_FEATURES, got[1], strict=True))
    assert row["fused_rel"] == pytest.approx(0.5)
    assert row["lexical_best_rel"] == pytest.approx(0.5)  # its best chunk 2.0 of the best 4.0
    assert row["dense_best_gap"] == pytest.approx(0.0)  # it holds the best cosine
    assert row["lexical_logrank"] == pytest.approx(np.log1p(201))  # unranked: depth + 1
    assert row["names_rank1"] == 0.0 and row["path_match"] == 0.0
    assert row["log_chunks"] == pytest.approx(np.log(2))
    first = dict(zip(FILE_FEATURES, got[0], strict=True))
    assert first["names_rank1"] == 0.5 and first["path_match"] == 0.5 and first["symbol_match"] == 0.5
    assert first["dense_best_gap"] == pytest.approx(-0.4)
    # the second file covers more of the task: it is first by coverage, the fused first second
    assert row["term_cover_rank1"] == 1.0 and first["term_cover_rank1"] == 0.5
    no_vectors = file_features(candidates, rows, {"lexical": lexical}, code, ["cache"], [set(), set()],
                               [set(), set()], 200, None)  # fmt: skip
    assert list(no_vectors[:, FILE_FEATURES.index("dense_best_gap")]) == [-1.0, -1.0]
    assert list(no_vectors[:, FILE_FEATURES.index("term_cover_rank1")]) == [0.0, 0.0]  # no known terms
    tied = file_features(candidates, rows, {"lexical": lexical}, code, ["cache"], [set(), set()],
                         [set(), set()], 200, np.array([0.5, 0.5]))  # fmt: skip
    assert list(tied[:, FILE_FEATURES.index("term_cover_rank1")]) == [1.0, 0.5]  # ties: fused order


def test_term_coverage_is_the_idf_weighted_share_of_known_task_terms_anywhere_in_a_file() -> None:
    from lamina.retrieval.bm25 import build_bm25
    from lamina.retrieval.file_scorer import term_coverage

    # file 0: chunks 0-1 (refund in one, ledger in the other); file 1: chunk 2 (refund); file 2: chunks 3-4
    texts = ["def refund(order): pass", "ledger = Ledger()", "refund = 1", "x = 1", "y = 2"]
    index = build_bm25([{"body": t} for t in texts], {"body": 1.0})
    file_of = np.array([0, 0, 1, 2, 2])
    n = len(texts)

    def idf(df: int) -> float:
        return float(np.log1p((n - df + 0.5) / (df + 0.5)))

    # "nowhere" is not in the index: it counts for no file and in no denominator; terms repeat once
    got = term_coverage(index, file_of, 3, [2, 1, 0], ["refund", "ledger", "nowhere", "refund"])
    assert got is not None
    total = idf(2) + idf(1)
    assert got == pytest.approx([0.0, idf(2) / total, 1.0])  # in the order of the files asked for
    assert term_coverage(index, file_of, 3, [0, 1], ["nowhere"]) is None


def _two_files_corpus():
    # src/a.py: three chunks that each say most of the task (first by its damped sum: RRF ranks it 1st);
    # src/evict.py: one chunk that says all of it, in a file named for it
    paths = ["src/a.py"] * 3 + ["src/evict.py"]
    symbols = ["a1", "a2", "a3", "drop_oldest"]
    texts = ["evict cache entries", "evict stale entries", "stale cache entries", "evict stale cache entries"]
    n = len(paths)
    return build_chunk_corpus(paths, symbols, ["function"] * n, [1] * n, [5] * n, texts, None)


def test_the_scorer_moves_a_strongly_matching_file_up_and_is_off_with_no_coefficients() -> None:
    corpus = _two_files_corpus()
    task = "evict stale cache entries"
    fused_only = localize(corpus, task, None, params=LocalizeParams(file_scorer={}))
    assert fused_only[0]["file"] == "src/a.py"  # reciprocal-rank fusion alone
    scored = localize(corpus, task, None)
    assert [s["file"] for s in scored][0] == "src/evict.py"
    assert [s["file_rank"] for s in scored] == sorted(s["file_rank"] for s in scored)
    scores = [s["score"] for s in scored]
    assert scores == sorted(scores, reverse=True) and all(0 < x < 1 for x in scores)  # probabilities
    # the coefficients decide: a scorer that counts against path matches keeps a.py first
    against = localize(corpus, task, None, params=LocalizeParams(file_scorer={"path_match": -5.0}))
    assert against[0]["file"] == "src/a.py"
    # one ranker alone (diagnosis) is that ranker's fusion, unscored
    alone = localize(corpus, task, None, rankers=("lexical",))
    assert alone == localize(corpus, task, None, rankers=("lexical",), params=LocalizeParams(file_scorer={}))
    assert alone[0]["file"] == "src/a.py"


def test_a_file_with_code_and_inline_test_chunks_is_a_code_file_and_only_its_code_is_a_source() -> None:
    corpus = build_chunk_corpus(
        ["src/split.rs", "src/split.rs", "tests/split.rs"],
        ["split_refund", "tests.splits_evenly", "splits_in_two"],
        ["function"] * 3, [1, 10, 1], [5, 14, 4],
        ["pub fn split_refund(amount: u64)", "fn splits_evenly() { split_refund(10) }", "fn splits_in_two()"],
        None, roles=["code", "test", "test"],
    )  # fmt: skip
    layout = corpus.layout()
    assert layout.role_of == ("code", "test")  # whatever order the chunks come in
    found = localize_all(corpus, "split a refund evenly", None)
    sources, related = found.sources, found.related
    assert [(s["file"], s["symbol"]) for s in sources] == [("src/split.rs", "split_refund")]
    assert ("src/split.rs", "tests.splits_evenly") in {(r["file"], r["symbol"]) for r in related}


def test_a_symbols_windows_give_one_reason_of_each_kind_with_all_their_words() -> None:
    from lamina.retrieval.localization import _merged_reasons

    merged = _merged_reasons(
        [
            ["file rank 1", "lexical: docker, run, --env-file", "dense: file rank 4", "symbol name: run"],
            ["file rank 1", "lexical: docker, errors", "dense: file rank 4", "names what the task names"],
        ]
    )
    assert merged == [
        "file rank 1",
        "lexical: docker, run, --env-file, errors",
        "dense: file rank 4",
        "symbol name: run",
        "names what the task names",
    ]
    many = _merged_reasons([[f"lexical: w{i}, x{i}"] for i in range(5)])
    assert many == ["lexical: w0, x0, w1, x1, w2, x2"]  # at most MAX_REASON_TERMS (6) words


def test_a_line_window_entry_gives_the_reasons_of_the_window_it_shows() -> None:
    """A file read as line windows is one `<file>` entry: it showed one window and cited words of another (a
    Haskell file's "mergeBlocks", 300 lines below; a new-user run, session 37). A symbol's windows still merge."""
    texts = ["render padding width block layout", "realLength counts characters", "mergeBlocks joins padding"]
    corpus = build_chunk_corpus(
        ["src/Layout.hs"] * 3, ["<file>"] * 3, ["section"] * 3, [1, 71, 141], [80, 150, 220], texts,
        None, roles=["code"] * 3,
    )  # fmt: skip
    (entry,) = localize(corpus, "padding layout in mergeBlocks realLength", None)
    shown = texts[[1, 71, 141].index(entry["start_line"])].casefold()
    lexical = next(r for r in entry["reasons"] if r.startswith("lexical: "))
    words = lexical.removeprefix("lexical: ").split(", ")
    assert entry["start_line"] == 71 and "mergeblocks" not in shown  # the task's identifier realLength
    assert words and all(w.casefold() in shown + " src/layout.hs" for w in words), lexical  # or the path's
    assert "mergeBlocks" not in words and "padding" not in words  # the other windows' words are not cited


def test_a_task_scoped_to_an_examples_folder_gets_its_programs_as_sources() -> None:
    """`fix(examples): …` says where the change is: the example programs (docs by their folder) become
    source candidates for that task only; a test-named file there stays a test, and unscoped tasks, or tasks
    scoped to another folder, still list code alone."""
    from lamina.retrieval.localization import scoped_layout
    from lamina.retrieval.tokenize import read_task

    corpus = build_chunk_corpus(
        ["progress.go", "examples/progress/main.go", "examples/progress/main_test.go", "examples/README.md"],
        ["Progress.Blend", "main", "TestMain", "<file>"],
        ["method", "function", "function", "section"], [1, 1, 1, 1], [9, 9, 9, 9],
        ["func (p Progress) Blend(colors []Color) progress bar blend",
         "func main() { bar := progress.New(); bar.Blend(red, blue) } progress bar blend example",
         "func TestMain(t *testing.T) { progress bar blend example }",
         "Progress bar blend example: run main.go"],
        None, roles=["code", "docs", "test", "docs"],
    )  # fmt: skip
    scoped = "fix(examples): use the updated progress bar blend api"
    layout = scoped_layout(corpus.layout(), read_task(scoped))
    assert layout.role_of == ("code", "code", "test", "docs")
    assert corpus.layout().role_of == ("code", "docs", "test", "docs")  # the corpus's own layout is untouched
    found = localize_all(corpus, scoped, None)
    sources, related = found.sources, found.related
    assert {s["file"] for s in sources} == {"progress.go", "examples/progress/main.go"}
    assert all(s["role"] == "code" for s in sources)
    example = next(s for s in sources if s["file"] == "examples/progress/main.go")
    assert "in the folder the task names: examples" in example["reasons"]
    assert not any("folder" in r for s in sources if s["file"] == "progress.go" for r in s["reasons"])
    assert "examples/progress/main.go" not in {r["file"] for r in related}
    singular = scoped_layout(
        corpus.layout(), read_task("ci(example): use the updated progress bar blend api")
    )
    assert singular.role_of == (
        "code",
        "code",
        "test",
        "docs",
    )  # `example` names examples/ (trpc, session 37)
    for task in ("use the updated progress bar blend api", "fix(progress): use the updated progress bar blend api",
                 "docs: use the updated progress bar blend api"):  # fmt: skip
        assert scoped_layout(corpus.layout(), read_task(task)) is corpus.layout()
        assert {s["file"] for s in localize(corpus, task, None)} == {"progress.go"}


def test_a_task_that_names_an_example_lists_that_examples_program_first() -> None:
    """ "Fix the chat example" names a program in examples/chat/: it comes first (opened as code when its folder
    made it docs), with the reason, though the library's words match the task better; a task that names no
    example, or one the repository does not have, ranks as before."""
    corpus = build_chunk_corpus(
        ["viewport.go", "examples/chat/main.go", "examples/pager/main.go", "_examples/chat/main.go"],
        ["Viewport.SetContent", "main", "main", "main"], ["method", "function", "function", "function"],
        [1, 1, 1, 1], [9, 9, 9, 9],
        ["func (v Viewport) SetContent(s string) resize the viewport on window size",
         "func main() { messages := chat() }", "func main() { pager := viewport.New() resize }",
         "func main() { other chat }"],
        None, roles=["code", "docs", "docs", "code"],
    )  # fmt: skip
    task = "docs(example): resize chat example based on window"
    assert read_task(task).examples == ("chat",)
    assert read_task("update table-resize example for Lip Gloss v2").examples == ("table-resize",)
    assert read_task("add an example; the example works").examples == ()  # "an", "the": no example's name
    sources = localize(corpus, task, None)
    files = [s["file"] for s in sources]
    assert set(files[:2]) == {"examples/chat/main.go", "_examples/chat/main.go"}
    # the scope `example` names examples/ (session 37): its other programs are candidates too, after the named one
    assert files[2:] == ["examples/pager/main.go", "viewport.go"]
    by_file = {s["file"]: s["reasons"] for s in sources}
    assert "in the folder the task names: examples" in by_file["examples/chat/main.go"]  # opened as code
    unscoped = [s["file"] for s in localize(corpus, "resize chat example based on window", None)]
    assert (
        set(unscoped[:2]) == {"examples/chat/main.go", "_examples/chat/main.go"}
        and unscoped[2] == "viewport.go"
    )
    assert "in the example the task names: _examples/chat" in by_file["_examples/chat/main.go"]
    for plain in ("resize the viewport based on window", "resize the shell example based on window"):
        assert [s["file"] for s in localize(corpus, plain, None)][0] == "viewport.go"


def test_a_program_the_task_names_by_path_is_listed_first_though_its_folder_makes_it_docs() -> None:
    """A new-user run (swift-argument-parser, session 39): "… deprecation warnings in Examples/math/Math.swift" listed
    the file nowhere (Examples/ makes it docs), though "in the math example" listed it first. A program named by its
    path is opened as code and leads, with the reason; its folder's other programs stay docs, and a docs page named by
    path (`docs/guide.md`) opens nothing."""
    from lamina.retrieval.localization import scoped_layout

    corpus = build_chunk_corpus(
        ["Sources/Parser/Flag.swift", "Examples/math/Math.swift", "Examples/repeat/Repeat.swift", "docs/guide.md"],
        ["Flag", "Math", "Repeat", "<module>"], ["struct"] * 3 + ["section"], [1] * 4, [9] * 4,
        ["struct Flag { deprecated warnings for flags }", "struct Math { func add() }",
         "struct Repeat { deprecated count }", "# Guide\nDeprecation warnings explained"],
        None, roles=["code", "docs", "docs", "docs"],
    )  # fmt: skip
    task = "Eliminate two deprecation warnings in Examples/math/Math.swift"
    sources = localize(corpus, task, None)
    assert sources[0]["file"] == "Examples/math/Math.swift"
    assert "the task names this file" in sources[0]["reasons"]
    assert not any(r.startswith("in the folder the task names") for r in sources[0]["reasons"])
    assert "Examples/repeat/Repeat.swift" not in {s["file"] for s in sources}  # its sibling stays docs
    unnamed = localize(corpus, "Eliminate two deprecation warnings in the flags", None)
    assert "Examples/math/Math.swift" not in {s["file"] for s in unnamed}
    page = read_task("Eliminate deprecation warnings in docs/guide.md")
    assert scoped_layout(corpus.layout(), page) is corpus.layout()


def test_a_release_task_lists_the_code_that_states_the_version_first() -> None:
    """A release task ("Bumped v1.3.0") shares no word with `__version__ = "1.2.0"`: the files that state a version come
    first (even one no ranker found), with the rule's reason; any other task ranks as before."""
    corpus = build_chunk_corpus(
        ["shop/__version__.py", "shop/client.py", "shop/client.py", "tests/test_version.py"],
        ["<module>", "Client.release", "Client.bump", "test_version"],
        ["module", "method", "method", "function"], [1, 1, 9, 1], [1, 8, 16, 3],
        ['__version__ = "1.2.0"', "def release(self): bump the release version v1.3.0 of the client",
         "def bump(self): bumped version release", 'def test_version(): assert __version__ == "1.2.0"'],
        None, roles=["code", "code", "code", "test"],
    )  # fmt: skip
    sources = localize(corpus, "Bumped v1.3.0", None)
    assert sources[0]["file"] == "shop/__version__.py"
    assert "states the version a release task changes" in sources[0]["reasons"]
    # in a file with named symbols too, the version line's chunk is the file's first entry
    mixed = build_chunk_corpus(
        ["app.js", "app.js", "app.js"], ["<module>", "listen", "close"], ["module", "function", "function"],
        [1, 5, 20], [3, 18, 30],
        ["'use strict'\nconst VERSION = '5.5.0'\nconst http = require('http')",
         "function listen (port) { return server.listen(port) }", "function close () { server.close() }"],
        None, roles=["code"] * 3,
    )  # fmt: skip
    first = localize(mixed, "Bumped v5.6.0", None)[0]
    assert (first["file"], first["symbol"]) == ("app.js", "<module>")
    assert localize(mixed, "close the server", None)[0]["symbol"] == "close"
    assert all("release task" not in r for s in sources[1:] for r in s["reasons"])
    other = localize(corpus, "bump the client release version", None)
    assert other[0]["file"] == "shop/client.py"
    assert all("release task" not in r for s in other for r in s["reasons"])


def test_the_selected_workflows_words_are_weaker_evidence_with_their_own_reason() -> None:
    """A task's words match two files equally; the selected workflow's own words (titles, summaries and its
    operations' titles) tell them apart, below the task's own weight, and the source says which of the
    workflow's words it matched. Without them (or at weight 0) nothing changes."""
    from lamina.retrieval.localization import LocalizeParams

    corpus = build_chunk_corpus(
        ["src/payments.py", "src/bank_feed.py", "src/ledger.py"],
        ["record_payment", "import_statement_lines", "post_payment"],
        ["function"] * 3, [1, 1, 1], [9, 9, 9],
        ["def record_payment(tenant, amount): tenant payment", "def import_statement_lines(feed): bank feed lines",
         "def post_payment(tenant, amount): tenant payment ledger"],
        None, roles=["code"] * 3,
    )  # fmt: skip
    task = "the tenant payment is missing"
    words = "Collect rent\nReceive the incoming bank feed transaction\nPost the payment to the ledger"
    plain = [s["file"] for s in localize(corpus, task, None)]
    assert "src/bank_feed.py" not in plain[:1]
    sources = localize_all(corpus, task, None, workflow_words=words).sources
    files = [s["file"] for s in sources]
    assert files.index("src/ledger.py") < files.index("src/payments.py")  # "ledger" tells them apart
    ledger = next(s for s in sources if s["file"] == "src/ledger.py")
    assert any(r.startswith("workflow: ") and "ledger" in r for r in ledger["reasons"])
    assert not any("payment" in r for r in ledger["reasons"] if r.startswith("workflow: "))  # the task's own
    off = localize_all(
        corpus, task, None, params=LocalizeParams(workflow_term_weight=0.0), workflow_words=words
    )
    assert [s["file"] for s in off.sources] == plain


@pytest.mark.parametrize(
    "word",
    ["from_entries", "heap-buffer-overflow", "DEC_MAX_DIGITS", "HTTPServer2", "a", "parseURL", "x" * 70],
)
def test_a_word_s_term_texts_are_its_terms_each_with_the_text_it_stands_for(word: str) -> None:
    from lamina.retrieval.tokenize import word_term_texts, word_terms

    pairs = word_term_texts(word)
    assert tuple(t for t, _ in pairs) == word_terms(word)
    assert all(text in word for _, text in pairs)


def test_reasons_quote_the_part_of_a_task_word_that_matched_not_the_whole_word() -> None:
    """ "from_entries" in a task and a chunk that only says "entries": the reason must not claim
    from_entries (a new-user run on jq found `lexical: from_entries` on a file without it)."""
    corpus = build_chunk_corpus(
        ["src/aux.c", "src/builtin.c"], ["sort_items", "from_entries"], ["function", "function"], [1, 1], [9, 9],
        ["static jv sort_items(jv entries) { return entries; }",
         "static jv from_entries(jv input) { return input; }"],
        None, roles=["code", "code"],
    )  # fmt: skip
    sources = localize(corpus, "Use a default in from_entries for heap-buffer-overflow", None)
    reasons = {s["symbol"]: s["reasons"] for s in sources}
    assert "lexical: entries" in reasons["sort_items"]
    assert not any("from_entries" in r for r in reasons["sort_items"])
    assert any("from_entries" in r for r in reasons["from_entries"])


def test_a_name_most_related_candidates_hold_ties_none_of_them() -> None:
    """django-rest-framework's `rest_framework/test.py` (stem "test") was the "tested source" of every test
    file; a test is tied by a name it shares with a source, not by a word all tests have."""
    paths = ["rest_framework/test.py", "rest_framework/fields.py"] + [f"tests/test_{n}.py" for n in range(6)]
    symbols = ["force_authenticate", "DurationField"] + [f"test_views_{n}" for n in range(6)]
    texts = [
        "def force_authenticate(request, user): authenticate the request",
        "class DurationField(Field): parse a duration",
        "def test_duration_field(): DurationField().to_internal_value(duration)",
        *[f"def test_views_{n}(): the view measures a duration of test {n}" for n in range(1, 6)],
    ]
    roles = ["code", "code"] + ["test"] * 6
    n = len(paths)
    corpus = build_chunk_corpus(paths, symbols, ["function"] * n, [1] * n, [5] * n, texts, None, roles=roles)
    found = localize_all(corpus, "force_authenticate should accept a duration", None)
    sources, related = found.sources, found.related
    assert {s["file"] for s in sources} == {"rest_framework/test.py", "rest_framework/fields.py"}
    tied = {r["file"]: r["for"]["file"] for r in related}
    assert tied == {
        "tests/test_0.py": "rest_framework/fields.py"
    }  # by DurationField; none by the stem "test"


def test_a_long_symbol_listed_by_its_best_window_also_says_its_own_lines() -> None:
    """excalidraw: `App.handleCanvasPointerMove 7997-8076` was window 7 of 8 of a method of lines 7577-8140,
    and nothing said where it starts. The entry keeps its best window and adds the symbol's whole span; an
    overload elsewhere in the file with the same name is not part of it, and a one-window symbol adds none."""
    paths = ["src/app.ts"] * 4 + ["src/other.ts"]
    symbols = ["App.move", "App.move", "App.move", "App.move", "helper"]
    starts, ends = [100, 170, 240, 900], [180, 250, 300, 920]
    texts = [
        "handleCanvasPointerMove begins here with setup",
        "pointer move threshold resize handle drag logic",
        "cleanup of the pointer move state",
        "overload: move pointer somewhere else",
        "helper that resizes the pointer threshold",
    ]
    corpus = build_chunk_corpus(
        paths, symbols, ["method"] * 4 + ["function"], [*starts, 1], [*ends, 9], texts, None,
        roles=["code"] * 5,
    )  # fmt: skip
    sources = localize(corpus, "pointer move threshold resize handle drag", None)
    (move,) = [s for s in sources if s["symbol"] == "App.move" and s["start_line"] == 170]
    assert (move["symbol_start_line"], move["symbol_end_line"]) == (100, 300)  # not the overload at 900
    (helper,) = [s for s in sources if s["symbol"] == "helper"]
    assert "symbol_start_line" not in helper


def test_a_symbol_the_task_names_is_its_file_s_first_source() -> None:
    """django-rest-framework: "Request.data" listed `Request.data` fifth in its file, behind methods that
    only share words with the task."""
    paths = ["rest_framework/request.py"] * 4
    symbols = ["Request", "Request._load_data_and_files", "Request._parse", "Request.data"]
    texts = [
        "class Request: wraps the request data and files of the request",
        "def _load_data_and_files(self): parse the request data and the request files into data",
        "def _parse(self): parse the request stream data into data and files",
        "@property def data(self): return self._full_data",
    ]
    n = len(paths)
    corpus = build_chunk_corpus(paths, symbols, ["method"] * n, [1, 10, 30, 50], [9, 29, 49, 55], texts, None,
                                roles=["code"] * n)  # fmt: skip
    task = "Request.data is empty for a request with form data and files"
    first = localize(corpus, task, None)[0]
    assert first["symbol"] == "Request.data" and "the task names this symbol" in first["reasons"]
    plain = localize(corpus, task, None, params=LocalizeParams(named_symbols_lead=False))
    assert plain[0]["symbol"] != "Request.data"  # by its words alone it would not lead


def test_the_symbol_the_task_names_is_the_one_written_as_the_task_writes_it() -> None:
    """urfave/cli (Go): "Command.Run" marked `Command.run` and `Command.Command` as named too, and rich:
    "Console.printx" marked `Progress.console`. Case tells Go's exported and unexported names apart, and a
    qualified name is named only as the task writes the pair."""
    paths = ["command_run.go"] * 3 + ["command.go", "progress.go", "console.go"]
    symbols = [
        "Command.run",
        "Command.Run",
        "Command.parse",
        "Command.Command",
        "Progress.console",
        "Console",
    ]
    texts = [
        "func (cmd *Command) run(ctx context.Context, args []string) error: run the command and its context",
        "func (cmd *Command) Run(ctx context.Context, args []string) error: run with the context",
        "func (cmd *Command) parse(args []string): parse the context flags of the command",
        "func (cmd *Command) Command(name string) *Command: the command of the context named name",
        "func (p *Progress) console() *Console: the console of the context",
        "type Console struct: prints to the context's terminal",
    ]
    n = len(paths)
    corpus = build_chunk_corpus(paths, symbols, ["method"] * n, [1, 40, 80, 1, 1, 1], [39, 79, 99, 20, 9, 9], texts,
                                None, roles=["code"] * n)  # fmt: skip
    sources = localize(corpus, "Make Command.Run respect context cancellation", None)
    named = {s["symbol"] for s in sources if "the task names this symbol" in s["reasons"]}
    assert named == {"Command.Run"}
    assert next(s["symbol"] for s in sources if s["file"] == "command_run.go") == "Command.Run"
    lower = localize(corpus, "Make Command.run respect context cancellation", None)
    assert {s["symbol"] for s in lower if "the task names this symbol" in s["reasons"]} == {"Command.run"}
    # "Console" names the type Console; a member spelt `console` is named only when nothing is spelt as written
    console = localize(corpus, "Console.printx should return the context", None)
    assert {s["symbol"] for s in console if "the task names this symbol" in s["reasons"]} == {"Console"}


@pytest.mark.parametrize(
    ("path", "stem"),
    [
        ("tests/test_refunds.py", "refunds"),
        ("pkg/flag_uint_test.go", "flag_uint"),
        ("web/src/refunds.test.ts", "refunds"),
        ("src/test/java/org/shop/RefundsTest.java", "refunds"),
        ("tests/Shop.Tests/RefundsTests.cs", "refunds"),
        ("spec/refunds_spec.rb", "refunds"),
        ("test/testRefunds.js", "refunds"),
        ("tests/conftest.py", ""),  # fixtures, named after nothing
        ("tests/latest.py", ""),
        ("test/Contest.java", ""),
        ("test/helpers.go", ""),
    ],
)
def test_the_file_a_test_file_is_named_after(path: str, stem: str) -> None:
    from lamina.retrieval.localization import _tested_stem

    assert _tested_stem(path) == stem


def test_the_test_file_named_after_a_source_leads_related(monkeypatch: pytest.MonkeyPatch) -> None:
    """urfave/cli: "Uint flags should accept hexadecimal values like 0x1F" listed tests of flag_int_test.go and
    others, none of flag_uint_test.go, the test file of the first source. Its best test now leads `related`,
    tied to that source; of two files named after it, the one sharing the source's folders."""
    paths = ["flag_uint.go", "flag_int.go", "flag_int_test.go", "flag_uint_test.go", "old/flag_uint_test.go",
             "flag_int_test.go"]  # fmt: skip
    symbols = [
        "uintValue.Set",
        "intValue.Set",
        "TestIntFlagHex",
        "TestUintFlag",
        "TestLegacyUint",
        "TestIntBase",
    ]
    texts = [
        "func (u *uintValue) Set(s string) error: parse an unsigned uint flag value with strconv.ParseUint base",
        "func (i *intValue) Set(s string) error: parse an int flag value by its base",
        "func TestIntFlagHex(t *testing.T): hexadecimal values like 0x1F are accepted by int flags: f.Set(v)",
        "func TestUintFlag(t *testing.T): the uint flag parses its value",
        "func TestLegacyUint(t *testing.T): the old uint flag",
        "func TestIntBase(t *testing.T): int flags with a base",
    ]
    roles = ["code", "code", "test", "test", "test", "test"]
    corpus = build_chunk_corpus(paths, symbols, ["method", "method", "function", "function", "function", "function"],
                                [1, 1, 1, 1, 1, 20], [9, 9, 9, 9, 9, 29], texts, None, roles=roles)  # fmt: skip
    task = "Uint flags should accept hexadecimal values like 0x1F"
    found = localize_all(corpus, task, None)
    sources, related = found.sources, found.related
    assert sources[0]["file"] == "flag_uint.go"
    assert related[0]["file"] == "flag_uint_test.go" and related[0]["for"]["file"] == "flag_uint.go"
    import lamina.retrieval.localization as localization

    monkeypatch.setattr(localization, "LOCALIZE_OWN_TESTS_FIRST", False)
    by_words = localize_all(corpus, task, None).related  # without the rule: the test with the task's words
    assert by_words[0]["file"] == "flag_int_test.go"


def test_reasons_leave_out_short_numbers_when_words_matched() -> None:
    """`lexical: 0, 1, Uint` quoted the digits of "0x1F" (urfave/cli, session 36); a number says something only
    when nothing else matched."""
    corpus = build_chunk_corpus(
        ["flag_uint.go", "limits.go"], ["uintValue.Set", "limits"], ["method", "variable"], [1, 1], [9, 9],
        ["func (u *uintValue) Set(s string) error { v, err := strconv.ParseUint(s, 0, 64); u.n = 1 }",
         "var limits = []int{0, 1, 2}"],
        None, roles=["code", "code"],
    )  # fmt: skip
    reasons = {s["symbol"]: s["reasons"] for s in localize(corpus, "Uint flags should accept 0 or 1", None)}
    assert "lexical: Uint, flags" in reasons["uintValue.Set"]
    assert "lexical: 0, 1" in reasons["limits"]  # only numbers matched: they are the reason


def test_a_quoted_stack_traces_files_come_first_innermost_frame_first() -> None:
    """jhipster: a pasted NullPointerException trace listed the outer `UserResource` first and an
    `AccountResource` no frame names second; `UserService.updateUser`, where it broke, third (a new-user run,
    session 36). A library's frame (java.util.Optional) matches nothing; a Python trace's innermost frame is its
    last."""
    from lamina.retrieval.tokenize import stack_frames

    base = "src/main/java/io/shop"
    paths = [f"{base}/service/UserService.java", f"{base}/web/rest/UserResource.java",
             f"{base}/web/rest/AccountResource.java", "shop/api/routes.py", "shop/refunds.py"]  # fmt: skip
    symbols = [
        "UserService.updateUser",
        "UserResource.updateUser",
        "AccountResource.saveAccount",
        "refund",
        "issue",
    ]
    texts = [
        "public Optional<AdminUserDTO> updateUser(AdminUserDTO userDTO) { return repo.find(userDTO.getId()); }",
        "public ResponseEntity<AdminUserDTO> updateUser(AdminUserDTO userDTO) { return service.updateUser(userDTO); }",
        "public void saveAccount(AdminUserDTO userDTO) { email is null; user email update account }",
        "def refund(order): return svc.issue(order)",
        "def issue(order): raise ValueError",
    ]
    corpus = build_chunk_corpus(paths, symbols, ["method"] * 3 + ["function"] * 2, [1] * 5, [9] * 5, texts, None,
                                roles=["code"] * 5)  # fmt: skip
    trace = (
        'java.lang.NullPointerException: Cannot invoke "AdminUserDTO.getEmail()" because the email is null\n'
        "\tat io.shop.service.UserService.lambda$updateUser$5(UserService.java:192)\n"
        "\tat java.base/java.util.Optional.map(Optional.java:260)\n"
        "\tat io.shop.service.UserService.updateUser(UserService.java:185)\n"
        "\tat io.shop.web.rest.UserResource.updateUser(UserResource.java:160)\n"
    )
    assert stack_frames(trace) == ("io/shop/service/UserService.java", "io/shop/web/rest/UserResource.java")
    files = list(dict.fromkeys(s["file"] for s in localize(corpus, trace, None)))
    assert files[:2] == [f"{base}/service/UserService.java", f"{base}/web/rest/UserResource.java"]
    first = localize(corpus, trace, None)[0]
    assert "frame 1 of the stack trace the task quotes" in first["reasons"]
    python = (
        'Traceback (most recent call last):\n  File "/srv/app/shop/api/routes.py", line 40, in refund\n'
        '    svc.issue(order)\n  File "/srv/app/shop/refunds.py", line 12, in issue\n    raise ValueError\n'
    )
    assert [s["file"] for s in localize(corpus, python, None)][:1] == ["shop/refunds.py"]
    assert stack_frames("fix the refund flow in refunds.py at line 3") == ()


def test_a_pasted_issues_environment_dump_and_checklist_are_no_words_of_the_task() -> None:
    """urfave/cli: a pasted issue's `go env` output and template checklist sent every entry to the build
    script, on GOARCH, GOOS and the rest (a new-user run, session 36). A line or two of that shape is the
    task's own ("MAX_RETRIES=3 is too low")."""
    issue = (
        "StringSliceFlag appends to default values\n"
        "- [x] Are you running the latest v3 release?\n- [ ] Did you check the manual?\n"
        "- [x] Did you search the issues?\n"
        "GO111MODULE=''\nGOARCH='amd64'\nGOOS=\"linux\"\nexport GOPATH=\"/home/me/go\"\n"
        "The default value is kept."
    )
    terms = read_task(issue).terms
    assert {"stringsliceflag", "append", "default", "kept"} <= set(terms)
    assert not {"goarch", "amd64", "linux", "manual", "releas", "search"} & set(terms)
    assert {"maxretry", "low"} <= set(read_task("MAX_RETRIES=3 is too low").terms)


def test_a_pull_requests_template_links_trailers_and_references_are_no_words_of_the_task() -> None:
    """A new-user run on trpc (session 37): a PR description's comments, badges, hosts, co-author lines and
    `(#2601)` sent the task elsewhere and filled `unknown_words`."""
    task = read_task(
        "feat(client): infer outputs correctly (#2601)\n\n<!-- Describe the change and link the issue -->\n"
        "![badge](https://img.shields.io/npm/v/trpc.svg) See [inference](https://trpc.io/docs/inference).\n"
        "Fixes #123. Closes #45. GH-77\n\nCo-authored-by: Jane Doe <jane@example.com>\n"
        "Signed-off-by: Ann Lee <ann@example.com>\nChange-Id: I8f3a9c2"
    )
    assert {"infer", "output", "inferenc"} <= set(task.terms)
    said = {task.words.get(t, t) for t in task.terms}
    for noise in ("2601", "describe", "badge", "https", "img", "shields", "io", "123", "45", "77", "co", "jane",
                  "signed", "ann", "change", "i8f3a9c2"):  # fmt: skip
        assert noise not in said and noise not in task.terms
    kept = read_task("Use colour #333 for links; see PR notes")  # a hex colour and words stay
    assert "333" in kept.terms and "link" in kept.terms


def test_dependabots_boilerplate_is_no_word_of_the_task() -> None:
    """A second new-user run (session 37, pino): Dependabot's link list, `updated-dependencies:` block, footer,
    markdown comments, a `<details open>` with a nested one, an image tag and `owner/repo#12` were read, and sent
    bumps to the CI workflows."""
    task = read_task(
        "Bump sonic-boom from 4.0.1 to 5.0.0\n\nBumps [sonic-boom](https://github.com/pinojs/sonic-boom) from 4.0.1.\n"
        "- [Release notes](https://github.com/pinojs/sonic-boom/releases)\n- [Commits](https://x.test/compare)\n"
        "<details open><summary>Changelog</summary>\nouter <details><summary>inner</summary> nested </details>"
        " still folded\n</details>\n[//]: # (dependabot-automerge-start)\n"
        '<img alt="screenshot" width="600" src="x.png"> see pinojs/pino#2293\n\n---\nupdated-dependencies:\n'
        "- dependency-name: sonic-boom\n  dependency-type: direct:production\n...\n\n"
        "Dependabot will resolve any conflicts with this PR as long as you don't alter it yourself.\n"
        "You can trigger a rebase of this PR by commenting `@dependabot rebase`."
    )
    said = {task.words.get(t, t).casefold() for t in task.terms}
    assert {"sonic", "boom", "bump"} <= said
    for noise in ("release", "notes", "commits", "changelog", "outer", "nested", "folded", "dependabot", "automerge",
                  "screenshot", "600", "2293", "dependency", "production", "resolve", "conflicts", "rebase"):  # fmt: skip
        assert noise not in said, noise
    generic = read_task("Use List<String> and <b>bold</b> text in Vec<u8>")
    assert {"string", "bold", "u8"} <= set(generic.terms)  # generics and the text between tags stay


def test_a_paths_last_part_names_a_file_not_a_symbol_and_a_config_suffix_is_no_word() -> None:
    """A second new-user run (session 37): `github/codeql-action/init` made every `init` "the task names this
    symbol"; "min/max" is no path, and still names `max`."""
    task = read_task("Update github/codeql-action/init to v3 in .github/workflows/ci.yml; fix `Command.Run`")
    assert "init" in task.names and task.symbol_names == {"command", "run"}
    assert "max" in read_task("fix NumberUtils min/max varargs").symbol_names
    corpus = build_chunk_corpus(
        ["internal/version/version.go", "cmd/run.go"], ["init", "Command.Run"], ["function", "method"],
        [1, 1], [5, 5], ["func init() { codeql version }", "func (c *Command) Run() { action init }"],
        None, roles=["code", "code"],
    )  # fmt: skip
    sources = localize(corpus, "Update github/codeql-action/init to v3; fix `Command.Run`", None)
    by_symbol = {s["symbol"]: s["reasons"] for s in sources}
    assert "the task names this symbol" in by_symbol["Command.Run"]
    assert "the task names this symbol" not in by_symbol.get("init", [])


def test_a_member_the_task_names_with_its_owner_is_not_another_owners() -> None:
    """tokio (session 38): "implement `Peekable::size_hint`" listed ten other streams' `size_hint` as named and
    not peekable.rs, which had none yet. With the owner in the index, only its file and symbols are named; an
    owner the index lacks (`x509`) leaves the member free."""
    paths = ["src/stream_map.rs", "src/map.rs", "src/fuse.rs", "src/peekable.rs", "src/pool.rs"]
    symbols = ["StreamMap.size_hint", "Map.size_hint", "Fuse.size_hint", "Peekable", "SystemCertPool"]
    texts = [
        "fn size_hint(&self) -> (usize, Option<usize>) { stream size hint of the map of streams }",
        "fn size_hint(&self) -> (usize, Option<usize>) { the stream's size hint }",
        "fn size_hint(&self) -> (usize, Option<usize>) { size hint of a fused stream }",
        "pub struct Peekable<T> { stream: T, peeked: Option<T::Item> }",
        "func SystemCertPool() (*x509.CertPool, error) { the system's pool }",
    ]
    n = len(paths)
    corpus = build_chunk_corpus(
        paths, symbols, ["method"] * n, [1] * n, [9] * n, texts, None, roles=["code"] * n
    )
    sources = localize(corpus, "stream: implement `Peekable::size_hint`", None)
    named = {s["symbol"] for s in sources if "the task names this symbol" in s["reasons"]}
    assert named == {"Peekable"}
    assert sources[0]["file"] == "src/peekable.rs"
    external = localize(corpus, "use stdlib's x509.SystemCertPool on Windows", None)
    assert (
        external[0]["symbol"] == "SystemCertPool" and "the task names this symbol" in external[0]["reasons"]
    )


def test_an_elixir_or_erlang_arity_is_no_path() -> None:
    """oban (session 38): `Repo.transaction/3` named the symbol "3"."""
    task = read_task("Add exhausted logging to Repo.transaction/3 and `Oban.Period.to_seconds/1`")
    assert {"repo", "transaction", "period", "tosecond"} <= task.names and "3" not in task.names
    assert ("Repo", "transaction") in task.written_pairs
    assert read_task("bump the api/v2 handler").names == {"v2"}  # a path's last part is no arity


def test_a_hyphenated_words_prefix_is_no_term_and_the_word_is_not_unknown_when_its_parts_are_known() -> None:
    """A new-user run (serilog, swift-argument-parser; session 39): "multi-dimensional arrays" listed
    `MessageTemplateCache` for its "multi", "non-expression switch" cited "non" on three of five sources, and the
    hyphenated words were reported unknown although their parts were indexed."""
    from lamina.retrieval.localization import word_coverage

    task = read_task(
        "Support multi-dimensional arrays; use a non-expression switch; re-use the pre-release build"
    )
    assert {"multi", "non", "re", "pr"}.isdisjoint(task.terms)
    assert {"dimensional", "multidimensional", "expression", "switch", "releas", "build"} <= set(task.terms)
    assert "non" in read_task("a non blocking read").terms  # a word of its own is read as before
    corpus = build_chunk_corpus(
        ["Grid.swift", "Cache.swift"], ["Grid", "Cache"], ["struct"] * 2, [1, 1], [9, 9],
        ["struct Grid { dimensional array of cells }", "struct Cache { multi cache of templates }"],
        None, roles=["code", "code"],
    )  # fmt: skip
    assert [s["file"] for s in localize(corpus, "support multi-dimensional arrays", None)] == ["Grid.swift"]
    assert (
        "multi-dimensional" not in word_coverage(corpus, "support multi-dimensional arrays")["unknown_words"]
    )
    # none of its parts known: the word is reported as before
    assert "quasi-zorblax" in word_coverage(corpus, "a quasi-zorblax array")["unknown_words"]
