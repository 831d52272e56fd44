"""Test helpers shared by several test modules: real git repositories and synthetic generations."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pyarrow as pa

from lamina.index.membership import embedding_key, membership_digest, text_digest, version_id

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_GRAPH = ROOT / "tests" / "data" / "checkout.toml"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def make_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.test")
    git(path, "config", "user.name", "Test")
    for rel, text in (files or {}).items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "--allow-empty", "-m", "initial")
    return path


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    """Write `files` (relative path -> text), commit them with `message`; the new commit's hash."""
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, dirs_exist_ok=True)
    return dst


def synthetic_versions(
    n: int, dim: int = 8, seed: int = 0, prefix: str = "f", version_every: int = 0
) -> pa.Table:
    """n chunk versions with texts and unit vectors, as the worker uploads them; every `version_every`-th
    text also states a version (`__version__ = "1.<i>.0"`, release.states_version)."""
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    texts = [f"def {prefix}_{i}(x):\n    return x + {i}\n" for i in range(n)]
    if version_every:
        texts = [
            t + f'__version__ = "1.{i}.0"\n' if i % version_every == 0 else t for i, t in enumerate(texts)
        ]
    digests = [text_digest(t) for t in texts]
    rows = {
        "id": [version_id("chunk", f"{prefix}{i % 50}.py", f"{prefix}_{i}", "function", i, i + 1, 0, d)
               for i, d in enumerate(digests)],
        "kind": ["chunk"] * n, "path": [f"{prefix}{i % 50}.py" for i in range(n)],
        "symbol": [f"{prefix}_{i}" for i in range(n)], "symbol_kind": ["function"] * n,
        "language": ["python"] * n, "start_line": list(range(n)), "end_line": [i + 1 for i in range(n)],
        "part": [0] * n, "text_digest": digests, "meta": [""] * n,
        "emb_key": [embedding_key("model", d) for d in digests], "text": texts,
        "vector": pa.array([v.astype("<f4").tobytes() for v in vecs], type=pa.binary()),
    }  # fmt: skip
    return pa.table(rows)


def upload_generation(client, identity: str, table: pa.Table, graph_version: str, batch: int = 1000) -> str:
    ids = table.column("id").to_pylist()
    count, digest = membership_digest(ids)
    gen = client.call(
        "gen.begin",
        identity=identity,
        manifest={"graph_version": graph_version, "model_digest": "model"},
        expected_count=count,
        expected_digest=digest,
    )["generation"]
    client.call_table("gen.members", pa.table({"id": ids}), generation=gen)
    for i in range(0, table.num_rows, batch):
        client.call_table("index.put", table.slice(i, batch))
    client.call("gen.commit", generation=gen)
    return gen
