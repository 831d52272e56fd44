"""A task whose commit scope the repository's recent commits share ("ignore/types: add Gleam"): what those commits
almost always changed comes first. The reading (tokenize.commit_scope), git's answer on real repositories
(lamina/repo/git.py), graphd's cache of it (service.ScopeHistory), the rule (localization) and the whole path
through the real CLI and graphd."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lamina.repo.git import commits_paths, recent_subjects
from lamina.retrieval.localization import build_chunk_corpus, localize, localize_all
from lamina.retrieval.service import ScopeHistory, indexed_head
from lamina.retrieval.tokenize import commit_scope
from tests.conftest import run_lamina
from tests.helpers import commit, git, make_repo

TYPES = "LANGS = [\n    ('rust', ['*.rs']),\n]\n"
MATCHER = "def file_type(path, types):\n    return types.get(path)\n"


def test_commit_scope_is_a_plain_scope_as_written() -> None:
    assert commit_scope("ignore/types: add Gleam\n\nGleam is a language") == "ignore/types"
    assert commit_scope("  cli/command/container: fix the stats") == "cli/command/container"
    for task in ("fix: a typo", "feat(ui): dark mode", "Add Gleam to the types", "Docs: a typo"):
        assert commit_scope(task) is None  # no scope, a conventional type(scope), a commit type
    assert indexed_head({"source_revision": "abc123+dirty.0f"}) == "abc123"
    assert indexed_head({"source_revision": "(no commits)"}) == "" == indexed_head({})


def _history(tmp_path: Path) -> tuple[Path, list[str]]:
    repo = make_repo(tmp_path / "r", {"src/types.py": TYPES, "src/matcher.py": MATCHER})
    shas = []
    for i, lang in enumerate(("gleam", "zig", "odin")):
        files = {"src/types.py": TYPES.replace("]\n", f"    ('{lang}', ['*.{lang}']),\n]\n", 1) * (i + 1)}
        if i == 0:
            files["docs/types.md"] = "the languages"
        shas.append(commit(repo, files, f"types: add {lang}"))
    shas.append(commit(repo, {"src/matcher.py": MATCHER + "# faster\n"}, "matcher: faster lookups"))
    return repo, shas


def test_git_reads_the_newest_subjects_and_each_commits_paths(tmp_path: Path) -> None:
    repo, shas = _history(tmp_path)
    subjects = recent_subjects(repo, "HEAD", 3)
    assert [s for _, s in subjects] == ["matcher: faster lookups", "types: add odin", "types: add zig"]
    assert [h for h, _ in subjects] == shas[::-1][:3]
    assert recent_subjects(repo, "no-such-ref", 3) == ()
    assert commits_paths(repo, [shas[0], shas[3]]) == (("docs/types.md", "src/types.py"), ("src/matcher.py",))
    assert commits_paths(repo, []) == ()


def test_scope_history_answers_per_head_and_scope(tmp_path: Path) -> None:
    repo, shas = _history(tmp_path)
    history = ScopeHistory(repo / ".git")
    head = git(repo, "rev-parse", "HEAD").strip()
    changes = history.changes(head, "types: add elixir")
    assert changes == (
        ("src/types.py",),
        ("src/types.py",),
        ("docs/types.md", "src/types.py"),
    )  # newest first
    assert history.changes(head, "matcher: cache results") == (("src/matcher.py",),)
    assert history.changes(shas[1], "types: add elixir") == (
        ("src/types.py",),
        ("docs/types.md", "src/types.py"),
    )
    assert history.changes(head, "add elixir") == () == ScopeHistory(None).changes(head, "types: add elixir")


def test_the_file_the_scopes_commits_almost_always_changed_comes_first() -> None:
    corpus = build_chunk_corpus(
        ["src/types.py", "src/matcher.py", "docs/types.md"], ["<module>", "file_type", "<file>"],
        ["module", "function", "file"], [1, 1, 1], [3, 2, 1],
        ["LANGS = [('rust', ['*.rs'])]", "def file_type(path, types): add a type to the matcher", "the languages"],
        None, roles=["code", "code", "docs"],
    )  # fmt: skip
    task = "types: add a type to the matcher"
    assert [s["file"] for s in localize(corpus, task, None)][0] == "src/matcher.py"
    usual = [("src/types.py",), ("src/types.py", "docs/types.md"), ("src/types.py",), ("docs/types.md",)]
    sources = localize_all(corpus, task, None, scope_history=usual).sources
    assert sources[0]["file"] == "src/types.py"  # the commit that changed docs only does not count
    assert "changed by 3 of the last 3 commits with the task's scope" in sources[0]["reasons"]
    for weak in (usual[:2], [("src/types.py",), ("src/matcher.py",), ("src/types.py",)]):  # too few; 2 of 3
        assert [s["file"] for s in localize_all(corpus, task, None, scope_history=weak).sources][
            0
        ] == "src/matcher.py"


@pytest.mark.slow
def test_a_scoped_task_gets_what_its_scope_usually_changes_through_graphd(
    tmp_path: Path, lamina_home: Path
) -> None:
    repo, _ = _history(tmp_path)
    try:
        body = json.loads(run_lamina("context", "search", "types: match files by their name", "--json", cwd=repo,
                                     check=True).stdout)  # fmt: skip
        first = body["sources"][0]
        assert first["file"] == "src/types.py"
        assert "changed by 3 of the last 3 commits with the task's scope" in first["reasons"]
        plain = json.loads(run_lamina("context", "search", "match files by their name", "--json", cwd=repo,
                                      check=True).stdout)  # fmt: skip
        assert plain["sources"][0]["file"] == "src/matcher.py"
    finally:
        run_lamina("graphd", "stop", cwd=repo)
