"""Talking to graphd: authenticated request/response, and starting graphd when it is not running
(the way a Bazel client starts its server)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lamina.constants import GRAPHD_START_TIMEOUT_SECONDS
from lamina.errors import LaminaError
from lamina.graphd import address
from lamina.graphd.protocol import GraphdClient
from lamina.workspace import Workspace, ensure_dirs, read_or_create_secret

__all__ = ["GraphdClient", "connect", "status", "stop", "survey"]


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
    return lock_held(ws.lock_path)


def lock_held(lock_path: Path) -> bool:
    try:
        fd = os.open(lock_path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@dataclass(frozen=True)
class OtherGraphd:
    """A live graphd at this repository's path that does not serve this repository instance: one of an
    earlier clone deleted since (it exits by itself once it notices), or one of an older Lamina whose run
    directory was per path (`layout` "path"), which may hold this instance's databases open."""

    run_dir: str
    layout: str  # "instance" or "path"
    pid: int | None  # None when its pid file is not (yet) there
    instance: str | None
    root: str | None
    rss_bytes: int | None

    @property
    def describe(self) -> str:
        what = (
            "serves a repository that no longer exists (an earlier clone at this path)"
            if self.layout == "instance"
            else "was started by an older Lamina (per-path layout) and may hold this repository's databases"
        )
        memory = f", {self.rss_bytes // (1024 * 1024)} MiB resident" if self.rss_bytes else ""
        return (
            f"graphd pid {self.pid if self.pid is not None else '?'} {what}{memory}; run dir {self.run_dir}"
        )


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _is_graphd(pid: int) -> bool:
    """Whether pid runs graphd (guards a signal against a pid reused since the pid file was written)."""
    try:
        return b"lamina.graphd.server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def rss_bytes(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def other_graphds(ws: Workspace) -> list[OtherGraphd]:
    """Live graphds under this repository's path directory that are not this instance's (never starts
    or talks to any: it reads their lock, pid and info files, which need no frame key)."""
    found: list[OtherGraphd] = []
    legacy_lock = ws.path_dir / address.LOCK_NAME
    if lock_held(legacy_lock):
        pid = _read_pid(ws.path_dir / "graphd.pid")
        rss = rss_bytes(pid) if pid else None
        found.append(OtherGraphd(str(ws.path_dir), "path", pid, None, str(ws.root), rss))
    try:
        entries = sorted(os.scandir(ws.path_dir), key=lambda e: e.name)
    except FileNotFoundError:
        return found
    for entry in entries:
        if entry.name == ws.instance or not entry.is_dir(follow_symlinks=False):
            continue
        run = Path(entry.path)
        if not lock_held(run / address.LOCK_NAME):
            continue
        pid = _read_pid(run / "graphd.pid")
        try:
            info = json.loads((run / address.INFO_NAME).read_text())
        except (OSError, ValueError):
            info = {}
        found.append(
            OtherGraphd(
                str(run), "instance", pid, entry.name, info.get("root"), rss_bytes(pid) if pid else None
            )
        )
    return found


def remove_dead_instances(ws: Workspace) -> list[str]:
    """Remove the run directories of earlier instances at this path whose graphd is gone (each holds a
    log and an empty lock file; a clone made again and again would otherwise leave one each time)."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(ws.path_dir))
    except FileNotFoundError:
        return removed
    for entry in entries:
        if entry.name == ws.instance or not entry.is_dir(follow_symlinks=False):
            continue
        if not lock_held(Path(entry.path) / address.LOCK_NAME):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed


def replace_other_graphds(ws: Workspace, timeout: float = 30.0) -> list[OtherGraphd]:
    """Stop every other live graphd at this path (SIGTERM: it cancels its builds, closes its databases
    and exits), and say so on stderr. Waits only for one of the older per-path layout, which may hold
    this instance's databases; an earlier clone's graphd holds files nobody else opens."""
    others = other_graphds(ws)
    for other in others:
        if other.pid is not None and _is_graphd(other.pid):
            try:
                os.kill(other.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            sys.stderr.write(f"lamina: stopping {other.describe}\n")
    if any(other.layout == "path" for other in others):
        _wait_for_lock(ws.path_dir / address.LOCK_NAME, timeout, ws)
    remove_dead_instances(ws)
    return others


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


def start_graphd(
    ws: Workspace,
    idle_timeout: float | None = None,
    model_idle: float | None = None,
    dormant: float | None = None,
) -> int:
    """Spawn graphd detached and wait until it says it is listening (through a pipe, not a sleep)."""
    read_fd, write_fd = os.pipe()
    # -P: `-m` would put the working directory, the repository, first on sys.path, and a repository's own
    # `selectors.py` or `lamina/` would run inside graphd (an MCP integrator's run, session 36). A repository's
    # files are data; nothing in them may run.
    cmd = [sys.executable, "-P", "-m", "lamina.graphd.server", "--root", str(ws.root)]
    cmd += ["--ready-fd", str(write_fd)]
    cmd += ["--instance", ws.instance]
    if idle_timeout is not None:
        cmd += ["--idle-timeout", str(idle_timeout)]
    if model_idle is not None:
        cmd += ["--model-idle-seconds", str(model_idle)]
    if dormant is not None:
        cmd += ["--dormant-seconds", str(dormant)]
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


def _try_client(ws: Workspace, key: bytes) -> tuple[GraphdClient, dict[str, Any]] | None:
    """A client on a daemon that greets us and answers a ping, with the ping's reply; None when nothing, or
    a daemon that is exiting (idle timeout, stop, storage failure), is listening."""
    sock = _try_connect(ws)
    if sock is None:
        return None
    try:
        client = GraphdClient(key, sock)
        return client, client.call("ping")
    except (ConnectionResetError, EOFError, BrokenPipeError, LaminaError):
        sock.close()
        return None


def _stop_other_code(ws: Workspace, client: GraphdClient, ping: dict[str, Any]) -> None:
    """Stop a graphd that runs other Lamina code than this client (started before an upgrade or an edit:
    address.code_identity), and wait until it is gone, so the next one runs this code."""
    sys.stderr.write(
        f"lamina: replacing graphd (pid {ping.get('pid')}): it runs other Lamina code than this command "
        "(an upgrade or an edit since it started)\n"
    )
    with client:
        try:
            client.call("stop")
        except (LaminaError, OSError, EOFError):
            pass
    _wait_for_exit(ws)


def _wait_for_exit(ws: Workspace, timeout: float = 30.0) -> None:
    """Block until a dying graphd has released its lock (the flock is released when it exits)."""
    _wait_for_lock(ws.lock_path, timeout, ws)


def _wait_for_lock(lock_path: Path, timeout: float, ws: Workspace) -> None:
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
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
                        f"See {lock_path.parent / 'graphd.log'}; `lamina graphd stop` or kill the pid in "
                        f"{lock_path.parent / 'graphd.pid'}.",
                    ) from None
                time.sleep(0.05)
    finally:
        os.close(fd)


def connect(
    ws: Workspace,
    autostart: bool = True,
    idle_timeout: float | None = None,
    model_idle: float | None = None,
    dormant: float | None = None,
) -> GraphdClient:
    """A client on this repository instance's graphd, started when absent (after stopping the graphds
    of earlier instances at this path: replace_other_graphds) or when it runs other Lamina code than this
    process (address.code_identity: started before an upgrade or an edit). Without `autostart` (status,
    stop) any running graphd of this instance is the answer."""
    ensure_dirs(ws)
    key = read_or_create_secret(ws)
    found = _try_client(ws, key)
    if found is not None and not autostart:
        return found[0]
    code = address.code_identity() if autostart else ""  # ~1 ms: only where it may replace graphd
    if found is not None and found[1].get("code") == code:
        return found[0]
    if found is not None:
        found[0].close()
    client = None
    if autostart:
        with _start_lock(ws):  # one client replaces or starts graphd; the others then use it
            found = _try_client(ws, key)
            if found is not None and found[1].get("code") != code:
                _stop_other_code(ws, *found)
                found = None
            if found is None:
                replace_other_graphds(ws)
                _wait_for_exit(ws)
                clean_stale(ws)
                start_graphd(ws, idle_timeout, model_idle, dormant)
                found = _try_client(ws, key)
            client = found[0] if found is not None else None
    if client is None:
        raise LaminaError(
            "LAMINA_GRAPHD_UNAVAILABLE",
            "graphd is not running",
            "Any `lamina` command that needs it starts it; see `lamina graphd status`.",
        )
    return client


def status(ws: Workspace) -> dict[str, Any] | None:
    """graphd's own report, or None when no graphd of this instance answers (never starts it)."""
    if not ws.socket_path.exists():
        return None
    try:
        with connect(ws, autostart=False) as client:
            return client.call("status")
    except LaminaError:
        return None


def survey(ws: Workspace) -> dict[str, Any]:
    """Every live graphd this repository's path knows, for `lamina graphd status`: this instance's (its
    own report, or what its lock and pid file say when it does not answer) and any other's. `running` is
    true only when this instance's graphd is alive; a live graphd is never left out."""
    report: dict[str, Any] = {"running": False, "instance": ws.instance}
    info = status(ws)
    if info is not None:
        # same_code: whether graphd runs this command's Lamina code (connect replaces one that does not)
        report.update(
            info, running=True, answering=True, same_code=info.get("code") == address.code_identity()
        )
    elif daemon_lock_held(ws):
        pid = _read_pid(ws.pid_path)
        report.update(running=True, answering=False, pid=pid, log=str(ws.log_path))
    report["others"] = [{**asdict(other), "description": other.describe} for other in other_graphds(ws)]
    return report


def stop(ws: Workspace, timeout: float = 30.0) -> bool:
    """Ask graphd to stop and wait until its lock is released; stop the other instances' graphds at this
    path too. False when this instance's graphd was not running."""
    replace_other_graphds(ws, timeout)
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
