"""Frames between the CLI/worker and graphd, and the client's side of one connection (GraphdClient).

On connect graphd sends a greeting: GREETING + a fresh random nonce. Every frame after that is

    u32 length | mac (32) | seq u64 | header_len u32 | header (JSON object) | payload (bytes)

where length counts everything after itself and mac = keyed-blake3(secret, nonce ‖ direction ‖ seq ‖
header_len ‖ header ‖ payload). The nonce binds a frame to one connection (a frame replayed on another
connection fails its MAC); within a connection each side's sequence numbers strictly increase (a
replayed or reordered frame is refused). Responses echo the request's sequence number with direction
b"S", so the client authenticates graphd too. Written by hand because no library does "keyed MAC +
sequence over a Unix stream" with blake3; it is ~100 lines.
"""

from __future__ import annotations

import contextvars
import hmac
import json
import socket
import struct

import blake3

from lamina.constants import FRAME_MAX_BYTES, MAC_BYTES, NONCE_BYTES
from lamina.errors import ERROR_CODES, LaminaError

TYPE_CHECKING = False  # not `from typing import …`: this module is on the fast path of `prepare`
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

GREETING = b"LAMINA-GRAPHD/1\n"
TO_SERVER = b"C"
TO_CLIENT = b"S"
_LEN = struct.Struct(">I")
_SEQ_HLEN = struct.Struct(">QI")
_MIN_BODY = MAC_BYTES + _SEQ_HLEN.size

# Told of every connection a GraphdClient opens in this context, before the greeting is read. The MCP
# server (lamina/mcp_server.py) sets it per tool call: a cancelled call shuts its connections down, so
# graphd stops the build it hosts for that call as it does when a CLI is interrupted (and the observer
# raises to refuse new connections once the call is cancelled). Unset everywhere else.
CONNECTION_OBSERVER: contextvars.ContextVar[Callable[[socket.socket], None] | None] = contextvars.ContextVar(
    "lamina_graphd_connection_observer", default=None
)


class Frame:
    """One authenticated frame. A slotted class, not a dataclass: the fast path of `prepare` imports this
    module and not dataclasses (~10 ms)."""

    __slots__ = ("seq", "header", "payload", "header_size")

    def __init__(self, seq: int, header: dict[str, Any], payload: bytes, header_size: int = 0) -> None:
        self.seq = seq
        self.header = header
        self.payload = payload
        self.header_size = header_size  # bytes of the JSON header as sent (some requests carry data there)

    @property
    def size(self) -> int:
        """What the frame carries, header and payload: the data a writing request may store."""
        return self.header_size + len(self.payload)


def _mac(key: bytes, nonce: bytes, direction: bytes, signed: bytes) -> bytes:
    return blake3.blake3(nonce + direction + signed, key=key).digest()


def encode_frame(
    key: bytes, nonce: bytes, direction: bytes, seq: int, header: dict[str, Any], payload: bytes = b""
) -> bytes:
    header_bytes = json.dumps(header, separators=(",", ":")).encode()
    signed = _SEQ_HLEN.pack(seq, len(header_bytes)) + header_bytes + payload
    body = _mac(key, nonce, direction, signed) + signed
    return _LEN.pack(len(body)) + body


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise EOFError("connection closed")
        got += k
    return bytes(buf)


def read_body(sock: socket.socket, max_bytes: int = FRAME_MAX_BYTES) -> bytes:
    """Read one frame's bytes; an oversized declared length is refused before anything is read."""
    (length,) = _LEN.unpack(recv_exact(sock, _LEN.size))
    if length > max_bytes:
        raise LaminaError("LAMINA_PROTOCOL", f"frame of {length} bytes exceeds the {max_bytes}-byte limit")
    if length < _MIN_BODY:
        raise LaminaError("LAMINA_PROTOCOL", f"frame of {length} bytes is too short to be valid")
    try:
        return recv_exact(sock, length)
    except EOFError as exc:
        raise LaminaError("LAMINA_PROTOCOL", "truncated frame: the connection closed mid-frame") from exc


def open_body(key: bytes, nonce: bytes, direction: bytes, body: bytes, last_seq: int) -> Frame:
    """Authenticate, check the sequence, then parse: in that order, so nothing unauthenticated is parsed."""
    mac, signed = body[:MAC_BYTES], body[MAC_BYTES:]
    if not hmac.compare_digest(mac, _mac(key, nonce, direction, signed)):
        raise LaminaError("LAMINA_GRAPHD_AUTH", "frame MAC does not verify")
    seq, header_len = _SEQ_HLEN.unpack_from(signed)
    if seq <= last_seq:
        raise LaminaError(
            "LAMINA_GRAPHD_AUTH", f"sequence {seq} is not after {last_seq} (replayed or reordered)"
        )
    rest = signed[_SEQ_HLEN.size :]
    if header_len > len(rest):
        raise LaminaError("LAMINA_PROTOCOL", "header length exceeds the frame")
    try:
        header = json.loads(rest[:header_len])
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LaminaError("LAMINA_PROTOCOL", f"header is not JSON: {exc}") from exc
    if not isinstance(header, dict):
        raise LaminaError("LAMINA_PROTOCOL", "header is not a JSON object")
    return Frame(seq=seq, header=header, payload=rest[header_len:], header_size=header_len)


def encode_table(table: Any) -> bytes:
    """A pyarrow Table as the payload of a frame (an Arrow IPC stream)."""
    import pyarrow as pa  # imported here: the packet path of the CLI never needs pyarrow

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def decode_table(payload: bytes) -> Any:
    """A frame's payload as a pyarrow Table; anything else is a protocol error."""
    import pyarrow as pa

    try:
        with pa.ipc.open_stream(pa.BufferReader(payload)) as reader:
            return reader.read_all()
    except (pa.ArrowInvalid, OSError) as exc:
        raise LaminaError("LAMINA_PROTOCOL", f"payload is not an Arrow stream: {exc}") from exc


def vector_column(vectors: Any) -> Any:
    """Vectors as payloads and the index store carry them: a pyarrow binary column of little-endian
    float32 BLOBs; a None stays null (a lexical-only version has no vector)."""
    import pyarrow as pa

    return pa.array([None if v is None else v.astype("<f4").tobytes() for v in vectors], type=pa.binary())


def vector_rows(blobs: Any) -> Any:
    """The (n, dim) float32 matrix of n non-null vector BLOBs (the inverse of vector_column)."""
    import numpy as np

    blobs = list(blobs)
    return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)


def new_nonce() -> bytes:
    import secrets

    return secrets.token_bytes(NONCE_BYTES)


def read_greeting(sock: socket.socket) -> bytes:
    hello = recv_exact(sock, len(GREETING) + NONCE_BYTES)
    if not hello.startswith(GREETING):
        raise LaminaError("LAMINA_PROTOCOL", "the socket did not answer as graphd")
    return hello[len(GREETING) :]


def reported_error(error: Any, op: str) -> LaminaError:
    """The LaminaError graphd reported. A code this client does not know (a graphd of another Lamina
    version) is a protocol error that quotes it, never a crash of the client."""
    err = error if isinstance(error, dict) else {}
    code, message, hint = (
        err.get("code"),
        str(err.get("message", "graphd refused the request")),
        err.get("hint"),
    )
    if isinstance(code, str) and code in ERROR_CODES:
        return LaminaError(code, message, str(hint or ""))
    return LaminaError(
        "LAMINA_PROTOCOL",
        f"graphd answered {op} with an error this Lamina does not know ({code!r}): {message}",
        "graphd runs another Lamina version: stop it with `lamina graphd stop`; the next command starts "
        "this version's.",
    )


class GraphdClient:
    """One authenticated connection to graphd, as the CLI, a worker or a build sees it: requests and their
    replies, with progress frames in between for long requests."""

    def __init__(self, key: bytes, sock: socket.socket) -> None:
        observer = CONNECTION_OBSERVER.get()
        if observer is not None:
            observer(sock)
        self.key = key
        self.sock = sock
        self.nonce = read_greeting(sock)
        self.seq = 0
        self.last_server_ms: float | None = None

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> GraphdClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(
        self, op: str, payload: bytes = b"", on_progress: Callable[[str], None] | None = None, **fields: Any
    ) -> tuple[dict[str, Any], bytes]:
        """One request and its reply. A long request (a hosted build) may first send progress frames:
        same sequence number, `more: true`, a strictly increasing `n`; each goes to on_progress."""
        self.seq += 1
        seq = self.seq
        frame_bytes = encode_frame(self.key, self.nonce, TO_SERVER, seq, {"op": op, **fields}, payload)
        try:
            self.sock.sendall(frame_bytes)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise LaminaError(
                "LAMINA_GRAPHD_UNAVAILABLE", f"graphd closed the connection during {op}"
            ) from exc
        last_progress = 0
        cancelled = False
        while True:
            try:
                frame = self._read_reply(op, seq)
                header = frame.header
                if not header.get("more"):
                    break
                n = header.get("n")
                if not isinstance(n, int) or n <= last_progress:
                    raise LaminaError(
                        "LAMINA_GRAPHD_AUTH", f"progress frame {n!r} is not after {last_progress}"
                    )
                last_progress = n
                if on_progress is not None:
                    on_progress(str(header.get("progress", "")))
            except KeyboardInterrupt:
                if on_progress is None or cancelled:  # a short request, or a second Ctrl-C: stop now
                    raise
                cancelled = self._cancel(on_progress)
                if not cancelled:
                    raise
        if not header.get("ok"):
            error = header.get("error")
            if cancelled and isinstance(error, dict) and error.get("code") == "LAMINA_INTERRUPTED":
                # graphd saw our half-close as a client that left; the user knows better: they pressed Ctrl-C
                raise LaminaError(
                    "LAMINA_INTERRUPTED",
                    "the build was cancelled (Ctrl-C); nothing was activated and finished work is kept",
                    "Run the command again to resume the build.",
                )
            raise reported_error(error, op)
        if cancelled:  # graphd had activated the build before the cancel reached it: say so, truthfully
            stats = header.get("stats")
            generation = stats.get("generation") if isinstance(stats, dict) else None
            raise LaminaError(
                "LAMINA_INTERRUPTED",
                f"interrupted after the build had finished: generation {generation} is active"
                if generation
                else f"interrupted after graphd had answered {op}; it built nothing",
                "Nothing was lost. Run the command again for its answer.",
            )
        return header, frame.payload

    def _cancel(self, on_progress: Callable[[str], None]) -> bool:
        """Ctrl-C during a long request (a hosted build): close our sending side, which graphd reads as a
        cancel (it stops the build at its next unit of work and activates nothing), then wait for its
        reply so the command can say what happened. False when the connection cannot be half-closed."""
        try:
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            return False
        on_progress("cancelling the build (Ctrl-C again to stop waiting)\n")
        return True

    def _read_reply(self, op: str, seq: int) -> Frame:
        try:
            body = read_body(self.sock)
        except (EOFError, BrokenPipeError, ConnectionResetError) as exc:
            raise LaminaError(
                "LAMINA_GRAPHD_UNAVAILABLE",
                f"graphd closed the connection during {op}",
                "graphd stopped while answering (stopped, killed, or crashed: `lamina graphd status` shows its "
                "log). Run the command again: it starts graphd, and a build resumes with the work already done.",
            ) from exc
        frame = open_body(self.key, self.nonce, TO_CLIENT, body, seq - 1)
        if frame.seq != seq:
            raise LaminaError("LAMINA_PROTOCOL", f"graphd answered sequence {frame.seq} to request {seq}")
        return frame

    def call(
        self, op: str, payload: bytes = b"", on_progress: Callable[[str], None] | None = None, **fields: Any
    ) -> dict[str, Any]:
        """The reply's fields, without the envelope (`ok`, and graphd's own `server_ms` timing)."""
        header = self.request(op, payload, on_progress, **fields)[0]
        header.pop("ok", None)
        self.last_server_ms = header.pop("server_ms", None)
        return header

    def call_table(self, op: str, table: Any, **fields: Any) -> dict[str, Any]:
        """A request whose payload is a pyarrow Table."""
        return self.call(op, encode_table(table), **fields)
