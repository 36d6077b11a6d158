"""Issue 11 defect 6: a replica the datanode deleted must not outlive its next full report in SCM.

A stale incremental report (the scanner's UNHEALTHY for a replica an over-replication delete just
removed) must not keep a ghost replica that holds the container OVER_REPLICATED.
"""

from __future__ import annotations

from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.messages import ContainerReplicaReport, Heartbeat
from pyozone.hdds.states import ReplicaState
from tests.unit.scm.replication.rm_harness import SEQ, RMHarness


def _holders(h: RMHarness, cid: int) -> set[str]:
    return {r.datanode for r in h.scm.containers.replicas(cid)}


def _heartbeat(h: RMHarness, dn: int, icrs: tuple[ContainerReplicaReport, ...], fcr: tuple) -> None:
    details = DatanodeDetails(h.dns[dn], f"dn{dn}.test", f"10.0.0.{dn + 1}")
    h.scm.heartbeat(Heartbeat(details, container_report=fcr, incremental_container_reports=icrs))


def test_a_replica_re_added_by_a_stale_icr_goes_with_the_next_full_report() -> None:
    h = RMHarness()
    cid = h.container(h.dns[:4])  # over-replicated: SCM deletes the replica on dn 3
    _heartbeat(h, 3, (ContainerReplicaReport(cid, ReplicaState.DELETED, SEQ),), None)
    assert h.dns[3] not in _holders(h, cid)
    _heartbeat(h, 3, (ContainerReplicaReport(cid, ReplicaState.UNHEALTHY, SEQ),), None)  # the late scan
    assert h.dns[3] in _holders(h, cid)
    _heartbeat(h, 3, (), ())
    assert _holders(h, cid) == set(h.dns[:3])
    assert cid not in h.scm.nodes.containers(h.dns[3])


def test_icrs_of_a_heartbeat_are_older_than_its_full_report() -> None:
    """The datanode queued the ICRs before it took the full report it sends with them."""
    h = RMHarness()
    cid = h.container(h.dns[:4])
    stale = (
        ContainerReplicaReport(cid, ReplicaState.UNHEALTHY, SEQ),
        ContainerReplicaReport(cid, ReplicaState.DELETED, SEQ),
        ContainerReplicaReport(cid, ReplicaState.UNHEALTHY, SEQ),
    )
    _heartbeat(h, 3, stale, ())
    assert _holders(h, cid) == set(h.dns[:3])
    assert cid not in h.scm.nodes.containers(h.dns[3])


def test_a_full_report_removes_a_replica_the_node_container_set_had_lost() -> None:
    """Missing-replica processing covers every replica SCM holds for the node, however the node's
    container set and the replica map came apart."""
    h = RMHarness()
    cid = h.container(h.dns[:4])
    h.scm.nodes.remove_container(h.dns[3], cid)
    _heartbeat(h, 3, (), ())
    assert _holders(h, cid) == set(h.dns[:3])
