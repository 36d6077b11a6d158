"""Acceptance (b): SCM killed with -9 and started again under a running cluster. Pipelines and containers
come back with the same ids, SCM re-enters safe mode and leaves it once the rules hold; block ids stay
unique across the restart."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE
from tests.e2e.cluster.cluster_helpers import (
    LiveCluster,
    all_running,
    allocate,
    live_cluster,
    write_to_pipeline,
)
from tests.polling import wait_for


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    with live_cluster(request, tmp_path_factory, "scm-restart", 3) as c:
        yield c


def replica_counts(cluster: LiveCluster, ids: list[int]) -> dict[int, int]:
    return {cid: len((cluster.container(cid) or {}).get("replicas", [])) for cid in ids}


def test_scm_restart_keeps_pipelines_and_containers(
    cluster: LiveCluster, record_property: pytest.RecordProperty
) -> None:
    three = allocate(cluster, RATIS_THREE)
    one = allocate(cluster, RATIS_ONE)
    data = os.urandom(100_000)
    write_to_pipeline(three, data)
    write_to_pipeline(one, data)
    ids = sorted({three.block_id.container_id, one.block_id.container_id})
    wanted = {three.block_id.container_id: 3, one.block_id.container_id: 1}
    wait_for(lambda: replica_counts(cluster, ids) == wanted, 15, "every replica reported")
    pipelines_before = {p["id"]: p for p in cluster.admin_json("pipeline", "list") if p["state"] == "OPEN"}
    containers_before = {c["containerID"]: c for c in cluster.admin_json("container", "list")}
    assert set(containers_before) == set(ids)
    assert {three.pipeline.id, one.pipeline.id} <= set(pipelines_before)

    cluster.kill("scm")
    assert not cluster.running()["scm"]
    mark = len(cluster.log("scm"))
    cluster.start("scm")
    started = time.monotonic()
    first = wait_for(lambda: cluster.poll_json("safemode", "status"), 20, "SCM answering again")
    answered_s = time.monotonic() - started
    # The datanodes retry every heartbeat, so SCM may see all three and their pipelines within
    # milliseconds of binding and leave safe mode before the first poll: its log is the witness.
    wait_for(
        lambda: "SCM in safe mode." in cluster.log("scm")[mark:], 10, "SCM logging that it is in safe mode"
    )
    verbose = cluster.admin("safemode", "status", "--verbose")
    print(
        f"\nSCM answered {answered_s:.1f} s after start, in safe mode: {first['inSafeMode']}\n{verbose.out}"
    )

    waited = cluster.admin("safemode", "wait", "-t", "60", timeout_s=90)
    left_s = time.monotonic() - started
    assert waited.code == 0 and "SCM is out of safe mode." in waited.out, waited
    restarted = cluster.log("scm")[mark:]
    assert "All SCM safe mode rules are validated; SCM exiting safe mode." in restarted, restarted
    assert restarted.index("SCM in safe mode.") < restarted.index("SCM exiting safe mode.")
    record_property("safe_mode_exit_s", round(left_s, 1))
    print(f"SCM out of safe mode (safemode wait returned) {left_s:.1f} s after start")
    status = cluster.admin("safemode", "status")
    assert status.out.strip() == "SCM is out of safe mode."

    def same_pipelines() -> bool:
        now = {p["id"]: p for p in cluster.pipelines() if p["state"] == "OPEN"}
        return set(pipelines_before) <= set(now)

    wait_for(same_pipelines, 30, "every pipeline OPEN again")
    after = {p["id"]: p for p in cluster.admin_json("pipeline", "list")}
    for pid, before in pipelines_before.items():
        assert [n["uuid"] for n in after[pid]["nodes"]] == [n["uuid"] for n in before["nodes"]]
        assert after[pid]["replicationConfig"] == before["replicationConfig"]
    containers_after = {c["containerID"]: c for c in cluster.admin_json("container", "list")}
    assert set(containers_after) == set(containers_before)
    for cid, before in containers_before.items():
        for key in ("state", "pipelineID", "replicationConfig", "owner"):
            assert containers_after[cid][key] == before[key], (cid, key)
    wait_for(lambda: replica_counts(cluster, ids) == wanted, 15, "the replicas reported again")

    # the block service goes on where it left off: new local ids, never reused
    again = allocate(cluster, RATIS_THREE)
    assert again.block_id.local_id > max(three.block_id.local_id, one.block_id.local_id)
    write_to_pipeline(again, data)
    all_running(cluster)
