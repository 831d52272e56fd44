"""Install a runtime asset atomically, and verify what is installed.

Install: check the tar's .blake3 file (when present) → extract the three expected members into a
temporary sibling directory → verify the manifest (format, pin) and every digest → rename into
runtime/v<format>/<model-slug>-<digest12>/ → os.replace the `current` pointer. Any failure before the
pointer switch leaves the previous runtime exactly as it was.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

import tomli_w

from lamina.errors import LaminaError, integrity_error
from lamina.runtime.asset import (
    AssetManifest,
    Pin,
    blake3_hex,
    check_asset_checksum,
    check_file,
    check_pin,
    parse_manifest,
)
from lamina.runtime.info import RuntimeInfo, read_pointer
from lamina.runtime.paths import (
    ASSET_FILES,
    MANIFEST_FILE,
    MODEL_FILE,
    PRIVATE_FILE_MODE,
    TOKENIZER_FILE,
    current_pointer,
    install_dir_name,
    lamina_home,
    make_private_dir,
    runtime_root,
)

_COPY_CHUNK = 1 << 20
_STAGING_PREFIX = ".install-"
_RETIRED_PREFIX = ".retired-"


@dataclass(frozen=True)
class InstalledRuntime:
    directory: Path
    manifest: AssetManifest
    manifest_digest: str  # blake3 of manifest.toml bytes, as recorded by the pointer
    pin: Pin


@dataclass(frozen=True)
class InstallResult:
    installed: InstalledRuntime
    previous: Path | None  # the runtime the pointer named before, if any
    reused: bool  # the same asset was already installed and intact
    checksum_checked: bool  # the asset's .blake3 file was present and matched


# --- Reading what is installed --------------------------------------------------------------------
def _load_manifest(directory: Path, expected_digest: str | None) -> tuple[AssetManifest, str, Pin]:
    path = directory / MANIFEST_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise integrity_error(f"{path} is missing") from exc
    digest = blake3_hex(data)
    if expected_digest is not None and digest != expected_digest:
        raise integrity_error(f"{path} changed since it was installed (blake3 {digest[:16]}…)")
    manifest = parse_manifest(data, str(path))
    pin = check_pin(manifest, str(path))
    return manifest, digest, pin


def read_installed_manifest(home: Path | None = None) -> InstalledRuntime:
    """Cheap check: pointer, manifest digest, format and pin; large files are not hashed."""
    pointer = read_pointer(home)
    if not pointer.directory.is_dir():
        raise integrity_error(f"{pointer.directory} is missing (named by {current_pointer(home)})")
    manifest, digest, pin = _load_manifest(pointer.directory, pointer.manifest_digest)
    return InstalledRuntime(pointer.directory, manifest, digest, pin)


def installed_runtime(home: Path | None = None) -> RuntimeInfo:
    """The active runtime, checked cheaply: pointer, manifest digest, format and pin (no large hashing)."""
    installed = read_installed_manifest(home)
    return RuntimeInfo(
        directory=installed.directory,
        model_id=installed.manifest.model_id,
        revision=installed.manifest.revision,
        dimension=installed.manifest.dimension,
        max_tokens=installed.manifest.max_tokens,
        model_digest=installed.manifest_digest,
    )


def _verify_directory(directory: Path, expected_digest: str | None) -> InstalledRuntime:
    manifest, digest, pin = _load_manifest(directory, expected_digest)
    for entry in manifest.files:
        check_file(directory / entry.name, entry)
    unexpected = sorted(p.name for p in directory.iterdir() if p.name not in ASSET_FILES)
    if unexpected:
        raise integrity_error(f"{directory} holds unexpected files: {unexpected}")
    return InstalledRuntime(directory, manifest, digest, pin)


def verify_installed(home: Path | None = None) -> InstalledRuntime:
    """Full check: everything read_installed_manifest checks, plus every file's size and digest."""
    installed = read_installed_manifest(home)
    return _verify_directory(installed.directory, installed.manifest_digest)


# --- Installing -----------------------------------------------------------------------------------
def _extract_members(asset: Path, staging: Path) -> None:
    """Copy exactly the expected regular-file members; never trust member paths or types."""
    seen: set[str] = set()
    try:
        with tarfile.open(asset, mode="r:") as archive:
            for member in archive:
                if member.name not in ASSET_FILES or not member.isreg() or member.name in seen:
                    raise integrity_error(f"{asset} holds an unexpected member {member.name!r}")
                seen.add(member.name)
                source = archive.extractfile(member)
                if source is None:
                    raise integrity_error(f"{asset}: {member.name} cannot be read")
                target = staging / member.name
                descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
                with os.fdopen(descriptor, "wb") as sink:
                    shutil.copyfileobj(source, sink, _COPY_CHUNK)
                    sink.flush()
                    os.fsync(sink.fileno())
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise integrity_error(f"{asset} is not a readable runtime asset tar: {exc}") from exc
    missing = sorted(set(ASSET_FILES) - seen)
    if missing:
        raise integrity_error(f"{asset} lacks {', '.join(missing)}")


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _write_pointer(home: Path | None, directory: Path, manifest_digest: str) -> None:
    pointer = current_pointer(home)
    body = tomli_w.dumps({"directory": directory.name, "manifest_blake3": manifest_digest})
    descriptor, temporary = tempfile.mkstemp(dir=pointer.parent, prefix=f".{pointer.name}.")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(body)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, pointer)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)
    _fsync_directory(pointer.parent)


def _current_directory(home: Path | None) -> Path | None:
    try:
        return read_pointer(home).directory
    except LaminaError:
        return None


def _prune(root: Path, keep: set[Path]) -> None:
    """Remove installed runtimes other than the current and the previous one (and retired copies)."""
    for path in root.iterdir():
        # Staging directories may belong to an install running right now; leave them.
        if path.is_dir() and path not in keep and not path.name.startswith(_STAGING_PREFIX):
            shutil.rmtree(path, ignore_errors=True)


def _check_model_runs(directory: Path, manifest: AssetManifest) -> None:
    """Load the staged model once and compare its real output size with the manifest."""
    from lamina.runtime.encoder import OnnxEncoder, check_output_dimension

    encoder = OnnxEncoder.open(
        directory / MODEL_FILE, directory / TOKENIZER_FILE, max_tokens=manifest.max_tokens, threads=1
    )
    check_output_dimension(encoder, directory, manifest.dimension)


def install_asset(asset: Path, home: Path | None = None) -> InstallResult:
    if not asset.is_file():
        raise integrity_error(f"{asset} does not exist")
    checksum_checked = check_asset_checksum(asset)
    home_dir = home if home is not None else lamina_home()
    root = runtime_root(home_dir)
    for directory in (root.parent.parent, root.parent, root):
        make_private_dir(directory)
    previous = _current_directory(home_dir)
    staging = Path(tempfile.mkdtemp(dir=root, prefix=_STAGING_PREFIX))  # mkdtemp makes it 0700
    try:
        _extract_members(asset, staging)
        staged = _verify_directory(staging, expected_digest=None)
        _check_model_runs(staging, staged.manifest)
        target = root / install_dir_name(staged.manifest.model_id, staged.manifest_digest)
        reused = False
        if target.exists():
            try:
                _verify_directory(target, staged.manifest_digest)
                reused = True
            except LaminaError:
                # A damaged copy of the same asset: swap it out for the fresh one.
                os.rename(target, Path(tempfile.mkdtemp(dir=root, prefix=_RETIRED_PREFIX)) / "old")
        if not reused:
            os.rename(staging, target)
            _fsync_directory(root)
        _write_pointer(home_dir, target, staged.manifest_digest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _prune(root, {target} | ({previous} if previous else set()))
    installed = InstalledRuntime(target, staged.manifest, staged.manifest_digest, staged.pin)
    return InstallResult(installed, previous, reused, checksum_checked)


@dataclass(frozen=True)
class RuntimeStatus:
    """What `lamina runtime status` shows: what is installed (best effort), and whether it passes."""

    directory: Path | None
    manifest: AssetManifest | None
    manifest_digest: str | None
    pin: Pin | None  # the pin the installed runtime matches, if it passes the cheap checks
    problem: str | None  # the integrity message when it does not


def runtime_status(home: Path | None = None) -> RuntimeStatus:
    """Never raises for integrity problems: status describes them instead (verify is the gate)."""
    try:
        installed = read_installed_manifest(home)
        return RuntimeStatus(
            installed.directory, installed.manifest, installed.manifest_digest, installed.pin, None
        )
    except LaminaError as err:
        problem = err.message
    directory: Path | None = None
    manifest: AssetManifest | None = None
    digest: str | None = None
    try:  # show whatever can still be read, unchecked
        directory = read_pointer(home).directory
        data = (directory / MANIFEST_FILE).read_bytes()
        digest = blake3_hex(data)
        manifest = parse_manifest(data, str(directory / MANIFEST_FILE))
    except (LaminaError, OSError):
        pass
    return RuntimeStatus(directory, manifest, digest, None, problem)
