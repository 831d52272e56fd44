"""Imports point one way: no import cycle in lamina/ and rules/, and no module imports a higher layer.

The layers follow the data path (docs/architecture.md, "Layers"): core facts, plain parts (repository
files, graph model, tokenizer, protocol), the stages (chunks, embeddings, ranking, stores, packet), the
build (worker, rules, session, runner), graphd, and the commands with the dispatcher on top. Every
import counts, also one inside a function (lazy imports keep start-up fast, but they are dependencies
all the same). A module no entry names falls into the layer of "lamina" (the bottom), where importing
anything above fails: so a new module is placed here deliberately, not drifted into.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Bottom to top; a module may import its own layer or lower ones. Names are modules or packages (a
# package entry covers every module below it that no longer entry names).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("lamina", "lamina.constants", "lamina.errors"),
    (
        "lamina.config",
        "lamina.repo",
        "lamina.graph.model",
        "lamina.graph.load",
        "lamina.graph.version",
        "lamina.graph.documents",
        "lamina.graph.closure",
        "lamina.graph.queries",
        "lamina.graph",
        "lamina.chunking",
        "lamina.retrieval.stopwords",
        "lamina.retrieval.tokenize",
        "lamina.index.progress",
        "lamina.index.membership",
        "lamina.graphd.protocol",
        "lamina.graphd.address",
        "lamina.runtime.paths",
        "lamina.command_line",
    ),
    (
        "lamina.runtime",
        "lamina.retrieval",
        "lamina.graph.store",
        "lamina.index.cas",
        "lamina.index.freshness",
        "lamina.index.manifest",
        "lamina.workspace",
        "lamina.packet",
        "lamina.cache",
    ),
    (
        "lamina.graphd.client",
        "lamina.index",
        "lamina.cache.step",
        "rules",
    ),
    (
        "lamina.retrieval.service",
        "lamina.graphd",
    ),
    (
        "lamina.commands",
        "lamina.runtime.commands",
        "lamina.cache.commands",
        "lamina.mcp_server",
    ),
    ("lamina.cli",),
)

# Imports the AST cannot see: lamina.index.build loads Lamina's `rules` package by file path, so that a
# repository's own `rules` module (first on doit's sys.path) cannot shadow it.
EXTRA_EDGES: Mapping[str, tuple[str, ...]] = {"lamina.index.build": ("rules",)}


def module_files(root: Path, packages: Iterable[str] = ("lamina", "rules")) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _is_empty_package(path: Path) -> bool:
    """An __init__ that imports nothing: importing the package costs and implies nothing."""
    if path.name != "__init__.py":
        return False
    tree = ast.parse(path.read_text())
    return not any(isinstance(n, ast.Import | ast.ImportFrom) for n in ast.walk(tree))


def import_graph(root: Path, extra: Mapping[str, Iterable[str]] = EXTRA_EDGES) -> dict[str, set[str]]:
    """module -> the project modules it imports (anywhere in the file, also inside functions)."""
    files = module_files(root)

    def known(name: str | None) -> str | None:
        while name:
            if name in files:
                return name
            name = name.rpartition(".")[0]
        return None

    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                deps.update(filter(None, (known(alias.name) for alias in node.names)))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                for alias in node.names:
                    target = known(f"{base}.{alias.name}")
                    if target is not None:
                        deps.add(target)
                    elif (plain := known(base)) is not None:
                        deps.add(plain)
        deps.discard(module)
        deps = {d for d in deps if not _is_empty_package(files[d])}
        graph[module] = deps | set(extra.get(module, ()))
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def layer_of(module: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> int | None:
    """The layer of the most specific entry naming the module or a package above it."""
    best: tuple[int, int] | None = None  # (length of the entry, layer)
    for number, entries in enumerate(layers):
        for entry in entries:
            if (module == entry or module.startswith(entry + ".")) and (best is None or len(entry) > best[0]):
                best = (len(entry), number)
    return None if best is None else best[1]


def layering_problems(
    graph: Mapping[str, set[str]], layers: tuple[tuple[str, ...], ...] = LAYERS
) -> list[str]:
    problems = [f"import cycle: {' <-> '.join(c)}" for c in cycles(graph)]
    for module in sorted(graph):
        own = layer_of(module, layers)
        if own is None:
            problems.append(f"{module} is in no layer: place it in tests/test_layering.py LAYERS")
            continue
        for dep in sorted(graph[module]):
            theirs = layer_of(dep, layers)
            if theirs is not None and theirs > own:
                problems.append(f"upward import: {module} (layer {own}) imports {dep} (layer {theirs})")
    return problems


def test_lamina_and_rules_import_one_way() -> None:
    assert layering_problems(import_graph(ROOT)) == []


def _tree(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_check_fails_on_a_cycle_even_through_a_lazy_import(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "lamina/__init__.py": "",
            "lamina/a.py": "from lamina.b import f\n",
            "lamina/b.py": "def f():\n    from lamina import a\n",
            "rules/__init__.py": "",
        },
    )
    layers = (("lamina", "lamina.a", "lamina.b", "rules"),)
    problems = layering_problems(import_graph(root, extra={}), layers)
    assert problems == ["import cycle: lamina.a <-> lamina.b"]


def test_the_check_fails_on_an_upward_import_and_an_unplaced_module(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "lamina/__init__.py": "",
            "lamina/low.py": "import lamina.high\n",
            "lamina/high.py": "X = 1\n",
            "lamina/stray.py": "from . import low\n",
            "rules/__init__.py": "from lamina.low import *\n",
        },
    )
    layers = (("lamina", "lamina.low"), ("lamina.high", "rules"))
    problems = layering_problems(import_graph(root, extra={}), layers)
    assert "upward import: lamina.low (layer 0) imports lamina.high (layer 1)" in problems
    # "lamina.stray" falls under the "lamina" entry (layer 0): placed, and importing low is allowed.
    assert not [p for p in problems if "stray" in p]
    assert len(problems) == 1


def test_a_module_outside_every_layer_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"lamina/__init__.py": "", "lamina/x.py": "", "rules/__init__.py": ""})
    problems = layering_problems(import_graph(root, extra={}), (("lamina.x",),))
    assert problems == [
        "lamina is in no layer: place it in tests/test_layering.py LAYERS",
        "rules is in no layer: place it in tests/test_layering.py LAYERS",
    ]
