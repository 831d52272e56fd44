"""A task that names a commit ("This reverts commit 55fcffe…", "(cherry picked from commit 83b06e4…)"): git says
which paths that commit changed (lamina/repo/git.py commit_paths, on real repositories), and localization lists
those code files first, through the real CLI and graphd."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lamina.repo.git import commit_paths
from lamina.retrieval.service import named_commit_paths
from tests.conftest import run_lamina
from tests.helpers import commit, git, make_repo


def as_written(full: str) -> str:
    """A commit as a task writes it: the shortest prefix of 9 or more characters that reads as a hash (a digit and a
    letter a-f; tokenize.commit_hashes). A plain 9-character prefix is all digits in 1.5% of commits, and a number
    is no hash: the graphd test below failed once that way."""
    n = 9
    while not (any(c.isdigit() for c in full[:n]) and any(c.isalpha() for c in full[:n])):
        n += 1
    return full[:n]


def test_commit_paths_are_what_a_commit_changed_against_its_first_parent(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "A = 1\n", "b.py": "B = 1\n"})
    root = git(repo, "rev-parse", "HEAD").strip()
    one = commit(repo, {"b.py": "B = 2\n", "dir with space/ü.py": "U = 1\n"}, "change b")
    git(repo, "switch", "-q", "-c", "side")
    side = commit(repo, {"c.py": "C = 1\n"}, "add c")
    git(repo, "switch", "-q", "main")
    commit(repo, {"a.py": "A = 2\n"}, "change a")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    merge = git(repo, "rev-parse", "HEAD").strip()
    common = Path(git(repo, "rev-parse", "--git-common-dir").strip())
    common = common if common.is_absolute() else repo / common

    assert commit_paths(common, root[:7]) == ("a.py", "b.py")  # a root commit: every path it added
    assert commit_paths(common, one[:8]) == ("b.py", "dir with space/ü.py")  # unusual paths arrive whole
    assert commit_paths(repo, one[:10]) == commit_paths(common, one[:10])  # a worktree's path works too
    assert commit_paths(common, side[:12]) == ("c.py",)
    assert commit_paths(common, merge[:9]) == ("c.py",)  # a merge: what it brought to its first parent
    # no commit by that hash, a branch that is only spelled like one, no repository at all: None, no error
    assert commit_paths(common, "1234abcd") is None
    git(repo, "branch", "abc1234", "side")
    assert commit_paths(common, "abc1234") is None
    assert commit_paths(tmp_path / "nowhere", one[:8]) is None


def test_named_commit_paths_reads_only_the_commits_the_repository_has(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "A = 1\n"})
    one = commit(repo, {"b.py": "B = 1\n"}, "add b")
    task = f"Revert {as_written(one)} and 1234abcd: b broke the build"
    assert named_commit_paths(repo / ".git", task) == {as_written(one): ("b.py",)}
    assert named_commit_paths(None, task) == {}  # no repository: nothing is asked
    assert named_commit_paths(repo / ".git", "Refund a paid order") == {}


@pytest.mark.slow
def test_a_task_naming_a_commit_gets_its_code_first_through_graphd(tmp_path: Path, lamina_home: Path) -> None:
    from tests.test_packet import shop_repo

    repo = shop_repo(tmp_path / "shop")
    payouts = repo / "backend" / "shop" / "payouts.py"
    refunds_test = repo / "backend" / "tests" / "test_refunds.py"
    changed = commit(
        repo,
        {
            "backend/shop/payouts.py": payouts.read_text()
            + "\n\ndef hold_back(amount):\n    return amount\n",
            "backend/tests/test_refunds.py": refunds_test.read_text()
            + "\n\ndef test_part_is_kept():\n    pass\n",
        },
        "Hold back part of each payout",
    )
    task = f"Revert {as_written(changed)}: buyers could not cancel an order"
    try:
        search = run_lamina("context", "search", task, "--json", cwd=repo, check=True)
        first = json.loads(search.stdout)["sources"][0]
        assert first["file"] == "backend/shop/payouts.py"
        assert f"in a file commit {as_written(changed)} changed, which the task names" in first["reasons"]
        packet = json.loads(
            run_lamina(
                "work", "prepare", task, "--json", "--workflow", "refund-order", cwd=repo, check=True
            ).stdout
        )
        assert packet["sources"][0]["file"] == "backend/shop/payouts.py"
        # the test that commit changed is the first related entry: what the revert must prove again
        first_related = packet["related"][0]
        assert first_related["file"] == "backend/tests/test_refunds.py"
        assert first_related["for"]["file"] == "backend/shop/payouts.py"
        # a hash the repository does not have is only a word of the task: no source claims a commit
        unknown_task = "Revert 1234abcd: buyers could not cancel an order"
        unknown = json.loads(
            run_lamina("context", "search", unknown_task, "--json", cwd=repo, check=True).stdout
        )
        assert unknown["sources"] and not any("commit" in r for s in unknown["sources"] for r in s["reasons"])
        assert unknown["sources"][0]["file"] != "backend/shop/payouts.py"
    finally:
        run_lamina("graphd", "stop", cwd=repo)
