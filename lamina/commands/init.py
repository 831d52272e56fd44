"""`lamina init`: write lamina.toml and dodo.py into the repository."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lamina.command_line import add_json_flag, command_group, emit
from lamina.errors import LaminaError

DODO_TEMPLATE = '''"""doit entry point for Lamina's index (written by `lamina init`): `doit list`, `doit info generation`."""

from lamina.index.build import dodo_namespace

globals().update(dodo_namespace(__file__))
'''


CONFIG_TEMPLATE = """# Lamina configuration: see docs/configuration.md in Lamina's documentation
[graph]
paths = ["product/**/*.toml"]   # the canonical product graph (globs relative to the repository root)

[index]
include = ["**/*"]              # files to index (gitignore-like globs); .gitignore'd files never are
exclude = []                    # on top of the built-in vendored/generated excludes
max_file_bytes = 1000000        # larger files are skipped and counted

[runtime]
threads = 2                     # onnxruntime intra-op threads
"""


def cmd_init(args: argparse.Namespace) -> int:
    from lamina.config import CONFIG_FILE, DODO_FILE, load_config
    from lamina.graph.load import expand_graph_globs
    from lamina.repo.git import locate

    root = locate(Path.cwd()).root
    written = []
    for name, content in ((CONFIG_FILE, CONFIG_TEMPLATE), (DODO_FILE, DODO_TEMPLATE)):
        path = root / name
        if path.exists() and not args.force:
            continue
        path.write_text(content)
        written.append(name)
    human = f"initialised {root}: wrote {', '.join(written) or 'nothing (already present; --force rewrites)'}"
    payload: dict[str, Any] = {"root": str(root), "written": written}
    try:
        globs = load_config(root).graph.paths
        payload["graph_files"] = sorted(expand_graph_globs(root, globs).files)
    except LaminaError as err:  # a lamina.toml kept from before, with problems: init still did its part
        payload["config_error"] = {"code": err.code, "message": err.message}
        human += f"\nthe existing lamina.toml has problems ({err.message}): fix it, or `lamina init --force` rewrites it"
    else:
        if not payload["graph_files"]:
            from lamina.commands.graph import graph_files_not_checked_out, no_graph_note

            hidden = graph_files_not_checked_out(root, tuple(globs))
            if hidden:
                human += "\nno product graph yet: " + no_graph_note(tuple(globs), hidden)
            else:
                human += (
                    f"\nno product graph yet (no file matches {', '.join(globs)}): packets will hold sources only "
                    "until one is written (the format: docs/product-graph.md in Lamina's documentation)"
                )
    # what comes next: the first prepare builds the index (a new-user run of session 37 waited 163 s unwarned)
    human += (
        '\nnext: `lamina work prepare "<task>"` (or `lamina context rebuild`) builds the index first, with'
        " progress: every code file is embedded once (on 2 cores about 40 chunks a second; later builds reuse them)"
    )
    emit(args, payload, human)
    return 0


def register(sub: Any, selected: str | None = None) -> None:
    p = command_group(sub, "init", "write lamina.toml and dodo.py into this repository", selected)
    if p is not None:
        p.add_argument("--force", action="store_true", help="overwrite existing files")
        add_json_flag(p)
        p.set_defaults(handler=cmd_init)
