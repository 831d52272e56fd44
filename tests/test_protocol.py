"""The client side of graphd's frames over a real Unix socket pair, with graphd's half scripted."""

from __future__ import annotations

import os
import socket
import threading
from typing import Any

import pytest

from lamina.errors import LaminaError
from lamina.graphd import protocol


def _answer_once(sock: socket.socket, key: bytes, reply: dict[str, Any]) -> None:
    """graphd's half of one request: greet, read and authenticate the request, send `reply`."""
    nonce = protocol.new_nonce()
    sock.sendall(protocol.GREETING + nonce)
    request = protocol.open_body(key, nonce, protocol.TO_SERVER, protocol.read_body(sock), 0)
    sock.sendall(protocol.encode_frame(key, nonce, protocol.TO_CLIENT, request.seq, reply))


def _call_with_reply(reply: dict[str, Any]) -> dict[str, Any]:
    key = os.urandom(32)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    server = threading.Thread(target=_answer_once, args=(theirs, key, reply))
    server.start()
    try:
        with protocol.GraphdClient(key, ours) as client:
            return client.call("gen.status", identity="x")
    finally:
        server.join(timeout=10)
        theirs.close()


def test_a_known_error_code_from_graphd_is_raised_as_is() -> None:
    error = {"code": "LAMINA_NO_INDEX", "message": "none here", "hint": "build it"}
    with pytest.raises(LaminaError) as raised:
        _call_with_reply({"ok": False, "error": error})
    assert (raised.value.code, raised.value.message, raised.value.hint) == (
        "LAMINA_NO_INDEX",
        "none here",
        "build it",
    )


@pytest.mark.parametrize("code", ["LAMINA_FROM_A_NEWER_GRAPHD", 17, None])
def test_an_error_code_the_client_does_not_know_is_a_coded_protocol_error(code: Any) -> None:
    with pytest.raises(LaminaError) as raised:
        _call_with_reply({"ok": False, "error": {"code": code, "message": "something new"}})
    assert raised.value.code == "LAMINA_PROTOCOL"
    assert repr(code) in raised.value.message and "something new" in raised.value.message
    assert "lamina graphd stop" in raised.value.effective_hint


def test_a_frame_knows_the_size_of_the_header_it_carried() -> None:
    key, nonce = os.urandom(32), protocol.new_nonce()
    header = {"op": "graph.import", "files": {"product/a.toml": "x" * 10_000}}
    wire = protocol.encode_frame(key, nonce, protocol.TO_SERVER, 1, header, b"abc")
    frame = protocol.open_body(key, nonce, protocol.TO_SERVER, wire[4:], 0)
    assert frame.header == header and frame.payload == b"abc"
    assert frame.size == len(wire) - 4 - protocol.MAC_BYTES - 12 and frame.size > 10_000


def test_every_request_of_the_table_has_its_handler_and_every_handler_its_row() -> None:
    from lamina.graphd.requests import REQUESTS
    from lamina.graphd.server import GraphDaemon

    methods = {name for name in dir(GraphDaemon) if name.startswith("op_")}
    assert {request.method for request in REQUESTS if request.databases} == methods
    assert all(hasattr(GraphDaemon, request.method) for request in REQUESTS)
    assert len({request.name for request in REQUESTS}) == len(REQUESTS)
    streaming = {request.name for request in REQUESTS if request.streams}
    assert (
        streaming == {request.name for request in REQUESTS if not request.databases} == {"build", "prepare"}
    )


@pytest.mark.parametrize(
    ("operations", "offered"),
    [(None, False), (["ping", "build"], False), (["ping", "prepare"], True), ("prepare", False)],
)
def test_the_thin_client_asks_for_prepare_only_when_graphd_lists_it(operations: Any, offered: bool) -> None:
    """An older graphd (its ping lists no operations, or not this one) is asked the old way, by the full
    path: decided from the ping, not by matching an error message."""
    from lamina.index.hosted_prepare import offers_prepare

    assert offers_prepare(operations) is offered


def _build_then(sock: socket.socket, key: bytes, final: dict[str, Any], seen: list[bytes]) -> None:
    """graphd's half of a hosted build: one progress frame, then it waits until the client closes its
    sending side (graphd's cancel), then sends `final` — the outcome the build reached."""
    nonce = protocol.new_nonce()
    sock.sendall(protocol.GREETING + nonce)
    request = protocol.open_body(key, nonce, protocol.TO_SERVER, protocol.read_body(sock), 0)
    progress = {"ok": True, "more": True, "n": 1, "progress": "embedding chunks: 1/9\n"}
    sock.sendall(protocol.encode_frame(key, nonce, protocol.TO_CLIENT, request.seq, progress))
    seen.append(sock.recv(1))  # b"": the client half-closed
    sock.sendall(protocol.encode_frame(key, nonce, protocol.TO_CLIENT, request.seq, final))


def _interrupted_build(final: dict[str, Any]) -> tuple[LaminaError, list[str], list[bytes]]:
    key = os.urandom(32)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    seen: list[bytes] = []
    server = threading.Thread(target=_build_then, args=(theirs, key, final, seen))
    server.start()
    shown: list[str] = []

    def ctrl_c_on_first_progress(text: str) -> None:
        shown.append(text)
        if len(shown) == 1:
            raise KeyboardInterrupt

    try:
        with protocol.GraphdClient(key, ours) as client:
            client.call("build", on_progress=ctrl_c_on_first_progress, worktree="/x")
    except LaminaError as err:
        return err, shown, seen
    except KeyboardInterrupt:
        pytest.fail("the Ctrl-C left the client without cancelling the build and hearing its outcome")
    finally:
        server.join(timeout=10)
        theirs.close()
    pytest.fail("an interrupted build must not end as if it had answered")


def test_ctrl_c_during_a_build_cancels_it_and_reports_what_graphd_did() -> None:
    """The build stopped before activating. graphd read the half-close as a client that left ("its client
    disconnected"); the user pressed Ctrl-C, and is told so, with nothing activated and nothing lost."""
    message = "the build was cancelled: its client disconnected"
    stopped = {"ok": False, "error": {"code": "LAMINA_INTERRUPTED", "message": message}}
    error, shown, seen = _interrupted_build(stopped)
    assert seen == [b""]  # the cancel graphd sees: end of the client's stream
    assert error.code == "LAMINA_INTERRUPTED" and error.exit_status == 130
    assert "Ctrl-C" in error.message and "nothing was activated" in error.message
    assert "disconnected" not in error.message and "went away" not in error.message
    assert "cancelling the build" in shown[-1]


def test_ctrl_c_during_a_build_that_failed_otherwise_reports_that_failure() -> None:
    failed = {"ok": False, "error": {"code": "LAMINA_GRAPH_INVALID", "message": "the graph is invalid"}}
    error, _, _ = _interrupted_build(failed)
    assert error.code == "LAMINA_GRAPH_INVALID" and error.message == "the graph is invalid"


def test_ctrl_c_that_reaches_graphd_after_its_activation_does_not_claim_nothing_was_activated() -> None:
    activated = {"ok": True, "hosted": True, "stats": {"generation": "g-20261207-abcd"}}
    error, _, seen = _interrupted_build(activated)
    assert seen == [b""]
    assert error.code == "LAMINA_INTERRUPTED" and error.exit_status == 130
    assert "generation g-20261207-abcd is active" in error.message
    assert "activating anything" not in error.effective_hint  # the default hint would say nothing was


def test_graphd_closing_the_connection_mid_request_says_to_run_again() -> None:
    """A graphd killed during a build: the client's error says what to do, not only that it happened."""
    key = os.urandom(32)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)

    def graphd_that_dies() -> None:
        nonce = protocol.new_nonce()
        theirs.sendall(protocol.GREETING + nonce)
        protocol.read_body(theirs)  # the request arrives; graphd dies before answering
        theirs.close()

    server = threading.Thread(target=graphd_that_dies)
    server.start()
    with pytest.raises(LaminaError) as err, protocol.GraphdClient(key, ours) as client:
        client.call("prepare", worktree="/x")
    server.join(timeout=10)
    assert err.value.code == "LAMINA_GRAPHD_UNAVAILABLE"
    assert err.value.message == "graphd closed the connection during prepare"
    assert "Run the command again" in err.value.effective_hint
