"""The command line as a user meets it: hints name commands that exist; `graph list`."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from lamina.errors import ERROR_CODES, integrity_error
from tests.conftest import run_lamina
from tests.helpers import EXAMPLE_GRAPH, make_repo

_COMMAND_IN_HINT = re.compile(r"`lamina ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)?)")


def _hint_commands() -> set[str]:
    hints = [hint for _, hint in ERROR_CODES.values()] + [integrity_error("x").hint]
    return {match for hint in hints for match in _COMMAND_IN_HINT.findall(hint)}


def test_hints_quote_commands_and_every_quoted_command_exists() -> None:
    commands = _hint_commands()
    assert {"graph list", "context rebuild", "graphd status"} <= commands
    for command in sorted(commands):
        proc = run_lamina(*command.split(), "--help")
        assert proc.returncode == 0, f"a hint names `lamina {command}`, which does not exist:\n{proc.stderr}"


def test_a_subcommand_named_without_its_group_is_pointed_at_its_groups() -> None:
    """`lamina status` (a new-user run, session 37) said only "invalid choice"."""
    from lamina.cli import SUBCOMMAND_HOMES

    proc = run_lamina("status", "--json")
    error = json.loads(proc.stdout)["error"]
    assert proc.returncode == ERROR_CODES["LAMINA_USAGE"][0] and error["code"] == "LAMINA_USAGE"
    assert "`lamina context status`" in error["hint"] and "`lamina graphd status`" in error["hint"]
    assert "Did you mean" not in json.loads(run_lamina("frobnicate", "--json").stdout)["error"]["hint"]
    for homes in SUBCOMMAND_HOMES.values():  # every suggestion exists
        for command in homes:
            assert run_lamina(*command.split(), "--help").returncode == 0, command


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    graph = (
        EXAMPLE_GRAPH.read_text()
        + '\n[[workflow]]\nid = "old-checkout"\ntitle = "Old checkout"\nstatus = "retired"\n'
    )
    return make_repo(
        tmp_path / "r", {"lamina.toml": '[graph]\npaths = ["product/*.toml"]\n', "product/g.toml": graph}
    )


def test_graph_list_shows_every_root_with_its_status_and_aliases(repo: Path) -> None:
    proc = run_lamina("graph", "list", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)["workflows"]
    assert listed == [
        {
            "id": "checkout",
            "title": "Check out a cart",
            "status": "active",
            "aliases": ["place order", "buy"],
        },
        {"id": "old-checkout", "title": "Old checkout", "status": "retired", "aliases": []},
    ]
    human = run_lamina("graph", "list", cwd=repo).stdout
    assert "old-checkout  [retired]  Old checkout" in human and "aliases: place order, buy" in human


def test_graph_list_of_an_invalid_graph_lists_its_problems(repo: Path) -> None:
    (repo / "product" / "g.toml").write_text('[[workflow]]\nid = "x"\n')  # no title
    proc = run_lamina("graph", "list", "--json", cwd=repo)
    assert proc.returncode == 4
    assert json.loads(proc.stdout)["error"]["code"] == "LAMINA_GRAPH_INVALID"


def test_the_hook_quotes_an_interpreter_path_with_spaces_and_quotes(tmp_path: Path) -> None:
    from lamina.commands.hook import hook_script

    folder = tmp_path / "my tools" / "it's here"
    folder.mkdir(parents=True)
    python = folder / "python"
    seen = tmp_path / "seen"
    python.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {shlex.quote(str(seen))}\n')
    python.chmod(0o755)
    hook = tmp_path / "pre-commit"
    hook.write_text(hook_script(str(python)))
    proc = subprocess.run(["sh", str(hook)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert seen.read_text().split("\n")[:4] == ["-m", "lamina.cli", "hook", "run"]


def test_lamina_knows_its_own_hook_by_its_id_not_by_a_mention() -> None:
    from lamina.commands.hook import hook_script, is_lamina_hook

    assert is_lamina_hook(hook_script("/usr/bin/python3"))
    legacy = (
        "#!/bin/sh\n# Installed by `lamina hook install`: validate the product graph and keep the index fresh.\n"
        "exec /venv/bin/python -m lamina.cli hook run\n"
    )
    assert is_lamina_hook(legacy)  # written by an earlier Lamina: still replaced without --force
    assert not is_lamina_hook("#!/bin/sh\n# also runs lamina, then our linters\nmake lint\n")
    assert not is_lamina_hook(legacy + "make lint\n")  # a Lamina hook someone extended is theirs now


def test_hook_install_keeps_a_foreign_hook_that_mentions_lamina(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "h")
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    foreign = "#!/bin/sh\n# team hook: lamina runs in CI, here only the linters\nmake lint\n"
    hook.write_text(foreign)
    proc = run_lamina("hook", "install", "--json", cwd=repo)
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"]["code"] == "LAMINA_USAGE"
    assert hook.read_text() == foreign
    assert run_lamina("hook", "install", "--force", cwd=repo).returncode == 0
    assert "# lamina-hook-id: " in hook.read_text()
    assert run_lamina("hook", "install", cwd=repo).returncode == 0  # its own hook: replaced freely


def test_context_files_lists_each_file_s_role_and_each_skipped_file_s_reason(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "c", {
        "lamina.toml": '[graph]\npaths = ["product/*.toml"]\n[roles]\ncode = ["scripts/**"]\n',
        "product/g.toml": EXAMPLE_GRAPH.read_text(),
        "src/parser.y": "%token NUM\n%%\nexpr: NUM ;\n",
        "src/parser.c": "/* A Bison parser, made by GNU Bison 3.8.2.  */\nint yyparse(void) { return 0; }\n",
        "src/main.c": "int main(void) { return 0; }\n",
        "tests/test_main.c": "int test_main(void) { return 0; }\n",
        "scripts/tests/run.sh": "echo run\n",
        "README.md": "# c\n",
    })  # fmt: skip
    proc = run_lamina("context", "files", "--json", "--skipped", cwd=root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listing = json.loads(proc.stdout)
    roles = {f["path"]: f["role"] for f in listing["files"]}
    assert roles["src/parser.y"] == roles["src/main.c"] == "code"
    assert roles["tests/test_main.c"] == "test" and roles["README.md"] == "docs"
    assert roles["scripts/tests/run.sh"] == "code"  # lamina.toml's [roles] win over the conventions
    assert roles["product/g.toml"] == "graph"
    assert {"path": "src/parser.c", "reason": "vendored_or_generated"} in listing["skipped"]
    assert listing["roles"]["code"] == 3 and listing["skipped_by_reason"]["vendored_or_generated"] == 1
    only_tests = run_lamina("context", "files", "--role", "test", cwd=root)
    assert only_tests.stdout.splitlines()[0].split() == ["test", "tests/test_main.c"]
    assert "src/main.c" not in only_tests.stdout and "files indexed" in only_tests.stdout.splitlines()[-1]
    assert listing["unmatched_role_globs"] == [] and listing["include_matches_nothing"] is False


def test_context_files_names_settings_that_select_nothing(tmp_path: Path) -> None:
    """A [roles] glob that matches no file, or [index] include/exclude that leave none, looked exactly like
    no setting at all (a new-user run, session 35)."""
    root = make_repo(tmp_path / "c", {
        "lamina.toml": '[roles]\ncode = ["scirpts/**"]\ntest = ["qa/**"]\n',
        "src/main.py": "def main():\n    return 0\n",
        "qa/check.py": "def check():\n    return 0\n",
    })  # fmt: skip
    listing = json.loads(run_lamina("context", "files", "--json", cwd=root).stdout)
    assert listing["unmatched_role_globs"] == ["roles.code: scirpts/**"]
    human = run_lamina("context", "files", cwd=root).stdout
    assert "note: lamina.toml's roles.code: scirpts/** matches no indexed file" in human
    (root / "lamina.toml").write_text('[index]\ninclude = ["source/**"]\n')
    listing = json.loads(run_lamina("context", "files", "--json", cwd=root).stdout)
    assert listing["files"] == [] and listing["include_matches_nothing"] is True
    assert "leave no file to index" in run_lamina("context", "files", cwd=root).stdout


@pytest.mark.parametrize(
    "argv",
    [
        ("context", "search", "x", "--limit", "11", "--json"),
        ("context", "files", "--role", "tests", "--json"),
        ("work", "prepare", "--json"),  # the task is missing
        ("graph", "check", "--json", "--no-such-flag"),
    ],
)
def test_a_usage_error_with_json_is_one_json_object(argv: tuple[str, ...], tmp_path: Path) -> None:
    proc = run_lamina(*argv, cwd=tmp_path)
    assert proc.returncode == 2
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "LAMINA_USAGE" and error["message"].startswith("lamina")
    assert "--help" in error["hint"]
    plain = run_lamina(*(a for a in argv if a != "--json"), cwd=tmp_path)
    assert plain.returncode == 2 and plain.stdout == "" and plain.stderr.startswith("LAMINA_USAGE: lamina")


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (("work", "prepare", "a task", "--jsn"), "work prepare"),
        (("init", "--bogus"), "init"),
        (("-C", ".", "context", "status", "--verbose"), "context status"),
    ],
)
def test_an_unknown_option_names_the_command_it_was_given_to(
    argv: tuple[str, ...], command: str, tmp_path: Path
) -> None:
    """argparse reports an unknown option from the top-level parser ("lamina: unrecognized arguments")
    with a hint of `lamina --help`; the user needs the command's own help."""
    proc = run_lamina(*argv, cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"LAMINA_USAGE: lamina {command}: unrecognized arguments: {argv[-1]}")
    assert f"hint: Run `lamina {command} --help`." in proc.stderr


def test_version_names_the_package_and_the_formats_it_writes(tmp_path: Path) -> None:
    from importlib.metadata import version

    from lamina.constants import PACKET_VERSION, RETRIEVAL_SCHEMA_VERSION

    proc = run_lamina("--version", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (
        f"lamina {version('lamina')} (retrieval schema {RETRIEVAL_SCHEMA_VERSION}, packet v{PACKET_VERSION})"
    )
