"""The pure parts of bench/localization.py: query cleaning, gold extraction from real git diffs, metrics."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from lamina.chunking import chunk_file

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_localization", ROOT / "bench" / "localization.py")
assert _spec is not None and _spec.loader is not None
loc = importlib.util.module_from_spec(_spec)
sys.modules["bench_localization"] = loc  # dataclasses resolve their module by name
_spec.loader.exec_module(loc)


# --- query cleaning ------------------------------------------------------------------------------
def test_clean_query_removes_refs_urls_trailers_and_rules() -> None:
    message = (
        "fix(client): skip undefined header values (#5244)\n\n"
        "* fix(client): skip undefined header values\n\n"
        "See https://github.com/honojs/hono/issues/5200 and GH-17, owner/repo#9.\n"
        "Fixes: #6266\n"
        "- [x] Add tests\n"
        "<!-- template comment -->\n"
        "---------\n\n"
        "Signed-off-by: A Person <a@example.com>\n"
        "Co-authored-by: Yusuke Wada <yusuke@example.com>\n"
    )
    assert loc.clean_query(message) == (
        "fix(client): skip undefined header values\n* fix(client): skip undefined header values\nSee and , ."
    )


def test_clean_query_keeps_code_parentheses() -> None:
    assert loc.clean_query("fix: remove `require()` calls that break bundlers (#12647)") == (
        "fix: remove `require()` calls that break bundlers"
    )
    assert loc.clean_query("fix: filter query in $ws() (#5256, #5257)") == "fix: filter query in $ws()"


def test_word_count_counts_identifiers() -> None:
    assert loc.word_count("fix(ws): a b") == 4
    assert loc.word_count("Bump") == 1


# --- which files count ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("src/a.test.ts", True),
        ("src/__tests__/a.ts", True),
        ("tokio/src/runtime/tests/loom_pool.rs", True),
        ("tokio/src/runtime/time_alt/tests.rs", True),
        ("pkg/server_test.go", True),
        ("src/test/java/FooTest.java", True),
        ("tokio/src/sync/notify.rs", False),
        ("src/query-builder/SelectQueryBuilder.ts", False),
        ("src/contest.rs", False),
        ("tokio-test/src/io.rs", False),
    ],
)
def test_is_test_path(path: str, is_test: bool) -> None:
    assert loc.is_test_path(path) is is_test


def test_scope_covers_only_indexed_non_test_code() -> None:
    scope = loc.Scope(include=("src/**/*.ts",), exclude=("src/legacy/**",))
    assert scope.covers("src/a/b.ts")
    assert not scope.covers("src/a/b.test.ts")  # a test
    assert not scope.covers("src/legacy/x.ts")  # excluded by the repo entry
    assert not scope.covers("src/node_modules/x.ts")  # Lamina's built-in excludes
    assert not scope.covers("docs/a.ts")  # not included
    assert not scope.covers("src/readme.md")  # not code


# --- gold from real diffs ------------------------------------------------------------------------
PY_PARENT = """import os


class Cart:
    size = 0

    def add(self, item):
        self.items.append(item)
        self.size += 1
        return self


def total(cart):
    return cart.size


def helper():
    return 1
"""


def test_parse_old_spans_modification_insertion_deletion_and_new_file() -> None:
    diff = (
        "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n"
        "@@ -8,2 +8 @@ x\n-a\n-b\n+c\n"
        "@@ -14,0 +14,2 @@\n+d\n+e\n"
        "@@ -20 +21 @@\n-f\n+g\n"
        "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x\n"
    )
    spans = loc.parse_old_spans(diff)
    assert spans == {
        "a.py": [loc.OldSpan(8, 9), loc.OldSpan(14, 14, insertion=True), loc.OldSpan(20, 20)],
    }


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, str, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    parent = _commit(repo, {"src/cart.py": PY_PARENT, "src/other.py": "def other():\n    return 2\n"}, "init")
    child_text = (
        PY_PARENT.replace("        self.size += 1\n", "        self.size += 2\n")  # inside Cart.add
        .replace("import os\n", "import os\nimport sys\n")  # module level: no symbol
        .replace("def helper():\n", "def new_fn():\n    pass\n\n\ndef helper():\n")  # between functions
    )
    commit = _commit(
        repo,
        {"src/cart.py": child_text, "src/new.py": "x = 1\n", "tests/test_cart.py": "def test():\n    pass\n"},
        "cart: count two per added item (#12)\n\nCo-authored-by: x <x@x>\n",
    )
    return repo, parent, commit


def test_gold_symbols_give_a_changed_line_to_its_innermost_symbol(history: tuple[Path, str, str]) -> None:
    repo, parent, commit = history
    spans = loc.parse_old_spans(_git(repo, "diff", "-U0", "--no-renames", parent, commit))
    chunks = chunk_file("src/cart.py", PY_PARENT.encode())
    # the method, not its class (whose range also holds the line); no symbol for the import or for a
    # function inserted between two others
    assert loc.gold_symbols(chunks, spans["src/cart.py"]) == {"Cart.add"}


def test_gold_symbols_insertion_inside_a_body_belongs_to_it() -> None:
    chunks = chunk_file("src/cart.py", PY_PARENT.encode())
    inside = loc.OldSpan(8, 8, insertion=True)  # between two lines of Cart.add's body
    in_class = loc.OldSpan(5, 5, insertion=True)  # after `size = 0`: in the class, before the method
    after_end = loc.OldSpan(10, 10, insertion=True)  # after `return self`, the class's last line
    assert loc.gold_symbols(chunks, [inside]) == {"Cart.add"}
    assert loc.gold_symbols(chunks, [in_class]) == {"Cart"}
    assert loc.gold_symbols(chunks, [after_end]) == set()  # appended after the class: no symbol holds it


def test_build_case_from_real_history(history: tuple[Path, str, str]) -> None:
    repo, parent, commit = history
    case = loc.build_case(repo, commit, loc.Scope(include=("src/**/*.py",)))
    assert case is not None
    assert case.parent == parent
    assert case.query == "cart: count two per added item"
    assert case.gold_files == ("src/cart.py",)  # src/new.py is absent at the parent; the test is no gold
    assert case.gold_symbols == (("src/cart.py", "Cart.add"),)


def test_build_case_skips_short_messages_and_out_of_scope_commits(history: tuple[Path, str, str]) -> None:
    repo, _, _ = history
    short = _commit(repo, {"src/other.py": "def other():\n    return 3\n"}, "tweak (#13)")
    assert loc.build_case(repo, short, loc.Scope(include=("src/**/*.py",))) is None
    docs = _commit(repo, {"README.md": "hello\n"}, "docs: explain how the cart counts items")
    assert loc.build_case(repo, docs, loc.Scope(include=("src/**/*.py",))) is None
    merge_like = _commit(repo, {"src/other.py": "def other():\n    return 4\n"}, "Merge commit from fork")
    assert loc.build_case(repo, merge_like, loc.Scope(include=("src/**/*.py",))) is None


def test_select_cases_is_newest_first_and_bounded(history: tuple[Path, str, str]) -> None:
    repo, _, commit = history
    newer = _commit(
        repo, {"src/other.py": "def other():\n    return 5\n"}, "other: return five instead of two"
    )
    cases = loc.select_cases(repo, "HEAD", loc.Scope(include=("src/**/*.py",)), 5)
    assert [c.commit for c in cases] == [newer, commit]  # the root commit has no parent
    assert len(loc.select_cases(repo, "HEAD", loc.Scope(include=("src/**/*.py",)), 1)) == 1


# --- metrics -------------------------------------------------------------------------------------
def _src(file: str, symbol: str) -> dict[str, object]:
    return {"file": file, "symbol": symbol, "kind": "function", "start_line": 1, "end_line": 2, "score": 0.1}


def test_ranked_files_dedupe_in_first_seen_order() -> None:
    sources = [_src("a", "x"), _src("b", "y"), _src("a", "z"), _src("c", "w")]
    assert loc.ranked_files(sources) == ["a", "b", "c"]


def test_recall_and_reciprocal_rank() -> None:
    ranked = ["a", "b", "c", "d"]
    assert loc.recall_at(ranked, {"b", "z"}, 1) == 0.0
    assert loc.recall_at(ranked, {"b", "z"}, 5) == 0.5
    assert loc.recall_at(ranked, {"a", "d"}, 10) == 1.0
    assert loc.reciprocal_rank(ranked, {"c", "d"}) == pytest.approx(1 / 3)
    assert loc.reciprocal_rank(ranked, {"z"}) == 0.0
    assert loc.reciprocal_rank(ranked, {"d"}, k=3) == 0.0
    with pytest.raises(ValueError):
        loc.recall_at(ranked, set(), 1)


def test_symbol_hit_needs_same_file_and_same_symbol() -> None:
    sources = [_src("a.ts", "Cart.add"), _src("b.ts", "Cart.remove")]
    assert loc.symbol_recall(sources, [("a.ts", "Cart.add"), ("a.ts", "Cart.remove")]) == 0.5
    assert loc.symbol_recall(sources, [("c.ts", "Cart.add")]) == 0.0


def test_score_and_summarize() -> None:
    first = loc.score_case([_src("b", "s"), _src("a", "t")], ["a"], [("a", "t")])
    assert first.file_recall == {1: 0.0, 5: 1.0, 10: 1.0}
    assert first.mrr == 0.5
    assert first.symbol_recall == 1.0
    second = loc.score_case([_src("c", "s")], ["a", "c"], [])
    assert second.symbol_recall is None  # no gold symbol: out of the symbol recall's denominator
    summary = loc.summarize([first, second])
    assert summary.n == 2
    assert summary.file_recall[1] == pytest.approx(0.25)
    assert summary.mrr == pytest.approx(0.75)
    assert (summary.symbol_recall, summary.n_symbol) == (1.0, 1)


def test_hybrid_figures_take_the_better_single_ranker_as_baseline() -> None:
    def summary(r10: float) -> object:
        return loc.Summary(n=3, file_recall={1: 0.1, 5: 0.2, 10: r10}, mrr=0.3, symbol_recall=0.4, n_symbol=3)

    figures = loc.ranker_figures(
        "repo", {"lexical": summary(0.5), "dense": summary(0.6), "hybrid": summary(0.75)}
    )
    by_name = {f["name"]: f for f in figures}
    hybrid = by_name["repo.hybrid.file_recall@10"]
    assert (hybrid["value"], hybrid["baseline"], hybrid["ratio"]) == (0.75, 0.6, 1.25)
    assert by_name["repo.lexical.file_recall@10"]["baseline"] is None
    assert len(figures) == 3 * 5
