"""Talking to graphd: authenticated request/response, and starting graphd when it is not running
(the way a Bazel client starts its server)."""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lamina.constants import GRAPHD_START_TIMEOUT_SECONDS
from lamina.errors import LaminaError
from lamina.graphd.protocol import GraphdClient
from lamina.workspace import Workspace, ensure_dirs, read_or_create_secret

__all__ = ["GraphdClient", "connect", "status", "stop"]


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
        client = GraphdClient(key, sock)
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
