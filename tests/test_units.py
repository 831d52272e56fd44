"""Fast tier: pure functions and small contracts, no daemon, no model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lamina.config import load_config
from lamina.constants import BOOST_CAP
from lamina.errors import ERROR_CODES, LaminaError
from lamina.graphd import protocol
from lamina.index.membership import (
    all_version_ids,
    embedding_key,
    is_version_id,
    membership_digest,
    sorted_membership_digest,
    text_digest,
    version_id,
)
from lamina.retrieval.bm25 import build_bm25
from lamina.retrieval.selection import RootDoc, Thresholds, exact_matches, select, select_for_task
from tests.conftest import ROOT, run_lamina

KEY = b"k" * 32
NONCE = b"n" * 16


def test_error_docs_match_the_code_table() -> None:
    doc = (ROOT / "docs" / "errors.md").read_text()
    for code, (status, _hint) in ERROR_CODES.items():
        assert f"| `{code}` | {status} |" in doc
    statuses = [s for s, _ in ERROR_CODES.values()]
    assert len(statuses) == len(set(statuses)) and 0 not in statuses and 1 not in statuses


def test_unknown_error_code_is_refused() -> None:
    with pytest.raises(ValueError):
        LaminaError("LAMINA_NOPE", "x")


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("[index\n", "not valid TOML"),
        ("[indexx]\n", "unknown section [indexx] (did you mean 'index'?)"),
        ("[index]\nincldue = ['a']\n", "unknown key index.incldue (did you mean 'include'?)"),
        ("[roles]\ntests = ['qa/**']\n", "unknown key roles.tests (did you mean 'test'?)"),
        ("[index]\nzzz = 1\n", "unknown key index.zzz"),
        (
            "[index]\nmax_file_bytes = 'big'\n",
            "index.max_file_bytes must be a whole number, not a string ('big')",
        ),
        ("[index]\ninclude = 'src/**'\n", "index.include must be a list of strings, not a string ('src/**')"),
        ("[runtime]\nthreads = 1.5\n", "runtime.threads must be a whole number, not a number (1.5)"),
        ("foo = 1\n", "unknown top-level key foo (settings belong in a section: [graph], [index]"),
        ("[graphd]\nidle_timeout_seconds = 0\n", "graphd.idle_timeout_seconds must be positive"),
        ("[graphd]\nidle_timeout_seconds = -1\n", "graphd.idle_timeout_seconds must be positive"),
        ("[graph]\npaths = [1]\n", "list of strings"),
    ],
)
def test_malformed_config_is_a_coded_error(tmp_path: Path, text: str, fragment: str) -> None:
    (tmp_path / "lamina.toml").write_text(text)
    with pytest.raises(LaminaError) as err:
        load_config(tmp_path)
    assert err.value.code == "LAMINA_CONFIG" and fragment in err.value.message


def test_frames_round_trip_and_reject_tampering() -> None:
    frame = protocol.encode_frame(KEY, NONCE, protocol.TO_SERVER, 7, {"op": "ping"}, b"payload")
    body = frame[4:]
    opened = protocol.open_body(KEY, NONCE, protocol.TO_SERVER, body, 6)
    assert (opened.seq, opened.header, opened.payload) == (7, {"op": "ping"}, b"payload")
    tampered = bytearray(body)
    tampered[-1] ^= 1
    for bad, last, direction in [
        (bytes(tampered), 6, protocol.TO_SERVER),
        (body, 7, protocol.TO_SERVER),
        (body, 6, protocol.TO_CLIENT),
    ]:
        with pytest.raises(LaminaError) as err:
            protocol.open_body(KEY, NONCE, direction, bad, last)
        assert err.value.code == "LAMINA_GRAPHD_AUTH"
    with pytest.raises(LaminaError):  # another connection's nonce
        protocol.open_body(KEY, b"m" * 16, protocol.TO_SERVER, body, 6)


def test_membership_digest_keeps_its_bytes_and_the_sorted_form_agrees() -> None:
    """The digest is blake3 over "id\\n" per sorted unique id: generations activated by earlier versions
    keep their digests, and the form for already-sorted ids gives the same answer."""
    import blake3

    ids = [version_id("chunk", f"p{i}.py", "f", "function", i, i, 0, text_digest(str(i))) for i in range(50)]
    expected = blake3.blake3("".join(f"{v}\n" for v in sorted(set(ids))).encode()).hexdigest()
    assert membership_digest(ids + ids[:3]) == (50, expected)
    assert sorted_membership_digest(sorted(ids)) == (50, expected)
    assert membership_digest([]) == sorted_membership_digest([]) == (0, blake3.blake3(b"").hexdigest())


@pytest.mark.parametrize(
    "bad",
    ["v" + "0" * 39, "v" + "0" * 41, "V" + "0" * 40, "v" + "g" * 40, 5, None, "v" + "0" * 39 + "\n",
     "v" + "0" * 40 + "\nv" + "0" * 40, "v" + "0" * 40 + "\n"],
)  # fmt: skip
def test_the_one_pass_version_id_check_agrees_with_the_per_id_one(bad: object) -> None:
    good = [version_id("chunk", f"p{i}.py", "f", "function", i, i, 0, text_digest(str(i))) for i in range(20)]
    assert all_version_ids(good) and all_version_ids([])
    assert not is_version_id(bad)
    assert not all_version_ids([*good, bad]) and not all_version_ids([bad, *good])


def test_membership_digest_is_order_free_and_content_addressed() -> None:
    assert membership_digest(["b", "a", "a"]) == membership_digest(["a", "b"])
    assert membership_digest(["a"]) != membership_digest(["a", "b"])
    t = text_digest("def f(): pass")
    assert embedding_key("m1", t) == embedding_key("m1", t) != embedding_key("m2", t)
    moved = version_id("chunk", "a.py", "f", "function", 10, 12, 0, t)
    assert moved != version_id("chunk", "a.py", "f", "function", 11, 13, 0, t)  # positions: a new version
    assert embedding_key("m1", t) == embedding_key(
        "m1", text_digest("def f(): pass")
    )  # but the same embedding


ROOTS = [
    RootDoc("refund-order", "active", ("refund a paid order",), {"entity": ("order", "refund")}),
    RootDoc(
        "cancel-order",
        "active",
        ("cancel order",),
        {"entity": ("order",), "operation": ("cancel the order",)},
    ),
    RootDoc("loyalty-points", "retired", ("reward points",), {"entity": ("points",)}),
]


def test_exact_id_and_alias_match_whole_phrases_only() -> None:
    assert exact_matches("please refund-order now", ROOTS) == ["refund-order"]
    assert exact_matches("Refund a paid order, quickly", ROOTS) == ["refund-order"]
    assert exact_matches("refund-orders are slow", ROOTS) == []
    assert exact_matches("precancel order", ROOTS) == []


def _scores(lex: list[float], cov: list[float], dense: list[float] | None):
    return (
        np.array(lex, dtype=np.float32),
        np.array(cov, dtype=np.float32),
        (None if dense is None else np.array(dense, dtype=np.float32)),
    )


def test_exact_match_wins_absolutely_and_two_give_multi() -> None:
    lex, cov, dense = _scores([0.0, 5.0, 0.0], [0.0, 1.0, 0.0], [0.1, 0.9, 0.1])
    sel = select("refund-order please", ROOTS, lex, cov, dense)
    assert sel.status == "selected" and sel.workflows == ("refund-order",)
    assert select("refund-order then cancel-order", ROOTS, lex, cov, dense).status == "multi_workflow"


def test_inactive_exact_match_is_filtered_not_selected() -> None:
    lex, cov, dense = _scores([0.0, 0.0, 3.0], [0.0, 0.0, 1.0], [0.1, 0.1, 0.8])
    sel = select("reward points for customers", ROOTS, lex, cov, dense)
    assert "loyalty-points" not in sel.workflows
    assert [c.filtered for c in sel.candidates if c.workflow == "loyalty-points"] == ["inactive:retired"]


def test_outcomes_follow_the_named_thresholds() -> None:
    th = Thresholds(
        dense_min_cosine=0.4,
        lexical_min_coverage=0.5,
        select_min_margin=0.002,
        dense_ambiguity_margin=0.03,
        lexical_ambiguity_margin=0.1,  # BM25's lead (0 here in the ambiguous case) must not separate them
        terse_max_words=0,  # the terse-task rule is tested in tests/test_selection_intents.py
        decision={},  # the rules alone (tests/test_decision.py tests the learned decision)
    )
    lex, cov, dense = _scores([2.0, 1.0, 0.0], [0.6, 0.2, 0.0], [0.6, 0.3, 0.1])
    assert select("something about orders", ROOTS, lex, cov, dense, th).status == "selected"
    lex, cov, dense = _scores([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.2, 0.25, 0.1])
    assert select("dark mode", ROOTS, lex, cov, dense, th).status == "new_workflow_required"
    lex, cov, dense = _scores([1.0, 1.0, 0.0], [0.5, 0.5, 0.0], [0.50, 0.51, 0.1])
    sel = select("it is about orders", ROOTS, lex, cov, dense, th)
    assert sel.status == "ambiguous" and sel.workflows == ()


def test_boosts_are_small_capped_and_deterministic() -> None:
    bm25 = build_bm25([{"body": "cancel an order"}, {"body": "points"}, {"body": "refund a paid order"}])
    ordered = sorted(ROOTS, key=lambda r: r.workflow)
    matrix = np.eye(3, dtype=np.float32)
    a = select_for_task("cancel the order for a customer", ordered, bm25, matrix, matrix[0])
    b = select_for_task("cancel the order for a customer", ordered, bm25, matrix, matrix[0])
    assert a == b
    top = a.candidates[0]
    assert top.workflow == "cancel-order" and {x.kind for x in top.boosts} == {"entity", "operation"}
    assert sum(x.value for x in top.boosts) <= BOOST_CAP


def test_cli_usage_error_and_help() -> None:
    proc = run_lamina("--help")
    assert proc.returncode == 0 and "work" in proc.stdout and "context" in proc.stdout
    assert run_lamina("work").returncode == 2


def test_graph_check_reports_every_problem_as_json(tmp_path: Path) -> None:
    from tests.helpers import make_repo

    repo = make_repo(
        tmp_path / "r",
        {
            "product/bad.toml": '[[actor]]\nid = "Bad Id"\n\n[[persona]]\nid = "p"\n'
            'name = "P"\nactor = "ghost"\n'
        },
    )
    proc = run_lamina("graph", "check", "--json", cwd=repo)
    body = json.loads(proc.stdout)
    assert proc.returncode == ERROR_CODES["LAMINA_GRAPH_INVALID"][0]
    message = body["error"]["message"]
    assert "Bad Id" in message and "ghost" in message and "name" in message


def test_graph_check_of_one_file_checks_it_with_the_rest_of_the_graph(tmp_path: Path) -> None:
    """`graph check product/b.toml` checked that file alone: every id it refers to in other files was "not
    declared" (a new user's graph, session 36). Named files of the configured graph are checked with the rest
    of it, and only their own problems are reported."""
    from tests.helpers import make_repo

    actors = '[[actor]]\nid = "customer"\nname = "Customer"\n'
    persona = '[[persona]]\nid = "shopper"\nname = "Shopper"\nactor = "customer"\n'
    broken = '[[persona]]\nid = "ghostly"\nname = "G"\nactor = "ghost"\n'
    repo = make_repo(
        tmp_path / "r",
        {"product/a.toml": actors, "product/b.toml": persona, "product/c.toml": broken},
    )  # fmt: skip
    one = run_lamina("graph", "check", "product/b.toml", cwd=repo)
    assert one.returncode == 0, one.stdout + one.stderr
    assert "checked with the rest of the product graph, which has problems in other files" in one.stdout
    bad = run_lamina("graph", "check", "product/c.toml", "--json", cwd=repo)
    assert bad.returncode == ERROR_CODES["LAMINA_GRAPH_INVALID"][0]
    message = json.loads(bad.stdout)["error"]["message"]
    assert "product/c.toml" in message and "'ghost'" in message and "product/b.toml" not in message
    (repo / "product/c.toml").unlink()
    fine = json.loads(run_lamina("graph", "check", "product/b.toml", "--json", cwd=repo).stdout)
    assert fine["valid"] and fine["files"] == ["product/b.toml"] and fine["roots"] == 0


def test_init_and_graph_check_say_when_no_graph_file_matches(tmp_path: Path) -> None:
    """A repository without a product graph: `init` and `graph check` succeed (sources still work) but say
    that [graph].paths matched nothing, so a mistyped glob does not pass for an empty graph; once a graph
    file exists, neither says it."""
    from tests.helpers import make_repo

    repo = make_repo(tmp_path / "r", {"src/app.py": "def run():\n    return 1\n"})
    init = run_lamina("init", cwd=repo)
    assert init.returncode == 0, init.stderr
    assert "no product graph yet (no file matches product/**/*.toml)" in init.stdout
    check = run_lamina("graph", "check", cwd=repo)
    assert check.returncode == 0 and "no file matches product/**/*.toml" in check.stdout
    body = json.loads(run_lamina("graph", "check", "--json", cwd=repo).stdout)
    assert body["files"] == [] and body["globs"] == ["product/**/*.toml"] and body["roots"] == 0

    (repo / "product").mkdir()
    (repo / "product" / "shop.toml").write_text(
        '[[workflow]]\nid = "refund-order"\ntitle = "Refund an order"\nsummary = "Give money back."\n'
    )
    check = run_lamina("graph", "check", cwd=repo)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "no file matches" not in check.stdout and "1 file(s)" in check.stdout
    again = run_lamina("init", "--json", cwd=repo)
    assert json.loads(again.stdout)["graph_files"] == ["product/shop.toml"]


def test_a_dependency_bump_without_a_product_graph_lists_its_build_file_through_graphd(
    tmp_path: Path,
) -> None:
    """Real graphd, real model, no product graph (session 37): a bump lists the file that declares the package
    in `config` (code stays in `sources`), `workflow_source` says nothing was selected, and the revision right
    after `lamina init` is HEAD, not `+dirty` for Lamina's own untracked lamina.toml and dodo.py."""
    from tests.helpers import make_repo

    repo = make_repo(
        tmp_path / "r",
        {
            "src/app/client.py": "import pydantic\n\ndef fetch(url):\n    return url.strip()\n",
            "src/app/orders.py": "def cancel(order):\n    order.refund()\n    return order\n",
            "requirements.txt": "pydantic==2.6.0\nhttpx==0.27.0\n",
            "pyproject.toml": '[project]\nname = "app"\ndependencies = ["pydantic>=2.6", "httpx>=0.27"]\n',
        },
    )
    try:
        head = run_lamina("init", cwd=repo)
        assert head.returncode == 0, head.stderr
        assert "builds the index first" in head.stdout  # what the first prepare will do (session 37)
        bump = run_lamina("work", "prepare", "--json", "Bump pydantic from 2.6.0 to 2.8.2", cwd=repo)
        assert bump.returncode == 0, bump.stderr
        packet = json.loads(bump.stdout)
        assert {c["file"] for c in packet["config"]} == {"requirements.txt", "pyproject.toml"}
        assert all(c["role"] == "config" and c["reasons"] for c in packet["config"])
        assert all(s["role"] == "code" for s in packet["sources"])
        assert packet["retrieval"]["workflow_source"] == "none"
        assert (
            "+dirty" not in packet["index"]["source_revision"]
        )  # only lamina.toml and dodo.py are untracked
        text = run_lamina("work", "prepare", "Bump pydantic from 2.6.0 to 2.8.2", cwd=repo).stdout
        assert "Configuration the task names (untrusted data):" in text and "requirements.txt:1-" in text
        assert text.index("Configuration the task names") < text.index(
            "Sources (untrusted"
        )  # a bump's files first
        code_task = json.loads(
            run_lamina("work", "prepare", "--json", "cancel should refund the order", cwd=repo).stdout
        )
        assert code_task["config"] == [] and code_task["sources"][0]["file"] == "src/app/orders.py"
        (repo / "src" / "app" / "orders.py").write_text("def cancel(order):\n    return None\n")
        dirty = json.loads(run_lamina("work", "prepare", "--json", "cancel the order", cwd=repo).stdout)
        assert "+dirty." in dirty["index"]["source_revision"]  # a change of the project still says so
    finally:
        run_lamina("graphd", "stop", cwd=repo)  # a test leaves no daemon behind (it lingered 3 hours)


def test_a_sparse_checkout_that_leaves_the_graph_out_is_named(tmp_path: Path) -> None:
    """`git sparse-checkout set src` left product/ out: `graph check` said only "no file matches", and
    packets silently held sources only (a new-user run, session 35)."""
    from tests.helpers import git, make_repo

    graph = '[[workflow]]\nid = "refund-order"\ntitle = "Refund an order"\nsummary = "Give money back."\n'
    repo = make_repo(tmp_path / "r", {"src/app.py": "def run():\n    return 1\n", "product/shop.toml": graph})
    git(repo, "sparse-checkout", "set", "src")
    assert not (repo / "product").exists()
    check = run_lamina("graph", "check", cwd=repo)
    assert check.returncode == 0, check.stderr
    assert "1 tracked file(s) do that this sparse checkout leaves out (product/shop.toml)" in check.stdout
    assert "git sparse-checkout add" in check.stdout
    body = json.loads(run_lamina("graph", "check", "--json", cwd=repo).stdout)
    assert body["not_checked_out"] == ["product/shop.toml"]
    init = run_lamina("init", cwd=repo)
    assert init.returncode == 0 and "sparse checkout leaves out (product/shop.toml)" in init.stdout
    git(repo, "sparse-checkout", "disable")
    body = json.loads(run_lamina("graph", "check", "--json", cwd=repo).stdout)
    assert body["files"] == ["product/shop.toml"] and "not_checked_out" not in body


def test_init_beside_a_broken_lamina_toml_writes_its_part_and_says_what_is_wrong(tmp_path: Path) -> None:
    """A lamina.toml kept from before with a syntax error: `init` (without --force) leaves it, writes dodo.py,
    exits 0 and says the file has problems and that --force rewrites it; --force then fixes it."""
    from tests.helpers import make_repo

    repo = make_repo(tmp_path / "r", {"lamina.toml": "[graph\npaths = 3\n"})
    proc = run_lamina("init", "--json", cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    body = json.loads(proc.stdout)
    assert body["written"] == ["dodo.py"] and body["config_error"]["code"] == "LAMINA_CONFIG"
    assert (repo / "lamina.toml").read_text() == "[graph\npaths = 3\n"  # the user's file is not touched
    assert "init --force" in run_lamina("init", cwd=repo).stdout
    fixed = json.loads(run_lamina("init", "--force", "--json", cwd=repo).stdout)
    assert "config_error" not in fixed and fixed["graph_files"] == []


def test_an_empty_task_or_search_text_is_a_usage_error_before_anything_is_built(tmp_path: Path) -> None:
    """An empty or blank task once selected and localized at random; now LAMINA_USAGE (exit 2) with a hint,
    and no index is built. The freshness check reads no task, so a blank one is fine there."""
    from tests.helpers import make_repo

    repo = make_repo(tmp_path / "r", {"src/app.py": "def run():\n    return 1\n"})
    for args in (("work", "prepare", ""), ("work", "prepare", "  \n ", "--json"), ("context", "search", " ")):
        proc = run_lamina(*args, "--json", cwd=repo) if "--json" not in args else run_lamina(*args, cwd=repo)
        assert proc.returncode == ERROR_CODES["LAMINA_USAGE"][0], (args, proc.stdout, proc.stderr)
        error = json.loads(proc.stdout)["error"]
        assert error["code"] == "LAMINA_USAGE" and "is empty" in error["message"]
        # the command's own help, not `lamina --help` (new-user runs on rich and urfave/cli, session 36)
        assert f"lamina {args[0]} {args[1]} --help" in error["hint"], error
    assert not (repo / ".git" / "lamina").exists()  # nothing was built
    assert run_lamina("work", "prepare", "", "--check", cwd=repo).returncode in (0, 1)


def test_lamina_error_survives_a_context_manager() -> None:
    from contextlib import contextmanager

    @contextmanager
    def guarded():
        yield

    with pytest.raises(LaminaError) as err:
        with guarded():
            raise LaminaError("LAMINA_DISK_FULL", "full")
    assert err.value.code == "LAMINA_DISK_FULL"


def test_finding_the_repository_without_git_agrees_with_git(tmp_path: Path) -> None:
    """The quick check locates the worktree and common dir by walking up; git's own answer must match in
    a main worktree, a subdirectory and a linked worktree."""
    import subprocess

    from lamina.repo.status import find_location, parse_location, run_git

    main = tmp_path / "main"
    (main / "src" / "deep").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(main)], check=True)
    (main / "a.txt").write_text("a\n")
    subprocess.run(["git", "-C", str(main), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(main), "-c", "user.email=t@e.st", "-c", "user.name=t", "commit", "-qm", "a"],
        check=True,
    )
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(tmp_path / "linked")], check=True)
    for start in (main, main / "src" / "deep", tmp_path / "linked"):
        answer = run_git(str(start), "rev-parse", "--show-toplevel", "--git-common-dir")
        assert answer is not None
        assert find_location(str(start)) == parse_location(str(start), answer)
    assert find_location(str(tmp_path)) is None  # not inside a repository


@pytest.mark.parametrize(
    ("argv", "question"),
    [
        (["work", "prepare", "refund an order"], {"task": "refund an order", "workflow": None}),
        (["work", "prepare", "x", "--json", "--quiet"], {"task": "x", "json": True, "quiet": True}),
        (["work", "prepare", "--workflow", "refund-order", "x"], {"task": "x", "workflow": "refund-order"}),
        (["work", "prepare", "x", "--workflow=refund-order"], {"task": "x", "workflow": "refund-order"}),
        (["-C", "shop", "work", "prepare", "x"], {"task": "x", "directory": "shop"}),
        (["-C", "shop", "context", "search", "x"], None),
        (["work", "prepare", "x", "--check"], None),  # the quick check's, or the full path's
        (["work", "prepare", "x", "--require-cached"], None),
        (["work", "prepare", "x", "--workflow"], None),  # argparse reports the usage error
        (["work", "prepare", "x", "y"], None),
        (["work", "prepare", "--help"], None),
        (["work", "prepare"], None),
        (["context", "search", "x"], None),
    ],
)
def test_only_a_plain_prepare_takes_the_round_trip_to_graphd(argv: list[str], question: dict | None) -> None:
    from lamina.index.hosted_prepare import plain_prepare

    parsed = plain_prepare(argv)
    if question is None:
        assert parsed is None
    else:
        assert parsed is not None and {k: parsed[k] for k in question} == question


def test_the_environment_graphd_compares_names_what_changes_a_prepare() -> None:
    from lamina.index.hosted_prepare import relevant_environment

    environ = {"LAMINA_HOME": "/h", "LAMINA_STORE": "/s", "GIT_DIR": "/g", "PATH": "/bin", "HOME": "/home/u",
               "TERM": "xterm", "LANG": "C", "PWD": "/x"}  # fmt: skip
    assert relevant_environment(environ) == {
        "LAMINA_HOME": "/h", "LAMINA_STORE": "/s", "GIT_DIR": "/g", "PATH": "/bin", "HOME": "/home/u"
    }  # fmt: skip


def test_a_sorted_membership_changes_like_a_set() -> None:
    """Random additions and removals (repeats, absent ids, ids removed then added back) against a set."""
    import random

    from lamina.index.membership import SortedMembership

    rng = random.Random(7)
    universe = [f"v{rng.getrandbits(160):040x}" for _ in range(400)]
    for trial in range(30):
        base = sorted(rng.sample(universe, rng.randrange(0, 200)))
        frozen = list(base)
        members, expected = SortedMembership(base), set(base)
        for _ in range(rng.randrange(1, 6)):
            batch = rng.sample(universe, rng.randrange(0, 120 if trial % 3 == 0 else 8))
            if rng.random() < 0.5:
                members.update(batch)
                expected.update(batch)
            else:
                members.difference_update(batch)
                expected.difference_update(batch)
            assert members.sorted_ids() == sorted(expected) and len(members) == len(expected)
        assert base == frozen  # the base is shared with its owner: never mutated


def test_membership_from_changed_shards_equals_a_full_count() -> None:
    """A build after an edit compares only the shards whose columns changed (by identity) with the
    generation it starts from; the members must be those of all shards, and the change exactly theirs."""
    from lamina.index import worker
    from lamina.index.memory import Activated

    shard = lambda *ids: {"id": list(ids)}  # noqa: E731
    v = [f"v{i:040x}" for i in range(12)]
    before = [shard(v[0]), shard(v[1], v[2]), shard(v[3]), shard(v[4], v[5])]
    base = Activated("g1", tuple(before), sorted(v[:6]))
    after = [before[0], shard(v[1], v[7]), before[2], shard(v[4], v[5])]  # an edit; a rewrite, same ids
    ids, added, removed, changed = worker._membership(base, after)
    assert ids == sorted({i for s in after for i in s["id"]})
    assert (added, removed, changed) == ([v[7]], [v[2]], [1, 3])
    assert worker._membership(None, after)[0] == ids  # no base: every shard counted


def test_errors_survive_pickling_with_their_code_and_problems() -> None:
    """Errors are plain classes (no dataclasses on the fast paths); they still round-trip through pickle
    (a process pool, a test runner) with their code, hint and, for an invalid graph, its problems."""
    import pickle

    from lamina.graph.load import GraphProblem, graph_invalid

    err = pickle.loads(pickle.dumps(LaminaError("LAMINA_CONFIG", "bad value", "fix it")))
    assert (err.code, err.message, err.hint, err.exit_status) == ("LAMINA_CONFIG", "bad value", "fix it", 3)
    problem = GraphProblem(file="product/a.toml", table="Workflow", id="refund", message="unknown actor")
    invalid = pickle.loads(pickle.dumps(graph_invalid([problem])))
    assert invalid.code == "LAMINA_GRAPH_INVALID" and invalid.problems == (problem,)
    assert "unknown actor" in invalid.message


def test_a_missing_directory_for_dash_c_is_a_usage_error(tmp_path: Path) -> None:
    for args in (("graph", "check", "--json"), ("work", "prepare", "x", "--json")):
        proc = run_lamina("-C", str(tmp_path / "absent"), *args)
        assert proc.returncode == ERROR_CODES["LAMINA_USAGE"][0], proc.stderr
        assert json.loads(proc.stdout)["error"]["code"] == "LAMINA_USAGE" and "Traceback" not in proc.stderr


def test_the_status_answer_is_read_once_for_the_no_op_path_and_file_selection() -> None:
    """`git status --porcelain=v2 -z --branch --untracked-files=all` as git writes it: headers, an
    ordinary change, a rename (its source follows as its own field), an unmerged path, an untracked file
    with a space and an undecodable byte in its name."""
    from lamina.repo.files import _Candidate, _status_candidates
    from lamina.repo.status import parse_status

    blob_h, blob_i = "1" * 40, "2" * 40
    raw = b"\0".join([
        b"# branch.oid " + b"a" * 40, b"# branch.head main", b"# branch.ab +0 -0",
        f"1 .M N... 100644 100644 100644 {blob_h} {blob_i} src/pay.py".encode(),
        f"2 R. N... 100644 100644 100644 {blob_h} {blob_i} R100 docs/new name.md".encode(), b"README.md",
        f"u UU N... 100644 100644 100644 100644 {blob_h} {blob_i} {blob_h} merge.py".encode(),
        b"? notes/caf\xe9 draft.txt", b"",
    ])  # fmt: skip
    odd = b"notes/caf\xe9 draft.txt".decode("utf-8", errors="surrogateescape")
    head, branch, changed = parse_status(raw)
    assert (head, branch) == ("a" * 40, "main")
    assert changed == tuple(sorted(["src/pay.py", "docs/new name.md", "README.md", "merge.py", odd]))
    assert _status_candidates(raw) == {
        "src/pay.py": _Candidate(path="src/pay.py", mode="100644", index_blob=None),  # dirty: hashed again
        "docs/new name.md": None, "README.md": None, "merge.py": None,  # git is asked about these
        odd: _Candidate(path=odd, mode=None, index_blob=None),
    }  # fmt: skip
    assert parse_status(b"# branch.oid (initial)\0# branch.head (detached)\0") == ("", "(detached)", ())


def test_the_remembered_shard_columns_follow_the_shard_count() -> None:
    """A build memory holds every shard file of the identities it remembers, whatever SHARD_COUNT is
    (it was a literal 8 * 33)."""
    import subprocess
    import sys

    probe = (
        "import lamina.constants as c; c.SHARD_COUNT = 64; c.HOSTED_IDENTITIES_REMEMBERED = 3; "
        "from lamina.index.memory import BuildMemory; m = BuildMemory(); "
        "print(m.shard_columns.limit, m.activated.limit)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["195", "3"]  # 3 identities x (64 shards + the workflows shard)


def test_a_bounded_memory_forgets_the_least_recently_stored_first() -> None:
    from lamina.bounded import Bounded

    memory: Bounded[str, int] = Bounded(2)
    memory.put("a", 1)
    memory.put("b", 2)
    memory.put("a", 3)  # stored again: now the most recent
    memory.put("c", 4)
    assert (memory.get("a"), memory.get("b"), memory.get("c"), len(memory)) == (3, None, 4, 2)
    assert memory.pop("a") == 3 and "a" not in memory and memory.pop("a") is None


def test_a_content_store_made_again_at_the_same_path_has_another_identity(tmp_path: Path) -> None:
    """What a long-lived graphd remembers about a store is keyed on an id written into the store, not on
    its file's (device, inode), which a deleted and recreated store gets again."""
    import shutil

    from lamina.index.cas import ContentStore

    first = ContentStore(tmp_path / "store")
    same = ContentStore(tmp_path / "store")  # another process opening the same store
    assert first.identity == same.identity
    first.close()
    same.close()
    shutil.rmtree(tmp_path / "store")
    again = ContentStore(tmp_path / "store")
    assert again.identity != first.identity


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["work", "prepare", "x", "--check"], {"task": "x", "check": True, "directory": "."}),
        (
            ["-C", "shop", "work", "prepare", "x", "--check", "--json"],
            {"check": True, "json": True, "directory": "shop"},
        ),
        (["work", "prepare", "x"], {"task": "x", "check": False}),
        (["work", "prepare", "x", "--check", "--require-cached"], None),
        (["work", "prepare", "  "], None),  # a blank task: the full path reports LAMINA_USAGE
        (["hook", "run"], None),
    ],
)
def test_one_grammar_reads_every_form_the_fast_paths_answer(argv: list[str], command: dict | None) -> None:
    from lamina.fast_command import read_prepare

    parsed = read_prepare(argv)
    if command is None:
        assert parsed is None
    else:
        assert parsed is not None and {k: parsed[k] for k in command} == command


def test_every_retrieval_schema_version_has_a_changelog_entry() -> None:
    from lamina.constants import RETRIEVAL_SCHEMA_CHANGELOG, RETRIEVAL_SCHEMA_VERSION

    versions = [version for version, _ in RETRIEVAL_SCHEMA_CHANGELOG]
    assert versions == sorted(set(versions)) and versions[-1] == RETRIEVAL_SCHEMA_VERSION
    assert all(what.strip() for _, what in RETRIEVAL_SCHEMA_CHANGELOG)


def test_a_build_summary_counts_chunks_without_a_vector_apart_from_reused_ones() -> None:
    """Tests, docs and config carry no vector: a first build embeds the code, reuses nothing, and says the rest
    is searched by words only (it once called those chunks "reused")."""
    from lamina.index.progress import build_summary

    first = {"generation": "g-1", "files_scanned": 123, "chunks_total": 1803, "chunks_with_embedding": 606,
             "chunks_embedded": 606, "chunks_reused": 0, "seconds": 13.8}  # fmt: skip
    assert "(606 embedded, 0 reused, 1197 lexical only)" in build_summary(first)
    edit = {**first, "chunks_embedded": 1, "chunks_reused": 605}
    assert "(1 embedded, 605 reused, 1197 lexical only)" in build_summary(edit)


def test_stale_reasons_name_what_differs_between_two_manifests() -> None:
    from lamina.index.manifest import stale_reasons

    indexed = {"source_revision": "a" * 40 + "+dirty.0123456789abcdef", "graph_version": "g1",
               "index_settings": "s1", "schema_version": 12}  # fmt: skip
    assert stale_reasons(indexed, dict(indexed), ("src/a.py",)) == []
    clean = {**indexed, "source_revision": "a" * 40}
    assert stale_reasons(indexed, clean) == [
        "the uncommitted changes that were indexed are gone (committed, stashed or reverted)"
    ]
    moved = {**indexed, "source_revision": "b" * 40, "index_settings": "s2", "schema_version": 13}
    assert stale_reasons(indexed, moved) == [
        f"HEAD moved: {'a' * 12} → {'b' * 12}",
        "lamina.toml's [index] settings changed (include, exclude or max_file_bytes)",
        "retrieval schema changed: 12 → 13 (this Lamina indexes differently; the next build re-chunks and "
        "reuses every embedding it can)",
    ]
    paths = tuple(f"src/m{i}.py" for i in range(7))
    edited = {**indexed, "source_revision": "a" * 40 + "+dirty.fedcba9876543210"}
    (reason,) = stale_reasons(indexed, edited, paths)  # git's changed paths: all the caller could tell
    assert (
        reason
        == "7 indexed files with uncommitted changes: src/m0.py, src/m1.py, src/m2.py, src/m3.py, src/m4.py, …"
    )
    (exact,) = stale_reasons(indexed, edited, paths, ["src/m0.py (changed)"])  # what the build read, compared
    assert exact == "1 indexed file differs from the index: src/m0.py (changed)"
    assert stale_reasons(indexed, clean, (), []) == []  # nothing differs: a file's round trip is no reason


def test_differing_files_says_what_happened_to_each_path() -> None:
    from lamina.index.manifest import differing_files

    before = {"a.py": "1", "b.py": "2", "c.py": "3"}
    assert differing_files(before, {"a.py": "1", "b.py": "9", "d.py": "4"}) == [
        "b.py (changed)",
        "c.py (gone)",
        "d.py (new)",
    ]


def test_an_eta_follows_the_recent_rate_not_the_average_since_the_start() -> None:
    from lamina.index.progress import recent_rate

    # 100/s for 20 s, then 20/s: the last 20 s say 20/s, the average since the start 60/s
    samples = [(0.0, 0), (10.0, 1000), (20.0, 2000), (30.0, 2200), (40.0, 2400)]
    assert recent_rate(samples, window=20.0) == 20.0
    assert recent_rate(samples[:3], window=20.0) == 100.0  # younger than the window: since the start
    assert recent_rate(samples, window=1000.0) == 60.0
    assert recent_rate([(5.0, 10)]) == 0.0 and recent_rate([(5.0, 10), (5.0, 10)]) == 0.0


def test_a_progress_line_promises_no_eta_before_anything_is_measured() -> None:
    """A new-user run saw `embedding chunks: 0/1184 (0/s, ETA 0 s)` at the start of every phase."""
    import io
    import re

    from lamina.index.progress import Progress
    from lamina.mcp_server import _PROGRESS_LINE

    progress = Progress(stream=io.StringIO(), live=False)
    progress.start("embedding chunks", 1184)
    assert progress.line() == "embedding chunks: 0/1184 (starting)"
    progress.samples.appendleft((progress.samples[0][0] - 10.0, 0))  # ten seconds ago, nothing done
    progress.done = 500
    measured = re.fullmatch(r"embedding chunks: 500/1184 \((\d+)/s, ETA (\d+) s\)", progress.line())
    assert measured is not None and 45 <= int(measured[1]) <= 50 and 13 <= int(measured[2]) <= 16
    progress.done = 1184
    assert "ETA" not in progress.line() and progress.line().startswith("embedding chunks: 1184/1184 (")
    for line in ("embedding chunks: 0/1184 (starting)", progress.line()):  # MCP progress still reads them
        assert _PROGRESS_LINE.match(line) is not None


def test_a_plain_progress_stream_does_not_print_the_last_line_twice() -> None:
    import io

    from lamina.index.progress import Progress

    stream = io.StringIO()
    progress = Progress(stream=stream, live=False)
    progress.start("embedding chunks", 3)
    progress.advance(3)
    progress._print(force=True)  # what the interval prints when the phase has just completed
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "embedding chunks: 0/3 (starting)"
    assert [line.split(" (")[0] for line in lines[1:]] == ["embedding chunks: 3/3"]
    stream2 = io.StringIO()
    progress = Progress(stream=stream2, live=False)
    progress.start("chunking files", 2)
    progress.advance(2)
    progress.finish()  # nothing printed since the start: the final count is
    assert [line.split(" (")[0] for line in stream2.getvalue().splitlines()] == [
        "chunking files: 0/2",
        "chunking files: 2/2",
    ]


def test_graphd_status_shows_lists_and_tables_as_words_not_python_values() -> None:
    from lamina.commands.graphd import plain_value

    assert plain_value({"product": "/r/.git/lamina/p.lbug", "index": "/r/.git/lamina/i.lbug"}) == (
        "product /r/.git/lamina/p.lbug, index /r/.git/lamina/i.lbug"
    )
    assert plain_value(["ping", "query.prepare"]) == "ping, query.prepare"
    assert plain_value({"g-1": {"rows": 3}}) == "g-1 rows 3"
    assert plain_value([]) == "none" and plain_value(12) == "12"
