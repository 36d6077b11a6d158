"""SCM HA on real processes: `pyozone cluster up --scm-ha` runs three SCMs of one service (scm1..scm3 of
scmservice: `scm --init` on scm1, `scm --bootstrap` on scm2 and scm3), OM, the S3 gateway and three
datanodes, each its own process. Every datanode registers with every SCM; a follower asked to allocate a
block or close a pipeline refuses naming the leader (Ozone's ServerNotLeaderException); the leader killed
with SIGKILL, writes through `pyozone sh` resume on the next leader, the admin tools fail over, no
container id is handed out twice, and the killed SCM restarts and catches up from the log. A key written
before the failover reads back through the next leader: a follower keeps the replica reports of a container
whose record it has not applied yet (scm/container/report_handler.py), so the new leader knows them."""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pyozone.cli.main import main
from pyozone.cluster.layout import HOST, SCM_HA_NODES, SCM_SERVICE_ID
from pyozone.cluster.status import raft_leader, raft_view
from pyozone.common.net import HostPort
from pyozone.framework.scm_admin import ScmAdminClient
from pyozone.framework.scm_block import ScmBlockClient
from pyozone.framework.scm_errors import ScmClientError
from pyozone.hdds.ids import RATIS_THREE
from tests.e2e.cluster.cluster_helpers import LiveCluster, Result, all_running, sh, sh_here
from tests.polling import wait_for

VOLUME, BUCKET = "scmhavol", "scmhabucket"
WRITTEN = {"before": os.urandom(64_000), "after": os.urandom(64_000)}
"""A key written before the leader's kill, and one after."""


@pytest.fixture(scope="module")
def started(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
    tuple[LiveCluster, Result]
]:  # fmt: skip
    cluster = LiveCluster(tmp_path_factory.mktemp("scm-ha"))
    request.addfinalizer(cluster.stop)
    yield cluster, cluster.up(3, 1, None, "--scm-ha")


def http_ports(cluster: LiveCluster) -> dict[str, int]:
    return {d.name: d.ports["http"] for d in cluster.state.scms()}


def leader(cluster: LiveCluster, timeout_s: float = 60) -> str:
    """The SCM that leads and executes (its /api/v1/ratis says ready), waited for."""
    return wait_for(lambda: raft_leader(http_ports(cluster)), timeout_s, "an SCM that leads", interval_s=0.2)


def api(cluster: LiveCluster, node: str, path: str) -> Any:
    port = cluster.state.daemon(node).ports["http"]
    with urllib.request.urlopen(f"http://{HOST}:{port}{path}", timeout=5) as answer:
        return json.loads(answer.read())


def registered(cluster: LiveCluster, node: str) -> int:
    """How many HEALTHY datanodes the SCM knows (each SCM keeps its own view from their heartbeats)."""
    return int(api(cluster, node, "/api/v1/datanodes?health=HEALTHY")["total"])


def container_ids(cluster: LiveCluster, *scm: str) -> list[int]:
    """`admin container list` (through the service's failover, or at one SCM's `--scm` address)."""
    listed = cluster.poll_json("container", "list", *scm)
    assert listed is not None, f"admin container list {' '.join(scm)} failed"
    return [c["containerID"] for c in listed]


def key_containers(cluster: LiveCluster, key: str) -> set[int]:
    info = sh_here(cluster, "key", "info", f"/{VOLUME}/{BUCKET}/{key}")
    assert info.code == 0, info
    return {location["containerID"] for location in json.loads(info.out)["ozoneKeyLocations"]}


def admin_here(cluster: LiveCluster, *args: str) -> int:
    """`pyozone admin ARGS --conf DIR/conf` in this process (without a new interpreter's start-up)."""
    with contextlib.redirect_stdout(io.StringIO()):
        return main(["admin", *args, "--conf", str(cluster.conf_dir)])


def read_back(cluster: LiveCluster, key: str, path: Path) -> bytes:
    got = sh_here(cluster, "key", "get", f"/{VOLUME}/{BUCKET}/{key}", str(path))
    assert got.code == 0, got
    return path.read_bytes()


def test_up_status_and_admin_scm_roles_show_each_scm_and_the_leader(
    started: tuple[LiveCluster, Result],
) -> None:
    cluster, up = started
    state = cluster.state
    assert [d.name for d in state.scms()] == list(SCM_HA_NODES) and not state.has("scm")
    assert f"3 SCMs of {SCM_SERVICE_ID}" in up.out
    for scm in state.scms():
        line = next(line for line in up.out.splitlines() if line.strip().startswith(f"{scm.name}:"))
        for port in scm.ports.values():  # client, block, datanode, ratis, web UI
            assert f"127.0.0.1:{port}" in line, line
    assert next(line for line in up.out.splitlines() if "SCM leader:" in line).split()[2] in SCM_HA_NODES
    current = leader(cluster)
    status = cluster.cluster("status")
    assert status.code == 0 and f"SCM leader: {current}" in status.out, status
    shown = {line.split()[0]: line.split()[1] for line in status.out.splitlines() if " pid " in line}
    assert shown == {d.name: "running" for d in state.daemons}, (status.out, cluster.logs())
    roles = cluster.admin("scm", "roles")  # HOST:RATIS_PORT:ROLE:NODE_ID:IP, found through the site file
    assert roles.code == 0, roles
    assert {line.split(":")[3]: line.split(":")[2] for line in roles.out.splitlines()} == {
        node: "LEADER" if node == current else "FOLLOWER" for node in SCM_HA_NODES
    }


def test_every_datanode_registers_with_every_scm(started: tuple[LiveCluster, Result]) -> None:
    cluster, _ = started
    wait_for(
        lambda: all(registered(cluster, node) == 3 for node in SCM_HA_NODES),
        60,
        "3 HEALTHY datanodes on every SCM",
        interval_s=0.5,
    )


def test_a_follower_refuses_to_allocate_a_block_or_close_a_pipeline_naming_the_leader(
    started: tuple[LiveCluster, Result],
) -> None:
    cluster, _ = started
    current = leader(cluster)
    follower = next(node for node in SCM_HA_NODES if node != current)
    ports = {d.name: d.ports for d in cluster.state.scms()}
    refusal = f"ServerNotLeaderException: Server:{follower} is not the leader. Suggested leader is Server:"
    with (
        ScmBlockClient(HostPort(HOST, ports[follower]["block"]), timeout_s=10) as block,
        pytest.raises(ScmClientError) as refused,
    ):
        block.allocate_block(1 << 20, RATIS_THREE, owner="om")
    assert f"{refusal}{HOST}:{ports[current]['block']}." in str(refused.value)
    pipeline = next(p["id"] for p in cluster.pipelines() if p["state"] == "OPEN")
    with (
        ScmAdminClient(HostPort(HOST, ports[follower]["client"]), timeout_s=10) as admin,
        pytest.raises(ScmClientError) as refused,
    ):
        admin.close_pipeline(pipeline)
    assert f"{refusal}{HOST}:{ports[current]['client']}." in str(refused.value)
    assert next(p for p in cluster.pipelines() if p["id"] == pipeline)["state"] == "OPEN"


def test_the_leader_killed_writes_resume_on_the_next_and_no_container_id_is_handed_out_twice(
    started: tuple[LiveCluster, Result], tmp_path: Path
) -> None:
    cluster, _ = started
    for name, content in WRITTEN.items():
        (tmp_path / name).write_bytes(content)
    assert sh_here(cluster, "volume", "create", f"/{VOLUME}").code == 0
    assert sh_here(cluster, "bucket", "create", f"/{VOLUME}/{BUCKET}").code == 0
    assert sh(cluster, "key", "put", f"/{VOLUME}/{BUCKET}/before", str(tmp_path / "before")).code == 0
    assert read_back(cluster, "before", tmp_path / "before.got") == WRITTEN["before"]
    before = container_ids(cluster)
    for container in before:  # the next write needs a container the next leader allocates
        assert admin_here(cluster, "container", "close", str(container)) == 0
    killed = leader(cluster)
    cluster.kill(killed)  # kill -9
    started_at = time.monotonic()
    put = sh(cluster, "key", "put", f"/{VOLUME}/{BUCKET}/after", str(tmp_path / "after"))
    resumed_s = time.monotonic() - started_at
    assert put.code == 0, (put, cluster.logs())
    print(f"writes resumed {resumed_s:.2f} s after the SCM leader's SIGKILL")
    successor = leader(cluster)
    assert successor != killed
    assert read_back(cluster, "after", tmp_path / "after.got") == WRITTEN["after"]
    # the admin tools fail over past the killed SCM (the first the site file names, when it is scm1)
    safemode = cluster.admin("safemode", "status")
    assert safemode.code == 0 and "SCM is out of safe mode." in safemode.out, safemode
    assert any(p["state"] == "OPEN" for p in cluster.pipelines())
    on_successor = container_ids(
        cluster, "--scm", f"{HOST}:{cluster.state.daemon(successor).ports['client']}"
    )
    assert len(set(on_successor)) == len(on_successor) and set(before) <= set(on_successor)
    new = key_containers(cluster, "after")
    assert new and min(new) > max(before), (before, on_successor, new)
    # the killed SCM comes back as a follower, catches up from the log and takes the datanodes again
    cluster.start(killed)
    target = api(cluster, successor, "/api/v1/ratis")["commitIndex"]
    wait_for(
        lambda: (
            (view := raft_view(http_ports(cluster)[killed])) is not None
            and view.get("role") == "FOLLOWER"
            and view.get("leader") == successor
            and view.get("appliedIndex", -1) >= target
        ),
        60,
        f"{killed} caught up with {successor}",
        interval_s=0.5,
    )
    wait_for(lambda: registered(cluster, killed) == 3, 60, f"3 HEALTHY datanodes on {killed}", interval_s=0.5)


def test_a_key_written_before_the_failover_reads_back_through_the_next_leader(
    started: tuple[LiveCluster, Result], tmp_path: Path
) -> None:
    cluster, _ = started
    assert read_back(cluster, "before", tmp_path / "before.got") == WRITTEN["before"]


@pytest.mark.slow
def test_scm_ha_with_om_ha_restarts_from_its_data_dir_in_its_mode(tmp_path: Path) -> None:
    """Both services at once; `cluster down`, then `cluster up` without the flags: the data dir keeps its
    three SCMs and three OMs (scm2 and scm3 bootstrap again: already initialized, skipped), and the key."""
    cluster = LiveCluster(tmp_path / "both")
    try:
        up = cluster.up(3, 1, None, "--scm-ha", "--om-ha")
        assert "Starting 3 SCMs of scmservice, 3 OMs of omservice and 3 datanode(s)" in up.out, up
        data = os.urandom(64_000)
        (tmp_path / "data").write_bytes(data)
        for command in (("volume", "create", f"/{VOLUME}"), ("bucket", "create", f"/{VOLUME}/{BUCKET}")):
            assert sh(cluster, *command).code == 0
        assert sh(cluster, "key", "put", f"/{VOLUME}/{BUCKET}/kept", str(tmp_path / "data")).code == 0
        assert cluster.cluster("down", timeout_s=90).code == 0
        again = cluster.cluster("up", "--background", "--timeout", "90", timeout_s=150)
        assert again.code == 0 and "Starting 3 SCMs of scmservice, 3 OMs of omservice" in again.out, again
        assert sh(cluster, "key", "get", f"/{VOLUME}/{BUCKET}/kept", str(tmp_path / "got")).code == 0
        assert (tmp_path / "got").read_bytes() == data
        all_running(cluster)
    finally:
        cluster.stop()
