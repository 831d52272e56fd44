"""`lamina mcp` against the real server process, through the MCP SDK's own stdio client: tools and their
schemas, packets equal to the CLI's, coded tool errors, a killed graphd, a corrupt or missing runtime, and
a call cancelled during a build."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from lamina.graph.load import load_graph
from lamina.index.progress import Progress
from lamina.mcp_server import ProgressStream, ProgressTally, ProgressUpdate
from tests.conftest import run_lamina
from tests.test_packet import shop_repo

TOOL_NAMES = {"prepare_work", "search_code", "context_status", "list_workflows", "show_workflow"}
CALL_TIMEOUT_SECONDS = 300  # a cold build of the example shop on 2 shared cores


def server_params(repo: Path, env: dict[str, str] | None = None) -> StdioServerParameters:
    """`python -m lamina.cli -C REPO mcp` with this process's environment (PYTHONPATH, LAMINA_HOME)."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "lamina.cli", "-C", str(repo), "mcp"],
        env={**os.environ, **(env or {})},
        cwd=str(repo.parent),
    )


@asynccontextmanager
async def lamina_mcp(
    repo: Path, env: dict[str, str] | None = None, mode: str = "auto"
) -> AsyncIterator[Client]:
    async with Client(
        server_params(repo, env), mode=mode, read_timeout_seconds=CALL_TIMEOUT_SECONDS
    ) as client:
        yield client


def run(test: Callable[[], Any]) -> Any:
    return anyio.run(test)


def cli_json(repo: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = run_lamina(*args, "--json", cwd=repo, env=env)
    return json.loads(proc.stdout)


# --- fast: no model, no graphd ---------------------------------------------------------------------------


def tool_error(result: Any) -> dict[str, Any]:
    """The `--json` error object of an error result: its second text block. An error result has no structured
    content, which would have to match the tool's output schema (the TypeScript client checks it)."""
    assert result.is_error and result.structured_content is None, result
    error: dict[str, Any] = json.loads(result.content[1].text)["error"]
    return error


def test_progress_lines_become_strictly_increasing_progress() -> None:
    updates: list[ProgressUpdate] = []
    progress = Progress(stream=ProgressStream(updates.append), live=True)  # type: ignore[arg-type]
    progress.start("chunking files", 3)
    for _ in range(3):
        progress.advance()
    progress.note("waiting for the Lamina lock held by pid 1 …")
    progress.start("embedding chunks", 2)
    progress.advance(2)
    progress.finish()
    values = [u.progress for u in updates]
    assert values == sorted(set(values)) and len(values) >= 5
    assert any(u.message.startswith("chunking files: 3/3") for u in updates)
    assert any(u.message.startswith("waiting for the Lamina lock") for u in updates)
    last = updates[-1]
    assert last.message.startswith("embedding chunks: 2/2") and last.progress == last.total
    tally, line = ProgressTally(), "\r\x1b[Kchunking files: 4/9 (2/s, ETA 2 s)"
    assert [(u.progress, u.total) for u in tally.feed(line)] == [(5, 10)]  # the phase's start counts one
    assert tally.feed(line) == []  # a repeated line (Progress.finish) is not progress


def test_tools_have_schemas_and_malformed_arguments_are_tool_errors(tmp_path: Path) -> None:
    repo = shop_repo(tmp_path / "shop")

    async def body() -> None:
        async with lamina_mcp(repo) as client:  # the first call on a cold repository: roots, and no build
            roots = await client.call_tool("list_workflows", {})
            assert not roots.is_error and "refund-order" in {
                w["id"] for w in roots.structured_content["workflows"]
            }  # type: ignore[index]
            assert graphd_pid(repo) is None  # nothing was built, so no graphd was started
        for mode in ("auto", "legacy"):  # the 2026 per-request era and the initialize handshake
            async with lamina_mcp(repo, mode=mode) as client:
                listed = {t.name: t for t in (await client.list_tools()).tools}
                assert set(listed) == TOOL_NAMES
                for tool in listed.values():
                    assert tool.input_schema["type"] == "object"
                    assert tool.input_schema["additionalProperties"] is False
                    assert tool.output_schema and tool.output_schema["type"] == "object"
                    assert tool.description and len(tool.description) > 80
                assert listed["prepare_work"].input_schema["required"] == ["task"]
                assert set(listed["prepare_work"].input_schema["properties"]) == {"task", "workflow"}
                assert listed["search_code"].input_schema["required"] == ["query"]
                assert listed["show_workflow"].input_schema["required"] == ["id"]
                for name in ("prepare_work", "search_code"):
                    assert "untrusted" in (listed[name].description or "")
                    trust = listed[name].output_schema["properties"]["trust"]  # type: ignore[index]
                    assert trust["properties"]["sources"] == {"const": "untrusted"}

                for name, arguments in [
                    ("prepare_work", {}),
                    ("prepare_work", {"task": 7}),
                    ("prepare_work", {"task": "x", "workflows": "refund-order"}),
                    ("search_code", {"query": "refund", "limit": 0}),
                    ("show_workflow", {"id": ""}),
                ]:
                    result = await client.call_tool(name, arguments)
                    assert result.is_error, (name, arguments)
                    error = tool_error(result)
                    assert error["code"] == "LAMINA_USAGE" and name in error["message"] and error["hint"]
                    assert result.content[0].text.startswith("LAMINA_USAGE: ")  # type: ignore[union-attr]
                # a blank task or query passes the schema (a string of length 1+) but says nothing: refused
                # before anything is built or asked, as the CLI does
                for name, arguments in [("prepare_work", {"task": "   "}), ("search_code", {"query": "\n"})]:
                    result = await client.call_tool(name, arguments)
                    assert result.is_error, (name, arguments)
                    error = tool_error(result)
                    assert error["code"] == "LAMINA_USAGE" and "is empty" in error["message"]
                    if name == "prepare_work":
                        assert "`task`" in error["hint"], error  # not a CLI hint an agent cannot follow
                assert (
                    set(t.name for t in (await client.list_tools(cache_mode="refresh")).tools) == TOOL_NAMES
                )

                resources = (await client.list_resources()).resources
                graph_files = sorted(
                    p.relative_to(repo).as_posix() for p in (repo / "product").rglob("*.toml")
                )
                assert sorted(r.name for r in resources) == graph_files
                first = resources[0]
                read = await client.read_resource(first.uri)
                assert read.contents[0].text == (repo / first.name).read_text()  # type: ignore[union-attr]

    run(body)


def test_lamina_mcp_outside_a_repository_exits_with_its_code(tmp_path: Path) -> None:
    proc = run_lamina("-C", str(tmp_path), "mcp", timeout=60)
    assert proc.returncode == 10 and "LAMINA_NOT_A_REPO" in proc.stderr


# --- slow: the real model and graphd ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory, lamina_home: Path) -> Any:
    repo = shop_repo(tmp_path_factory.mktemp("mcp-shop") / "shop")
    yield repo
    run_lamina("graphd", "stop", cwd=repo)


def graphd_pid(repo: Path, env: dict[str, str] | None = None) -> int | None:
    info = cli_json(repo, "graphd", "status", env=env)
    return info.get("pid") if info.get("running") else None


@pytest.mark.slow
def test_prepare_work_is_the_cli_packet_with_progress(shop: Path) -> None:
    task = "Refund a paid order when the warehouse cannot ship it"
    updates: list[tuple[float, float | None, str | None]] = []

    async def record(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    async def body() -> dict[str, Any]:
        async with lamina_mcp(shop) as client:
            first = await client.call_tool("prepare_work", {"task": task}, progress_callback=record)
            assert not first.is_error, first.content
            again = await client.call_tool("prepare_work", {"task": task})  # fresh: graphd's one round trip
            assert again.structured_content == first.structured_content
            text = first.content[0].text  # type: ignore[union-attr]
            assert text.startswith(f"Task: {task}") and "untrusted" in text
            results = {"prepare": first.structured_content}
            for name, arguments in [
                ("search_code", {"query": "issue a refund"}),
                ("context_status", {}),
                ("list_workflows", {}),
                ("show_workflow", {"id": "refund-order"}),
                ("prepare_work", {"task": "anything", "workflow": "refund-order"}),
            ]:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, (name, result.content)
                if name != "prepare_work":  # the text of the other tools is their result as JSON
                    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
                results[name if name != "prepare_work" else "explicit"] = result.structured_content
            for limit in (2, 2.0):  # JSON Schema's integer takes 2.0 too; it was LAMINA_INTERNAL (session 36)
                short = await client.call_tool("search_code", {"query": "issue a refund", "limit": limit})
                assert not short.is_error, short.content
                assert short.structured_content["sources"] == results["search_code"]["sources"][:2]  # type: ignore[index]
            return results

    got = run(body)
    # A first build reports MCP progress, strictly increasing, with the build's own progress lines.
    values = [u[0] for u in updates]
    assert values and values == sorted(set(values))
    assert any((m or "").startswith("embedding chunks: ") for _, _, m in updates)
    # The same answers as the CLI's --json, through the same graphd and index.
    assert got["prepare"] == cli_json(shop, "work", "prepare", task)
    assert got["prepare"]["trust"] == {"sources": "untrusted"}
    assert got["search_code"] == cli_json(shop, "context", "search", "issue a refund")
    assert got["search_code"]["trust"] == {"sources": "untrusted"}
    assert got["context_status"] == cli_json(shop, "context", "status")
    assert got["context_status"]["state"] == "fresh"
    roots = load_graph(shop, ["product/**/*.toml"]).roots()
    assert [w["id"] for w in got["list_workflows"]["workflows"]] == sorted(w.id for w in roots)
    assert got["list_workflows"]["graph_version"] == got["prepare"]["index"]["graph_version"]
    shown = got["show_workflow"]
    assert shown["status"] == "active" and shown["root"] is True
    assert (
        shown["graph"] == got["explicit"]["graph"] and shown["obligations"] == got["explicit"]["obligations"]
    )
    assert shown["graph"]["workflows"][0]["id"] == "refund-order"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"task": "anything", "workflow": "no-such-flow"}, "LAMINA_UNKNOWN_WORKFLOW"),
        ({"task": "anything", "workflow": "loyalty-points"}, "LAMINA_INACTIVE_WORKFLOW"),
    ],
)
def test_unknown_or_inactive_workflow_is_a_coded_tool_error(shop: Path, arguments: dict, code: str) -> None:
    async def body() -> None:
        async with lamina_mcp(shop) as client:
            result = await client.call_tool("prepare_work", arguments)
            assert result.is_error
            error = tool_error(result)
            assert error["code"] == code and "list_workflows" in error["hint"]
            assert result.content[0].text.startswith(f"{code}: ")  # type: ignore[union-attr]
            if code == "LAMINA_UNKNOWN_WORKFLOW":
                shown = await client.call_tool("show_workflow", {"id": arguments["workflow"]})
                assert shown.is_error and tool_error(shown)["code"] == code
            assert not (await client.call_tool("context_status", {})).is_error  # still answering

    run(body)


@pytest.mark.slow
def test_a_killed_graphd_is_started_again(shop: Path) -> None:
    task = "Cancel an order before it ships"

    async def body() -> None:
        async with lamina_mcp(shop) as client:
            before = await client.call_tool("prepare_work", {"task": task})
            assert not before.is_error
            pid = graphd_pid(shop)
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            after = await client.call_tool("prepare_work", {"task": task})
            assert not after.is_error, after.content
            assert after.structured_content == before.structured_content
            restarted = graphd_pid(shop)
            assert restarted is not None and restarted != pid

    run(body)


@pytest.mark.slow
def test_a_corrupt_or_missing_runtime_is_retrieval_integrity(
    tmp_path: Path, shop: Path, lamina_home: Path
) -> None:
    import shutil

    home = tmp_path / "home"
    shutil.copytree(lamina_home, home, symlinks=True)
    model = next(home.rglob("model.onnx"))
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF
    model.write_bytes(bytes(data))
    corrupt = {"LAMINA_HOME": str(home)}
    missing = {"LAMINA_HOME": str(tmp_path / "empty-home")}
    run_lamina("graphd", "stop", cwd=shop)  # the next graphd is started by the server, with its runtime

    async def body() -> None:
        for env in (corrupt, missing):
            async with lamina_mcp(shop, env) as client:
                result = await client.call_tool("prepare_work", {"task": "Refund a paid order"})
                assert result.is_error, result.content
                error = tool_error(result)
                assert error["code"] == "LAMINA_RETRIEVAL_INTEGRITY" and "runtime" in error["hint"]
                degraded = await client.call_tool(
                    "prepare_work", {"task": "refund", "workflow": "refund-order"}
                )
                assert not degraded.is_error, degraded.content
                assert degraded.structured_content["retrieval"]["mode"] == "lexical_degraded"  # type: ignore[index]
            run_lamina("graphd", "stop", cwd=shop, env=env)

    try:
        run(body)
    finally:
        run_lamina("graphd", "stop", cwd=shop, env=corrupt)


def wait_for_lock(path: Path) -> None:
    """Block until no process holds Lamina's per-identity build lock (lamina/index/build.py)."""
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    finally:
        os.close(fd)


@pytest.mark.slow
@pytest.mark.parametrize("path", ["one-round-trip", "full", "in-process"])
def test_a_cancelled_call_stops_the_build_and_activates_nothing(shop: Path, path: str) -> None:
    """With graphd running, prepare_work is graphd's one round trip; with graphd stopped, the full path
    (which starts graphd and asks it to build): either way the cancellation reaches the build graphd hosts.
    With LAMINA_BUILD_IN_PROCESS=1 the server builds itself and stops at its next unit of work."""
    # ~190 new chunks: three embedding batches, so the build is still running when the call is cancelled.
    extra = {
        f"backend/shop/generated_{n}.py": "".join(
            f"def ledger_{path[:3]}_{n}_{i}(amount):\n    return amount * {i} + {n}\n\n\n" for i in range(24)
        )
        for n in range(8)
    }
    cli_json(
        shop, "work", "prepare", "Refund a paid order"
    )  # fresh for this runtime (an earlier test's may differ)
    before = cli_json(shop, "context", "status")
    assert before["state"] == "fresh"
    build_lock = Path(before["data_dir"]) / "builds" / before["identity"]["key"] / "lock"
    if path == "full":
        run_lamina("graphd", "stop", cwd=shop)
    for rel, text in extra.items():
        (shop / rel).write_text(text)
    messages: list[str] = []

    async def body() -> dict[str, Any]:
        env = {"LAMINA_BUILD_IN_PROCESS": "1"} if path == "in-process" else None
        async with lamina_mcp(shop, env) as client:
            with anyio.CancelScope() as scope:

                async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                    messages.append(message or "")
                    if (message or "").startswith("embedding chunks"):
                        scope.cancel()

                await client.call_tool(
                    "prepare_work", {"task": "Record a ledger entry"}, progress_callback=on_progress
                )
            assert scope.cancelled_caught, messages
            # graphd stops the build at its next batch, then releases the identity's build lock.
            with anyio.fail_after(120):
                await anyio.to_thread.run_sync(wait_for_lock, build_lock, abandon_on_cancel=True)
            status = await client.call_tool("context_status", {})
            assert not status.is_error
            return status.structured_content  # type: ignore[return-value]

    try:
        after = run(body)
        assert after["generation"] == before["generation"] and after["state"] == "stale"
        assert after["pending"] == []
        assert after["last_failure"]["code"] == "LAMINA_INTERRUPTED"
    finally:
        for rel in extra:
            (shop / rel).unlink()
    assert cli_json(shop, "context", "status")["generation"] == before["generation"]
