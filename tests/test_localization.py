"""Source localization policy (lamina/retrieval/localization.py) and reading a task (tokenize.read_task)."""

from __future__ import annotations

import numpy as np

from lamina.retrieval.localization import LocalizeParams, build_chunk_corpus, localize, localize_all
from lamina.retrieval.tokenize import read_task, tokenize


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
    assert {"tpl", "collection"} <= scoped.names
    assert not read_task("Refund a paid order when the warehouse cannot ship it").names


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
    sources, related = localize_all(corpus, "Refund a paid order when the warehouse cannot ship it", None)
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


def test_per_file_cap_unless_fewer_files_match() -> None:
    corpus = _corpus(with_vectors=False)
    capped = localize(corpus, "refund order ship", None, limit=2, params=LocalizeParams(per_file=1))
    assert sorted(s["file"] for s in capped) == ["src/refund.py", "src/ship.py"]
    # two files match a limit of 10: each may fill up to 5 entries (its three chunks here)
    both = localize(corpus, "refund order ship", None, params=LocalizeParams(per_file=1))
    assert [s["file"] for s in both].count("src/refund.py") == 3


def test_an_identifier_the_task_names_outranks_word_overlap() -> None:
    corpus = _corpus(with_vectors=False)
    sources = localize(corpus, "the warehouse order flow breaks in `RefundService.undo`", None)
    assert sources[0]["file"] == "src/refund.py" and sources[0]["symbol"] == "RefundService.undo"
    assert any("names what the task names" in r for r in sources[0]["reasons"])


def test_same_inputs_same_sources() -> None:
    corpus = _corpus()
    q = np.eye(1, 8, dtype=np.float32)[0]
    assert localize(corpus, "refund a paid order", q) == localize(corpus, "refund a paid order", q)
