"""Every request graphd answers, in one table: its name, area, header fields, and how graphd serves it.

Adding a request is one row here and one `op_<name>` method on the daemon (lamina/graphd/server.py; a
test checks that the two match). The server keeps the transport, the handshake and the idle timer and
takes everything else from this table: which requests write (and so pass the disk-space check first),
which run outside the database lock and stream progress frames (hosted builds), which a dormant graphd
answers without opening its databases. `ping` returns the protocol version and the request names, so a
client decides from that what a running graphd can do (lamina/index/hosted_prepare.py).
"""

from __future__ import annotations

from dataclasses import dataclass

PROTOCOL_VERSION = 2  # 2: ping lists the operations; request names and fields as below


@dataclass(frozen=True)
class Request:
    name: str
    area: str  # daemon | graph | index | generations | queries | builds | model
    fields: tuple[str, ...]  # header fields it reads (besides `op`)
    summary: str
    writes: bool = False  # stores data: refused up front when the disk cannot hold it
    databases: bool = (
        True  # runs under the database lock (else: a hosted build, talking back over the socket)
    )
    streams: bool = False  # may send progress frames before its reply
    resting: bool = False  # answered by a dormant graphd without opening its databases
    handler: str = ""  # the daemon's method; default `op_` + the name with `.` as `_`

    @property
    def method(self) -> str:
        return self.handler or "op_" + self.name.replace(".", "_")


REQUESTS: tuple[Request, ...] = (
    Request(
        "ping", "daemon", (), "pid, instance, socket, uptime, databases, memory, operations", resting=True
    ),
    Request("status", "daemon", (), "the same as ping", resting=True, handler="op_ping"),
    Request(
        "stop", "daemon", (), "stop after the replies in flight; idle connections are closed", resting=True
    ),
    Request(
        "rest",
        "daemon",
        (),
        "go dormant now: close the databases, drop ranking state and model",
        resting=True,
    ),
    Request("graph.import", "graph", ("files",), "validate and store the product graph", writes=True),
    Request("graph.roots", "graph", (), "the Workflow roots of the stored graph"),
    Request("graph.closure", "graph", ("workflow",), "one workflow's stored closure and obligations"),
    Request("index.put", "index", (), "store document versions (Arrow payload)", writes=True),
    Request(
        "gen.begin",
        "generations",
        ("identity", "manifest", "expected_count", "expected_digest", "base"),
        "start a pending generation",
        writes=True,
    ),
    Request(
        "gen.members",
        "generations",
        ("generation", "remove"),
        "declare members; answers which are not stored",
        writes=True,
    ),
    Request(
        "gen.commit", "generations", ("generation",), "activate when membership and digest match", writes=True
    ),
    Request("gen.fail", "generations", ("generation", "reason"), "abandon a pending generation"),
    Request(
        "gen.status", "generations", ("identity",), "an identity's current generation, counts, last failure"
    ),
    Request("query.prepare", "queries", ("identity", "task", "workflow", "fresh"), "the packet of a task"),
    Request("query.search", "queries", ("identity", "text", "ranker"), "source localization only"),
    Request("embed", "model", ("texts", "model_digest"), "embed a few texts with graphd's loaded model"),
    Request("model.release", "model", (), "unload the model now (loaded again on demand)", resting=True),
    Request(
        "build",
        "builds",
        ("worktree", "store", "model_digest", "quick"),
        "run the client's build here",
        databases=False,
        streams=True,
        handler="host_build",
    ),
    Request(
        "prepare",
        "builds",
        ("worktree", "environment", "task", "workflow"),
        "freshness, build and packet in one round trip",
        databases=False,
        streams=True,
        handler="host_build",
    ),
)
BY_NAME: dict[str, Request] = {request.name: request for request in REQUESTS}
