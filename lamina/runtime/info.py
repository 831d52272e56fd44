"""What runtime is installed, cheaply: the no-op path asks this on every run, so it imports no numpy,
onnxruntime or tokenizers (lamina.runtime.embedder re-exports it)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from lamina.errors import integrity_error
from lamina.runtime.paths import current_pointer, runtime_root


@dataclass(frozen=True)
class Pointer:
    """The `current` file: which installed runtime is active, and the blake3 of its manifest."""

    directory: Path
    manifest_digest: str


def read_pointer(home: Path | None = None) -> Pointer:
    pointer = current_pointer(home)
    try:
        document = tomllib.loads(pointer.read_text(encoding="utf-8"))
        name, digest = str(document["directory"]), str(document["manifest_blake3"])
    except FileNotFoundError as exc:
        raise integrity_error(f"no runtime is installed ({pointer} is missing)") from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError) as exc:
        raise integrity_error(f"{pointer} is unreadable: {exc}") from exc
    if "/" in name or name.startswith("."):
        raise integrity_error(f"{pointer} names an invalid directory {name!r}")
    return Pointer(runtime_root(home) / name, digest)


def installed_model_digest(home: Path | None = None) -> str:
    """The model digest the index is keyed by, from the pointer alone (the no-op path's only runtime read).
    Every load still checks the manifest against it, so a tampered runtime cannot hide behind it."""
    return read_pointer(home).manifest_digest


@dataclass(frozen=True)
class RuntimeInfo:
    """What is installed; cheap to get (reads only the pointer and manifest.toml)."""

    directory: Path
    model_id: str
    revision: str
    dimension: int
    max_tokens: int
    model_digest: str  # blake3 hex of manifest.toml bytes (the manifest covers all file digests)


__all__ = ["Pointer", "RuntimeInfo", "installed_model_digest", "read_pointer"]
