"""The index as a build graph, through the real CLI: real git repositories, real graphd, real model."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lamina.chunking import chunk_file
from lamina.errors import ERROR_CODES
from tests.conftest import run_lamina
from tests.helpers import EXAMPLE_GRAPH, git, make_repo

pytestmark = pytest.mark.slow

CONFIG = '[graph]\npaths = ["product/**/*.toml"]\n[index]\ninclude = ["**/*"]\nexclude = ["product/**"]\n'


def _module(name: str, functions: int, offset: int = 0) -> str:
    parts = [f'"""The {name} module."""\n\n']
    for i in range(functions):
        parts.append(
            f"def {name}_step_{i + offset}(order, amount):\n"
            f'    """Handle {name} step {i + offset} for an order."""\n'
            f"    total = amount * {i + 2} + {i + offset}\n"
            f"    return order.apply('{name}-{i + offset}', total)\n\n\n"
        )
    return "".join(parts)


@pytest.fixture()
def repo(tmp_path: Path, lamina_home: Path):
    path = make_repo(tmp_path / "shop", {
        "lamina.toml": CONFIG,
        "product/checkout.toml": EXAMPLE_GRAPH.read_text(),
        "src/payments.py": _module("payment", 4),
        "src/refunds.py": _module("refund", 4),
        "src/shipping.py": _module("shipping", 3),
    })  # fmt: skip
    yield path
    run_lamina("graphd", "stop", cwd=path)


def prepare(repo: Path, *extra: str, task: str = "capture payment for an order") -> dict:
    proc = run_lamina("work", "prepare", task, "--json", *extra, cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def status(repo: Path) -> dict:
    proc = run_lamina("context", "status", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def search_files(repo: Path, text: str) -> list[str]:
    proc = run_lamina("context", "search", text, "--json", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [s["file"] for s in json.loads(proc.stdout)["sources"]]


def test_cold_build_then_noop(repo: Path) -> None:
    packet = prepare(repo)
    st = status(repo)
    assert st["fresh"] is True and st["generation"] == packet["index"]["generation"]
    assert st["source_chunks"] == st["last_build"]["chunks_total"] > 0
    assert st["workflows"] == 1
    # only code chunks are embedded (roles.EMBEDDED_ROLES): lamina.toml's chunk (config) is BM25-only
    config_chunks = len(chunk_file("lamina.toml", CONFIG.encode()))
    assert 0 < st["last_build"]["chunks_embedded"] == st["last_build"]["chunks_total"] - config_chunks
    # the status splits exactly the embedded chunks by where their vectors came from: all embedded now
    assert st["last_build"]["chunks_with_embedding"] == st["last_build"]["chunks_embedded"]
    assert st["embeddings"] == {"local": 0, "remote": 0, "embedded": st["last_build"]["chunks_embedded"]}
    again = prepare(repo)
    assert again["index"]["generation"] == packet["index"]["generation"]
    check = run_lamina("work", "prepare", "x", "--check", cwd=repo)
    assert check.returncode == 0


RUST_WITH_TESTS = """/// Split a refund across the order's payment lines.
pub fn split_refund(amount: u64, lines: &[u64]) -> Vec<u64> {
    let total: u64 = lines.iter().sum();
    lines.iter().map(|line| amount * line / total.max(1)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_refund_across_payment_lines() {
        assert_eq!(split_refund(10, &[1, 1]), vec![5, 5]);
    }
}
"""


def test_a_rust_files_inline_tests_are_related_never_sources_and_not_embedded(repo: Path) -> None:
    (repo / "src/split.rs").write_text(RUST_WITH_TESTS)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "split refunds")
    packet = prepare(repo, task="split a refund across the payment lines")
    symbols = {(s["file"], s["symbol"]) for s in packet["sources"]}
    assert ("src/split.rs", "split_refund") in symbols
    assert not any(symbol.startswith("tests.") for _, symbol in symbols)  # the test is not a source
    assert {"file": "src/split.rs", "symbol": "tests.split_refund_across_payment_lines"} in [
        {"file": r["file"], "symbol": r["symbol"]} for r in packet["related"]
    ]  # it is what the change must prove, tied to the function it names
    # and it is not embedded: every chunk but lamina.toml's and the test's carries a vector
    st = status(repo)
    config_chunks = len(chunk_file("lamina.toml", CONFIG.encode()))
    assert st["last_build"]["chunks_embedded"] == st["last_build"]["chunks_total"] - config_chunks - 1


def test_graphd_lists_the_file_that_states_the_version_first_for_a_release_task(repo: Path) -> None:
    """graphd reads which chunks state a version when it caches their text (release.states_version): a
    release task finds src/version.py, which shares none of its words, first; other tasks do not."""
    (repo / "src/version.py").write_text('"""The shop\'s version."""\n\n__version__ = "2.4.0"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a version")
    assert search_files(repo, "Release v2.5.0")[0] == "src/version.py"
    assert "src/version.py" not in search_files(repo, "capture payment for an order")[:1]


def test_noop_check_imports_neither_doit_nor_the_model(repo: Path) -> None:
    prepare(repo)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "lamina.cli", "work", "prepare", "x", "--check"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=os.environ,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert not {"doit", "onnxruntime", "tree_sitter", "ladybug", "lamina.graph.ladybug"} & imported


def _check(repo: Path, *extra: str, directory_option: bool = False) -> tuple[int, str, set[str]]:
    """`prepare --check` (in the repository, or elsewhere with `-C repo`): exit status, stdout, and the
    modules it imported."""
    where = ["-C", str(repo)] if directory_option else []
    proc = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "lamina.cli",
            *where,
            "work",
            "prepare",
            "x",
            "--check",
            *extra,
        ],
        cwd=repo.parent if directory_option else repo,
        capture_output=True,
        text=True,
        env=os.environ,
    )
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    return proc.returncode, proc.stdout, imported


def test_the_quick_check_answers_fresh_like_the_full_check(repo: Path) -> None:
    prepare(repo)
    status_, out, imported = _check(repo, "--json")
    assert status_ == 0 and json.loads(out) == {"fresh": True, "identity": f"main@{repo.resolve()}"}
    assert "lamina.index.build" not in imported and "subprocess" not in imported  # the quick path answered
    status_, out, imported = _check(repo, "--json", directory_option=True)  # the same form, with -C
    assert status_ == 0 and json.loads(out)["fresh"] is True and "lamina.index.build" not in imported
    # A change the index does not read (an excluded path): the quick key differs, the full check still says
    # fresh and records the new quick key, so the next check is quick again.
    (repo / "product" / "notes.txt").write_text("not indexed\n")
    status_, out, imported = _check(repo)
    assert status_ == 0 and out.startswith("index is fresh") and "lamina.index.build" in imported
    status_, out, imported = _check(repo)
    assert status_ == 0 and out.startswith("index is fresh") and "lamina.index.build" not in imported
    # An indexed change is never answered by the quick path.
    (repo / "src" / "refunds.py").write_text("def refund_all():\n    return 0\n")
    status_, out, imported = _check(repo)
    assert status_ == 1 and out.startswith("index is stale") and "lamina.index.build" in imported


def _prepare_importing(
    repo: Path, *extra: str, env: dict[str, str] | None = None, directory_option: bool = False
) -> tuple[int, str, set[str]]:
    """`work prepare --json` (in the repository, or elsewhere with `-C repo`): exit status, stdout, and
    the modules the command imported."""
    where = ["-C", str(repo)] if directory_option else []
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "lamina.cli", *where, "work", "prepare", "capture payment",
         "--json", *extra],
        cwd=repo.parent if directory_option else repo, capture_output=True, text=True,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    return proc.returncode, proc.stdout, imported


def test_a_plain_prepare_is_answered_by_a_running_graphd(repo: Path) -> None:
    """With graphd running, `prepare` sends it only the worktree, the question and its environment: graphd
    decides freshness, builds and answers (lamina/index/hosted_prepare.py). The client parses no
    lamina.toml and runs no git; the packet is the one the full path gives."""
    first = prepare(repo)["index"]["generation"]
    path = repo / "src/refunds.py"
    path.write_text(path.read_text() + "\n\ndef refund_fee(order):\n    return 1\n")
    code, out, imported = _prepare_importing(repo)
    assert code == 0, out
    assert not {"lamina.index.build", "lamina.config", "tomllib", "subprocess"} & imported
    packet = json.loads(out)
    st = status(repo)
    assert packet["index"]["generation"] == st["generation"] != first and st["fresh"] is True
    assert st["last_build"]["hosted"] is True and st["last_build"]["chunks_embedded"] >= 1
    # Another environment (any LAMINA_ or GIT_ variable, HOME, PATH…) is not graphd's to judge: the
    # full path answers, with the same packet.
    code, out, imported = _prepare_importing(repo, env={"LAMINA_SOMETHING_ELSE": "1"})
    assert code == 0 and "lamina.index.build" in imported
    assert json.loads(out) == packet
    code, out, imported = _prepare_importing(repo, directory_option=True)  # `lamina -C repo work prepare`
    assert code == 0 and "lamina.index.build" not in imported and json.loads(out) == packet
    # graphd's errors reach the user as the full path reports them: code, hint, exit status.
    code, out, imported = _prepare_importing(repo, "--workflow", "no-such-workflow")
    assert "lamina.index.build" not in imported
    assert code == ERROR_CODES["LAMINA_UNKNOWN_WORKFLOW"][0]
    assert json.loads(out)["error"]["code"] == "LAMINA_UNKNOWN_WORKFLOW"


def test_graphd_does_not_answer_for_a_client_with_another_runtime(repo: Path, tmp_path: Path) -> None:
    """graphd runs with the model of the LAMINA_HOME it was started with; a client whose LAMINA_HOME has
    no runtime must get its own answer (the runtime is missing), not a packet made with graphd's model."""
    prepare(repo)
    proc = run_lamina(
        "work", "prepare", "capture payment", "--json", cwd=repo, env={"LAMINA_HOME": str(tmp_path / "empty")}
    )
    assert proc.returncode == ERROR_CODES["LAMINA_RETRIEVAL_INTEGRITY"][0], proc.stdout
    assert json.loads(proc.stdout)["error"]["code"] == "LAMINA_RETRIEVAL_INTEGRITY"


def test_edit_one_function_embeds_only_its_chunk(repo: Path) -> None:
    prepare(repo)
    path = repo / "src/refunds.py"
    path.write_text(path.read_text().replace("total = amount * 3 + 1", "total = amount * 3 + 1 - fee(order)"))
    assert run_lamina("work", "prepare", "x", "--check", cwd=repo).returncode == 1
    prepare(repo)
    st = status(repo)
    build = st["last_build"]
    assert build["chunks_embedded"] == 1
    # reused = the other vectors; a chunk without one (lamina.toml's, config) is neither embedded nor reused
    assert build["chunks_reused"] == build["chunks_with_embedding"] - 1 < build["chunks_total"] - 1
    # every other code chunk's vector came from the local store; lamina.toml's chunk has none to count
    assert build["chunks_with_embedding"] == build["chunks_total"] - len(
        chunk_file("lamina.toml", CONFIG.encode())
    )
    assert st["embeddings"] == {"local": build["chunks_with_embedding"] - 1, "remote": 0, "embedded": 1}
    # graphd hosted both builds: the second declared only the change (old version out, new one in).
    assert build["hosted"] is True and build["members_sent"] == 2


def test_the_build_embeds_no_root_and_a_graph_edit_embeds_nothing(repo: Path) -> None:
    # Selection reads the roots with its own model in graphd (lamina/retrieval/root_vectors.py): the build embeds
    # code chunks only, so a product graph edit embeds nothing, and selection still reads the edited graph.
    prepare(repo)
    st = status(repo)
    assert st["embeddings"]["embedded"] == st["last_build"]["chunks_embedded"] > 0
    graph = repo / "product/checkout.toml"
    graph.write_text(
        graph.read_text().replace(
            'aliases = ["place order", "buy"]', 'aliases = ["place order", "buy", "settle the basket"]'
        )
    )
    git(repo, "commit", "-qam", "alias")
    packet = prepare(repo, task="settle the basket for a returning shopper")
    assert packet["selection"]["status"] == "selected" and packet["selection"]["workflows"] == ["checkout"]
    st = status(repo)
    assert st["graph_version"] == packet["index"]["graph_version"]
    assert st["last_build"]["chunks_embedded"] == 0 and st["embeddings"]["embedded"] == 0


def test_a_small_build_is_embedded_by_graphd_bit_for_bit_as_the_worker_would(repo: Path) -> None:
    prepare(repo)
    path = repo / "src/payments.py"
    path.write_text(path.read_text() + "\n\ndef payment_fee(order):\n    return order.total / 50\n")
    prepare(repo)
    st = status(repo)
    assert st["last_build"]["chunks_embedded"] == 1 and st["last_build"]["embedded_by"] == "graphd"
    from lamina.index.cas import ContentStore
    from lamina.index.membership import embedding_key, text_digest
    from lamina.runtime.embedder import load_embedder

    text = "def payment_fee(order):\n    return order.total / 50"
    store = ContentStore(Path(st["store"]))
    try:
        key = embedding_key(st["model_digest"], text_digest(text))
        stored = store.embeddings([key])
    finally:
        store.close()
    assert list(stored) == [key]  # the chunk is exactly the new function
    local = load_embedder(threads=1).embed([text])[0]
    assert stored[key].tobytes() == local.astype("<f4").tobytes()


def test_graphd_embeds_only_small_batches_for_the_model_it_holds(repo: Path) -> None:
    from lamina.constants import GRAPHD_EMBED_MAX_TEXTS
    from lamina.errors import LaminaError
    from lamina.graphd.client import connect
    from lamina.workspace import open_workspace

    prepare(repo)
    digest = status(repo)["model_digest"]
    with connect(open_workspace(repo)) as client:
        header, payload = client.request("embed", texts=["refund an order"], model_digest=digest)
        assert header["count"] == 1 and len(payload) > 384 * 4
        with pytest.raises(LaminaError) as wrong_model:
            client.request("embed", texts=["x"], model_digest="0" * 64)
        assert wrong_model.value.code == "LAMINA_RETRIEVAL_INTEGRITY"
        with pytest.raises(LaminaError) as too_many:
            client.request("embed", texts=["x"] * (GRAPHD_EMBED_MAX_TEXTS + 1), model_digest=digest)
        assert too_many.value.code == "LAMINA_PROTOCOL"


@pytest.mark.parametrize("damage", ["deleted", "unreplayable_log", "unopenable", "older_schema"])
def test_a_lost_or_outdated_index_store_is_restored_or_rebuilt_without_embedding(
    repo: Path, damage: str
) -> None:
    """A lost index store (deleted, or a write-ahead log that cannot be replayed) comes back with the same
    generation from the pointer journal and the content store; one of an older retrieval schema is rebuilt.
    Neither embeds anything again."""
    first = prepare(repo)
    before = status(repo)
    data_dir = Path(before["data_dir"])
    run_lamina("graphd", "stop", cwd=repo)
    if damage == "deleted":
        (data_dir / "index.lbug").unlink()
    elif damage == "unreplayable_log":  # the strict replay refuses it; the lenient one drops it
        (data_dir / "index.lbug.wal").write_bytes(os.urandom(5000))
    elif damage == "unopenable":  # neither replay helps: the store is replaced, then restored
        with open(data_dir / "index.lbug", "r+b") as fh:
            fh.write(os.urandom(8192))
    else:  # a retrieval schema change: the store and the journalled manifests name the old schema
        import lamina.graph.ladybug as lb

        db = lb.Database(str(data_dir / "index.lbug"))
        conn = lb.Connection(db)
        conn.execute("MATCH (m:Meta {key: 'schema_version'}) SET m.value = '1'")
        conn.close()
        db.close()
        for entry in (data_dir / "current").glob("*.json"):
            record = json.loads(entry.read_text())
            record["manifest"]["schema_version"] = 1
            entry.write_text(json.dumps(record))
    st = status(repo)
    if damage == "older_schema":
        assert st["generation"] is None and st["restored"] is False
    else:  # restored before graphd answered: the same generation, digest and packet
        assert st["generation"] == first["index"]["generation"] and st["fresh"] is True
        assert st["index_digest"] == first["index"]["index_digest"]
        recovery = st["last_failure"]
        assert recovery["state"] == "crash recovery" and "index" in recovery["replaced"]
        if damage == "unreplayable_log":  # reopened with what it had committed: nothing to restore
            assert recovery["replaced"]["index"].startswith("reopened without") and not st["restored"]
        else:
            assert st["restored"] is True and recovery["restored"] == [first["index"]["generation"]]
    packet = prepare(repo)
    st = status(repo)
    assert st["fresh"] is True
    if damage == "older_schema":  # rebuilt from the content store
        assert packet["index"]["generation"] != first["index"]["generation"]
        assert st["last_build"]["chunks_embedded"] == 0
        assert st["source_chunks"] == st["last_build"]["chunks_total"]
    else:  # nothing to build: the restored generation is the fresh one
        assert packet == first and st["last_build"] == before["last_build"]


def test_rename_embeds_nothing_and_delete_removes_results(repo: Path) -> None:
    prepare(repo)
    git(repo, "mv", "src/shipping.py", "src/delivery.py")
    git(repo, "commit", "-qm", "rename")
    prepare(repo)
    assert status(repo)["last_build"]["chunks_embedded"] == 0
    assert "src/delivery.py" in search_files(repo, "shipping step")
    git(repo, "rm", "-q", "src/delivery.py")
    git(repo, "commit", "-qm", "delete")
    prepare(repo)
    files = search_files(repo, "shipping step")
    assert "src/delivery.py" not in files and "src/shipping.py" not in files


def test_branch_switch_and_back_embeds_nothing(repo: Path) -> None:
    first = prepare(repo)["index"]["generation"]
    git(repo, "checkout", "-qb", "feature")
    (repo / "src/tax.py").write_text(_module("tax", 2))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "tax")
    feature = prepare(repo)
    assert status(repo)["last_build"]["chunks_embedded"] == 3  # two functions and the module docstring
    git(repo, "checkout", "-q", "main")
    back = prepare(repo)
    assert back["index"]["generation"] == first  # main's own generation is still current: nothing rebuilt
    git(repo, "checkout", "-q", "feature")
    assert prepare(repo)["index"]["generation"] == feature["index"]["generation"]


def test_second_worktree_has_its_own_generation_and_shares_the_store(repo: Path, tmp_path: Path) -> None:
    main_gen = prepare(repo)["index"]["generation"]
    other = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(other), "-b", "wt-branch")
    packet = prepare(other)
    st = status(other)
    assert packet["index"]["generation"] != main_gen
    assert st["identity"]["worktree"] == str(other.resolve())
    assert st["last_build"]["chunks_embedded"] == 0
    assert status(repo)["generation"] == main_gen


def test_uncommitted_edits_are_indexed(repo: Path) -> None:
    prepare(repo)
    (repo / "src/loyalty.py").write_text(
        "def award_loyalty_points(customer):\n    return customer.points + 10\n"
    )
    prepare(repo)
    assert "src/loyalty.py" in search_files(repo, "award loyalty points")
    assert "+dirty." in status(repo)["source_revision"]


def test_hostile_files_are_skipped_and_counted(repo: Path) -> None:
    (repo / "blob.bin").write_bytes(b"\x00\x01binary" * 100)
    with open(repo / "huge.txt", "wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    (repo / "latin1.py").write_bytes(b"def caf\xe9():\n    return '\xff\xfe'\n")
    os.symlink("/etc/passwd", repo / "escape.txt")
    prepare(repo)
    build = status(repo)["last_build"]
    assert build["skipped_by_reason"]["binary"] >= 1
    assert build["skipped_by_reason"]["too_large"] >= 1
    assert build["skipped_by_reason"]["symlink"] >= 1
    # the text says why and where to see which (a bare "3 skipped" left a new user asking, session 38)
    human = run_lamina("context", "status", cwd=repo).stdout
    (line,) = [x for x in human.splitlines() if x.startswith("last build:")]
    assert "binary" in line and "too_large" in line and "lamina context files --skipped" in line
    files = search_files(repo, "caf")
    assert "latin1.py" in files and "escape.txt" not in files


def _default_interrupt() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_bulk_build(repo: Path, *command: str) -> tuple[subprocess.Popen[bytes], sqlite3.Connection, int]:
    """Add 12 files of 41 chunks each and start a prepare (or `command`); return once the build (hosted by
    graphd) has committed at least one batch of new embeddings to the content store."""
    for i in range(12):
        (repo / f"src/bulk_{i}.py").write_text(_module(f"bulk{i}", 40, offset=i * 100))
    store = Path(status(repo)["store"]) / "cas.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-m", "lamina.cli", *(command or ("work", "prepare", "x", "--json"))],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ,
        # Ctrl-C as a terminal gives it: a suite started in the background (`cmd &` without job control, some CI
        # runners) inherits SIGINT ignored, and the client would never see the interrupt the tests send (session 39)
        preexec_fn=_default_interrupt,
    )
    db = sqlite3.connect(store, timeout=30)
    baseline = db.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    while proc.poll() is None:  # wait until the build has committed at least one batch of new embeddings
        if db.execute("SELECT count(*) FROM embeddings").fetchone()[0] > baseline:
            break
        time.sleep(0.05)  # a poll interval, not a race fix: the loop waits for an observed condition
    return proc, db, baseline


def _graphd_pid(repo: Path) -> int:
    proc = run_lamina("graphd", "status", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return int(json.loads(proc.stdout)["pid"])


def test_sigkill_of_the_building_graphd_keeps_current_and_resumes(repo: Path) -> None:
    """kill -9 of the process that runs the build (graphd hosts it) and of its client."""
    first = prepare(repo)["index"]["generation"]
    builder = _graphd_pid(repo)
    proc, db, baseline = _start_bulk_build(repo)
    os.kill(builder, signal.SIGKILL)
    proc.wait()
    done_before_kill = db.execute("SELECT count(*) FROM embeddings").fetchone()[0] - baseline
    db.close()
    assert proc.returncode != 0
    st = status(repo)
    assert st["generation"] == first and st["fresh"] is False
    prepare(repo)
    build = status(repo)["last_build"]
    assert done_before_kill > 0
    assert build["chunks_embedded"] == 12 * 41 - done_before_kill  # 40 functions + module chunk per file


def test_a_killed_client_cancels_its_hosted_build(repo: Path) -> None:
    """kill -9 (or Ctrl-C) of `prepare` while graphd builds for it: graphd stops the build at its next
    batch, activates nothing, stays up, and the next run resumes from the content store."""
    import fcntl

    first = prepare(repo)["index"]["generation"]
    builder = _graphd_pid(repo)
    proc, db, baseline = _start_bulk_build(repo)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    st = status(repo)
    # The build holds this identity's lock until it has stopped: taking the lock waits for that.
    with open(Path(st["data_dir"]) / "builds" / st["identity"]["key"] / "lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fcntl.flock(lock, fcntl.LOCK_UN)
    done_before_resume = db.execute("SELECT count(*) FROM embeddings").fetchone()[0] - baseline
    db.close()
    st = status(repo)
    assert _graphd_pid(repo) == builder  # graphd survived its client
    assert st["generation"] == first and st["fresh"] is False
    assert (st["last_failure"] or {}).get("code") == "LAMINA_INTERRUPTED", st["last_failure"]
    assert 0 < done_before_resume < 12 * 41  # stopped early, keeping what it had embedded
    prepare(repo)
    build = status(repo)["last_build"]
    assert build["chunks_embedded"] == 12 * 41 - done_before_resume


def test_stopping_graphd_during_a_hosted_build_cancels_it_cleanly(repo: Path) -> None:
    """`lamina graphd stop` while graphd builds for a client: the build stops at its next batch, graphd
    exits after it (the stop waits for that), the client gets a coded error, nothing is activated, and the
    next run resumes."""
    first = prepare(repo)["index"]["generation"]
    proc, db, baseline = _start_bulk_build(repo)
    assert run_lamina("graphd", "stop", cwd=repo).returncode == 0  # returns once graphd has exited
    out, _ = proc.communicate(timeout=120)
    done_before_resume = db.execute("SELECT count(*) FROM embeddings").fetchone()[0] - baseline
    db.close()
    assert proc.returncode != 0
    assert json.loads(out)["error"]["code"] in ("LAMINA_INTERRUPTED", "LAMINA_GRAPHD_UNAVAILABLE")
    st = status(repo)
    assert st["generation"] == first and st["fresh"] is False
    prepare(repo)
    assert status(repo)["last_build"]["chunks_embedded"] == 12 * 41 - done_before_resume


def test_a_hosted_build_streams_progress_and_keeps_stdout_json(repo: Path) -> None:
    proc = run_lamina("work", "prepare", "capture payment", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["packet_version"] == 5
    assert "embedding chunks:" in proc.stderr and "chunking files:" in proc.stderr
    build = status(repo)["last_build"]
    assert build["hosted"] is True and build["embedded_by"] == "graphd"  # graphd ran it, with its model
    # After a one-file edit the chunking total counts the files of the shards that are chunked again.
    path = repo / "src/refunds.py"
    path.write_text(path.read_text() + "\n\ndef refund_fee(order):\n    return 1\n")
    proc = run_lamina("work", "prepare", "capture payment", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    chunking = [line for line in proc.stderr.splitlines() if line.startswith("chunking files:")]
    done, total = chunking[-1].split()[2].split("/")
    assert done == total and 0 < int(total) < status(repo)["last_build"]["files_scanned"]


def test_building_in_process_gives_the_same_generation_digest(repo: Path, tmp_path: Path) -> None:
    """LAMINA_BUILD_IN_PROCESS=1 (what graphd falls back to) and a hosted build index the same versions."""
    hosted = prepare(repo)["index"]
    run_lamina("graphd", "stop", cwd=repo)
    proc = run_lamina("context", "rebuild", "--json", cwd=repo, env={"LAMINA_BUILD_IN_PROCESS": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    st = status(repo)
    assert st["generation"] != hosted["generation"] and st["index_digest"] == hosted["index_digest"]
    assert st["last_build"]["chunks_embedded"] == 0 and st["last_build"]["hosted"] is False


def test_two_concurrent_prepares(repo: Path) -> None:
    results: list[subprocess.CompletedProcess[str]] = []
    threads = [
        threading.Thread(
            target=lambda: results.append(run_lamina("work", "prepare", "refund", "--json", cwd=repo))
        )
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
    gens = {json.loads(r.stdout)["index"]["generation"] for r in results}
    assert len(gens) == 1


def test_second_clone_with_restored_store_embeds_nothing(repo: Path, tmp_path: Path) -> None:
    prepare(repo)
    store = Path(status(repo)["store"])
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    restored = tmp_path / "ci-cache"
    subprocess.run(["cp", "-r", str(store), str(restored)], check=True)
    env = {"LAMINA_STORE": str(restored)}
    proc = run_lamina("work", "prepare", "capture payment", "--json", "--require-cached", cwd=clone, env=env)
    try:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        st = json.loads(run_lamina("context", "status", "--json", cwd=clone, env=env).stdout)
        assert st["last_build"]["chunks_embedded"] == 0
        (clone / "src/new.py").write_text("def brand_new_thing():\n    return 42\n")
        refused = run_lamina("work", "prepare", "x", "--json", "--require-cached", cwd=clone, env=env)
        assert refused.returncode != 0
        assert json.loads(refused.stdout)["error"]["code"] == "LAMINA_NOT_CACHED"
    finally:
        run_lamina("graphd", "stop", cwd=clone)


def test_rebuild_makes_a_new_generation(repo: Path) -> None:
    first = prepare(repo)["index"]["generation"]
    proc = run_lamina("context", "rebuild", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    st = status(repo)
    assert st["generation"] != first and st["fresh"] is True
    assert st["last_build"]["chunks_embedded"] == 0  # the store still has every embedding
    # every task ran again, and the progress said so from its first line: no total grows on the way
    progress: dict[str, list[tuple[int, int]]] = {}
    for line in proc.stderr.splitlines():
        phase, _, rest = line.partition(": ")
        if phase in ("chunking files", "embedding chunks"):
            done, total = rest.split()[0].split("/")
            progress.setdefault(phase, []).append((int(done), int(total)))
    chunking = progress["chunking files"]
    assert {total for _, total in chunking} == {st["last_build"]["files_scanned"]}
    assert all(done <= total for lines in progress.values() for done, total in lines)


def test_an_interrupted_rebuild_leaves_the_index_as_it_was(repo: Path) -> None:
    """Ctrl-C during `context rebuild`: the client cancels the build and waits for graphd to stop it, the
    generation that answered before still answers, and the next command resumes the work."""
    first = prepare(repo)["index"]["generation"]
    proc, db, baseline = _start_bulk_build(repo, "context", "rebuild", "--json")
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    done_before_resume = db.execute("SELECT count(*) FROM embeddings").fetchone()[0] - baseline
    db.close()
    assert proc.returncode == 130
    assert json.loads(out)["error"]["code"] == "LAMINA_INTERRUPTED"
    st = status(repo)  # the client returned only once graphd had stopped the build
    assert st["generation"] == first and st["state"] != "missing"
    assert (st["last_failure"] or {}).get("code") == "LAMINA_INTERRUPTED", st["last_failure"]
    assert st["last_failure_resolved"] is False
    assert 0 < done_before_resume < 12 * 41
    searched = run_lamina("context", "search", "bulk", "--json", cwd=repo)
    assert searched.returncode == 0, searched.stdout + searched.stderr
    assert status(repo)["last_build"]["chunks_embedded"] == 12 * 41 - done_before_resume
    assert status(repo)["last_failure_resolved"] is True  # for an agent reading --json or MCP
    human = run_lamina("context", "status", cwd=repo).stdout  # the failure is history now, and says so
    assert "last failure: LAMINA_INTERRUPTED" in human and "(a build has succeeded since)" in human


def test_search_lists_at_most_limit_entries_and_refuses_a_bad_limit(repo: Path) -> None:
    every = run_lamina("context", "search", "payment refund shipping step", "--json", cwd=repo)
    assert every.returncode == 0, every.stderr
    assert len(json.loads(every.stdout)["sources"]) > 2
    two = run_lamina("context", "search", "payment refund shipping step", "--json", "--limit", "2", cwd=repo)
    assert two.returncode == 0, two.stderr
    assert json.loads(two.stdout)["sources"] == json.loads(every.stdout)["sources"][:2]
    for bad in ("0", "11", "two"):
        refused = run_lamina("context", "search", "payment", "--limit", bad, cwd=repo)
        assert refused.returncode == 2 and "--limit" in refused.stderr and "1 to 10" in refused.stderr


def test_files_accepted_under_an_older_schema_are_judged_again(repo: Path) -> None:
    """A build takes a file whose content it accepted last time without reading it again — unless that
    selection ran under another retrieval schema: the rules may have changed (schema 13 made bison's output
    generated), so each file is read and judged anew."""
    from lamina.constants import RETRIEVAL_SCHEMA_VERSION
    from lamina.index.worker import shard_of
    from tests.helpers import commit

    prepare(repo)
    st = status(repo)
    build = Path(st["data_dir"]) / "builds" / st["identity"]["key"]
    generated = "/* A Bison parser, made by GNU Bison 3.8.2.  */\nint yyparse(void) { return 0; }\n"
    commit(repo, {"src/parser.c": generated}, "the generated parser")  # tracked: git knows its blob
    blob = git(repo, "rev-parse", "HEAD:src/parser.c").strip()
    # what an older Lamina, without that marker, left: the file accepted, under the schema before
    listing = build / "files" / f"{shard_of('src/parser.c'):02d}.tsv"
    listing.write_text(listing.read_text() + f"src/parser.c\t{blob}\t{len(generated)}\tcode\n")
    manifest = json.loads((build / "manifest.json").read_text())
    (build / "manifest.json").write_text(
        json.dumps({**manifest, "schema_version": RETRIEVAL_SCHEMA_VERSION - 1})
    )
    run_lamina("graphd", "stop", cwd=repo)  # a new Lamina's graphd remembers no selection of the old one
    prepare(repo)
    listed = "".join(f.read_text() for f in (build / "files").glob("*.tsv"))
    assert "src/parser.c" not in listed
    files = json.loads(run_lamina("context", "files", "--skipped", "--json", cwd=repo).stdout)
    assert {"path": "src/parser.c", "reason": "vendored_or_generated"} in files["skipped"]


def test_status_says_why_the_index_is_stale(repo: Path) -> None:
    """Each kind of change is named: uncommitted edits (with the paths), HEAD moving, the product graph."""
    from tests.helpers import commit

    assert run_lamina("init", cwd=repo).returncode == 0  # writes dodo.py: untracked, indexed as it is
    never = status(repo)  # a branch never built says what the first prepare will do (session 37)
    assert never["state"] == "missing" and any(
        "no index for this branch/worktree yet" in r for r in never["reasons"]
    )
    prepare(repo)
    assert status(repo)["reasons"] == []
    (repo / "src/payments.py").write_text(_module("payment", 5))
    st = status(repo)
    assert st["state"] == "stale"
    assert st["reasons"] == ["1 indexed file differs from the index: src/payments.py (changed)"]
    (repo / "src/notes.py").write_text("NOTE = 1\n")
    (repo / "src/shipping.py").unlink()
    assert status(repo)["reasons"] == [
        "3 indexed files differ from the index: src/notes.py (new), src/payments.py (changed), "
        "src/shipping.py (gone)"
    ]  # dodo.py, untracked since `init`, is not named: the index read it as it is
    (repo / "src/notes.py").unlink()
    git(repo, "checkout", "--", "src/shipping.py")
    commit(repo, {}, "five payment steps")
    assert status(repo)["reasons"][0].split(":")[0] == "HEAD moved"
    assert status(repo)["reasons"][1:] == ["1 indexed file differs from the index: src/payments.py (changed)"]
    prepare(repo)
    graph = repo / "product/checkout.toml"
    graph.write_text(graph.read_text().replace("Capture", "Take", 1))
    (reason,) = status(repo)["reasons"]
    assert reason.startswith("product graph changed: GraphVersion ")
    human = run_lamina("context", "status", cwd=repo).stdout
    assert "because     product graph changed" in human
    # an invalid graph is said whole, not cut at 12 characters ("(invalid: se"; a new user's graph, session 36)
    graph.write_text(graph.read_text() + "\n[[actor]\n")
    (reason,) = status(repo)["reasons"]
    assert reason.endswith("→ (invalid: see `lamina graph check`)"), reason


def test_status_says_when_a_build_is_under_way(repo: Path) -> None:
    """A build holds its identity's lock: status names the holder while it does, and nobody after."""
    import fcntl

    prepare(repo)
    st = status(repo)
    assert st["building"] is None
    lock = Path(st["data_dir"]) / "builds" / st["identity"]["key"] / "lock"
    with open(lock, "r+") as held:  # what hold_lock does for a build
        fcntl.flock(held, fcntl.LOCK_EX)
        held.truncate(0)
        held.write("pid 4242 (lamina work prepare)\n")
        held.flush()
        assert status(repo)["building"] == "pid 4242 (lamina work prepare)"
        assert (
            "building:     pid 4242 (lamina work prepare)" in run_lamina("context", "status", cwd=repo).stdout
        )
    assert status(repo)["building"] is None


def test_status_without_an_index_says_so_rather_than_none(repo: Path) -> None:
    human = run_lamina("context", "status", cwd=repo)
    assert human.returncode == 0, human.stderr
    assert "None" not in human.stdout and "(no index yet" in human.stdout
    assert "last build:   (no build yet)" in human.stdout  # not "0 files (0 skipped), 0 embedded, …"
    assert "other of this repository" not in human.stdout
    prepare(repo)
    git(repo, "checkout", "-q", "-b", "feature")  # a new identity: no index of its own yet
    human = run_lamina("context", "status", cwd=repo).stdout
    assert (
        "missing for this branch/worktree; 1 other of this repository has one, and a build here reuses"
        in human
    )


def test_status_says_an_upgrade_of_lamina_replaced_the_index_store(repo: Path) -> None:
    """An index store of another retrieval schema is replaced when graphd opens it: status said only
    `(none) — missing` with no reason (a new-user run on leveldb, upgrading to schema 16), though the build
    dir still records the schema it was built with."""
    import lamina.graph.ladybug as lb
    from lamina.constants import RETRIEVAL_SCHEMA_VERSION

    prepare(repo)
    st = status(repo)
    assert run_lamina("graphd", "stop", cwd=repo).returncode == 0
    data_dir = Path(st["data_dir"])
    old = RETRIEVAL_SCHEMA_VERSION - 1
    db = lb.Database(str(data_dir / "index.lbug"))  # what an older Lamina left: its store and its build dir
    conn = lb.Connection(db)
    conn.execute(f"MATCH (m:Meta {{key: 'schema_version'}}) SET m.value = '{old}'")
    conn.close()
    db.close()
    for entry in (data_dir / "current").glob("*.json"):
        record = json.loads(entry.read_text())
        record["manifest"]["schema_version"] = old
        entry.write_text(json.dumps(record))
    build = data_dir / "builds" / st["identity"]["key"]
    manifest = json.loads((build / "manifest.json").read_text())
    (build / "manifest.json").write_text(json.dumps({**manifest, "schema_version": old}))
    st = status(repo)
    assert st["state"] == "missing"
    (reason,) = st["reasons"]
    assert reason.startswith(f"retrieval schema changed: {old} → {RETRIEVAL_SCHEMA_VERSION}")
    assert "because     retrieval schema changed" in run_lamina("context", "status", cwd=repo).stdout
    # The build dir's record rewritten by the new Lamina before any generation exists (a build started and
    # stopped): status said only "replaced or deleted"; graphd says what it replaced the store for.
    (build / "manifest.json").write_text(json.dumps({**manifest, "schema_version": RETRIEVAL_SCHEMA_VERSION}))
    (reason,) = status(repo)["reasons"]
    assert reason.startswith("graphd replaced the index store when it started (") and f"{old}" in reason, (
        reason
    )
    prepare(repo)
    st = status(repo)
    assert st["state"] == "fresh" and st["reasons"] == []


def test_doit_list_and_info_show_the_real_graph(repo: Path) -> None:
    assert run_lamina("init", cwd=repo).returncode == 0
    prepare(repo)
    listing = subprocess.run(
        [sys.executable, "-m", "doit", "list", "--all"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=os.environ,
    )
    assert listing.returncode == 0, listing.stderr
    names = [line.split()[0] for line in listing.stdout.splitlines() if line.strip()]
    assert {"manifest", "chunks", "embeddings", "generation", "chunks:00", "embeddings:00"} <= set(names)
    assert "embeddings:workflows" not in names  # the roots are read by the selection model in graphd
    assert len(listing.stdout.splitlines()) < 100
    info = subprocess.run(
        [sys.executable, "-m", "doit", "info", "generation"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=os.environ,
    )
    assert info.returncode == 0 and "graphd" in info.stdout


def test_graphd_loads_its_model_with_the_configured_threads(repo: Path) -> None:
    """[runtime].threads decides graphd's onnxruntime threads too (it was always 2), and a changed value
    reaches the next hosted build without restarting graphd."""
    config = repo / "lamina.toml"
    config.write_text(config.read_text() + "\n[runtime]\nthreads = 1\n")
    prepare(repo)

    def model_threads() -> int | None:
        proc = run_lamina("graphd", "status", "--json", cwd=repo)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return json.loads(proc.stdout)["model_threads"]

    assert model_threads() == 1
    config.write_text(config.read_text().replace("threads = 1", "threads = 3"))
    prepare(repo)
    assert model_threads() == 3


def test_files_with_unusual_names_are_skipped_and_counted_not_a_failed_build(repo: Path) -> None:
    """A tab, a newline or a byte that is not UTF-8 in a file name (untracked is enough) made every build
    fail with LAMINA_INTERNAL (a new-user run, session 35): the build's shard lists are lines of
    tab-separated fields, and a lone surrogate fits no database or JSON. Such files are skipped as
    `unusual_name`; a shard list an older Lamina wrote with such a line is read past, not a crash."""
    prepare(repo)
    names = [b"src/a\tb.py", b"src/c\nd.py", b"src/latin\xe9.py"]
    for name in names:
        with open(os.path.join(os.fsencode(repo), name), "wb") as fh:
            fh.write(b"def unusual_refund():\n    return 1\n")
    packet = prepare(repo)
    assert packet["index"]["generation"]
    listing = json.loads(run_lamina("context", "files", "--skipped", "--json", cwd=repo).stdout)
    skipped = {s["path"]: s["reason"] for s in listing["skipped"]}
    assert {skipped.get(os.fsdecode(name)) for name in names} == {"unusual_name"}
    assert listing["skipped_by_reason"]["unusual_name"] == 3
    assert not any("\t" in f["path"] or "\n" in f["path"] for f in listing["files"])
    human = run_lamina("context", "files", "--skipped", cwd=repo)
    assert human.returncode == 0, human.stderr
    assert 'skipped   "src/a\\tb.py"  (unusual_name)' in human.stdout  # one line, quoted as git quotes
    assert status(repo)["state"] == "fresh"
    # what an older Lamina left in a shard list for such a name: the next build reads past it
    st = status(repo)
    listing_file = next((Path(st["data_dir"]) / "builds" / st["identity"]["key"] / "files").glob("*.tsv"))
    listing_file.write_text(listing_file.read_text() + "src/a\tb.py\tdeadbeef\t12\tcode\n")
    (repo / "src/payments.py").write_text(_module("payment", 6))
    assert prepare(repo)["index"]["generation"] != packet["index"]["generation"]


def test_status_names_the_differing_files_after_a_build_that_failed(repo: Path) -> None:
    """A build rewrites the shard lists as it starts; one that then fails (here: on an invalid product
    graph) left status comparing the working tree with its lists, not the active generation's, and the new
    file went unnamed (a new-user run, session 35). The lists the active generation read are kept apart."""
    prepare(repo)
    (repo / "src/gamma.py").write_text(_module("gamma", 2))
    graph = repo / "product/checkout.toml"
    good = graph.read_text()
    graph.write_text(good + "\n[[workflow\n")  # not TOML: the build fails after selecting files
    failed = run_lamina("work", "prepare", "capture payment", "--json", cwd=repo)
    assert failed.returncode != 0
    reasons = status(repo)["reasons"]
    assert "1 indexed file differs from the index: src/gamma.py (new)" in reasons, reasons
    graph.write_text(good)
    assert status(repo)["reasons"] == ["1 indexed file differs from the index: src/gamma.py (new)"]
    prepare(repo)
    assert status(repo)["reasons"] == []
