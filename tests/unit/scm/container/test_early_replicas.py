"""A follower hears of a replica before it applied the container's record (issue 31, the replication
storm): it holds the report and records the replica when the record arrives, so that, leading later, it
counts the copy a lone SCM counts. Found by `tests/scm_ha_sim.py` seed 14's invariant 8: a follower had
dropped an OPEN replica's ICR and, once leader, replicated the CLOSED container it still had three copies
of."""

from __future__ import annotations

from pyozone.hdds.clock import ManualClock
from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import RATIS_THREE, ContainerID
from pyozone.hdds.messages import ContainerReplicaReport, Heartbeat
from pyozone.hdds.states import LifeCycleState, ReplicaState
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import RecordCodec, SCMMetadataStore
from tests.builders import dn_id, node_report

C_LATE = ContainerID(7)
DNS = [dn_id(i) for i in range(3)]


def core(context: ScmContext) -> StorageContainerManager:
    scm = StorageContainerManager(ScmSettings(), ManualClock(), SCMMetadataStore.in_memory(), context=context)
    for i, dn in enumerate(DNS):
        scm.register(DatanodeDetails(dn, f"dn{i}.test", f"10.0.0.{i + 1}"), node_report())
    return scm


def icr(scm: StorageContainerManager, i: int, state: ReplicaState) -> None:
    report = ContainerReplicaReport(C_LATE, state, 4, origin_node_id=DNS[i])
    scm.heartbeat(
        Heartbeat(
            DatanodeDetails(DNS[i], f"dn{i}.test", f"10.0.0.{i + 1}"), incremental_container_reports=(report,)
        )
    )


def apply_record(scm: StorageContainerManager, state: LifeCycleState = LifeCycleState.CLOSED) -> None:
    """The leader's record of the container, applied here as the Raft glue does (store, then listener)."""
    table = scm.store.int_table("containers", RecordCodec(ContainerInfo))
    table.put(C_LATE, ContainerInfo(C_LATE, state, 0, None, RATIS_THREE, "om", sequence_id=4))
    scm.containers.record_changed(table.key_codec.encode(C_LATE), table.value_codec.encode(table.get(C_LATE)))


def replicas(scm: StorageContainerManager) -> dict[str, ReplicaState]:
    return {r.datanode: r.state for r in scm.containers.replicas(C_LATE)}


def test_a_replica_reported_before_its_record_is_recorded_when_the_record_arrives() -> None:
    scm = core(ScmContext.ha_follower(3, "scm1"))
    icr(scm, 0, ReplicaState.OPEN)
    icr(scm, 0, ReplicaState.CLOSED)  # the newest report counts
    scm.register(
        DatanodeDetails(DNS[1], "dn1.test", "10.0.0.2"),
        node_report(),
        (ContainerReplicaReport(C_LATE, ReplicaState.CLOSED, 4, origin_node_id=DNS[1]),),
    )
    assert scm.containers.find(C_LATE) is None
    apply_record(scm)
    assert replicas(scm) == {DNS[0]: ReplicaState.CLOSED, DNS[1]: ReplicaState.CLOSED}


def test_a_replica_gone_before_the_record_arrives_is_not_recorded() -> None:
    scm = core(ScmContext.ha_follower(3, "scm1"))
    icr(scm, 0, ReplicaState.CLOSED)
    icr(scm, 0, ReplicaState.DELETED)
    icr(scm, 1, ReplicaState.CLOSED)
    scm.heartbeat(
        Heartbeat(DatanodeDetails(DNS[1], "dn1.test", "10.0.0.2"), container_report=())
    )  # dn1: none
    apply_record(scm)
    assert replicas(scm) == {}


def test_a_new_leader_drops_what_it_still_holds_and_the_leader_holds_nothing() -> None:
    follower = core(ScmContext.ha_follower(3, "scm1"))
    icr(follower, 0, ReplicaState.CLOSED)
    assert follower.container_reports.drop_early_replicas() == 1  # step_up: no such container was created
    leader = core(ScmContext.ha_leader(3))
    icr(leader, 0, ReplicaState.CLOSED)
    assert leader.container_reports.drop_early_replicas() == 0
