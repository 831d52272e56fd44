"""Where runtime assets live: file names inside an asset and the private, versioned install tree.

    $LAMINA_HOME/runtime/v<format>/<model-slug>-<digest12>/   one installed asset (0700)
    $LAMINA_HOME/runtime/v<format>/current                    pointer to the active one (os.replace)

LAMINA_HOME defaults to ${XDG_DATA_HOME:-~/.local/share}/lamina.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from lamina import constants

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
MANIFEST_FILE = "manifest.toml"
# Every asset holds exactly these files; anything else in a tar is refused.
ASSET_FILES = (MODEL_FILE, TOKENIZER_FILE, MANIFEST_FILE)

DEV_ASSET_NAME = "lamina-dev-asset.tar"
RELEASE_ASSET_NAME = "lamina-release-asset.tar"
DEV_FP32_MODEL_NAME = "lamina-dev-fp32.onnx"  # kept next to the dev asset for bench/embed.py
CHECKSUM_SUFFIX = ".blake3"
CURRENT_POINTER = "current"

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def lamina_home() -> Path:
    """LAMINA_HOME, else ${XDG_DATA_HOME:-~/.local/share}/lamina."""
    explicit = os.environ.get("LAMINA_HOME")
    if explicit:
        return Path(explicit).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home).expanduser() / "lamina"


def runtime_root(home: Path | None = None) -> Path:
    """The versioned runtime tree; a new asset format gets a fresh tree rather than a migration."""
    return (home or lamina_home()) / "runtime" / f"v{constants.RUNTIME_FORMAT_VERSION}"


def current_pointer(home: Path | None = None) -> Path:
    return runtime_root(home) / CURRENT_POINTER


def model_slug(model_id: str) -> str:
    """A file-name-safe form of a model id: 'org/Model-v2' -> 'org--model-v2'."""
    return re.sub(r"[^a-z0-9._-]+", "-", model_id.lower().replace("/", "--")).strip("-") or "model"


def install_dir_name(model_id: str, manifest_digest: str) -> str:
    return f"{model_slug(model_id)}-{manifest_digest[:12]}"


def checksum_path(asset: Path) -> Path:
    return asset.with_name(asset.name + CHECKSUM_SUFFIX)


def make_private_dir(path: Path) -> None:
    """Create path (and parents) and force 0700 on it whatever the umask says."""
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    os.chmod(path, PRIVATE_DIR_MODE)
