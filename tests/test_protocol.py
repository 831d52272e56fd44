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
