"""The history ranker (bench/history.py: evaluated, not built into the product): reading a real repository's
past commits and ranking the files similar past commits touched, fused through localize_all's `extra`."""

from __future__ import annotations

from pathlib import Path

from bench.history import build_history_corpus, clean_message, history_ranking, read_commits, recent_commits
from lamina.retrieval.localization import build_chunk_corpus, localize_all
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
    ids = recent_commits(repo, head, 10)
    assert ids[0] in (second, side) and first in ids and len(ids) == 4  # merges are left out
    commits = {c.commit: c for c in read_commits(repo, ids, max_files=50)}
    assert commits[second].files == ("src/billing.py", "src/ship.py")
    assert commits[first].message == "Charge the card twice on retry"
    # a commit touching more paths than max_files keeps its message and no files
    assert read_commits(repo, [second], max_files=1)[0].files == ()
    assert recent_commits(repo, head, 2) == ids[:2]


def test_a_repository_without_history_gives_no_commits(tmp_path: Path) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "-q")
    assert recent_commits(repo, "", 10) == []
    assert recent_commits(repo, "HEAD", 10) == []  # git fails: no history, no error
    assert read_commits(repo, [], 10) == []


def test_history_ranks_first_a_file_whose_code_names_nothing_the_task_says(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"README.md": "shop\n"})
    commit(repo, {"src/ledger.py": "def post(entry): pass\n"}, "Refunds must reverse the booking")
    commit(repo, {"src/ledger.py": "def post(entry): return entry\n"}, "Partial refund: reverse its booking")
    commit(repo, {"src/mail.py": "def send(): pass\n"}, "Send the receipt by mail")
    commit(repo, {"src/mail.py": "def send(): return 1\n"}, "Mail a refund receipt")
    head = git(repo, "rev-parse", "HEAD").strip()
    commits = read_commits(repo, recent_commits(repo, head, 100), max_files=50)
    history = build_history_corpus(
        [c.commit for c in commits], [c.message for c in commits], [c.files for c in commits]
    )
    paths = ["src/mail.py", "src/ledger.py", "src/orders.py"]
    texts = ["def send(): return 1", "def post(entry): return entry", "def total(order): return 0"]
    corpus = build_chunk_corpus(paths, ["send", "post", "total"], ["function"] * 3, [1] * 3, [1] * 3, texts,
                                None, roles=["code"] * 3)  # fmt: skip
    task = "Reverse the booking of a refund"
    assert localize_all(corpus, task, None).sources == []  # no code says any of the task's words
    ranking = history_ranking(history, task, {"src/mail.py", "src/ledger.py"}.__contains__)
    assert ranking == ["src/ledger.py", "src/mail.py"]  # 2 close commits, then 1 weak
    sources = localize_all(corpus, task, None, extra={"history": ranking}).sources
    assert [s["file"] for s in sources] == ["src/ledger.py", "src/mail.py"]
    assert history_ranking(history, task, {"src/orders.py"}.__contains__) == []  # only known code files
