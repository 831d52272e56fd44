"""The history ranker (lamina/retrieval/history.py, session 38): a real repository's past commits read with git
(lamina/repo/git.py recent_history), and the files that past commits like the task changed ranked and fused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lamina.repo.git import recent_history
from lamina.retrieval.history import build_history, clean_message, history_files, ranked_paths
from lamina.retrieval.localization import LocalizeParams, build_chunk_corpus, localize_all, weighted_bm25
from lamina.retrieval.service import CommitHistory
from tests.conftest import run_lamina
from tests.helpers import commit, git, make_repo


def test_clean_message_drops_trailers_urls_issue_numbers_and_checklists() -> None:
    text = clean_message(
        "Fix the retry budget (#123)\n\nSee https://example.test/x for gh-9.\n- [x] tests\n"
        "---\nSigned-off-by: A <a@example.test>\nCo-authored-by: B <b@example.test>\n"
    )
    assert text == "Fix the retry budget\nSee for ."


def test_past_commits_are_read_with_their_files_newest_first(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    first = commit(repo, {"src/billing.py": "def charge(): pass\n"}, "Charge the card twice on retry")
    git(repo, "checkout", "-q", "-b", "side")
    side = commit(repo, {"src/side.py": "y = 2\n"}, "A side change")
    git(repo, "checkout", "-q", "main")
    second = commit(repo, {"src/ship.py": "def ship(): pass\n", "src/billing.py": "z = 0\n"}, "Ship later")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge side", "side")
    head = git(repo, "rev-parse", "HEAD").strip()
    past = recent_history(repo / ".git", head, 10)
    ids = [c for c, _, _ in past]
    assert ids[0] in (second, side) and first in ids and len(ids) == 4  # merges are left out
    by_id = {c: (message, paths) for c, message, paths in past}
    assert sorted(by_id[second][1]) == ["src/billing.py", "src/ship.py"]
    assert by_id[first][0].strip() == "Charge the card twice on retry"
    assert [c for c, _, _ in recent_history(repo / ".git", head, 2)] == ids[:2]
    # a commit that changed more paths than the limit keeps its message and gives no file anything
    corpus = build_history(past, max_files=1)
    assert corpus.files[ids.index(second)] == () and corpus.files[ids.index(first)] == ("src/billing.py",)


def test_a_repository_without_history_gives_no_commits(tmp_path: Path) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "-q")
    assert recent_history(repo / ".git", "HEAD", 10) == ()  # git fails: no history, no error
    assert CommitHistory(repo / ".git").corpus("HEAD") is None
    assert CommitHistory(None).corpus("HEAD") is None and CommitHistory(repo / ".git").corpus("") is None


def test_history_ranks_first_a_file_whose_code_names_nothing_the_task_says(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"README.md": "shop\n"})
    commit(repo, {"src/ledger.py": "def post(entry): pass\n"}, "Refunds must reverse the booking")
    booking = commit(
        repo, {"src/ledger.py": "def post(entry): return entry\n"}, "Partial refund: reverse its booking"
    )
    commit(repo, {"src/mail.py": "def send(): pass\n"}, "Send the receipt by mail")
    commit(repo, {"src/mail.py": "def send(): return 1\n"}, "Mail a refund receipt")
    head = git(repo, "rev-parse", "HEAD").strip()
    history = CommitHistory(repo / ".git").corpus(head)
    assert history is not None and len(history) == 5
    paths = ["src/mail.py", "src/ledger.py", "src/orders.py"]
    texts = ["def send(): return 1", "def post(entry): return entry", "def total(order): return 0"]
    corpus = build_chunk_corpus(paths, ["send", "post", "total"], ["function"] * 3, [1] * 3, [1] * 3, texts,
                                None, roles=["code"] * 3)  # fmt: skip
    task = "Reverse the booking of a refund"
    assert localize_all(corpus, task, None).sources == []  # no code says any of the task's words
    terms = ("revers", "book", "refund")
    scores = weighted_bm25(history.bm25, dict.fromkeys(terms, 1.0))
    hits = history_files(history, scores, {"src/mail.py", "src/ledger.py"}.__contains__, 200)
    assert ranked_paths(hits) == ["src/ledger.py", "src/mail.py"]  # 2 close commits, then 1 weak
    assert hits["src/ledger.py"].commits == 2
    assert history_files(history, scores, {"src/orders.py"}.__contains__, 200) == {}  # only code files
    sources = localize_all(corpus, task, None, history=history).sources
    assert [s["file"] for s in sources] == ["src/ledger.py", "src/mail.py"]
    # the reason says which past commit and which of the task's words, never the (untrusted) message
    (reason,) = [r for r in sources[0]["reasons"] if r.startswith("history: ")]
    assert reason.startswith(f"history: 2 similar past commits changed it ({booking[:7]}: ")
    assert "Partial" not in reason
    off = localize_all(corpus, task, None, params=LocalizeParams(history_top=0), history=history).sources
    assert off == []
    # a diagnosis with the cosine ranker alone leaves the history out, as it leaves out BM25
    vectors = np.eye(3, dtype=np.float32)
    dense_corpus = build_chunk_corpus(paths, ["send", "post", "total"], ["function"] * 3, [1] * 3, [1] * 3, texts,
                                      vectors, roles=["code"] * 3)  # fmt: skip
    dense_only = localize_all(dense_corpus, task, vectors[2], rankers=("dense",), history=history).sources
    assert dense_only[0]["file"] == "src/orders.py"
    assert not any(r.startswith("history") for s in dense_only for r in s["reasons"])


@pytest.mark.slow
def test_graphd_ranks_the_files_past_commits_like_the_task_changed(tmp_path: Path, lamina_home: Path) -> None:
    """The whole path: graphd reads the indexed head's history once (service.CommitHistory) and a source's reason
    names the past commit; a task no past commit reads like gets no history reason."""
    repo = make_repo(tmp_path / "r", {"src/ledger.py": "def post(entry):\n    return entry\n",
                                       "src/mail.py": "def send(message):\n    return message\n"})  # fmt: skip
    ledger = "def post(entry):\n    return entry.amount\n"
    test = "def test_balance():\n    assert True\n"
    reverse = commit(  # the most like the task
        repo, {"src/ledger.py": ledger, "tests/test_accounts.py": test}, "Refunds reverse the booking"
    )
    commit(
        repo,
        {"src/ledger.py": ledger.replace("return", "return -")},
        "Partial refunds reverse their booking too",
    )
    try:
        body = json.loads(run_lamina("context", "search", "reverse the booking of a refund", "--json", cwd=repo,
                                     check=True).stdout)  # fmt: skip
        first = body["sources"][0]
        assert first["file"] == "src/ledger.py"
        assert (
            f"history: 2 similar past commits changed it ({reverse[:7]}: reverse, booking, refund)"
            in first["reasons"]
        )
        (past,) = [r for r in body["related"] if r["file"] == "tests/test_accounts.py"]
        assert past["reason"].startswith(f"history: a similar past commit changed it ({reverse[:7]}: ")
        text = run_lamina("context", "search", "reverse the booking of a refund", cwd=repo, check=True).stdout
        assert "related: tests/test_accounts.py" in text and "for src/ledger.py post  history: " in text
        other = json.loads(
            run_lamina("context", "search", "send a message", "--json", cwd=repo, check=True).stdout
        )
        assert other["sources"][0]["file"] == "src/mail.py"
        assert not any(r.startswith("history") for s in other["sources"] for r in s["reasons"])
    finally:
        run_lamina("graphd", "stop", cwd=repo)


def test_a_test_past_commits_like_the_task_changed_joins_related_with_its_reason(tmp_path: Path) -> None:
    """The tests the change must prove: the one that similar past commits changed joins `related` after the
    others, tied to a source the same past commit changed (session 38: 0.655 -> 0.788 of the training commits that
    change an existing test list one)."""
    repo = make_repo(tmp_path / "r", {"README.md": "shop\n"})
    ledger, test = "def post(entry): pass\n", "def test_balance(): assert 1\n"
    booking = commit(
        repo, {"src/ledger.py": ledger, "tests/test_accounts.py": test}, "Refunds must reverse the booking"
    )
    commit(repo, {"src/mail.py": "def send(): pass\n"}, "Send the receipt by mail")
    history = CommitHistory(repo / ".git").corpus(git(repo, "rev-parse", "HEAD").strip())
    paths = ["src/mail.py", "src/ledger.py", "tests/test_accounts.py"]
    texts = ["def send(): refund receipt", "def post(entry): return entry", "def test_balance(): assert 1"]
    corpus = build_chunk_corpus(paths, ["send", "post", "test_balance"], ["function"] * 3, [1] * 3, [1] * 3, texts,
                                None, roles=["code", "code", "test"])  # fmt: skip
    task = "Reverse the booking of a refund"
    without = localize_all(corpus, task, None, params=LocalizeParams(history_top=0), history=history)
    assert "tests/test_accounts.py" not in [
        r["file"] for r in without.related
    ]  # it says none of the task's words
    found = localize_all(corpus, task, None, history=history)
    (entry,) = [r for r in found.related if r["file"] == "tests/test_accounts.py"]
    assert entry["for"]["file"] == "src/ledger.py"  # what the same past commit changed, not the first source
    assert entry["reason"].startswith(f"history: a similar past commit changed it ({booking[:7]}: ")
    assert entry["symbol"] == "test_balance" and entry["role"] == "test"


def test_concurrent_tasks_read_a_heads_history_once(tmp_path: Path) -> None:
    """graphd answers connections in threads: the first tasks after a head moves share one reading of its history
    (without the lock each built its own, and the cache's order could be changed under another thread)."""
    import threading

    repo = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    for i in range(30):
        commit(repo, {"a.py": f"x = {i + 2}\n"}, f"Change x to {i + 2} for the ledger")
    head = git(repo, "rev-parse", "HEAD").strip()
    history = CommitHistory(repo / ".git")
    start = threading.Barrier(8)
    got: list[object] = []

    def read() -> None:
        start.wait()
        got.append(history.corpus(head))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(c is got[0] for c in got) and got[0] is not None


def test_the_configuration_past_commits_like_the_task_changed_leads_config(tmp_path: Path) -> None:
    """A dependency bump: past bumps changed Cargo.toml, not the CI workflow that also says the crate's name; when
    both are listed, Cargo.toml comes first, with its reason (session 38: configuration-only commits whose file is
    listed first, training 0.694 -> 0.748)."""
    repo = make_repo(tmp_path / "r", {"README.md": "tool\n"})
    commit(repo, {"Cargo.toml": "[dependencies]\nserde = '1.0.1'\n"}, "Bump serde from 1.0.0 to 1.0.1")
    cargo = commit(  # the most like the task: it says 1.0.2 too
        repo, {"Cargo.toml": "[dependencies]\nserde = '1.0.2'\n"}, "Bump serde from 1.0.1 to 1.0.2"
    )
    history = CommitHistory(repo / ".git").corpus(git(repo, "rev-parse", "HEAD").strip())
    paths = ["src/main.rs", "Cargo.toml", ".github/workflows/ci.yml"]
    texts = [
        "fn main() { run() }",
        "[dependencies]\nserde = { features = ['derive'] }",
        "jobs: bump serde from 1.0.2 to 1.0.3: cargo update -p serde",
    ]
    corpus = build_chunk_corpus(paths, ["main", "<file>", "<file>"], ["function", "file", "file"], [1] * 3,
                                [3] * 3, texts, None, roles=["code", "config", "config"])  # fmt: skip
    task = "Bump serde from 1.0.2 to 1.0.3"
    before = localize_all(corpus, task, None, params=LocalizeParams(history_top=0), history=history).config
    assert [c["file"] for c in before] == [".github/workflows/ci.yml", "Cargo.toml"]  # the workflow says more
    after = localize_all(corpus, task, None, history=history).config
    assert [c["file"] for c in after] == ["Cargo.toml", ".github/workflows/ci.yml"]
    assert any(
        r.startswith(f"history: 2 similar past commits changed it ({cargo[:7]}: ")
        for r in after[0]["reasons"]
    )
    # a configuration file the task names still leads
    named = localize_all(corpus, task + " in .github/workflows/ci.yml", None, history=history).config
    assert named[0]["file"] == ".github/workflows/ci.yml"


def test_graphd_reads_a_new_heads_history_before_its_first_task(tmp_path: Path) -> None:
    """After activating a generation graphd reads its head's history (service.warm_history), so the first `prepare`
    on a new head does not wait 0.3-1.2 s for git: once warmed, the history answers without git."""
    from lamina.retrieval.service import RetrievalService

    repo = make_repo(tmp_path / "r", {"src/ledger.py": "def post(): pass\n"})
    commit(repo, {"src/ledger.py": "def post(): return 1\n"}, "ledger: refunds reverse the booking")
    head = git(repo, "rev-parse", "HEAD").strip()
    service = RetrievalService(None, None, threads=1, git_dir=repo / ".git")  # type: ignore[arg-type]
    # a generation before any commit: nothing to read
    service.warm_history({"source_revision": "(no commit)"})
    service.warm_history({"source_revision": f"{head}+dirty"})
    (repo / ".git").rename(repo / "git-gone")  # no git from here on: only what was read ahead answers
    history = service.commit_history.corpus(head)
    assert history is not None and len(history) == 2
    cold = RetrievalService(None, None, threads=1, git_dir=repo / ".git")  # type: ignore[arg-type]
    assert cold.commit_history.corpus(head) is None  # the same question unwarmed needs git
