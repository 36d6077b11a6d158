"""Containers SCM allocated and no node report counts yet (PendingContainerTracker; issue 28 defects 16, 18).

Three datanodes on one disk with 6 GB usable each (5 GB containers): SCM put four containers on every one of
them before the next node report, though each could create one. Each allocation now counts a container size
against its members until they report it, or until it ages out (two windows of five minutes).
"""

from __future__ import annotations

import pytest

from pyozone.hdds.clock import ManualClock
from pyozone.hdds.datanode import DatanodeDetails, NodeReport, StorageReport
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import ReplicaState
from pyozone.scm.container.report_handler import ContainerReportHandler
from pyozone.scm.node.pending_containers import ROLL_INTERVAL_MS, PendingContainerTracker
from tests.unit.scm.block.test_block_with_real_pipelines import BLOCK, Scm

GB = 1 << 30
FLOOR = 20 * GB


def report(free: int, committed: int = 0) -> NodeReport:
    return NodeReport(
        (StorageReport("vol", "/data", 252 * GB, 0, free, committed=committed, free_space_to_spare=FLOOR),),
        (StorageReport("meta", "/meta", 252 * GB, 0, free),),
    )


def shared_disk_scm(free: int) -> tuple[Scm, list[str]]:
    """Three datanodes reporting `free` bytes free over a 20 GB floor, with their two pipelines open."""
    scm = Scm()
    dns = [f"dn-{i}" for i in range(3)]
    for dn in dns:
        scm.nodes.register(DatanodeDetails(dn, f"host-{dn}", "10.0.0.1"), report(free))
    for _ in range(2):  # ozone.scm.datanode.pipeline.limit 2
        scm.datanodes_report(scm.pipelines.create_pipeline(RATIS_THREE).id)
    return scm, dns


def containers_made(scm: Scm, tries: int = 50) -> set[int]:
    made: set[int] = set()
    for _ in range(tries):
        try:
            made.add(scm.blocks.allocate_block(BLOCK, RATIS_THREE, "om").container_id)
        except SCMException:
            break
    return made


def test_a_node_gets_no_more_new_containers_than_its_report_has_room_for() -> None:
    scm, dns = shared_disk_scm(free=26 * GB)  # 6 GB usable: one 5 GB container
    made = containers_made(scm)
    assert len(made) == 1
    assert all(scm.nodes.pending_containers.pending_count(dn) == 1 for dn in dns)

    scm, dns = shared_disk_scm(free=40 * GB)  # 20 GB usable: three containers (each needs more than 5 GB)
    assert len(containers_made(scm)) == 3


def test_a_reported_container_is_no_longer_pending_and_the_report_counts_it() -> None:
    scm, dns = shared_disk_scm(free=26 * GB)
    (cid,) = containers_made(scm)
    handler = ContainerReportHandler(scm.settings.container, scm.events, scm.nodes, scm.containers)
    for dn in dns:
        handler.process_incremental_report(dn, [ContainerReplicaReport(cid, ReplicaState.OPEN)])
        assert scm.nodes.pending_containers.pending_count(dn) == 0
        # the datanode's next report shows the container's committed bytes: still no room for another
        scm.nodes.process_node_report(dn, report(26 * GB, committed=5 * GB))
    assert not scm.nodes.have_room_for_container(dns)
    for dn in dns:  # the container filled and closed: its committed bytes are written, space freed elsewhere
        scm.nodes.process_node_report(dn, report(40 * GB))
    assert scm.nodes.have_room_for_container(dns)


def test_a_pipeline_is_not_placed_on_a_node_whose_room_is_pending() -> None:
    scm, _ = shared_disk_scm(free=26 * GB)
    containers_made(scm)
    for pipeline in scm.pipelines.pipelines(RATIS_THREE):
        scm.pipelines.close_pipeline(pipeline.id)  # their slots are free again, their room is not
    with pytest.raises(SCMException) as refused:
        scm.pipelines.create_pipeline(RATIS_THREE)
    assert refused.value.code is ResultCode.FAILED_TO_FIND_NODES_WITH_SPACE


def test_an_allocation_never_reported_ages_out_in_two_windows() -> None:
    clock = ManualClock()
    tracker = PendingContainerTracker(5 * GB, clock)
    tracker.record(("dn-1", "dn-2"), 7)
    clock.advance(ROLL_INTERVAL_MS)
    tracker.record(("dn-1",), 8)
    assert tracker.pending_count("dn-1") == 2 and tracker.pending_bytes("dn-2") == 5 * GB
    tracker.remove("dn-1", 7)  # reported: gone from either window
    assert tracker.pending_count("dn-1") == 1
    clock.advance(ROLL_INTERVAL_MS)
    assert tracker.pending_count("dn-1") == 1 and tracker.pending_count("dn-2") == 0  # 7 aged out on dn-2
    clock.advance(ROLL_INTERVAL_MS)
    assert tracker.pending_count("dn-1") == 0
    tracker.record(("dn-3",), 9)
    clock.advance(2 * ROLL_INTERVAL_MS)  # both windows at once
    tracker.roll("dn-3")
    assert tracker.pending_count("dn-3") == 0
