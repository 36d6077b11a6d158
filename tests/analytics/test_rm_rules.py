"""The snapshot check's view of SCM (rm_rules): node statuses and racks as SCM's topology holds them, the
pipelines that exist, and no way to act."""

from __future__ import annotations

import pytest

from pyozone.analytics.rm_rules import CheckContext, ReadOnlyViolation, SnapshotCheckServices
from pyozone.analytics.schema import SnapshotError
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import LifeCycleEvent, LifeCycleState, NodeOperationalState, NodeState, ReplicaState
from pyozone.scm.replication.config import ReplicationManagerConfig


def node(uuid: str, rack: str | None, health: str = "HEALTHY", op: str = "IN_SERVICE") -> dict:
    return dict(uuid=uuid, rack=rack, health=health, operational_state=op, op_state_expiry_epoch_sec=None)


NODES = [
    node("a", "/r1"),
    node("b", "/r2", op="DECOMMISSIONING"),
    node("c", "/r3", health="DEAD"),
    node("d", None, health="STALE"),
]
CONTAINER = ContainerInfo(1, LifeCycleState.OPEN, 0, "p1", RATIS_THREE, "om")
REPLICA = ContainerReplica(1, "a", ReplicaState.OPEN, "a", 1)


def context(nodes: list[dict]) -> CheckContext:
    return CheckContext.from_rows(nodes, ["p1"], ReplicationManagerConfig(), 1_000)


def test_statuses_racks_and_pipelines_as_scm_holds_them() -> None:
    services = SnapshotCheckServices(context(NODES))
    assert services.node_status("b").operational_state is NodeOperationalState.DECOMMISSIONING
    assert services.node_status("c").health is NodeState.DEAD
    assert services.node_status("unknown") is None
    assert services.pipeline_exists("p1") and not services.pipeline_exists("p2")
    assert not services.pipeline_exists(None)
    assert services.clock.wall_ms() == 1_000
    # the DEAD node is out of the topology: its rack is neither counted nor used
    assert context(NODES).racks == {"a": "/r1", "b": "/r2"}
    assert services.placement_status(CONTAINER, ["a", "b"]).satisfied
    assert not services.placement_status(CONTAINER, ["a", "c"]).satisfied


def test_the_shortcut_sees_racks_only_when_there_are_two() -> None:
    one_rack = context([node("a", "/r1"), node("b", "/r2", health="DEAD")])
    closed = ContainerInfo(1, LifeCycleState.CLOSED, 0, None, RATIS_THREE, "om", 1, 1, 1)
    replicas = [ContainerReplica(1, dn, ReplicaState.CLOSED, dn, 1, 1, 1) for dn in ("a", "x", "y")]
    assert one_rack.plain_test()(closed, replicas)
    assert not context(NODES).plain_test()(closed, replicas)  # two racks, all copies on one


def test_an_unknown_node_state_is_a_snapshot_error() -> None:
    with pytest.raises(SnapshotError, match="datanode b has an unknown state 'LOST'"):
        context([node("a", "/r1"), node("b", "/r1", health="LOST")])


@pytest.mark.parametrize(
    "act",
    [
        lambda s: s.send_close(CONTAINER, REPLICA, False),
        lambda s: s.send_delete(CONTAINER, REPLICA, True),
        lambda s: s.update_container_state(1, LifeCycleEvent.CLOSE),
        lambda s: s.fire_close_container(1),
        lambda s: s.update_sequence_id(1, 5),
    ],
)
def test_every_action_raises(act) -> None:
    with pytest.raises(ReadOnlyViolation):
        act(SnapshotCheckServices(context(NODES)))
