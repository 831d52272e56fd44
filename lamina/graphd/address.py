"""Where a repository's graphd listens and where its frame key lives.

A graphd belongs to one repository *instance*, not to a path: a repository deleted and cloned again at
the same path is another instance, with another data directory (<git-common-dir>/lamina) and so another
frame key. The key is created with the data directory (lamina/workspace.py) and names its instance: the
instance id is derived from it, so a graphd whose key differs from the repository's never shares its
address, and a client never meets a graphd that cannot verify its frames.

    ${XDG_RUNTIME_DIR:-/tmp}/lamina-<uid>/<path-hash>/             every instance ever seen at this path
    ${XDG_RUNTIME_DIR:-/tmp}/lamina-<uid>/<path-hash>/<instance>/  graphd.sock, .pid, .lock, .log, .json

Kept to the standard library and blake3: `lamina work prepare` reaches a running graphd through these
paths before it imports anything else (lamina/index/hosted_prepare.py); lamina/workspace.py builds its
Workspace on the same functions, so the layout is written once.
"""

from __future__ import annotations

import os

import blake3

from lamina.constants import DATA_DIR_NAME

SOCKET_NAME = "graphd.sock"  # in the run directory
SECRET_NAME = "secret"  # in the data directory, <common-dir>/lamina
LOCK_NAME = "graphd.lock"  # in the run directory (also where a graphd of the older, per-path layout locks)
INFO_NAME = "graphd.json"  # in the run directory: what a live graphd serves, readable without its key
INSTANCE_CONTEXT = "lamina 2026-12 graphd repository instance v1"  # blake3 key-derivation context
INSTANCE_HEX = 16  # 64 bits: tells apart the instances seen at one path, not a secret


def runtime_base() -> str:
    """The per-user directory holding each repository's run directories (short: socket paths are limited)."""
    return os.path.join(os.environ.get("XDG_RUNTIME_DIR") or "/tmp", f"lamina-{os.getuid()}")


def path_dir(common_dir: str) -> str:
    """The directory of every repository instance seen with this common git dir (one subdirectory each)."""
    return os.path.join(runtime_base(), blake3.blake3(common_dir.encode()).hexdigest()[:16])


def instance_id(key: bytes) -> str:
    """The instance a frame key belongs to (one-way: the id tells nothing about the key)."""
    return blake3.blake3(key, derive_key_context=INSTANCE_CONTEXT).hexdigest()[:INSTANCE_HEX]


def run_dir(common_dir: str, instance: str) -> str:
    """graphd.sock, graphd.pid, graphd.lock, graphd.log and graphd.json of one repository instance."""
    return os.path.join(path_dir(common_dir), instance)


def socket_path(common_dir: str, instance: str) -> str:
    return os.path.join(run_dir(common_dir, instance), SOCKET_NAME)


def secret_path(common_dir: str) -> str:
    return os.path.join(common_dir, DATA_DIR_NAME, SECRET_NAME)
