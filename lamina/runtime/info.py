"""What runtime is installed, cheaply: the no-op path asks this on every run, so it imports no numpy,
onnxruntime or tokenizers (lamina.runtime.embedder re-exports it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RuntimeInfo:
    """What is installed; cheap to get (reads only the pointer and manifest.toml)."""

    directory: Path
    model_id: str
    revision: str
    dimension: int
    max_tokens: int
    model_digest: str  # blake3 hex of manifest.toml bytes (the manifest covers all file digests)


def installed_runtime(home: Path | None = None) -> RuntimeInfo:
    """The active runtime, checked cheaply: pointer, manifest digest, format and pin (no large hashing)."""
    from lamina.runtime.install import read_installed_manifest

    installed = read_installed_manifest(home)
    return RuntimeInfo(
        directory=installed.directory,
        model_id=installed.manifest.model_id,
        revision=installed.manifest.revision,
        dimension=installed.manifest.dimension,
        max_tokens=installed.manifest.max_tokens,
        model_digest=installed.manifest_digest,
    )


__all__ = ["RuntimeInfo", "installed_runtime"]
