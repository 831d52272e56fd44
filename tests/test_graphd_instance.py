"""A graphd belongs to one repository instance: real graphd processes over real Unix sockets, real git
repositories deleted and cloned again at the same path, the real CLI and (the slow tests) the real model."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from lamina.graphd import address
from lamina.graphd.client import connect, other_graphds, stop, survey
from lamina.runtime.embedder import load_embedder
from lamina.workspace import open_workspace
from tests.conftest import run_lamina
from tests.helpers import EXAMPLE_GRAPH, git, make_repo

CONFIG = '[graph]\npaths = ["product/**/*.toml"]\n[index]\ninclude = ["**/*"]\nexclude = ["product/**"]\n'
PAYMENTS = (
    '"""Payments."""\n\n\ndef capture_payment(order, amount):\n    """Capture the payment of an order."""\n'
    "    return order.charge(amount)\n\n\ndef refund_payment(order):\n    return order.refund()\n"
)
EXIT_DEADLINE_SECONDS = 30.0  # generous on a loaded 2-core machine; graphd looks every 0.5 s


def _origin(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "origin", {
        "lamina.toml": CONFIG, "product/checkout.toml": EXAMPLE_GRAPH.read_text(), "src/payments.py": PAYMENTS,
    })  # fmt: skip


def _clone(origin: Path, path: Path) -> Path:
    git(origin.parent, "clone", "-q", str(origin), str(path))
    return path


def _prepare(repo: Path) -> tuple[dict, str]:
    proc = run_lamina("work", "prepare", "capture payment for an order", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout), proc.stderr


def _alive(pid: int) -> bool:
    """True while pid runs (a stopped process counts; a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_exit(pid: int) -> float:
    started = time.monotonic()
    while _alive(pid):
        if time.monotonic() - started > EXIT_DEADLINE_SECONDS:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"graphd {pid} did not exit within {EXIT_DEADLINE_SECONDS} s")
        time.sleep(0.05)
    return time.monotonic() - started


def _graphd_pid(repo: Path) -> int:
    report = survey(open_workspace(repo))
    assert report["running"] and report["answering"], report
    return int(report["pid"])


@pytest.mark.slow
def test_a_new_clone_at_the_same_path_works_on_its_first_prepare_and_the_old_graphd_exits(
    tmp_path: Path, lamina_home: Path
) -> None:
    origin = _origin(tmp_path)
    proj = _clone(origin, tmp_path / "proj")
    packet, _ = _prepare(proj)
    old_ws = open_workspace(proj)
    old_pid = _graphd_pid(proj)
    os.kill(old_pid, signal.SIGSTOP)  # it stays alive (and cannot notice anything) until SIGCONT
    try:
        shutil.rmtree(proj)
        _clone(origin, proj)
        new_ws = open_workspace(proj)
        assert new_ws.instance != old_ws.instance and new_ws.run_dir != old_ws.run_dir
        assert new_ws.path_dir == old_ws.path_dir

        # Before anything runs in the new clone, status finds the live old graphd and says what it is.
        shown = run_lamina("graphd", "status", cwd=proj)
        assert shown.returncode == 1
        assert "not running" not in shown.stdout
        assert f"graphd pid {old_pid} serves a repository that no longer exists" in shown.stdout
        as_json = json.loads(run_lamina("graphd", "status", "--json", cwd=proj).stdout)
        assert as_json["running"] is False
        assert [(o["pid"], o["instance"], o["layout"]) for o in as_json["others"]] == [
            (old_pid, old_ws.instance, "instance")
        ]

        # The first prepare in the new clone works while the old graphd is alive, and says it stops it.
        again, stderr = _prepare(proj)
        assert _alive(old_pid)
        assert f"stopping graphd pid {old_pid} serves a repository that no longer exists" in stderr
        assert again["index"]["generation"] != packet["index"]["generation"]  # the new clone's own index
        assert again["selection"] == packet["selection"]
        new_pid = _graphd_pid(proj)
        assert new_pid != old_pid
        new_files = sorted(p.name for p in new_ws.data_dir.iterdir())
    finally:
        os.kill(old_pid, signal.SIGCONT)
    _wait_exit(old_pid)
    # The old graphd left the new clone's files alone (closing its databases would have removed the
    # new clone's write-ahead logs by path) and its run directory goes with the next start.
    assert sorted(p.name for p in new_ws.data_dir.iterdir()) == new_files
    assert other_graphds(new_ws) == []
    assert "databases left unclosed" in old_ws.log_path.read_text()
    final, _ = _prepare(proj)
    assert final["index"]["generation"] == again["index"]["generation"] and _graphd_pid(proj) == new_pid
    assert stop(new_ws)


def test_graphd_exits_by_itself_when_its_repository_is_deleted(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    ws = open_workspace(repo)
    with connect(ws) as client:
        pid = client.call("ping")["pid"]
        graph = client.call("graph.import", files={"product/checkout.toml": EXAMPLE_GRAPH.read_text()})
    assert graph["changed"] is True
    shutil.rmtree(repo)
    _wait_exit(pid)
    log = ws.log_path.read_text()
    assert f"its data directory {ws.data_dir} is gone" in log and "databases left unclosed" in log
    assert not ws.socket_path.exists() and not ws.pid_path.exists() and not ws.info_path.exists()


def test_graphd_runs_no_code_of_the_repository_it_serves(tmp_path: Path) -> None:
    """graphd was started with `python -m` in the repository, which put the repository first on sys.path: a
    repository's `selectors.py` ran inside graphd, and its own `lamina/` package replaced Lamina's (an MCP
    integrator's run, session 36). A repository's files are data; here each would leave a marker."""
    marker = tmp_path / "ran"
    payload = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    repo = make_repo(tmp_path / "repo", {
        "lamina.toml": CONFIG, "product/checkout.toml": EXAMPLE_GRAPH.read_text(), "src/payments.py": PAYMENTS,
        "selectors.py": payload, "json.py": payload, "lamina/__init__.py": payload, "lamina/graphd/__init__.py": "",
    })  # fmt: skip
    try:
        packet, _ = _prepare(repo)
        assert packet["sources"][0]["file"] == "src/payments.py"
        assert not marker.exists(), marker.read_text()
    finally:
        run_lamina("graphd", "stop", cwd=repo)


def test_a_stopped_graphd_of_a_deleted_clone_leaves_the_new_clones_files_alone(tmp_path: Path) -> None:
    """SIGTERM (what a new clone's client sends) to a graphd whose repository was deleted and created again:
    it must not close its databases, since closing removes `<database>.wal` by path — the new clone's."""
    repo = make_repo(tmp_path / "repo")
    ws = open_workspace(repo)
    with connect(ws) as client:
        pid = client.call("ping")["pid"]
        client.call("graph.import", files={"product/checkout.toml": EXAMPLE_GRAPH.read_text()})
    os.kill(pid, signal.SIGSTOP)
    try:
        shutil.rmtree(repo)
        new_ws = open_workspace(make_repo(repo))
        logs = {name: f"the new clone's {name}".encode() for name in ("product.lbug.wal", "index.lbug.wal")}
        for name, text in logs.items():
            (new_ws.data_dir / name).write_bytes(text)
        os.kill(pid, signal.SIGTERM)
    finally:
        os.kill(pid, signal.SIGCONT)
    _wait_exit(pid)
    assert {name: (new_ws.data_dir / name).read_bytes() for name in logs} == logs
    assert "databases left unclosed" in ws.log_path.read_text()


def test_a_replaced_data_directory_is_refused_on_the_next_request_and_graphd_exits(tmp_path: Path) -> None:
    """A data directory restored from a copy keeps the key (same instance, same address), but not the
    databases graphd holds open: its next request is refused with a code, and the retry gets a new one."""
    repo = make_repo(tmp_path / "repo")
    ws = open_workspace(repo)
    client = connect(ws)
    pid = client.call("ping")["pid"]
    copy = tmp_path / "copy"
    shutil.copytree(ws.data_dir, copy)
    os.kill(pid, signal.SIGSTOP)  # so that the swap is met by the request, not by the idle tick
    shutil.rmtree(ws.data_dir)
    copy.rename(ws.data_dir)
    os.kill(pid, signal.SIGCONT)
    with client:
        with pytest.raises(Exception) as refused:
            client.call("ping")
    assert getattr(refused.value, "code", None) == "LAMINA_GRAPHD_UNAVAILABLE"
    assert "no longer exists" in str(refused.value)
    _wait_exit(pid)
    assert open_workspace(repo).instance == ws.instance
    with connect(ws) as fresh:
        assert fresh.call("ping")["pid"] != pid
    assert stop(ws)


def test_status_describes_a_graphd_of_the_older_per_path_layout_and_stop_stops_it(tmp_path: Path) -> None:
    """A graphd of an older Lamina locked <path-hash>/graphd.lock; status names it, stop ends it."""
    import subprocess
    import sys

    repo = make_repo(tmp_path / "repo")
    ws = open_workspace(repo)
    ws.path_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    holder = subprocess.Popen(  # a stand-in holding the per-path lock, named like graphd in its cmdline
        [sys.executable, "-c", "import fcntl,os,sys,time; fd=os.open(sys.argv[1], os.O_RDWR|os.O_CREAT);"
         "fcntl.flock(fd, fcntl.LOCK_EX); open(sys.argv[2],'w').write(str(os.getpid())); print(1, flush=True);"
         "time.sleep(600)", str(ws.path_dir / address.LOCK_NAME), str(ws.path_dir / "graphd.pid"),
         "lamina.graphd.server"],
        stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"1\n"
        report = survey(ws)
        assert report["running"] is False
        assert [(o["pid"], o["layout"]) for o in report["others"]] == [(holder.pid, "path")]
        shown = run_lamina("graphd", "status", cwd=repo)
        assert (
            "not running" not in shown.stdout
            and f"graphd pid {holder.pid} was started by an older" in shown.stdout
        )
        assert stop(ws) is False  # this instance's graphd was not running; the old one was stopped
        assert holder.wait(timeout=EXIT_DEADLINE_SECONDS) == -signal.SIGTERM
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


@pytest.mark.slow
def test_the_model_unloads_when_idle_and_reloads_to_the_same_vectors_and_packets(
    tmp_path: Path, lamina_home: Path
) -> None:
    repo = _clone(_origin(tmp_path), tmp_path / "proj")
    ws = open_workspace(repo)
    digest = load_embedder(threads=1).info.model_digest
    texts = ["capture the payment of an order", "def refund_payment(order):\n    return order.refund()\n"]
    with connect(ws, model_idle=1.0) as client:  # the CLI below is answered by this graphd
        first, _ = _prepare(repo)
        loaded = client.call("ping")
        assert loaded["model_loaded"] is True
        before = client.request("embed", texts=texts, model_digest=digest)[1]
        deadline = time.monotonic() + EXIT_DEADLINE_SECONDS
        while client.call("ping")["model_loaded"]:  # the idle tick unloads it after 1 s without embedding
            assert time.monotonic() < deadline, "graphd kept its model"
            time.sleep(0.1)
        again, _ = _prepare(repo)  # reloads the model for the task's embedding
        assert again == first
        after = client.request("embed", texts=texts, model_digest=digest)[1]
        assert after == before
        released = client.call("model.release")
        assert released["released"] is True and client.call("ping")["model_loaded"] is False
        assert client.request("embed", texts=texts, model_digest=digest)[1] == before
    assert stop(ws)


@pytest.mark.slow
def test_a_dormant_graphd_gives_back_its_databases_and_answers_the_same_packet_when_woken(
    tmp_path: Path, lamina_home: Path
) -> None:
    repo = _clone(_origin(tmp_path), tmp_path / "proj")
    ws = open_workspace(repo)
    with connect(ws, dormant=1.0) as client:  # the CLI below is answered by this graphd
        first, _ = _prepare(repo)
        awake = client.call("ping")
        deadline = time.monotonic() + EXIT_DEADLINE_SECONDS
        while not (resting := client.call("ping"))["dormant"]:  # 1 s without a request; a ping keeps it
            assert time.monotonic() < deadline, "graphd never went dormant"  # dormant only if it waits
            time.sleep(1.2)
        assert resting["model_loaded"] is False and resting["graph_version"] == awake["graph_version"]
        assert resting["rss_bytes"] < awake["rss_bytes"]
        again, _ = _prepare(repo)  # opens the databases again (and may rest again a second later)
        assert again == first
        assert "awake: databases opened again" in ws.log_path.read_text()
        status = json.loads(run_lamina("context", "status", "--json", cwd=repo).stdout)
        assert status["generation"] == first["index"]["generation"] and status["fresh"] is True
    assert stop(ws)


def _copy_code(src: str, dst: str) -> None:
    """Python files copied (with their times, so the copy's code identity is the original's until one is
    edited); everything else linked (the selection model's 23 MB)."""
    if src.endswith(".py"):
        shutil.copy2(src, dst)
    else:
        os.symlink(src, dst)


def test_code_identity_changes_with_an_edit_but_not_with_caches(tmp_path: Path) -> None:
    package = tmp_path / "lamina"
    (package / "retrieval").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "retrieval" / "ranking.py").write_text("WEIGHT = 1\n")
    before = address.code_identity(str(package))
    (package / "retrieval" / "__pycache__").mkdir()
    (package / "retrieval" / "__pycache__" / "ranking.cpython-311.pyc").write_bytes(b"cache")
    (package / "retrieval" / "ranking.pyc").write_bytes(b"cache")
    assert address.code_identity(str(package)) == before  # caches come and go with the same code
    (package / "retrieval" / "ranking.py").write_text("WEIGHT = 22\n")  # an edit (or an upgrade)
    assert address.code_identity(str(package)) != before
    assert address.code_identity() == address.code_identity()  # the installed package: stable between calls


@pytest.mark.slow
def test_a_graphd_running_other_lamina_code_is_replaced_by_the_next_command(
    tmp_path: Path, lamina_home: Path
) -> None:
    """After an upgrade (or an edit) the running graphd still has the old code in memory: the next command
    that needs graphd stops it and starts one with its own code, and says so; status tells them apart."""
    from tests.conftest import ROOT

    repo = _clone(_origin(tmp_path), tmp_path / "repo")
    edited = tmp_path / "edited"
    shutil.copytree(ROOT / "lamina", edited / "lamina", ignore=shutil.ignore_patterns("__pycache__"),
                    copy_function=_copy_code)  # fmt: skip
    init = edited / "lamina" / "__init__.py"
    init.write_text(init.read_text() + "# an edit made after graphd started\n")
    other_code = {"PYTHONPATH": str(edited)}

    def graphd(env: dict[str, str] | None = None) -> dict:
        return json.loads(run_lamina("graphd", "status", "--json", cwd=repo, env=env).stdout)

    try:
        _prepare(repo)
        first = graphd()
        assert first["same_code"] is True
        seen = graphd(other_code)  # status never replaces anything: it says what runs
        assert seen["pid"] == first["pid"] and seen["same_code"] is False
        proc = run_lamina(
            "work", "prepare", "capture payment for an order", "--json", cwd=repo, env=other_code
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"replacing graphd (pid {first['pid']})" in proc.stderr
        second = graphd(other_code)
        assert (
            second["pid"] != first["pid"] and second["code"] != first["code"] and second["same_code"] is True
        )
        assert _wait_exit(first["pid"]) >= 0
        again = run_lamina(
            "work", "prepare", "capture payment for an order", "--json", cwd=repo, env=other_code
        )
        assert again.returncode == 0 and "replacing graphd" not in again.stderr
        assert graphd(other_code)["pid"] == second["pid"]
        _, stderr = _prepare(repo)  # back to the installed code: replaced once more
        assert f"replacing graphd (pid {second['pid']})" in stderr and graphd()["same_code"] is True
    finally:
        run_lamina("graphd", "stop", cwd=repo)
