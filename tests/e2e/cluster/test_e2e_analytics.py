"""Parity on a live cluster (issue 6): `pyozone analytics rm-report` over `pyozone admin snapshot` of a real
cluster equals, counts and samples, the report the SCM daemon itself publishes for the same state
(`admin container report --json`).

Five datanodes on two racks, closed containers, one datanode holding replicas killed and declared DEAD
while the Replication Manager is stopped, so nothing repairs and the state holds still; the snapshot is
taken once it has settled, then the Replication Manager starts and its first full scan reports on exactly
that state. rm-report runs as a user runs it: the CLI, its own Spark (local[2]), the cluster's
configuration (--conf), so both sides use the same Replication Manager settings.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from pyozone.hdds.ids import RATIS_THREE
from tests.e2e.cluster.cluster_helpers import (
    DEAD_S,
    LiveCluster,
    allocate,
    live_cluster,
    write_to_pipeline,
)
from tests.polling import wait_for

# About 70 s alone; under the slow suite's load it passed pytest-timeout's default 300 s inside the rm-report
# job (a JVM of its own), which the test allows 600 s: the test's budget covers its waits and that job.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

DATANODES = 5
CONTAINERS = 6
RM = {
    "hdds.scm.replication.thread.interval": "3s",
    "hdds.scm.wait.time.after.safemode.exit": "5s",
    "hdds.scm.replication.container.sample.limit": "2",
    "ozone.scm.close.container.wait.duration": "2s",
}


def containers(cluster: LiveCluster) -> list[tuple[int, str, int]]:
    """(id, state, replica count) of every container, as SCM has them now."""
    listed = cluster.poll_json("container", "list") or []
    ids = sorted(c["containerID"] for c in listed)
    return [
        (cid, (i := cluster.container(cid) or {}).get("state", ""), len(i.get("replicas", []))) for cid in ids
    ]


def settled(cluster: LiveCluster) -> list[tuple[int, str, int]]:
    """The container states once two looks two seconds apart agree and nothing is CLOSING."""
    last: list[Any] = []

    def same() -> list | None:
        nonlocal last
        now = containers(cluster)
        stable = now == last and all(state != "CLOSING" for _, state, _ in now)
        last = now
        return now if stable else None

    return wait_for(same, 60, "the containers to settle", interval_s=2)


def test_rm_report_over_a_snapshot_equals_the_daemons_report(request, tmp_path_factory, tmp_path) -> None:
    with live_cluster(request, tmp_path_factory, "analytics", DATANODES, racks=2, overrides=RM) as cluster:
        written = set()
        while len(written) < CONTAINERS:
            location = allocate(cluster, RATIS_THREE)
            write_to_pipeline(location, os.urandom(50_000))
            cid = location.block_id.container_id
            written.add(cid)
            assert cluster.admin("container", "close", str(cid)).code == 0
        wait_for(
            lambda: all(
                state == "CLOSED" and n == 3 for cid, state, n in containers(cluster) if cid in written
            ),
            60,
            "the written containers CLOSED with 3 replicas",
        )
        holders = {cid: {r["datanode"] for r in cluster.container(cid)["replicas"]} for cid in written}
        nodes = cluster.datanodes()
        victim = max(sorted(nodes), key=lambda name: sum(nodes[name]["uuid"] in h for h in holders.values()))
        assert cluster.admin("replicationmanager", "stop").code == 0
        cluster.kill(victim)
        wait_for(lambda: cluster.health(victim) == "DEAD", DEAD_S + 20, f"{victim} DEAD")
        state = settled(cluster)

        snapshot = tmp_path / "snapshot"
        taken = cluster.admin("snapshot", "--out", str(snapshot))
        assert taken.code == 0, taken
        assert containers(cluster) == state, "the cluster moved while the snapshot was taken"
        created_ms = json.loads((snapshot / "_SNAPSHOT.json").read_text())["createdMs"]
        assert cluster.admin("replicationmanager", "start").code == 0
        daemon = wait_for(
            lambda: (
                (r := cluster.poll_json("container", "report")) and r["reportTimeStamp"] > created_ms and r
            ),
            30,
            "the daemon's first full scan after the snapshot",
        )
        analytics = cluster.pyozone(
            "analytics", "rm-report", "--snapshot", str(snapshot), "--json",
            "--master", "local[2]", "--conf", str(cluster.conf_dir), timeout_s=600,
        )  # fmt: skip
        assert analytics.code == 0, analytics

    got = analytics.json()
    assert {k: v for k, v in got.items() if k != "reportTimeStamp"} == {
        k: v for k, v in daemon.items() if k != "reportTimeStamp"
    }
    assert got["reportTimeStamp"] == created_ms
    assert got["stats"]["CLOSED"] >= CONTAINERS and got["stats"]["UNDER_REPLICATED"] >= 1
    assert len(got["samples"]["UNDER_REPLICATED"]) <= 2
