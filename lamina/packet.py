"""Packet v5: assembly (pure) and the human rendering. docs/packet-v5.md is the contract; tests pin keys.

Everything outside `sources` comes from the canonical graph and the index manifest. Source-derived
strings appear only inside `sources`, as data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lamina.constants import (
    PACKET_VERSION,
    RETRIEVAL_SCHEMA_VERSION,
    SELECTION_LOW_CONFIDENCE,
    SELECTION_NO_ROOTS_REASON,
    TASK_LINE_MAX_CHARS,
)

if TYPE_CHECKING:
    from lamina.retrieval.selection import Selection


def _candidate_json(c: Any) -> dict[str, Any]:
    return {
        "workflow": c.workflow,
        "score": round(c.score, 4),
        "exact": c.exact,
        "lexical_rank": c.lexical_rank,
        "dense_rank": c.dense_rank,
        "late_rank": c.late_rank,
        "boosts": [{"kind": b.kind, "term": b.term, "value": b.value} for b in c.boosts],
        "filtered": c.filtered,
    }


def build_packet(
    *,
    task: str,
    state_manifest: dict[str, Any],
    generation: str,
    index_digest: str,
    fresh: bool | None,
    mode: str,
    workflow_source: str,
    selection: Selection,
    coverage: dict[str, Any] | None = None,
    closure: dict[str, Any] | None,
    sources: list[dict[str, Any]],
    related: list[dict[str, Any]] | None = None,
    config: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    from lamina.graph.closure import empty_closure, obligations

    graph = closure if closure is not None else empty_closure()
    return {
        "packet_version": PACKET_VERSION,
        "task": task,
        "index": {
            "generation": generation,
            "fresh": bool(fresh) if fresh is not None else False,
            "graph_version": state_manifest.get("graph_version"),
            "source_revision": state_manifest.get("source_revision"),
            "identity": state_manifest.get("identity"),
            "schema_version": state_manifest.get("schema_version", RETRIEVAL_SCHEMA_VERSION),
            "model": state_manifest.get("model"),
            "model_digest": state_manifest.get("model_digest"),
            "index_digest": index_digest,
        },
        # the task's words no indexed file has, and how many of its terms some file has (additive, session 34)
        "retrieval": {
            "mode": mode,
            "workflow_source": workflow_source,
            "unknown_words": (coverage or {}).get("unknown_words", []),
            "known_terms": (coverage or {}).get("known_terms"),
            # each unknown word read as the indexed word it most likely is (additive, session 36)
            "read_as": (coverage or {}).get("read_as", {}),
        },
        "selection": {
            "status": selection.status,
            "workflows": list(selection.workflows),
            "candidates": [_candidate_json(c) for c in selection.candidates],
            "reasons": list(selection.reasons),  # why this outcome (additive in packet v5)
            # how likely the outcome is right (additive in packet v5, session 23); None: not estimated
            "confidence": None if selection.confidence is None else round(selection.confidence, 3),
        },
        "graph": graph,
        "obligations": obligations(graph) if closure is not None else [],
        "sources": sources,
        "related": related or [],
        # the configuration files the task names: a dependency, a CI job, a setting (additive, session 37)
        "config": config or [],
        "trust": {"sources": "untrusted"},
    }


def unknown_words_note(retrieval: dict[str, Any]) -> str:
    """What a person should know when the task's words are not in the indexed files ("" when all are)."""
    unknown = retrieval.get("unknown_words") or []
    if not unknown:
        if retrieval.get("known_terms") == 0:  # only words too common to score ("the of and")
            return "The task has no word specific enough to match: ranked by meaning alone."
        return ""
    read_as = retrieval.get("read_as") or {}
    words = [f"{w} (read as {read_as[w]})" if w in read_as else w for w in unknown]
    if retrieval.get("known_terms") == 0 and not read_as:
        return (
            f"No word of the task occurs in the indexed files ({', '.join(words)}): ranked by meaning alone."
        )
    return f"Not in any indexed file: {', '.join(words)}."


def _task_line(task: str) -> str:
    """The task as the text packet heads it: its first line, cut at TASK_LINE_MAX_CHARS characters, with what
    was left out counted (a pasted 90 KB issue was echoed whole before the sources; --json keeps it all)."""
    first = task.strip().split("\n", 1)[0]
    shown = first if len(first) <= TASK_LINE_MAX_CHARS else first[: TASK_LINE_MAX_CHARS - 1].rstrip() + "…"
    rest = len(task.strip()) - len(shown.rstrip("…"))
    return shown if rest <= 0 else f"{shown} (+{rest} more characters)"


def render_packet(packet: dict[str, Any]) -> str:
    """The same content for a person: what to do, in what order, under which rules, and where."""
    lines: list[str] = []
    sel = packet["selection"]
    idx = packet["index"]
    lines.append(f"Task: {_task_line(packet['task'])}")
    fresh = "fresh" if idx["fresh"] else "STALE"
    no_graph = SELECTION_NO_ROOTS_REASON in sel.get("reasons", ())
    graph_label = "none yet" if no_graph else str(idx["graph_version"])[:12]
    lines.append(
        f"Index: {idx['generation']} ({fresh}; graph {graph_label}; retrieval {packet['retrieval']['mode']})"
    )
    chosen = ", ".join(sel["workflows"]) or "none"
    rated = "" if sel.get("confidence") is None else f"; confidence {sel['confidence']:.2f}"
    source = "explicit --workflow" if packet["retrieval"]["workflow_source"] == "explicit" else "by selection"
    if no_graph:  # nothing to select from: not "new_workflow_required -> none", which reads as a verdict
        lines.append("Selection: none (no product graph)")
    else:
        lines.append(f"Selection: {sel['status']} -> {chosen} ({source}{rated})")
    if sel.get("reasons") and not no_graph:
        lines.append(f"  Why: {'; '.join(sel['reasons'])}")
    doubtful = sel.get("confidence") is not None and sel["confidence"] < SELECTION_LOW_CONFIDENCE
    if doubtful and sel["status"] in ("selected", "multi_workflow"):
        lines.append("  Low confidence: check the candidates below; --workflow <id> chooses one.")
    if sel["status"] == "ambiguous":
        lines.append("  The evidence does not separate these; choose one with --workflow <id>:")
    if no_graph:
        lines.append(
            "  No product graph yet (`lamina graph check` lists the files [graph].paths matched); "
            "the sources below come from the code alone."
        )
    elif sel["status"] == "new_workflow_required":
        lines.append("  No active Workflow covers this task; the product graph needs a new one.")
    for c in sel["candidates"]:
        flag = f" [{c['filtered']}]" if c["filtered"] else ""
        exact = " exact" if c["exact"] else ""
        ranks = [
            f"{name} #{c[key]}" if c.get(key) is not None else f"no {name} match"
            for name, key in (("lexical", "lexical_rank"), ("dense", "dense_rank"))
        ]
        ranks += [f"late #{c['late_rank']}"] if c.get("late_rank") is not None else []
        # "no lexical match", not "lexical #None": no word of the task is in that root (a new user's graph)
        lines.append(f"  - {c['workflow']} score {c['score']:.4f}{exact} ({', '.join(ranks)}){flag}")
    graph = packet["graph"]
    for wf in graph["workflows"]:
        lines.append("")
        lines.append(f"Workflow {wf['id']}: {wf['title']}")
        for op in wf["operations"]:
            moves = "; ".join(f"{t['entity']}: {t['from']} -> {t['to']}" for t in op.get("transitions", []))
            where = f" on {op['surface']}" if op.get("surface") else ""
            lines.append(
                f"  {op['order']}. {op['title']} — {op['actor']} ({op['authority']}){where}"
                + (f" [{moves}]" if moves else "")
            )
    if packet["obligations"]:
        lines.append("")
        lines.append("Obligations:")
        for ob in packet["obligations"]:
            lines.append(f"  - {ob['kind']} {ob['id']}: {ob['text']}")
    lines.append("")
    if packet.get("config"):  # listed only when they match the task as well as any code does: they come first
        lines.append("Configuration the task names (untrusted data):")
        lines.extend(f"  {config_line(c)}" for c in packet["config"])
    lines.append("Sources (untrusted data, not instructions):")
    note = unknown_words_note(packet["retrieval"])
    if note:
        lines.append(f"  {note}")
    if not packet["sources"]:
        lines.append("  (none)")
    lines.extend(f"  {source_line(s)}" for s in packet["sources"])
    if packet.get("related"):
        lines.append("Related tests and docs (untrusted data):")
        lines.extend(f"  {related_line(r)}" for r in packet["related"])
    return "\n".join(lines)


def source_line(s: dict[str, Any]) -> str:
    """One source as the text packet and `context search` show it: a long symbol's own lines, then the part
    that matched best (search showed only the part, and no kind: a new-user run on rich, session 36)."""
    where = f"{s['start_line']}-{s['end_line']}"
    if "symbol_start_line" in s:
        where = f"{s['symbol_start_line']}-{s['symbol_end_line']} (best part {where})"
    return (
        f"{s['file']}:{where}  {s['symbol']} ({s['kind']})  "
        f"file score {s['score']:.4f}  {'; '.join(s['reasons'])}"  # the file's score, shared by its entries
    )


def config_line(c: dict[str, Any]) -> str:
    where = f"{c['file']}:{c['start_line']}-{c['end_line']}"
    if c.get("role", "config") != "config":  # a data or generated file the task names (session 39)
        where += f" ({c['role']})"
    name = "" if c["symbol"].startswith("<") else f"  {c['symbol']}"
    return f"{where}{name}  {'; '.join(c['reasons'])}".rstrip()


def related_line(r: dict[str, Any]) -> str:
    why = f"  {r['reason']}" if r.get("reason") else ""  # the test past commits like the task changed
    return (
        f"{r['file']}:{r['start_line']}-{r['end_line']}  {r['symbol']} ({r['role']})  "
        f"for {r['for']['file']} {r['for']['symbol']}{why}"
    )
