"""graphd as a real process over a real Unix socket with real Ladybug databases."""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa
import pytest

from lamina.constants import FRAME_MAX_BYTES
from lamina.errors import LaminaError
from lamina.graphd import protocol
from lamina.graphd.client import clean_stale, connect, status, stop
from lamina.workspace import open_workspace, read_or_create_secret
from tests.helpers import EXAMPLE_GRAPH, make_repo, synthetic_versions, upload_generation

pytestmark = pytest.mark.slow


@pytest.fixture()
def ws(tmp_path: Path):
    repo = make_repo(tmp_path / "repo")
    workspace = open_workspace(repo)
    yield workspace
    stop(workspace)


@pytest.fixture()
def graph_files() -> dict[str, str]:
    return {"product/checkout.toml": EXAMPLE_GRAPH.read_text()}


def _pid(ws) -> int:
    info = status(ws)
    assert info is not None
    return int(info["pid"])


def _kill9(ws, pid: int | None = None) -> None:
    """SIGKILL graphd and wait until it has exited (its lock is released only then)."""
    pid = pid or _pid(ws)
    os.kill(pid, signal.SIGKILL)
    # The daemon's flock is released only when the process is gone: wait for the exit to be reaped.
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split()[2] == "Z":
                    break
        except FileNotFoundError:
            break


def _raw(ws) -> tuple[socket.socket, bytes, bytes]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(ws.socket_path))
    nonce = protocol.read_greeting(sock)
    return sock, nonce, read_or_create_secret(ws)


def _reply(sock: socket.socket, key: bytes, nonce: bytes) -> dict:
    body = protocol.read_body(sock)
    return protocol.open_body(key, nonce, protocol.TO_CLIENT, body, 0).header


def _closed(sock: socket.socket) -> bool:
    sock.settimeout(10)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def test_status_reports_pid_socket_uptime_and_databases(ws) -> None:
    with connect(ws) as client:
        info = client.call("status")
    assert info["pid"] > 0 and info["uptime_seconds"] >= 0
    assert info["socket"] == str(ws.socket_path)
    assert info["databases"] == {"product": str(ws.product_db), "index": str(ws.index_db)}
    from lamina.graphd.requests import PROTOCOL_VERSION, REQUESTS

    assert info["protocol"] == PROTOCOL_VERSION  # the client decides what graphd can do from these
    assert info["operations"] == [request.name for request in REQUESTS]
    assert oct(ws.run_dir.stat().st_mode & 0o777) == "0o700"
    assert oct(ws.secret_path.stat().st_mode & 0o777) == "0o600"
    assert ws.log_path.exists()


@pytest.mark.parametrize(
    "case",
    [
        "wrong_mac",
        "replay",
        "reordered",
        "garbage",
        "malformed_body",
        "truncated",
        "oversized",
        "cross_connection_replay",
    ],
)
def test_bad_frames_are_refused_and_change_nothing(ws, graph_files, case: str) -> None:
    with connect(ws) as client:
        before = client.call("graph.import", files=graph_files)["graph_version"]
    other_graph = {"product/x.toml": '[[actor]]\nid = "intruder"\nname = "Intruder"\n'}
    sock, nonce, key = _raw(ws)
    importing = {"op": "graph.import", "files": other_graph}
    if case == "wrong_mac":
        sock.sendall(protocol.encode_frame(b"\x01" * 32, nonce, protocol.TO_SERVER, 1, importing))
        assert _reply(sock, key, nonce)["error"]["code"] == "LAMINA_GRAPHD_AUTH"
    elif case == "replay":
        frame = protocol.encode_frame(key, nonce, protocol.TO_SERVER, 1, {"op": "ping"})
        sock.sendall(frame)
        assert _reply(sock, key, nonce)["ok"] is True
        sock.sendall(frame)
        body = protocol.read_body(sock)
        assert (
            protocol.open_body(key, nonce, protocol.TO_CLIENT, body, 1).header["error"]["code"]
            == "LAMINA_GRAPHD_AUTH"
        )
    elif case == "reordered":
        sock.sendall(protocol.encode_frame(key, nonce, protocol.TO_SERVER, 5, {"op": "ping"}))
        assert _reply(sock, key, nonce)["ok"] is True
        sock.sendall(protocol.encode_frame(key, nonce, protocol.TO_SERVER, 4, importing))
        body = protocol.read_body(sock)
        assert (
            protocol.open_body(key, nonce, protocol.TO_CLIENT, body, 5).header["error"]["code"]
            == "LAMINA_GRAPHD_AUTH"
        )
    elif case == "garbage":
        sock.sendall(b"\x00\x00\x00\x40" + os.urandom(64))
        assert _reply(sock, key, nonce)["error"]["code"] == "LAMINA_GRAPHD_AUTH"
    elif case == "malformed_body":  # a valid MAC over a body that is not a JSON object
        signed = struct.pack(">QI", 1, 9) + b"not json!"
        mac = protocol._mac(key, nonce, protocol.TO_SERVER, signed)
        sock.sendall(struct.pack(">I", len(mac + signed)) + mac + signed)
        assert _reply(sock, key, nonce)["error"]["code"] == "LAMINA_PROTOCOL"
    elif case == "truncated":
        frame = protocol.encode_frame(key, nonce, protocol.TO_SERVER, 1, importing)
        sock.sendall(frame[: len(frame) // 2])
        sock.shutdown(socket.SHUT_WR)
        assert _reply(sock, key, nonce)["error"]["code"] == "LAMINA_PROTOCOL"
    elif case == "oversized":
        sock.sendall(struct.pack(">I", FRAME_MAX_BYTES + 1))
        assert _reply(sock, key, nonce)["error"]["code"] == "LAMINA_PROTOCOL"
    elif case == "cross_connection_replay":
        frame = protocol.encode_frame(key, nonce, protocol.TO_SERVER, 1, importing)
        sock2, nonce2, _ = _raw(ws)
        sock2.sendall(frame)  # captured on one connection, replayed on another
        assert _reply(sock2, key, nonce2)["error"]["code"] == "LAMINA_GRAPHD_AUTH"
        assert _closed(sock2)
        sock2.close()
        sock.close()
        sock, nonce, key = _raw(ws)
    if case not in ("replay", "reordered", "cross_connection_replay"):
        assert _closed(sock)
    sock.close()
    with connect(ws) as client:  # graphd is alive and the graph is the one it had
        assert client.call("graph.roots")["graph_version"] == before


def test_unknown_request_is_refused_but_the_connection_lives(ws) -> None:
    with connect(ws) as client:
        with pytest.raises(LaminaError) as err:
            client.call("drop.everything")
        assert err.value.code == "LAMINA_PROTOCOL"
        assert client.call("ping")["pid"] > 0


def test_second_graphd_refuses_to_start(ws) -> None:
    with connect(ws) as client:
        client.call("ping")
    proc = subprocess.run(
        [sys.executable, "-m", "lamina.graphd.server", "--root", str(ws.root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == LaminaError("LAMINA_LOCKED", "").exit_status
    assert "already running" in proc.stderr


def test_stale_socket_and_pid_after_kill9_are_cleaned(ws) -> None:
    with connect(ws) as client:
        first = client.call("ping")["pid"]
    _kill9(ws)
    assert ws.socket_path.exists()  # left behind by the dead daemon
    with connect(ws) as client:  # the client notices, cleans up and starts a fresh graphd
        second = client.call("ping")["pid"]
    assert second != first


def test_two_clients_at_once(ws, graph_files) -> None:
    with connect(ws) as client:
        version = client.call("graph.import", files=graph_files)["graph_version"]
    results: list[str] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            with connect(ws) as client:
                for _ in range(20):
                    results.append(client.call("graph.roots")["graph_version"])
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == [version] * 40


def test_concurrent_autostart_starts_one_graphd(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    code = (
        "import sys; from pathlib import Path; from lamina.workspace import open_workspace; "
        "from lamina.graphd.client import connect; c = connect(open_workspace(Path(sys.argv[1]))); "
        "print(c.call('ping')['pid'])"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(repo)], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    pids = {p.communicate(timeout=120)[0].strip() for p in procs}
    stop(open_workspace(repo))
    assert len(pids) == 1 and all(p.returncode == 0 for p in procs)


def test_a_build_may_declare_only_the_members_that_changed_since_the_current_generation(
    ws, graph_files
) -> None:
    """gen.begin with `base` (the identity's current generation) starts the pending members from it; the
    builder then adds and removes only what changed. The declared count and digest still decide
    activation, and a base that is not current is refused (the builder must declare everything)."""
    from lamina.index.membership import membership_digest

    with connect(ws) as client:
        version = client.call("graph.import", files=graph_files)["graph_version"]
        base_table = synthetic_versions(200, seed=11, prefix="base")
        base = upload_generation(client, "id-a", base_table, version)
        base_ids = base_table.column("id").to_pylist()
        added_table = synthetic_versions(3, seed=12, prefix="added")
        added = added_table.column("id").to_pylist()
        wanted = base_ids[5:] + added
        count, digest = membership_digest(wanted)

        def begin(base_gen: str | None) -> dict:
            return client.call(
                "gen.begin", identity="id-a", manifest={"graph_version": version, "model_digest": "model"},
                expected_count=count, expected_digest=digest, base=base_gen,
            )  # fmt: skip

        other = begin("g-not-current")
        assert other["based_on"] is None  # not the identity's current generation: nothing is inherited
        client.call("gen.fail", generation=other["generation"], reason="test")
        begun = begin(base)
        assert begun["based_on"] == base
        gen = begun["generation"]
        reply = client.call_table("gen.members", pa.table({"id": added}), generation=gen, remove=base_ids[:5])
        assert reply["missing"] == added  # only the new ids are looked up, and they are not stored yet
        client.call_table("index.put", added_table)
        done = client.call("gen.commit", generation=gen)
        assert done["count"] == len(wanted) and done["digest"] == digest
        st = client.call("gen.status", identity="id-a")
        assert st["generation"] == gen and st["counts"] == {"chunk": len(wanted)}
        # A delta that leaves the members short of the declaration is refused, and nothing changes.
        short = begin(gen)
        client.call_table("gen.members", pa.table({"id": pa.array([], type=pa.string())}),
                          generation=short["generation"], remove=added)  # fmt: skip
        with pytest.raises(LaminaError) as err:
            client.call("gen.commit", generation=short["generation"])
        assert err.value.code == "LAMINA_GENERATION_MISMATCH"
        assert client.call("gen.status", identity="id-a")["generation"] == gen
        with pytest.raises(LaminaError) as err:
            client.call_table("gen.members", pa.table({"id": added}), generation=gen, remove=["x; DROP"])
        assert err.value.code == "LAMINA_PROTOCOL"


def test_a_replaced_generation_leaves_graphd_s_memory(ws, graph_files) -> None:
    """After an identity's generation is replaced, graphd holds the ranking state of the new one only and
    caches only its versions, and no upload's Arrow buffers stay (each used to stay until graphd exited;
    bench/graphd.py measures what that cost)."""
    with connect(ws) as client:
        version = client.call("graph.import", files=graph_files)["graph_version"]
        generations = []
        for seed, prefix in ((1, "one"), (2, "two")):
            table = synthetic_versions(300, seed=seed, prefix=prefix)
            generations.append(upload_generation(client, "main", table, version, batch=100))  # by COPY
            found = client.call("query.search", identity="main", text=f"{prefix}_7 return", ranker="lexical")
            assert found["sources"], prefix
        info = client.call("ping")
    assert info["ranking_states"] == {"main": generations[1]}
    assert info["cached_versions"] == 300
    assert info["late_index_bytes"] == 0  # searches never rank roots: no token states were built
    assert info["arrow_bytes"] == 0


def test_activation_requires_matching_membership(ws, graph_files) -> None:
    with connect(ws) as client:
        version = client.call("graph.import", files=graph_files)["graph_version"]
        good = upload_generation(client, "id-a", synthetic_versions(300), version)
        table = synthetic_versions(50, seed=1, prefix="g")
        ids = table.column("id").to_pylist()
        gen = client.call(
            "gen.begin",
            identity="id-a",
            manifest={"graph_version": version},
            expected_count=len(ids) + 6,
            expected_digest="0" * 64,
        )["generation"]
        stored = synthetic_versions(300).column("id").to_pylist()[:5]  # members of `good`: stored already
        declared = client.call_table("gen.members", pa.table({"id": ids + stored}), generation=gen)
        assert declared["missing"] == ids  # what the worker must upload, in the order declared
        client.call_table("index.put", table)
        assert client.call_table("gen.members", pa.table({"id": ids}), generation=gen)["missing"] == []
        with pytest.raises(LaminaError) as err:
            client.call("gen.commit", generation=gen)
        assert err.value.code == "LAMINA_GENERATION_MISMATCH"
        st = client.call("gen.status", identity="id-a")
        assert st["generation"] == good and st["counts"] == {"chunk": 300}
        assert st["last_failure"]["generation"] == gen


@pytest.mark.parametrize("moment", ["upload", "activation"])
def test_sigkill_never_replaces_the_current_generation(ws, graph_files, moment: str) -> None:
    with connect(ws) as client:
        version = client.call("graph.import", files=graph_files)["graph_version"]
        good = upload_generation(client, "id-a", synthetic_versions(2000), version)
        before = client.call("gen.status", identity="id-a")
    big = synthetic_versions(20000, dim=64, seed=2, prefix="h")
    ids = big.column("id").to_pylist()
    from lamina.index.membership import membership_digest

    count, digest = membership_digest(ids)
    client = connect(ws)
    gen = client.call(
        "gen.begin",
        identity="id-a",
        manifest={"graph_version": version},
        expected_count=count,
        expected_digest=digest,
    )["generation"]
    client.call_table("gen.members", pa.table({"id": ids}), generation=gen)
    pid = client.call("ping")["pid"]
    if moment == "upload":
        client.call_table("index.put", big.slice(0, 5000))
        # Send the next batch and kill graphd while it is receiving or writing it.
        client.seq += 1
        client.sock.sendall(
            protocol.encode_frame(
                client.key,
                client.nonce,
                protocol.TO_SERVER,
                client.seq,
                {"op": "index.put"},
                protocol.encode_table(big.slice(5000, 15000)),
            )
        )
    else:
        client.call_table("index.put", big)
        client.seq += 1
        client.sock.sendall(
            protocol.encode_frame(
                client.key,
                client.nonce,
                protocol.TO_SERVER,
                client.seq,
                {"op": "gen.commit", "generation": gen},
            )
        )
    _kill9(ws, pid)
    client.close()
    with connect(ws) as fresh:  # a new graphd: the killed generation is abandoned or fully active
        after = fresh.call("gen.status", identity="id-a")
        if after["generation"] == good:
            assert after["digest"] == before["digest"] and after["counts"] == before["counts"]
            assert gen not in after["pending"]
        else:  # the kill landed after the activation transaction committed: then it is complete
            assert moment == "activation" and after["generation"] == gen and after["digest"] == digest
        retry = upload_generation(fresh, "id-a", big, version, batch=5000)
        final = fresh.call("gen.status", identity="id-a")
        assert (
            final["generation"] == retry and final["digest"] == digest and final["counts"] == {"chunk": 20000}
        )


def test_clean_stale_leaves_a_live_daemon_alone(ws) -> None:
    with connect(ws) as client:
        client.call("ping")
    assert clean_stale(ws) == []
    assert status(ws) is not None


def test_stop_closes_idle_connections_instead_of_waiting_on_them(ws) -> None:
    """Clients that keep a connection open without a request (an editor plugin, a crashed tool) must not
    hold up `graphd stop`: graphd ends their reads, and their sockets see the end of the stream."""
    idle = [connect(ws) for _ in range(3)]
    try:
        for client in idle:
            assert client.call("ping")["pid"]  # each connection is served, then waits for more
        assert stop(ws) is True
        for client in idle:
            client.sock.settimeout(30)  # a bound, not a wait: EOF is already there once stop returned
            assert client.sock.recv(1) == b""
    finally:
        for client in idle:
            client.close()
    log = ws.log_path.read_text()
    assert "stopping: closed 3 idle connection(s)" in log


def test_a_large_product_graph_imports_and_answers_closures(ws) -> None:
    # 300 workflows (~5,000 nodes, ~16,000 edges, 15 MB of closures) is one transaction in the product
    # database's buffer pool; a pool sized for small graphs refused it ("buffer pool is full").
    from bench.graph_closure import generate_graph_files

    files = generate_graph_files(300)
    with connect(ws) as client:
        version = client.call("graph.import", files=files)["graph_version"]
        assert client.call("status")["graph_version"] == version
        roots = client.call("graph.roots")["roots"]
        assert len(roots) > 100
        closure = client.call("graph.closure", workflow=roots[-1]["id"])
        assert roots[-1]["id"] in {w["id"] for w in closure["graph"]["workflows"]}
