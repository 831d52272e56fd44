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


def code_identity(package_dir: str | None = None) -> str:
    """Which Lamina a process runs: blake3 over every file of the `lamina` package (its path, size and
    modification time: one stat each, ~1 ms for ~100 files, nothing read; caches left out). An upgrade or an
    edit changes it. graphd reports its own in `ping`; a client running other code replaces that graphd
    (lamina/graphd/client.py connect), so packets are never made by the code an upgrade replaced."""
    root = package_dir or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digest = blake3.blake3()
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(folder, name)
            try:
                info = os.stat(path)
            except OSError:  # removed while we look: the next call sees the new tree
                continue
            digest.update(f"{os.path.relpath(path, root)}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


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
