"""Product-graph TOML files -> a validated ProductGraph, or every problem at once.

Validation runs in phases over all files before anything is built, so a user sees every problem in
one run: (1) TOML syntax and the shape of each entry (known tables and keys, types, id syntax, closed
vocabularies), (2) duplicate ids across files (derived State ids included), (3) references and
transitions, (4) cycles in `includes`. A single problem fails the whole load; nothing partial escapes.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from lamina.errors import LaminaError
from lamina.graph.model import (
    DEFAULT_WORKFLOW_STATUS,
    ID_PATTERN,
    PROOF_KINDS,
    SEVERITIES,
    WORKFLOW_STATUSES,
    Actor,
    Entity,
    Invariant,
    Operation,
    Persona,
    ProductGraph,
    Proof,
    Risk,
    Scenario,
    Surface,
    Transition,
    Workflow,
    state_id,
)

_ID_RE = re.compile(ID_PATTERN)
# "<entity>: <from> -> <to>", whitespace around the separators is free.
_TRANSITION_RE = re.compile(r"^\s*(?P<entity>[^\s:]+)\s*:\s*(?P<from>[^\s:]+?)\s*->\s*(?P<to>[^\s:]+)\s*$")
OPERATIONS_TABLE = "workflow.operations"


@dataclass(frozen=True)
class GraphProblem:
    file: str
    table: str  # "" for a problem with the file as a whole (TOML syntax)
    id: str | None
    message: str

    def __str__(self) -> str:
        where = f"[{self.table}] " if self.table else ""
        who = f"{self.id}: " if self.id else ""
        return f"{self.file}: {where}{who}{self.message}"


class GraphInvalid(LaminaError):
    """LAMINA_GRAPH_INVALID with the structured problems attached (the message lists them too)."""

    def __init__(self, message: str, problems: tuple[GraphProblem, ...]) -> None:
        super().__init__("LAMINA_GRAPH_INVALID", message)
        self.problems = problems

    def __reduce__(self) -> tuple[type[GraphInvalid], tuple[str, tuple[GraphProblem, ...]]]:
        return (GraphInvalid, (self.message, self.problems))  # its arguments, not LaminaError's


def graph_invalid(problems: Sequence[GraphProblem]) -> GraphInvalid:
    count = len(problems)
    header = f"the product graph has {count} problem{'s' if count != 1 else ''}:"
    return GraphInvalid("\n".join([header, *(str(p) for p in problems)]), tuple(problems))


# --- Table schemas -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Key:
    type: str  # "string" | "list" (of strings) | "tables" (array of tables)
    refs: tuple[str, ...] = ()  # kinds a reference may name; () = not a reference
    choices: tuple[str, ...] = ()  # closed vocabulary; () = free text
    is_id_list: bool = False  # list entries are names that must themselves match the id syntax


@dataclass(frozen=True)
class _Table:
    required: tuple[str, ...]
    keys: dict[str, _Key]


_S = _Key("string")
_L = _Key("list")

SCHEMAS: dict[str, _Table] = {
    "actor": _Table(("id", "name"), {"id": _S, "name": _S, "summary": _S}),
    "persona": _Table(
        ("id", "name", "actor"),
        {"id": _S, "name": _S, "actor": _Key("string", refs=("actor",)), "summary": _S, "terms": _L},
    ),
    "entity": _Table(
        ("id", "name"),
        {"id": _S, "name": _S, "summary": _S, "states": _Key("list", is_id_list=True), "terms": _L},
    ),
    "surface": _Table(("id", "name", "kind"), {"id": _S, "name": _S, "kind": _S, "summary": _S, "terms": _L}),
    "workflow": _Table(
        ("id", "title"),
        {
            "id": _S,
            "title": _S,
            "aliases": _L,
            "status": _Key("string", choices=WORKFLOW_STATUSES),
            "summary": _S,
            "personas": _Key("list", refs=("persona",)),
            "entities": _Key("list", refs=("entity",)),
            "surfaces": _Key("list", refs=("surface",)),
            "includes": _Key("list", refs=("workflow",)),
            "operations": _Key("tables"),
        },
    ),
    OPERATIONS_TABLE: _Table(
        ("id", "title", "actor", "authority"),
        {
            "id": _S,
            "title": _S,
            "actor": _Key("string", refs=("actor",)),
            "authority": _S,
            "surface": _Key("string", refs=("surface",)),
            "reads": _Key("list", refs=("entity",)),
            "writes": _Key("list", refs=("entity",)),
            "transitions": _L,
        },
    ),
    "invariant": _Table(
        ("id", "statement"),
        {
            "id": _S,
            "statement": _S,
            "applies_to": _Key("list", refs=("workflow", "entity")),
            "severity": _Key("string", choices=SEVERITIES),
        },
    ),
    "scenario": _Table(
        ("id", "title", "workflow"),
        {
            "id": _S,
            "title": _S,
            "workflow": _Key("string", refs=("workflow",)),
            "given": _S,
            "when": _S,
            "then": _S,
        },
    ),
    "risk": _Table(
        ("id", "statement"),
        {
            "id": _S,
            "statement": _S,
            "severity": _Key("string", choices=SEVERITIES),
            "workflows": _Key("list", refs=("workflow",)),
            "mitigated_by": _Key("list", refs=("invariant",)),
        },
    ),
    "proof": _Table(
        ("id", "requirement", "kind"),
        {
            "id": _S,
            "requirement": _S,
            "kind": _Key("string", choices=PROOF_KINDS),
            "proves": _Key("list", refs=("scenario", "invariant")),
        },
    ),
}
TOP_LEVEL_TABLES = tuple(t for t in SCHEMAS if t != OPERATIONS_TABLE)
_KIND_OF_TABLE = {**{t: t for t in TOP_LEVEL_TABLES}, OPERATIONS_TABLE: "operation"}


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return "a date/time"


def _article(kinds: Sequence[str]) -> str:
    return " or ".join(f"{'an' if k[0] in 'aeiou' else 'a'} {k}" for k in kinds)


# --- Phase 1: shape of each entry ------------------------------------------------------------------


@dataclass
class _Entry:
    file: str
    table: str
    position: int  # 1-based position among its table's entries in the file (or the workflow's operations)
    id: str | None
    values: dict[str, Any] = field(default_factory=dict)  # only keys that passed their type check
    rejected: set[str] = field(default_factory=set)  # keys present but invalid (checks that need them skip)
    operations: list[_Entry] = field(default_factory=list)


class _Problems:
    def __init__(self) -> None:
        self.items: list[GraphProblem] = []

    def add(self, file: str, table: str, entry_id: str | None, message: str) -> None:
        self.items.append(GraphProblem(file, table, entry_id, message))


def _check_entry(
    file: str, table: str, position: int, raw: dict[str, Any], problems: _Problems, owner: str | None = None
) -> _Entry:
    schema = SCHEMAS[table]
    raw_id = raw.get("id")
    entry = _Entry(file, table, position, raw_id if isinstance(raw_id, str) and raw_id else None)

    def report(message: str) -> None:
        if entry.id is None:
            place = f"entry {position}" + (f" of workflow {owner!r}" if owner else "")
            message = f"{message} ({place})"
        problems.add(file, table, entry.id, message)

    for key in schema.required:
        if key not in raw:
            report(f"missing required key {key!r}")
    for key, value in raw.items():
        spec = schema.keys.get(key)
        if spec is None:
            close = difflib.get_close_matches(key, list(schema.keys), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            report(f"unknown key {key!r}{hint}")
            continue
        if spec.type == "string":
            if not isinstance(value, str):
                report(f"{key!r} must be a string, not {_describe(value)}")
                continue
            if key in schema.required and not value.strip():
                report(f"{key!r} must not be empty")
                continue
            if key == "id" and not _ID_RE.match(value):
                report(f"id {value!r} does not match {ID_PATTERN}")
            if spec.choices and value not in spec.choices:
                report(f"{key!r} is {value!r}; expected one of: {', '.join(spec.choices)}")
                continue
            entry.values[key] = value
        elif spec.type == "list":
            if not isinstance(value, list):
                report(f"{key!r} must be an array of strings, not {_describe(value)}")
                continue
            bad = [v for v in value if not isinstance(v, str)]
            if bad:
                report(f"{key!r} must be an array of strings; it holds {_describe(bad[0])}")
                continue
            if any(not v.strip() for v in value):
                report(f"{key!r} must not hold empty strings")
                continue
            duplicates = sorted({v for v in value if value.count(v) > 1})
            if duplicates:
                report(f"{key!r} lists {', '.join(map(repr, duplicates))} more than once")
                continue
            if spec.is_id_list:
                wrong = [v for v in value if not _ID_RE.match(v)]
                if wrong:
                    report(f"{key!r} entry {wrong[0]!r} does not match {ID_PATTERN}")
                    continue
            entry.values[key] = value
        else:  # an array of tables: only workflow.operations
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                report(f"{key!r} must be an array of tables ([[{table}.{key}]])")
                continue
            for op_position, op_raw in enumerate(value, start=1):
                entry.operations.append(
                    _check_entry(file, OPERATIONS_TABLE, op_position, op_raw, problems, owner=entry.id)
                )
            entry.values[key] = True
    entry.rejected = {k for k in raw if k in schema.keys and k not in entry.values}
    return entry


def _parse_files(files: Mapping[str, str], problems: _Problems) -> list[_Entry]:
    entries: list[_Entry] = []
    for file in sorted(files):
        try:
            data = tomllib.loads(files[file])
        except tomllib.TOMLDecodeError as exc:
            problems.add(file, "", None, f"TOML syntax error: {exc}")
            continue
        for table, value in data.items():
            if table not in TOP_LEVEL_TABLES:
                problems.add(
                    file, table, None, f"unknown table; expected one of: {', '.join(TOP_LEVEL_TABLES)}"
                )
                continue
            if table == "workflow" and isinstance(value, dict) and set(value) == {"operations"}:
                # `[[workflow.operations]]` with no `[[workflow]]` above it in the file
                problems.add(
                    file, OPERATIONS_TABLE, None,
                    "[[workflow.operations]] must follow the [[workflow]] it belongs to, in the same file",
                )  # fmt: skip
                continue
            if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
                problems.add(file, table, None, f"must be an array of tables ([[{table}]])")
                continue
            for position, raw in enumerate(value, start=1):
                entries.append(_check_entry(file, table, position, raw, problems))
    return entries


def _all_entries(entries: list[_Entry]) -> list[_Entry]:
    """Entries with each workflow's operations right after it (declaration order)."""
    out: list[_Entry] = []
    for entry in entries:
        out.append(entry)
        out.extend(entry.operations)
    return out


# --- Phases 2-4: ids, references, transitions, cycles ---------------------------------------------


@dataclass(frozen=True)
class _Declared:
    kind: str
    file: str
    table: str
    what: str  # how to name the declaration in a duplicate message


def _declare_ids(entries: list[_Entry], problems: _Problems) -> dict[str, _Declared]:
    declared: dict[str, _Declared] = {}

    def declare(node_id: str, decl: _Declared, entry: _Entry) -> None:
        first = declared.get(node_id)
        if first is not None:
            problems.add(
                entry.file,
                entry.table,
                entry.id,
                f"duplicate id {node_id!r} ({decl.what}); first declared as {first.what} in {first.file}",
            )
            return
        declared[node_id] = decl

    for entry in entries:
        if entry.id is None:
            continue
        kind = _KIND_OF_TABLE[entry.table]
        declare(entry.id, _Declared(kind, entry.file, entry.table, f"[{entry.table}]"), entry)
        for name in entry.values.get("states", ()):
            sid = state_id(entry.id, name)
            declare(
                sid,
                _Declared("state", entry.file, entry.table, f"state {name!r} of entity {entry.id!r}"),
                entry,
            )
    return declared


def _check_references(entries: list[_Entry], declared: dict[str, _Declared], problems: _Problems) -> None:
    # An entity whose `states` were rejected already has a problem; its transitions are not checked again.
    entity_states: dict[str, tuple[str, ...] | None] = {
        e.id: None if "states" in e.rejected else tuple(e.values.get("states", ()))
        for e in entries
        if e.table == "entity" and e.id
    }
    for entry in entries:
        schema = SCHEMAS[entry.table]
        for key, value in entry.values.items():
            spec = schema.keys[key]
            if not spec.refs:
                continue
            for target in [value] if isinstance(value, str) else value:
                decl = declared.get(target)
                if decl is None:
                    same_kind = [i for i, d in declared.items() if d.kind in spec.refs]
                    close = difflib.get_close_matches(target, same_kind, n=1, cutoff=0.8)
                    problems.add(
                        entry.file,
                        entry.table,
                        entry.id,
                        f"{key!r} refers to {target!r}, which is not declared"
                        + (f" (did you mean {close[0]!r}?)" if close else ""),
                    )
                elif decl.kind not in spec.refs:
                    problems.add(
                        entry.file,
                        entry.table,
                        entry.id,
                        f"{key!r} refers to {target!r}, which is {_article([decl.kind])}, "
                        f"not {_article(spec.refs)}",
                    )
        for text in entry.values.get("transitions", ()) if entry.table == OPERATIONS_TABLE else ():
            message = _check_transition(text, declared, entity_states)
            if message:
                problems.add(entry.file, entry.table, entry.id, message)


def _check_transition(
    text: str, declared: dict[str, _Declared], entity_states: dict[str, tuple[str, ...] | None]
) -> str | None:
    match = _TRANSITION_RE.match(text)
    if match is None:
        return f"transition {text!r} is not of the form '<entity>: <from> -> <to>'"
    entity, source, target = match["entity"], match["from"], match["to"]
    decl = declared.get(entity)
    if decl is None:
        return f"transition {text!r} names entity {entity!r}, which is not declared"
    if decl.kind != "entity":
        return f"transition {text!r} names {entity!r}, which is {_article([decl.kind])}, not an entity"
    states = entity_states.get(entity, ())
    if states is None:
        return None
    missing = [s for s in (source, target) if s not in states]
    if missing:
        declared_states = ", ".join(states) if states else "none"
        return (
            f"transition {text!r}: state {missing[0]!r} is not declared on entity {entity!r} "
            f"(its states: {declared_states})"
        )
    return None


def _check_aliases(entries: list[_Entry], problems: _Problems) -> None:
    """An alias names one workflow: the same alias (in any case) on two workflows, or a workflow's alias that
    is another's id, made an exact match select both, "certain" (a new user's graph, session 36)."""
    owner: dict[str, str] = {e.id.casefold(): e.id for e in entries if e.table == "workflow" and e.id}
    for entry in entries:
        if entry.table != "workflow" or not entry.id:
            continue
        for alias in entry.values.get("aliases", ()):
            first = owner.setdefault(alias.casefold(), entry.id)
            if first != entry.id:
                problems.add(
                    entry.file, entry.table, entry.id,
                    f"alias {alias!r} already names workflow {first!r}: an alias must name one workflow",
                )  # fmt: skip


def _check_include_cycles(entries: list[_Entry], problems: _Problems) -> None:
    workflows = {e.id: e for e in entries if e.table == "workflow" and e.id}
    children = {
        wid: [c for c in e.values.get("includes", ()) if c in workflows] for wid, e in workflows.items()
    }
    color: dict[str, int] = {}  # absent: unvisited, 1: on the current path, 2: done
    cycles: dict[tuple[str, ...], None] = {}  # canonical rotation -> None (ordered set)
    for start in workflows:
        if start in color:
            continue
        path: list[str] = [start]
        stack: list[Iterator[str]] = [iter(children[start])]
        color[start] = 1
        while stack:  # iterative DFS: include chains may be deeper than Python's recursion limit
            child = next(stack[-1], None)
            if child is None:
                color[path.pop()] = 2
                stack.pop()
            elif color.get(child) == 1:
                cycle = path[path.index(child) :]
                pivot = cycle.index(min(cycle))
                cycles[tuple(cycle[pivot:] + cycle[:pivot])] = None
            elif child not in color:
                color[child] = 1
                path.append(child)
                stack.append(iter(children[child]))
    for members in cycles:
        first = workflows[members[0]]
        problems.add(
            first.file,
            "workflow",
            first.id,
            f"'includes' forms a cycle: {' -> '.join([*members, members[0]])}",
        )


# --- Building the model ------------------------------------------------------------------------------


def _optional_text(values: dict[str, Any], key: str) -> str | None:
    """Missing and empty optional strings are the same fact: None."""
    value = values.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _tuple(values: dict[str, Any], key: str) -> tuple[str, ...]:
    return tuple(values.get(key, ()))


def _transition(text: str) -> Transition:
    match = _TRANSITION_RE.match(text)
    assert match is not None  # validated before building
    return Transition(match["entity"], match["from"], match["to"])


def _build(entries: list[_Entry]) -> ProductGraph:
    by_table: dict[str, list[Any]] = {t: [] for t in TOP_LEVEL_TABLES}
    for e in entries:
        v = e.values
        node: Any
        if e.table == "actor":
            node = Actor(v["id"], v["name"], _optional_text(v, "summary"))
        elif e.table == "persona":
            node = Persona(v["id"], v["name"], v["actor"], _optional_text(v, "summary"), _tuple(v, "terms"))
        elif e.table == "entity":
            node = Entity(
                v["id"], v["name"], _optional_text(v, "summary"), _tuple(v, "states"), _tuple(v, "terms")
            )
        elif e.table == "surface":
            node = Surface(v["id"], v["name"], v["kind"], _optional_text(v, "summary"), _tuple(v, "terms"))
        elif e.table == "workflow":
            operations = tuple(
                Operation(
                    id=o.values["id"],
                    title=o.values["title"],
                    actor=o.values["actor"],
                    authority=o.values["authority"],
                    surface=o.values.get("surface"),
                    reads=_tuple(o.values, "reads"),
                    writes=_tuple(o.values, "writes"),
                    transitions=tuple(_transition(t) for t in o.values.get("transitions", ())),
                )
                for o in e.operations
            )
            node = Workflow(
                id=v["id"],
                title=v["title"],
                status=v.get("status", DEFAULT_WORKFLOW_STATUS),
                aliases=_tuple(v, "aliases"),
                summary=_optional_text(v, "summary"),
                personas=_tuple(v, "personas"),
                entities=_tuple(v, "entities"),
                surfaces=_tuple(v, "surfaces"),
                includes=_tuple(v, "includes"),
                operations=operations,
            )
        elif e.table == "invariant":
            node = Invariant(v["id"], v["statement"], _tuple(v, "applies_to"), v.get("severity"))
        elif e.table == "scenario":
            node = Scenario(
                v["id"],
                v["title"],
                v["workflow"],
                _optional_text(v, "given"),
                _optional_text(v, "when"),
                _optional_text(v, "then"),
            )
        elif e.table == "risk":
            node = Risk(
                v["id"], v["statement"], v.get("severity"), _tuple(v, "workflows"), _tuple(v, "mitigated_by")
            )
        elif e.table == "proof":
            node = Proof(v["id"], v["requirement"], v["kind"], _tuple(v, "proves"))
        else:
            continue
        by_table[e.table].append(node)
    return ProductGraph(
        actors=tuple(by_table["actor"]),
        personas=tuple(by_table["persona"]),
        entities=tuple(by_table["entity"]),
        surfaces=tuple(by_table["surface"]),
        workflows=tuple(by_table["workflow"]),
        invariants=tuple(by_table["invariant"]),
        scenarios=tuple(by_table["scenario"]),
        risks=tuple(by_table["risk"]),
        proofs=tuple(by_table["proof"]),
    )


# --- Public interface --------------------------------------------------------------------------------


def load_graph_files(files: Mapping[str, str]) -> ProductGraph:
    """Validate and build the graph from relpath -> TOML text. Pure; raises GraphInvalid listing every
    problem. Files are read in sorted path order, which fixes declaration order."""
    problems = _Problems()
    entries = _parse_files(files, problems)
    everything = _all_entries(entries)
    declared = _declare_ids(everything, problems)
    # A file that does not parse declares nothing: references into it would all be reported as undeclared,
    # before the one mistake that caused them (a new user's graph, session 36). Fix the syntax first.
    if not any(p.message.startswith("TOML syntax error") for p in problems.items):
        _check_references(everything, declared, problems)
        _check_include_cycles(entries, problems)
        _check_aliases(entries, problems)
    if problems.items:
        # Group by file (stable, so phase order is kept within a file).
        raise graph_invalid(sorted(problems.items, key=lambda p: p.file))
    return _build(entries)


@dataclass(frozen=True)
class GlobExpansion:
    files: tuple[str, ...]  # repository-relative posix paths, sorted, no duplicates
    unmatched: tuple[str, ...]  # globs that matched no file, in the order given


def _check_glob(pattern: str) -> None:
    pure = PurePosixPath(pattern)
    if pure.is_absolute() or ".." in pure.parts or not pattern.strip():
        raise LaminaError(
            "LAMINA_CONFIG", f"graph.paths: {pattern!r} must be a relative glob inside the repository"
        )


def expand_graph_globs(repo_root: Path, globs: Sequence[str]) -> GlobExpansion:
    files: set[str] = set()
    unmatched: list[str] = []
    for pattern in globs:
        _check_glob(pattern)
        matched = {p.relative_to(repo_root).as_posix() for p in repo_root.glob(pattern) if p.is_file()}
        if not matched:
            unmatched.append(pattern)
        files |= matched
    return GlobExpansion(tuple(sorted(files)), tuple(unmatched))


def unmatched_globs(repo_root: Path, globs: Sequence[str]) -> tuple[str, ...]:
    """The globs that match no file; the caller shows them (zero files is an empty graph, not an error)."""
    return expand_graph_globs(repo_root, globs).unmatched


def read_graph_files(repo_root: Path, globs: Sequence[str]) -> dict[str, str]:
    """Expand the globs (sorted, deduplicated) and read each file as UTF-8."""
    texts: dict[str, str] = {}
    problems = _Problems()
    for rel in expand_graph_globs(repo_root, globs).files:
        try:
            texts[rel] = (repo_root / rel).read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            problems.add(rel, "", None, f"not valid UTF-8: {exc}")
        except OSError as exc:
            problems.add(rel, "", None, f"cannot be read: {exc.strerror or exc}")
    if problems.items:
        raise graph_invalid(problems.items)
    return texts


def load_graph(repo_root: Path, globs: Sequence[str]) -> ProductGraph:
    return load_graph_files(read_graph_files(repo_root, globs))
