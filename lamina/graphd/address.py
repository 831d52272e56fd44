"""Where a repository's graphd listens and where its frame key lives, from the common git dir alone.

Kept to the standard library and blake3: `lamina work prepare` reaches a running graphd through these
paths before it imports anything else (lamina/index/hosted_prepare.py); lamina/workspace.py builds its
Workspace on the same functions, so the layout is written once.
"""

from __future__ import annotations

import os

import blake3

from lamina.constants import DATA_DIR_NAME


def runtime_base() -> str:
    """The per-user directory holding each repository's run directory (short: socket paths are limited)."""
    return os.path.join(os.environ.get("XDG_RUNTIME_DIR") or "/tmp", f"lamina-{os.getuid()}")


def run_dir(common_dir: str) -> str:
    """graphd.sock, graphd.pid, graphd.lock and graphd.log of the repository with this common git dir."""
    return os.path.join(runtime_base(), blake3.blake3(common_dir.encode()).hexdigest()[:16])


SOCKET_NAME = "graphd.sock"  # in the run directory
SECRET_NAME = "secret"  # in the data directory, <common-dir>/lamina


def socket_path(common_dir: str) -> str:
    return os.path.join(run_dir(common_dir), SOCKET_NAME)


def secret_path(common_dir: str) -> str:
    return os.path.join(common_dir, DATA_DIR_NAME, SECRET_NAME)
