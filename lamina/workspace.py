"""Where Lamina keeps things for one repository (docs/on-disk-layout.md describes the same tree).

    <git-common-dir>/lamina/            shared by every worktree of the repository, never tracked
        secret                          32-byte key for graphd frames (0600)
        product.lbug, index.lbug        the two Ladybug databases, opened only by graphd
        store/cas.sqlite                content-addressed chunks and embeddings (CI-cacheable)
        builds/<identity>/              per branch/worktree: shard manifests, doit state, last build
    ${XDG_RUNTIME_DIR:-/tmp}/lamina-<uid>/<path-hash>/<instance>/   short private (0700) runtime directory
        graphd.sock, graphd.pid, graphd.lock, graphd.log, graphd.json   of one repository instance

The socket lives outside the repository because Unix socket paths are limited to ~108 bytes. The instance
is named by the frame key (lamina/graphd/address.py): a repository deleted and cloned again at the same
path makes a new key, so it gets its own graphd instead of meeting the old clone's.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from lamina.constants import BUILDS_DIR_NAME, DATA_DIR_NAME
from lamina.errors import LaminaError
from lamina.graphd import address
from lamina.repo.git import RepoLocation, locate

SECRET_BYTES = 32


@dataclass(frozen=True)
class Workspace:
    root: Path
    common_dir: Path
    data_dir: Path
    store_dir: Path
    path_dir: Path  # the run directories of every instance seen at this path
    instance: str  # this repository instance (lamina/graphd/address.py::instance_id of its frame key)
    run_dir: Path  # this instance's

    @property
    def product_db(self) -> Path:
        return self.data_dir / "product.lbug"

    @property
    def index_db(self) -> Path:
        return self.data_dir / "index.lbug"

    @property
    def secret_path(self) -> Path:
        return self.data_dir / address.SECRET_NAME

    @property
    def socket_path(self) -> Path:
        return self.run_dir / address.SOCKET_NAME

    @property
    def pid_path(self) -> Path:
        return self.run_dir / "graphd.pid"

    @property
    def lock_path(self) -> Path:
        return self.run_dir / address.LOCK_NAME

    @property
    def info_path(self) -> Path:
        return self.run_dir / address.INFO_NAME

    @property
    def start_lock_path(self) -> Path:
        return self.run_dir / "graphd.start.lock"

    @property
    def log_path(self) -> Path:
        return self.run_dir / "graphd.log"

    def build_dir(self, identity_key: str) -> Path:
        return self.data_dir / BUILDS_DIR_NAME / identity_key


def private_dir(path: Path) -> Path:
    """Create (or check) a directory only this user can enter."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = path.stat()
    if info.st_uid != os.getuid():
        raise LaminaError("LAMINA_GRAPHD_UNAVAILABLE", f"{path} belongs to another user; refusing to use it")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def runtime_base() -> Path:
    return Path(address.runtime_base())


def workspace_for(location: RepoLocation, store_override: str | None = None) -> Workspace:
    """The repository's layout; creates its data directory and frame key when they do not exist yet (the
    key names the repository instance, and so where its graphd listens)."""
    data_dir = location.common_dir / DATA_DIR_NAME
    store = os.environ.get("LAMINA_STORE") or store_override
    store_dir = Path(store).expanduser() if store else data_dir / "store"
    if not store_dir.is_absolute():
        store_dir = location.root / store_dir
    instance = address.instance_id(read_or_create_key(data_dir))
    common = str(location.common_dir)
    return Workspace(
        root=location.root,
        common_dir=location.common_dir,
        data_dir=data_dir,
        store_dir=store_dir,
        path_dir=Path(address.path_dir(common)),
        instance=instance,
        run_dir=Path(address.run_dir(common, instance)),
    )


def open_workspace(start: Path, store_override: str | None = None) -> Workspace:
    return workspace_for(locate(start), store_override)


def ensure_dirs(ws: Workspace) -> None:
    private_dir(ws.data_dir)
    ws.store_dir.mkdir(parents=True, exist_ok=True)
    private_dir(runtime_base())
    private_dir(ws.run_dir)


def read_or_create_secret(ws: Workspace) -> bytes:
    """The per-repository frame key: 32 random bytes in a 0600 file, created once. Raises
    LAMINA_GRAPHD_UNAVAILABLE when the repository was replaced since `ws` was made (another instance)."""
    key = read_or_create_key(ws.data_dir)
    if address.instance_id(key) != ws.instance:
        raise LaminaError(
            "LAMINA_GRAPHD_UNAVAILABLE",
            f"the repository's data directory {ws.data_dir} was replaced while this command ran",
            "Run the command again.",
        )
    return key


def read_or_create_key(data_dir: Path) -> bytes:
    """The frame key in data_dir: 32 random bytes in a 0600 file, created with the directory."""
    private_dir(data_dir)
    path = data_dir / address.SECRET_NAME
    if not path.exists():
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            import secrets  # here, not at the top: it costs ~8 ms on the no-op path

            os.write(fd, secrets.token_bytes(SECRET_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # first writer wins; a racing second one keeps the first key
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    info = path.stat()
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise LaminaError(
            "LAMINA_GRAPHD_AUTH", f"{path} is readable by others; refusing to use it", f"chmod 600 {path}"
        )
    key = path.read_bytes()
    if len(key) != SECRET_BYTES:
        raise LaminaError(
            "LAMINA_GRAPHD_AUTH",
            f"{path} does not hold a {SECRET_BYTES}-byte key",
            f"delete {path}; a new key is made on the next run",
        )
    return key


@dataclass(frozen=True)
class InstanceStamp:
    """What identifies the repository instance on disk: the data directory's and the key file's inodes.
    A deleted and re-created (cloned again, restored from a copy) data directory has other inodes."""

    data_dir: tuple[int, int]
    secret: tuple[int, int]


def instance_stamp(ws: Workspace) -> InstanceStamp:
    data, secret = os.stat(ws.data_dir), os.stat(ws.secret_path)
    return InstanceStamp((data.st_dev, data.st_ino), (secret.st_dev, secret.st_ino))


def instance_change(ws: Workspace, stamp: InstanceStamp) -> str | None:
    """Why the repository instance `stamp` was taken of is no longer at ws's path (None while it is): two
    stats, cheap enough for graphd to ask before every request."""
    try:
        now = instance_stamp(ws)
    except FileNotFoundError:
        return f"its data directory {ws.data_dir} is gone"
    except OSError as exc:
        return f"its data directory {ws.data_dir} cannot be read: {exc}"
    if now != stamp:
        return f"its data directory {ws.data_dir} was replaced (the repository was deleted or cloned again)"
    return None
