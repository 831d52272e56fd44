"""A generation that hits a full disk never replaces the current one (real tmpfs, real graphd)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from lamina.errors import LaminaError
from lamina.graphd.client import connect, stop
from lamina.graphd.server import LOW_DISK_BYTES
from lamina.workspace import open_workspace
from tests.helpers import EXAMPLE_GRAPH, make_repo, synthetic_versions, upload_generation

pytestmark = pytest.mark.slow


@pytest.fixture()
def small_disk(tmp_path: Path):
    mount = tmp_path / "disk"
    mount.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=128m", "tmpfs", str(mount)], capture_output=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {proc.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_full_disk_keeps_the_current_generation(small_disk: Path) -> None:
    repo = make_repo(small_disk / "repo")  # repository, its .git and both databases on the small disk
    ws = open_workspace(repo)
    files = {"product/checkout.toml": EXAMPLE_GRAPH.read_text()}
    try:
        with connect(ws) as client:
            version = client.call("graph.import", files=files)["graph_version"]
            good = upload_generation(client, "id-a", synthetic_versions(500, dim=64), version)
            before = client.call("gen.status", identity="id-a")
        free = os.statvfs(small_disk)
        filler = small_disk / "filler"
        with open(filler, "wb") as fh:  # leave ~6 MB free: far less than the next generation needs
            fh.truncate(max(0, free.f_bavail * free.f_frsize - 6 * 1024 * 1024))
        with open(filler, "r+b") as fh:  # tmpfs allocates on write, so write it for real
            fh.write(b"\0" * os.path.getsize(filler))
        big = synthetic_versions(20000, dim=384, seed=9, prefix="big")
        with pytest.raises(LaminaError) as err:
            with connect(ws) as client:
                upload_generation(client, "id-a", big, version, batch=10000)
        assert err.value.code == "LAMINA_DISK_FULL" and "nothing was written" in err.value.message
        filler.unlink()
        with connect(
            ws
        ) as client:  # graphd (restarted if the failure killed it) still has the old generation
            after = client.call("gen.status", identity="id-a")
            assert after["generation"] == good
            assert after["digest"] == before["digest"] and after["counts"] == before["counts"]
            retry = upload_generation(
                client, "id-a", synthetic_versions(2000, dim=64, seed=3, prefix="r"), version
            )
            assert client.call("gen.status", identity="id-a")["generation"] == retry
    finally:
        stop(ws)


def test_a_graph_import_is_sized_by_the_files_its_header_carries(small_disk: Path) -> None:
    """graph.import (and gen.begin) carry their data in the JSON header, not the payload: the space check
    must count it, or a large graph is written into the last free megabytes."""
    repo = make_repo(small_disk / "repo")
    ws = open_workspace(repo)
    try:
        with connect(ws) as client:
            client.call("graph.import", files={"product/checkout.toml": EXAMPLE_GRAPH.read_text()})
        free = os.statvfs(small_disk)
        filler = small_disk / "filler"
        keep = LOW_DISK_BYTES + 2 * 1024 * 1024  # the reserve and 2 MB: less than 4x the graph below
        with open(filler, "wb") as fh:
            fh.write(b"\0" * max(0, free.f_bavail * free.f_frsize - keep))
        big = EXAMPLE_GRAPH.read_text() + "\n" + "# padding\n" * 100_000  # ~1 MB of TOML comments
        with pytest.raises(LaminaError) as err:
            with connect(ws) as client:
                client.call("graph.import", files={"product/checkout.toml": big})
        assert err.value.code == "LAMINA_DISK_FULL" and "graph.import refused" in err.value.message
    finally:
        stop(ws)
