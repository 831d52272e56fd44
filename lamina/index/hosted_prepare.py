"""`lamina work prepare` in one round trip to a running graphd: the command's fast path.

The full path (lamina/commands/work.py → lamina/index/build.py) parses lamina.toml, runs `git status`, computes
the quick key and then asks graphd to build, which computes all of it again from the same files to check
that it sees the working tree as the client does. In an edit loop that client work (~0.1 s of imports,
git and hashing) is a third of the command. What can make graphd's view differ from the client's is the
environment alone: LAMINA_HOME picks the model, LAMINA_STORE the store, GIT_* and PATH change what git
reports. So this path sends graphd only the worktree, the question and those variables; graphd decides
freshness, builds when needed and answers with the packet. When graphd runs with another environment, is
not running, or does not know the request, the full path runs instead (and starts graphd when needed).

It imports the standard library, blake3 and the frame protocol only.
"""

from __future__ import annotations

import os
import socket
import stat
import sys

from lamina.errors import LaminaError

TYPE_CHECKING = False  # not `from typing import …`: see the module docstring
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

ENVIRONMENT_NAMES = ("HOME", "PATH", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR")
ENVIRONMENT_PREFIXES = ("LAMINA_", "GIT_", "AWS_")  # AWS_: the remote cache's credentials
REQUEST = "prepare"  # graphd's name for this request (lamina/graphd/requests.py)


def offers_prepare(operations: object) -> bool:
    """Whether a graphd's ping lists this request (graphd's request table, lamina/graphd/requests.py)."""
    return isinstance(operations, list) and REQUEST in operations


def relevant_environment(environ: os._Environ[str] | dict[str, str]) -> dict[str, str]:
    """The variables that can change what a prepare reads: the model, the store, what git reports."""
    return {
        name: value
        for name, value in environ.items()
        if name in ENVIRONMENT_NAMES or name.startswith(ENVIRONMENT_PREFIXES)
    }


def plain_prepare(argv: list[str]) -> dict[str, Any] | None:
    """The question of `[-C DIR] work prepare TASK [--workflow ID] [--json] [--quiet]`; None for anything
    else (--check, --require-cached, help), which the quick check or the full path handles."""
    from lamina.fast_command import read_prepare

    question = read_prepare(argv)
    if question is None or question.pop("check"):
        return None
    return question


def _frame_key(common_dir: str) -> bytes | None:
    """The repository's frame key when it is there and private; None sends the full path, which reports
    a bad key properly (lamina/workspace.py)."""
    from lamina.graphd.address import secret_path

    try:
        fd = os.open(secret_path(common_dir), os.O_RDONLY)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if stat.S_IMODE(info.st_mode) & 0o077 or info.st_uid != os.getuid():
            return None
        return os.read(fd, 64)
    finally:
        os.close(fd)


def _connect(common_dir: str, key: bytes) -> socket.socket | None:
    """A connection to the graphd of this repository instance (named by its key: a graphd of an earlier
    clone at the same path listens elsewhere, and the full path replaces it)."""
    from lamina.graphd.address import instance_id, socket_path

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(socket_path(common_dir, instance_id(key)))
    except OSError:
        sock.close()
        return None
    return sock


def prepare_via_graphd(argv: list[str]) -> dict[str, Any] | None:
    """graphd's reply (`stats` of the build or None, `packet`, `json`) for a plain prepare, or None when the
    full path must answer. Errors graphd reports are raised as the LaminaError they are."""
    question = plain_prepare(argv)
    if question is None:
        return None
    quiet = question["quiet"]
    reply = ask_graphd_to_prepare(
        question["directory"],
        question["task"],
        question["workflow"],
        quiet=quiet,
        tty=not quiet and sys.stderr.isatty(),
        show=_show_on_stderr,
    )
    if reply is not None:
        reply["json"] = question["json"]
        reply["quiet"] = quiet
    return reply


def _show_on_stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def ask_graphd_to_prepare(
    directory: str,
    task: str,
    workflow: str | None,
    *,
    quiet: bool,
    tty: bool,
    show: Callable[[str], None],
) -> dict[str, Any] | None:
    """One `prepare` request to the running graphd of the repository at `directory` (relative to the
    working directory): its reply (`stats` of the build or None, `packet`), or None when the full path must
    answer (no graphd, another environment, an older graphd, LAMINA_BUILD_IN_PROCESS=1). Progress text
    goes to `show`. Errors graphd reports are raised as the LaminaError they are."""
    if os.environ.get("LAMINA_BUILD_IN_PROCESS") == "1":
        return None
    from lamina.repo.status import find_location

    start = os.path.join(os.getcwd(), directory)
    location = find_location(start) if os.path.isdir(start) else None  # else the full path reports it
    if location is None:
        return None
    root, common_dir = location
    key = _frame_key(common_dir)
    sock = _connect(common_dir, key) if key is not None else None
    if key is None or sock is None:
        return None
    from lamina.graphd.address import code_identity
    from lamina.graphd.protocol import GraphdClient

    try:  # a graphd that greets and answers a ping is up (not exiting after its idle timeout)
        client = GraphdClient(key, sock)
        ping = client.call("ping")
    except (LaminaError, OSError, EOFError):
        sock.close()
        return None
    # an older graphd, or one running other Lamina code (an upgrade or an edit since it started): the full
    # path replaces it (lamina/graphd/client.py connect)
    if not offers_prepare(ping.get("operations")) or ping.get("code") != code_identity():
        client.close()
        return None
    with client:  # graphd's errors are raised as the full path reports them (e.g. killed mid-build)
        reply = client.call(
            REQUEST,
            on_progress=show,
            worktree=root,
            environment=relevant_environment(os.environ),
            task=task,
            workflow=workflow,
            quiet=quiet,
            tty=tty,
        )
    if not reply.get("hosted"):
        return None
    return reply
