"""Talking to graphd: authenticated request/response, and starting graphd when it is not running
(the way a Bazel client starts its server)."""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from lamina.constants import GRAPHD_START_TIMEOUT_SECONDS
from lamina.errors import LaminaError
from lamina.graphd import protocol
from lamina.workspace import Workspace, ensure_dirs, read_or_create_secret

if TYPE_CHECKING:
    import pyarrow as pa


class GraphdClient:
    def __init__(self, ws: Workspace, key: bytes, sock: socket.socket) -> None:
        self.ws = ws
        self.key = key
        self.sock = sock
        self.nonce = protocol.read_greeting(sock)
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
        frame_bytes = protocol.encode_frame(
            self.key, self.nonce, protocol.TO_SERVER, seq, {"op": op, **fields}, payload
        )
        try:
            self.sock.sendall(frame_bytes)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise LaminaError(
                "LAMINA_GRAPHD_UNAVAILABLE", f"graphd closed the connection during {op}"
            ) from exc
        last_progress = 0
        while True:
            frame = self._read_reply(op, seq)
            header = frame.header
            if not header.get("more"):
                break
            n = header.get("n")
            if not isinstance(n, int) or n <= last_progress:
                raise LaminaError("LAMINA_GRAPHD_AUTH", f"progress frame {n!r} is not after {last_progress}")
            last_progress = n
            if on_progress is not None:
                on_progress(str(header.get("progress", "")))
        if not header.get("ok"):
            err = header.get("error") or {}
            code = err.get("code", "LAMINA_INTERNAL")
            raise LaminaError(
                code if isinstance(code, str) else "LAMINA_INTERNAL",
                str(err.get("message", "graphd refused the request")),
                str(err.get("hint", "")),
            )
        return header, frame.payload

    def _read_reply(self, op: str, seq: int) -> protocol.Frame:
        try:
            body = protocol.read_body(self.sock)
        except (EOFError, BrokenPipeError, ConnectionResetError) as exc:
            raise LaminaError(
                "LAMINA_GRAPHD_UNAVAILABLE", f"graphd closed the connection during {op}"
            ) from exc
        frame = protocol.open_body(self.key, self.nonce, protocol.TO_CLIENT, body, seq - 1)
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

    def call_table(self, op: str, table: pa.Table, **fields: Any) -> dict[str, Any]:
        return self.call(op, protocol.encode_table(table), **fields)


def _try_connect(ws: Workspace) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(ws.socket_path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    return sock


def daemon_lock_held(ws: Workspace) -> bool:
    """True when a live graphd holds its lock (the lock dies with the process, so kill -9 frees it)."""
    if not ws.lock_path.exists():
        return False
    fd = os.open(ws.lock_path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def clean_stale(ws: Workspace) -> list[str]:
    """Remove a socket and pid file left by a graphd that died (only when no graphd holds the lock)."""
    removed: list[str] = []
    if daemon_lock_held(ws):
        return removed
    for path in (ws.socket_path, ws.pid_path):
        if path.exists() or path.is_symlink():
            path.unlink()
            removed.append(str(path))
    return removed


@contextmanager
def _start_lock(ws: Workspace) -> Iterator[None]:
    fd = os.open(ws.start_lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # concurrent clients start graphd once
        yield
    finally:
        os.close(fd)


def start_graphd(ws: Workspace, idle_timeout: float | None = None) -> int:
    """Spawn graphd detached and wait until it says it is listening (through a pipe, not a sleep)."""
    read_fd, write_fd = os.pipe()
    cmd = [sys.executable, "-m", "lamina.graphd.server", "--root", str(ws.root), "--ready-fd", str(write_fd)]
    if idle_timeout is not None:
        cmd += ["--idle-timeout", str(idle_timeout)]
    with open(ws.log_path, "ab") as log_file:
        proc = subprocess.Popen(
            cmd,
            pass_fds=(write_fd,),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
            start_new_session=True,
            cwd=str(ws.root),
        )
    os.close(write_fd)
    deadline = time.monotonic() + GRAPHD_START_TIMEOUT_SECONDS
    got = b""
    with os.fdopen(read_fd, "rb") as ready:
        import select

        while b"\n" not in got:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([ready], [], [], remaining)[0]:
                proc.kill()
                raise LaminaError(
                    "LAMINA_GRAPHD_UNAVAILABLE", "graphd did not become ready in time", f"See {ws.log_path}."
                )
            chunk = ready.read1(64)
            if not chunk:
                break
            got += chunk
    if not got.startswith(b"ready"):
        status = proc.wait(timeout=10)
        tail = (
            ws.log_path.read_text(errors="replace").strip().splitlines()[-3:] if ws.log_path.exists() else []
        )
        if daemon_lock_held(ws):  # another client's graphd won the race: use it
            return -1
        raise LaminaError(
            "LAMINA_GRAPHD_UNAVAILABLE",
            f"graphd exited with status {status}: {' | '.join(tail)}",
            f"See {ws.log_path}.",
        )
    return proc.pid


def _try_client(ws: Workspace, key: bytes) -> GraphdClient | None:
    """A client on a daemon that greets us and answers a ping; None when nothing, or a daemon that is
    exiting (idle timeout, stop, storage failure), is listening."""
    sock = _try_connect(ws)
    if sock is None:
        return None
    try:
        client = GraphdClient(ws, key, sock)
        client.call("ping")
        return client
    except (ConnectionResetError, EOFError, BrokenPipeError, LaminaError):
        sock.close()
        return None


def _wait_for_exit(ws: Workspace, timeout: float = 30.0) -> None:
    """Block until a dying graphd has released its lock (the flock is released when it exits)."""
    fd = os.open(ws.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LaminaError(
                        "LAMINA_GRAPHD_UNAVAILABLE",
                        "graphd holds its lock but does not answer",
                        f"See {ws.log_path}; `lamina graphd stop` or kill the pid in {ws.pid_path}.",
                    ) from None
                time.sleep(0.05)
    finally:
        os.close(fd)


def connect(ws: Workspace, autostart: bool = True, idle_timeout: float | None = None) -> GraphdClient:
    ensure_dirs(ws)
    key = read_or_create_secret(ws)
    client = _try_client(ws, key)
    if client is None and autostart:
        with _start_lock(ws):
            client = _try_client(ws, key)
            if client is None:
                _wait_for_exit(ws)
                clean_stale(ws)
                start_graphd(ws, idle_timeout)
                client = _try_client(ws, key)
    if client is None:
        raise LaminaError(
            "LAMINA_GRAPHD_UNAVAILABLE",
            "graphd is not running",
            "Any `lamina` command that needs it starts it; see `lamina graphd status`.",
        )
    return client


def status(ws: Workspace) -> dict[str, Any] | None:
    """graphd's own report, or None when it is not running (never starts it)."""
    if not ws.socket_path.exists():
        return None
    try:
        with connect(ws, autostart=False) as client:
            return client.call("status")
    except LaminaError:
        return None


def stop(ws: Workspace, timeout: float = 30.0) -> bool:
    """Ask graphd to stop and wait until its lock is released. False when it was not running."""
    try:
        client = connect(ws, autostart=False)
    except LaminaError:
        clean_stale(ws)
        return False
    with client:
        try:
            client.call("stop")
        except LaminaError:
            pass
    _wait_for_exit(ws, timeout)
    return True
