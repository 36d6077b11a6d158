"""Acceptance (issue 32): the Container Balancer on real processes. Three datanodes hold every replica of
closed containers, two empty ones join; `admin containerbalancer start` moves replicas onto them (a LOW
priority replicate, then the delete of the source's replica), every key reads back byte-identical and
`containerbalancer status -v` and SCM's /prom show the moves. One target dies mid-move: its move is
reported failed, nothing is lost and no container is left under-replicated.

Utilization on one shared disk: the datanodes reserve (hdds.datanode.dir.du.reserved) all of the disk but
CAPACITY, so the disk's other users fill the reserved space and each datanode reports CAPACITY less its
own bytes (Ozone's VolumeUsage.getRemainingReserved), and a threshold of THRESHOLD percent of it tells a
datanode with a few MB from an empty one.

The dying target is paused (SIGSTOP) before the run starts, then killed once SCM sent a move towards it:
on a quiet machine a local copy of a 1 MB container takes milliseconds, so a kill after a move began
would race its end; the paused target still counts HEALTHY for STALE_S, long enough to be chosen.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from pyozone.cli.main import main
from tests.e2e.cluster.cluster_helpers import (
    LiveCluster,
    MiB,
    close_open_containers,
    live_cluster,
    ozone_client,
    wait_container_closed,
)
from tests.polling import wait_for

# two minutes and more of datanodes restarting and moves timing out: behind -m slow (the balancer's rules,
# moves and failures are proven in process: tests/unit/scm/balancer, tests/sim/test_sim_balancer.py)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

VOL, BUCKET = "vol1", "bucket1"
KEYS = 5  # one closed container each: 15 replicas, 3 on each of 5 datanodes once balanced
KEY_BYTES = MiB
CAPACITY = 2 << 30
THRESHOLD = "0.01"  # percent of CAPACITY: 200 KB, a fifth of a container
FULL, EMPTY = ("dn1", "dn2", "dn3"), ("dn4", "dn5")
STALE_S = 10  # the paused target stays HEALTHY this long: the `start` and its first iteration fit in it
SURVIVOR, VICTIM = EMPTY


def reserved(tmp: Any) -> int:
    """All of the disk but CAPACITY: more than its other users hold, while the disk has CAPACITY free."""
    disk = shutil.disk_usage(tmp)
    assert disk.free > 2 * CAPACITY, f"the test needs {2 * CAPACITY} bytes free, the disk has {disk.free}"
    return disk.total - CAPACITY


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    overrides = {
        "hdds.datanode.dir.du.reserved": f"{reserved(tmp_path_factory.getbasetemp())}B",
        "hdds.datanode.volume.min.free.space": "1MB",
        "hdds.datanode.volume.min.free.space.percent": "0",
        "ozone.scm.container.size": "16MB",
        "ozone.scm.block.size": "4MB",
        "ozone.scm.close.container.wait.duration": "2s",
        "hdds.scm.replication.thread.interval": "2s",
        "hdds.container.balancer.balancing.iteration.interval": "1s",
        "ozone.scm.stale.node.interval": f"{STALE_S}s",
        "hdds.node.report.interval": "1s",  # SCM sees the written bytes soon (its balancer reads them)
        "ozone.scm.dead.node.interval": f"{2 * STALE_S}s",
    }
    with live_cluster(
        request, tmp_path_factory, "balancer", len(FULL) + len(EMPTY), overrides=overrides
    ) as c:
        yield c


def open_three_pipelines(cluster: LiveCluster) -> list[set[str]]:
    """The hostnames of every OPEN RATIS/THREE pipeline's members."""
    return [
        {n["hostname"] for n in p["nodes"]}
        for p in cluster.pipelines()
        if p["state"] == "OPEN" and p["replicationConfig"].endswith("THREE")
    ]


def replica_hosts(cluster: LiveCluster, container_id: int, uuids: dict[str, str]) -> list[str]:
    info = cluster.container(container_id) or {}
    return sorted(uuids[r["datanode"]] for r in info.get("replicas", []))


def status(cluster: LiveCluster) -> dict[str, Any]:
    return cluster.poll_json("containerbalancer", "status", "-v") or {}


def admin_text(cluster: LiveCluster, *args: str) -> str:
    """`pyozone admin ARGS` run in this process (as LiveCluster.poll_json, without --json): its stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["admin", *args, "--conf", str(cluster.conf_dir)])
    assert code == 0, out.getvalue()
    return out.getvalue()


def scm_http(cluster: LiveCluster, path: str) -> str:
    url = f"http://127.0.0.1:{cluster.port('scm', 'http')}{path}"
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.read().decode()


def used_as_scm_sees_it(cluster: LiveCluster) -> dict[str, int]:
    """Each eligible datanode's used bytes in SCM's latest node reports (the balancer's input)."""
    return {n["hostname"]: n["used"] for n in json.loads(scm_http(cluster, "/api/v1/balancer"))["datanodes"]}


def prom(cluster: LiveCluster) -> dict[str, float]:
    text = scm_http(cluster, "/prom")
    return {
        name: float(value)
        for line in text.splitlines()
        if line.startswith("container_balancer_metrics_")
        for name, value in [line.rsplit(" ", 1)]
    }


def test_the_balancer_fills_the_empty_datanodes_and_a_dead_target_fails_its_move(
    cluster: LiveCluster,
) -> None:
    began = time.monotonic()
    for name in EMPTY:  # they join once the data is written
        cluster.kill(name)
    wait_for(
        lambda: (pipelines := open_three_pipelines(cluster)) and all(p <= set(FULL) for p in pipelines),
        STALE_S + 30,
        f"OPEN RATIS/THREE pipelines on {FULL} only",
        interval_s=0.5,
    )

    data: dict[str, bytes] = {}
    containers: dict[str, int] = {}
    with ozone_client(cluster) as client:
        client.create_volume(VOL)
        client.create_bucket(VOL, BUCKET)
        for i in range(KEYS):
            name = f"key-{i}"
            data[name] = os.urandom(KEY_BYTES)
            info = client.put_key(VOL, BUCKET, name, data[name])
            (location,) = info.locations
            containers[name] = location.container_id
            close_open_containers(cluster)  # the next key goes to another container
    assert len(set(containers.values())) == KEYS, containers
    for cid in containers.values():
        wait_container_closed(cluster, cid)

    for name in EMPTY:
        cluster.start(name)
    nodes = cluster.wait_healthy(len(FULL) + len(EMPTY))
    uuids = {n["uuid"]: host for host, n in nodes.items()}
    for cid in containers.values():
        assert replica_hosts(cluster, cid, uuids) == list(FULL)
    # the balancer reads node reports: wait until they carry the keys' bytes and the empty datanodes
    wait_for(
        lambda: (
            (used := used_as_scm_sees_it(cluster)).keys() == {*FULL, *EMPTY}
            and all(used[n] >= KEYS * KEY_BYTES for n in FULL)
        ),
        30,
        "SCM's node reports of the written bytes",
        interval_s=0.5,
    )

    victim_pid = cluster.state.pids[VICTIM]
    os.kill(victim_pid, signal.SIGSTOP)  # HEALTHY to SCM for STALE_S more
    # in this process: a new interpreter may take seconds of the paused target's STALE_S on a busy host
    started = cluster.poll_json("containerbalancer", "start", "-t", THRESHOLD, "-i", "3", "-d", "100")
    assert started == {"start": True, "message": None}, started

    victim_uuid = nodes[VICTIM]["uuid"]
    seen: dict[int, dict[str, Any]] = {}  # iteration number -> its latest status

    def observe() -> dict[str, Any]:
        s = status(cluster)
        for it in s.get("iterations") or []:
            seen[it["iterationNumber"]] = it
        return s

    wait_for(
        lambda: observe() and victim_uuid in seen.get(1, {}).get("sizeEnteringNodes", {}),
        STALE_S - 1,
        f"a move towards {VICTIM} scheduled",
        interval_s=0.2,
    )
    first = seen[1]
    in_flight = (
        first["containerMovesScheduled"] - first["containerMovesCompleted"] - first["containerMovesFailed"]
    )
    assert in_flight > 0, first
    cluster.kill(VICTIM)  # SIGKILL ends the paused process: the move towards it never completes
    verbose = admin_text(cluster, "containerbalancer", "status", "-v")  # the run waits out the victim's moves
    assert verbose.startswith("ContainerBalancer is Running.\nStarted at: "), verbose
    assert "Iteration number                                   1\n" in verbose, verbose
    assert f"{victim_uuid} <- " in verbose and "Failed to move containers" in verbose, verbose
    print(f"\n{verbose}")

    wait_for(
        lambda: observe() and seen.get(1, {}).get("iterationResult") is not None,
        STALE_S + 30,
        "the first iteration's moves ended",
        interval_s=0.5,
    )
    first = seen[1]
    print(f"\niteration 1: {first}")
    assert first["iterationResult"] == "ITERATION_COMPLETED", first
    assert first["containerMovesCompleted"] >= 1 and first["containerMovesFailed"] >= 1, first
    assert first["dataSizeMoved"] == first["containerMovesCompleted"] * KEY_BYTES, first
    assert nodes[SURVIVOR]["uuid"] in first["sizeEnteringNodes"], first

    wait_for(lambda: not observe().get("running", True), 60, "the run ended", interval_s=0.5)
    metrics = prom(cluster)  # the whole run: a last iteration may end after the last status poll
    completed = int(metrics["container_balancer_metrics_num_container_moves_completed_total"])
    failed = int(metrics["container_balancer_metrics_num_container_moves_failed_total"])
    assert completed >= first["containerMovesCompleted"] and failed >= first["containerMovesFailed"], metrics
    assert metrics["container_balancer_metrics_num_iterations_total"] >= len(seen), metrics

    # every move that completed left its container three replicas, one on the survivor; none is lost
    def settled() -> dict[int, list[str]] | None:
        hosts = {cid: replica_hosts(cluster, cid, uuids) for cid in containers.values()}
        return hosts if all(len(h) == 3 and VICTIM not in h for h in hosts.values()) else None

    placed = wait_for(settled, 30, "every container at three replicas off the dead target", interval_s=0.5)
    on_survivor = [cid for cid, h in placed.items() if SURVIVOR in h]
    assert len(on_survivor) == completed, (placed, seen)
    with ozone_client(cluster) as client:
        for name, expected in data.items():
            assert client.read_key(VOL, BUCKET, name).readall() == expected, name
    print(
        f"{completed} replicas moved to {SURVIVOR}, {failed} moves towards {VICTIM} failed, placement "
        f"{placed}; {time.monotonic() - began:.1f} s"
    )
