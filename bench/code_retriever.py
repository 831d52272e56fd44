"""A code retriever fine-tuned on commit history, measured inside Lamina's localization (issue 15, session 29).

Sessions 26 and 28 left one question open: all-MiniLM-L6-v2 reads commit messages against code poorly, and
fine-tuning it on history made the plain dense ranker better (session 26's pilot) — does Lamina's ranking gain
once the model is trained on more history and the file scorer can weigh its cosines? This bench answers it.

The model never trains on a repository it is measured on: its history comes from TRAINING_REPOSITORIES, public
repositories that are neither in bench/localization_repos.toml (tuning or held-out) nor reserved for the
independent check (RESERVED). So the tuning split's cosines are out of sample like the held-out split's, and
one model serves the scorer's refit and the held-out run.

    pairs   for each training repository (a clone under --repos): its newest non-merge commits that change
            1-5 code files (lamina.repo.roles.file_role) with a message of four words or more (the
            localization benchmark's rule), the message cleaned as the benchmark's query → the innermost
            chunks (lamina.chunking) holding its changed lines at the parent, up to four; negatives: code
            chunks of 400 random code files at HEAD. --out/<name>.json.
    train   InfoNCE: a step takes one repository (by its number of pairs), 16 of its messages, one positive
            each and 16 of its random chunks; scale 20, AdamW 2e-5, warm-up 20 steps, linear decay; release,
            version-bump, lint and format messages are dropped (NOISE). The runtime encoder's pooling (mean,
            L2), bench/selection_finetune.py's SentenceModel. --save-at keeps checkpoints.
    embed   a work folder for bench/localization_eval.py and bench/file_structure.py whose vectors come from
            another installed runtime (INT8, as the product embeds: chunks batched, each task alone): the
            dumps' chunk texts that had a vector and the cases' queries, re-embedded; everything else linked.
    pair    two predictions files joined per commit: one ranker against another, paired differences with 95%
            bootstrap intervals over all commits, the large repositories and each repository.

Run (session 29; 2 cores, beside nothing else):
  git clone /work/.mirror/<owner>+<name>/repo /tmp/s29/repos/<name>      # each of TRAINING_REPOSITORIES
  .venv/bin/python bench/code_retriever.py pairs --repos /tmp/s29/repos --out /tmp/s29/pairs     # ~8 min
  .venv/bin/python bench/code_retriever.py train --pairs /tmp/s29/pairs --out /tmp/s29/m_code   # 600 steps, 70 min
  .venv/bin/python bench/selection_finetune.py asset /tmp/s29/m_code /tmp/s29/code.tar
  LAMINA_HOME=/tmp/s29/lh .venv/bin/lamina runtime install /tmp/s29/code.tar
  .venv/bin/python bench/code_retriever.py embed --home /tmp/s29/lh --work /tmp/s29/w --only tokio aiohttp \
      jsoup typeorm lazygit dockercli                                     # the tuning dumps, 3 min
  LAMINA_HOME=/tmp/lh .venv/bin/python bench/file_structure.py --work /tmp/s29/w --predictions P learn …
  LAMINA_HOME=/tmp/lh .venv/bin/python bench/localization_eval.py --work /tmp/s29/w tune --predictions P
  … embed --work /tmp/s29/h --only cli sphinx gin axios maven nushell; tune --split held_out on it
  .venv/bin/python bench/code_retriever.py pair /tmp/s29/held_new.jsonl lamina /tmp/s29/held_base.jsonl lamina

Results (docs/evaluation.md, "Session 29"): 9,057 pairs (8,736 after NOISE) from 13 repositories; on the held-out repositories
the plain dense ranker gains a lot (file MRR 0.384 → 0.449 over 559 commits), Lamina nothing outside the noise
(large file MRR 0.538 → 0.544, +0.006 [−0.008, +0.021]; symbol R@10 0.517 → 0.526, +0.009 [−0.008,
+0.026]). Not kept: the product's model is unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bench.localization_eval as evaluation  # noqa: E402
from bench.localization import clean_query, git, parse_old_spans  # noqa: E402

# Public repositories whose history trains the model (fetched with the search tool's `fetch`; their code is
# never committed). Chosen for five languages and descriptive commit messages, before any result.
TRAINING_REPOSITORIES = (
    "BurntSushi/ripgrep", "sharkdp/bat",  # Rust
    "encode/httpx", "psf/black", "python-poetry/poetry",  # Python
    "junegunn/fzf", "charmbracelet/bubbletea",  # Go
    "google/gson", "apache/commons-lang",  # Java
    "expressjs/express", "prettier/prettier", "fastify/fastify", "typescript-eslint/typescript-eslint",  # JS/TS
)  # fmt: skip
# Reserved for an independent check: never trained on, tuned on or measured here.
RESERVED = (
    "pallets/click",
    "psf/requests",
    "pallets/flask",
    "spf13/cobra",
    "gohugoio/hugo",
    "buildbot/buildbot",
)
MAX_POSITIVES = 4
NEGATIVE_FILES = 400
NEGATIVES = 3000
SCANNED_COMMITS = 5000
NOISE = re.compile(
    r"^\s*(release|bump|v?\d+\.\d+|version|prepare (for )?release|changelog|chore\(release|chore\(deps"
    r"|update dependencies|format|lint|fix lint|run (black|prettier))",
    re.IGNORECASE,
)


def check_training_repositories() -> None:
    """A training repository is neither measured (a tuning or held-out entry of bench/localization_repos.toml; its
    training entries may be the same) nor reserved."""
    measured = {
        entry["url"].removeprefix("github.com/")
        for entry in evaluation.load_repos().values()
        if entry["split"] != "training"
    }
    clash = (set(TRAINING_REPOSITORIES) & measured) | (set(TRAINING_REPOSITORIES) & set(RESERVED))
    if clash:
        raise SystemExit(f"training repositories also measured or reserved: {sorted(clash)}")


def changed_chunks(clone: Path, parent: str, commit: str, files: list[str]) -> list[str]:
    """The innermost chunk of each changed span at the parent, distinct texts in diff order."""
    from lamina.chunking import chunk_file

    spans = parse_old_spans(git(clone, "diff", "-U0", "--no-renames", parent, commit, "--", *files))
    texts: list[str] = []
    for path in files:
        data = subprocess.run(
            ["git", "-C", str(clone), "show", f"{parent}:{path}"], capture_output=True
        ).stdout
        if not data:
            continue
        chunks = chunk_file(path, data)
        for span in spans.get(path, []):
            holding = [c for c in chunks if c.start_line <= span.start and span.end <= c.end_line]
            if holding:
                best = min(holding, key=lambda c: c.end_line - c.start_line)
                if best.text not in texts:
                    texts.append(best.text)
    return texts


class CodeFiles:
    """The files a training commit may change, for localization_eval.qualifies (in place of its Scope): those
    Lamina's roles call code (a training repository has no include/exclude entry of its own)."""

    @staticmethod
    def covers(path: str) -> bool:
        from lamina.repo.roles import file_role

        return file_role(path) == "code"


def repository_pairs(clone: Path, max_pairs: int) -> dict[str, Any]:
    from lamina.chunking import chunk_file
    from lamina.repo.roles import file_role

    pairs = []
    for commit in git(clone, "rev-list", "--no-merges", "--max-count", str(SCANNED_COMMITS), "HEAD").split():
        found = evaluation.qualifies(clone, commit, CodeFiles())  # type: ignore[arg-type]
        if found is None:
            continue
        parent, message, files = found
        texts = changed_chunks(clone, parent, commit, files)
        if texts:
            pairs.append(
                {"query": clean_query(message), "positives": texts[:MAX_POSITIVES], "commit": commit}
            )
        if len(pairs) >= max_pairs:
            break
    code_files = [p for p in git(clone, "ls-files").split("\n") if p and file_role(p) == "code"]
    random.Random(0).shuffle(code_files)
    negatives = []
    for path in code_files[:NEGATIVE_FILES]:
        try:
            data = (clone / path).read_bytes()
        except OSError:  # a submodule or a dangling link
            continue
        negatives += [c.text for c in chunk_file(path, data)]
    random.Random(1).shuffle(negatives)
    return {"pairs": pairs, "negatives": negatives[:NEGATIVES]}


def cmd_pairs(args: argparse.Namespace) -> None:
    check_training_repositories()
    args.out.mkdir(parents=True, exist_ok=True)
    for full in TRAINING_REPOSITORIES:
        name = full.split("/")[1]
        if args.only and name not in args.only:
            continue
        target = args.out / f"{name}.json"
        if target.exists():
            continue
        found = repository_pairs(args.repos / name, args.max_pairs)
        target.write_text(json.dumps(found))
        print(f"{name}: {len(found['pairs'])} pairs, {len(found['negatives'])} negatives", flush=True)


def cmd_train(args: argparse.Namespace) -> None:
    import torch

    from bench.selection_finetune import SentenceModel

    data = {f.stem: json.loads(f.read_text()) for f in sorted(args.pairs.glob("*.json"))}
    for found in data.values():
        found["pairs"] = [p for p in found["pairs"] if not NOISE.match(p["query"])]
    data = {name: found for name, found in data.items() if len(found["pairs"]) >= args.batch}
    names = list(data)
    sizes = [len(data[n]["pairs"]) for n in names]
    print(dict(zip(names, sizes, strict=True)), flush=True)
    rng = random.Random(0)
    torch.manual_seed(0)
    model = SentenceModel("base")
    model.model.train()
    optimizer = torch.optim.AdamW(model.model.parameters(), lr=args.lr, weight_decay=0.01)
    order = {n: rng.sample(range(len(data[n]["pairs"])), len(data[n]["pairs"])) for n in names}
    position = dict.fromkeys(names, 0)
    started = time.time()
    for step in range(args.steps):
        repo = rng.choices(names, sizes)[0]
        chosen = []
        for _ in range(args.batch):  # each repository's pairs in a shuffled order, reshuffled when used up
            if position[repo] >= len(order[repo]):
                rng.shuffle(order[repo])
                position[repo] = 0
            chosen.append(data[repo]["pairs"][order[repo][position[repo]]])
            position[repo] += 1
        queries = [p["query"] for p in chosen]
        negatives = data[repo]["negatives"]
        docs = [rng.choice(p["positives"]) for p in chosen] + rng.sample(
            negatives, min(args.negatives, len(negatives))
        )
        scores = args.scale * model.encode(queries) @ model.encode(docs).T
        loss = torch.nn.functional.cross_entropy(scores, torch.arange(len(queries)))
        for group in optimizer.param_groups:
            group["lr"] = args.lr * min(1.0, (step + 1) / 20) * (1 - step / args.steps)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.model.parameters(), 1.0)
        optimizer.step()
        if (step + 1) % 10 == 0:
            print(
                f"step {step + 1}/{args.steps} {repo} loss {loss.item():.3f} {time.time() - started:.0f}s",
                flush=True,
            )
        if step + 1 in args.save_at:
            model.model.save_pretrained(f"{args.out}_{step + 1}")
    model.model.save_pretrained(str(args.out))
    print(f"saved {args.out}")


def cmd_embed(args: argparse.Namespace) -> None:
    from lamina.runtime.embedder import load_embedder

    embedder = load_embedder(threads=2, home=args.home)
    dumps = args.work / "dumps"
    dumps.mkdir(parents=True, exist_ok=True)
    if not (args.work / "cases").exists():
        os.symlink(args.source / "cases", args.work / "cases")
    for name in args.only:
        if (dumps / f"{name}.queries.json").exists():
            continue
        rows = json.loads((args.source / "dumps" / f"{name}.json").read_text())
        old = np.load(args.source / "dumps" / f"{name}.npy")
        embedded = np.abs(old).sum(axis=1) > 0  # the chunks the product embeds (code), as dumped
        texts = [t for t, e in zip(rows["text"], embedded, strict=True) if e]
        distinct = list(dict.fromkeys(texts))
        vectors = np.vstack([embedder.embed(distinct[i : i + 256]) for i in range(0, len(distinct), 256)])
        by_text = dict(zip(distinct, vectors, strict=True))
        new = np.zeros_like(old)
        for row, text in zip(np.flatnonzero(embedded), texts, strict=True):
            new[row] = by_text[text]
        if not (dumps / f"{name}.json").exists():
            os.symlink(args.source / "dumps" / f"{name}.json", dumps / f"{name}.json")
        np.save(dumps / f"{name}.npy", new.astype(np.float32))
        cases = json.loads((args.work / "cases" / f"{name}.json").read_text())["cases"]
        queries = list(dict.fromkeys(c["query"] for c in cases))
        (dumps / f"{name}.queries.json").write_text(
            json.dumps({q: embedder.embed([q])[0].tolist() for q in queries})
        )
        print(f"{name}: {len(distinct)} chunks, {len(queries)} queries", flush=True)


def cmd_pair(args: argparse.Namespace) -> None:
    """One ranker of one predictions file against one of another, paired per commit: all, large, each
    repository (the files of `localization_eval.py tune --predictions` or `file_structure.py --predictions`)."""
    from bench.common import bootstrap_interval

    def load(path: Path, ranker: str) -> dict[tuple[str, str], dict[str, float]]:
        rows = (json.loads(line) for line in path.read_text().splitlines())
        return {(r["repo"], r["commit"]): r[ranker]["metrics"] for r in rows}

    new, old = load(args.new, args.new_ranker), load(args.old, args.old_ranker)
    keys = [k for k in new if k in old]
    repos = evaluation.load_repos()
    scopes = {"all": keys, "large": [k for k in keys if repos[k[0]].get("size") == "large"]}
    scopes.update({name: [k for k in keys if k[0] == name] for name in sorted({k[0] for k in keys})})
    for scope, chosen in scopes.items():
        cells = []
        for metric in ("R@1", "R@10", "MRR", "symR@10"):
            both = [k for k in chosen if new[k][metric] is not None and old[k][metric] is not None]
            diffs = [new[k][metric] - old[k][metric] for k in both]
            before = float(np.mean([old[k][metric] for k in both])) if both else float("nan")
            low, high = bootstrap_interval(diffs)
            mean = float(np.mean(diffs)) if diffs else float("nan")
            cells.append(f"{metric} {before:.3f}->{before + mean:.3f} {mean:+.3f} [{low:+.3f},{high:+.3f}]")
        print(f"{scope:<10} n={len(chosen):<4} " + " | ".join(cells))


def main_args(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pairs")
    p.add_argument("--repos", type=Path, required=True, help="a folder of clones named as the repositories")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--max-pairs", type=int, default=700)
    p.add_argument("--only", nargs="*", help="these training repositories only")
    t = sub.add_parser("train")
    t.add_argument("--pairs", type=Path, required=True)
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--steps", type=int, default=600)
    t.add_argument("--batch", type=int, default=16)
    t.add_argument("--negatives", type=int, default=16)
    t.add_argument("--lr", type=float, default=2e-5)
    t.add_argument("--scale", type=float, default=20.0)
    t.add_argument("--save-at", type=int, nargs="*", default=[300])
    e = sub.add_parser("embed")
    e.add_argument(
        "--home", type=Path, required=True, help="a LAMINA_HOME with the model's runtime installed"
    )
    e.add_argument("--work", type=Path, required=True)
    e.add_argument(
        "--source", type=Path, default=Path("/tmp/eval"), help="the work folder whose dumps to re-embed"
    )
    e.add_argument("--only", nargs="+", required=True)
    c = sub.add_parser("pair")
    c.add_argument("new", type=Path)
    c.add_argument("new_ranker", help="lamina, bm25, dense, rrf, main, base LORO, v0, …")
    c.add_argument("old", type=Path)
    c.add_argument("old_ranker")
    args = parser.parse_args(argv)
    {"pairs": cmd_pairs, "train": cmd_train, "embed": cmd_embed, "pair": cmd_pair}[args.command](args)


if __name__ == "__main__":
    main_args()
