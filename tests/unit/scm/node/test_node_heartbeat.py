"""Registration, heartbeats, queued commands, command counts and operational state (Ozone's
SCMNodeManager)."""

from __future__ import annotations

import itertools

import pytest

from pyozone.hdds.commands import (
    COMMAND_CLASSES,
    DeleteBlocksCommand,
    ReplicateContainerCommand,
    ReplicationCommandPriority,
    SCMCommand,
)
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.states import NodeOperationalState as Op
from pyozone.hdds.states import NodeState, SCMCommandType
from pyozone.scm.events import SCMEvent

T = SCMCommandType
M = 60_000


def command(kind: SCMCommandType, container_id: int = 1) -> SCMCommand:
    """A container (or deleteBlocks) command of `kind`; the node manager only looks at its type."""
    if kind is T.deleteBlocksCommand:
        return DeleteBlocksCommand(transactions=())
    return COMMAND_CLASSES[kind](container_id=container_id)  # type: ignore[call-arg]


# ---------------------------------------------------------------------------------------- heartbeats
def test_heartbeat_from_unregistered_node_asks_it_to_reregister(cluster, build) -> None:
    stranger = build.dn_id(99)
    replies = cluster.nm.process_heartbeat(
        stranger, Op.IN_SERVICE, command_queue_report={T.closeContainerCommand: 1}
    )
    assert [c.type for c in replies] == [T.reregisterCommand]
    assert not cluster.nm.is_registered(stranger)
    assert cluster.nm.get(stranger) is None
    assert cluster.log.seen == []  # nothing else is processed


def test_queued_commands_leave_with_the_next_heartbeat_in_order(cluster) -> None:
    dn, other = cluster.add(0), cluster.add(1)
    first = command(T.closeContainerCommand, container_id=1)
    second = command(T.deleteContainerCommand, container_id=2)
    cluster.nm.add_datanode_command(dn, first)
    cluster.nm.add_datanode_command(dn, second)
    assert cluster.nm.process_heartbeat(other) == []
    assert cluster.nm.process_heartbeat(dn) == [first, second]
    assert cluster.nm.process_heartbeat(dn) == []


def test_clear_command_queue_drops_pending_commands(cluster) -> None:
    dn = cluster.add(0)
    cluster.nm.add_datanode_command(dn, command(T.replicateContainerCommand))
    assert len(cluster.nm.clear_command_queue(dn)) == 1
    assert cluster.nm.process_heartbeat(dn) == []
    assert cluster.nm.total_datanode_command_count(dn, T.replicateContainerCommand) == 0


def test_heartbeat_updates_last_heartbeat_time(cluster) -> None:
    dn = cluster.add(0)
    cluster.clock.advance(7_000)
    cluster.nm.process_heartbeat(dn)
    info = cluster.nm.node(dn)
    assert info.last_heartbeat_ms == 7_000
    assert info.last_heartbeat_wall_ms == cluster.clock.wall_ms()


# ---------------------------------------------------------------------------------------- command counts
def test_command_queue_report_example_from_ozones_test(cluster) -> None:
    """Ozone's TestSCMNodeManager#testProcessCommandQueueReport (DatanodeInfo.setCommandCounts)."""
    nm = cluster.nm
    dn = cluster.add(0)
    for _ in range(3):
        nm.add_datanode_command(dn, command(T.replicateContainerCommand))
    for _ in range(5):
        nm.add_datanode_command(dn, command(T.deleteBlocksCommand))
    assert nm.node_queued_command_count(dn, T.replicateContainerCommand) == -1  # nothing reported yet
    assert nm.total_datanode_command_count(dn, T.replicateContainerCommand) == 3
    assert nm.total_datanode_command_count(dn, T.deleteBlocksCommand) == 5

    sent = nm.process_heartbeat(
        dn, command_queue_report={T.replicateContainerCommand: 123, T.closeContainerCommand: 11}
    )
    assert len(sent) == 8
    assert nm.node_queued_command_count(dn, T.replicateContainerCommand) == 126
    assert nm.node_queued_command_count(dn, T.closeContainerCommand) == 11
    assert nm.node_queued_command_count(dn, T.deleteBlocksCommand) == 5
    assert nm.node_queued_command_count(dn, T.deleteContainerCommand) == -1
    assert nm.total_datanode_command_count(dn, T.replicateContainerCommand) == 126
    assert nm.total_datanode_command_count(dn, T.deleteBlocksCommand) == 5

    nm.process_heartbeat(dn, command_queue_report={T.closeContainerCommand: 11})
    assert nm.node_queued_command_count(dn, T.replicateContainerCommand) == -1
    assert nm.node_queued_command_count(dn, T.closeContainerCommand) == 11
    assert nm.node_queued_command_count(dn, T.deleteBlocksCommand) == -1
    assert nm.total_datanode_command_count(dn, T.replicateContainerCommand) == 0


def test_total_count_adds_scm_queue_and_datanode_queue(cluster) -> None:
    nm = cluster.nm
    dn = cluster.add(0)
    nm.process_heartbeat(dn, command_queue_report={T.replicateContainerCommand: 4})
    nm.add_datanode_command(dn, command(T.replicateContainerCommand))
    nm.add_datanode_command(dn, command(T.replicateContainerCommand))
    assert nm.total_datanode_command_count(dn, T.replicateContainerCommand) == 6
    assert nm.total_datanode_command_count(dn, T.closeContainerCommand) == 0  # -1 on the DN counts as 0


def test_low_priority_replicates_sent_are_not_added_to_the_datanodes_counts(cluster) -> None:
    """Ozone's HDDS-7844: the balancer's LOW replicates are not the datanode's replication load to SCM
    (the datanode's queue report leaves them out too), so NORMAL work is scheduled regardless."""
    nm = cluster.nm
    dn = cluster.add(0)
    low = ReplicationCommandPriority.LOW
    for cid in (1, 2, 3):
        nm.add_datanode_command(dn, ReplicateContainerCommand(container_id=cid, priority=low))
    nm.add_datanode_command(dn, command(T.replicateContainerCommand, 4))
    nm.process_heartbeat(dn, command_queue_report={T.replicateContainerCommand: 0})
    assert nm.node_queued_command_count(dn, T.replicateContainerCommand) == 1


def test_negative_reported_count_is_clamped_to_zero(cluster) -> None:
    dn = cluster.add(0)
    cluster.nm.process_heartbeat(dn, command_queue_report={T.replicateContainerCommand: -7})
    assert cluster.nm.node_queued_command_count(dn, T.replicateContainerCommand) == 0


def test_count_update_fires_datanode_command_count_updated(cluster) -> None:
    dn = cluster.add(0)
    cluster.nm.process_heartbeat(dn, command_queue_report={T.closeContainerCommand: 1})
    assert cluster.log.of(SCMEvent.DATANODE_COMMAND_COUNT_UPDATED) == [
        (SCMEvent.DATANODE_COMMAND_COUNT_UPDATED, dn)
    ]


def test_unregistered_node_has_unknown_counts(cluster, build) -> None:
    assert cluster.nm.node_queued_command_count(build.dn_id(5), T.closeContainerCommand) == -1


# ---------------------------------------------------------------------------------------- op-state sync
def test_heartbeat_with_stale_persisted_state_gets_set_node_operational_state(cluster) -> None:
    dn = cluster.add(0)
    cluster.nm.set_operational_state(dn, Op.DECOMMISSIONING)
    replies = cluster.nm.process_heartbeat(dn, Op.IN_SERVICE, 0)
    assert [c.type for c in replies] == [T.setNodeOperationalStateCommand]
    assert (replies[0].state, replies[0].expiry_epoch_s) == (Op.DECOMMISSIONING, 0)
    assert cluster.nm.node(dn).status.operational_state is Op.DECOMMISSIONING  # SCM's value wins
    assert cluster.log.of(SCMEvent.REPLICATION_MANAGER_NOTIFY) == []

    assert cluster.nm.process_heartbeat(dn, Op.DECOMMISSIONING, 0) == []  # in sync now
    assert cluster.log.of(SCMEvent.REPLICATION_MANAGER_NOTIFY) == [(SCMEvent.REPLICATION_MANAGER_NOTIFY, dn)]
    assert cluster.nm.node(dn).details.persisted_op_state is Op.DECOMMISSIONING
    cluster.nm.process_heartbeat(dn, Op.DECOMMISSIONING, 0)
    assert len(cluster.log.of(SCMEvent.REPLICATION_MANAGER_NOTIFY)) == 1  # only on a change


def test_expiry_difference_alone_triggers_the_command(cluster) -> None:
    dn = cluster.add(0)
    cluster.nm.set_operational_state(dn, Op.ENTERING_MAINTENANCE, 1_900_000_000)
    replies = cluster.nm.process_heartbeat(dn, Op.ENTERING_MAINTENANCE, 0)
    assert [(c.state, c.expiry_epoch_s) for c in replies] == [(Op.ENTERING_MAINTENANCE, 1_900_000_000)]
    assert cluster.nm.process_heartbeat(dn, Op.ENTERING_MAINTENANCE, 1_900_000_000) == []


def test_in_sync_heartbeat_gets_no_command(cluster) -> None:
    dn = cluster.add(0)
    assert cluster.nm.process_heartbeat(dn, Op.IN_SERVICE, 0) == []


@pytest.mark.parametrize(
    ("path", "notified"),
    [
        ([Op.DECOMMISSIONING], [Op.DECOMMISSIONING]),
        ([Op.DECOMMISSIONING, Op.DECOMMISSIONED], [Op.DECOMMISSIONING]),
        ([Op.ENTERING_MAINTENANCE, Op.IN_MAINTENANCE], [Op.ENTERING_MAINTENANCE]),
        (
            [Op.ENTERING_MAINTENANCE, Op.IN_MAINTENANCE, Op.IN_SERVICE],
            [Op.ENTERING_MAINTENANCE, Op.IN_SERVICE],
        ),
        ([Op.DECOMMISSIONING, Op.IN_SERVICE], [Op.DECOMMISSIONING, Op.IN_SERVICE]),
    ],
)
def test_replication_manager_notified_on_persisted_state_changes(cluster, path, notified) -> None:
    dn = cluster.add(0)
    seen = []
    for state in path:
        cluster.nm.set_operational_state(dn, state)
        before = len(cluster.log.of(SCMEvent.REPLICATION_MANAGER_NOTIFY))
        cluster.nm.process_heartbeat(dn, state, 0)
        if len(cluster.log.of(SCMEvent.REPLICATION_MANAGER_NOTIFY)) > before:
            seen.append(state)
    assert seen == notified


# ---------------------------------------------------------------------------------------- operational state
ALLOWED = {
    (Op.IN_SERVICE, Op.DECOMMISSIONING),
    (Op.DECOMMISSIONING, Op.DECOMMISSIONED),
    (Op.IN_SERVICE, Op.ENTERING_MAINTENANCE),
    (Op.ENTERING_MAINTENANCE, Op.IN_MAINTENANCE),
    (Op.DECOMMISSIONING, Op.IN_SERVICE),
    (Op.DECOMMISSIONED, Op.IN_SERVICE),
    (Op.ENTERING_MAINTENANCE, Op.IN_SERVICE),
    (Op.IN_MAINTENANCE, Op.IN_SERVICE),
}


@pytest.mark.parametrize(("source", "target"), sorted(ALLOWED))
def test_allowed_operational_transitions(cluster, source: Op, target: Op) -> None:
    dn = cluster.add(0, op_state=source)
    assert cluster.nm.node(dn).status.operational_state is source  # starts in the DN's persisted state
    cluster.log.clear()
    cluster.nm.set_operational_state(dn, target)
    assert cluster.nm.node(dn).status.operational_state is target
    # the event of the current health is fired again (HEALTHY -> HEALTHY_READONLY_TO_HEALTHY_NODE)
    assert cluster.log.kinds_for(dn) == [SCMEvent.HEALTHY_READONLY_TO_HEALTHY_NODE]


@pytest.mark.parametrize(
    ("source", "target"),
    sorted((a, b) for a, b in itertools.permutations(Op, 2) if (a, b) not in ALLOWED),
)
def test_refused_operational_transitions(cluster, source: Op, target: Op) -> None:
    dn = cluster.add(0, op_state=source)
    cluster.log.clear()
    with pytest.raises(SCMException) as err:
        cluster.nm.set_operational_state(dn, target)
    assert err.value.code is ResultCode.INVALID_OPERATIONAL_STATE_TRANSITION
    assert cluster.nm.node(dn).status.operational_state is source
    assert cluster.log.seen == []


def test_same_operational_state_only_updates_expiry_without_event(cluster) -> None:
    dn = cluster.add(0, op_state=Op.IN_MAINTENANCE)
    cluster.log.clear()
    cluster.nm.set_operational_state(dn, Op.IN_MAINTENANCE, 42)
    assert cluster.nm.node(dn).status.op_state_expiry_epoch_sec == 42
    assert cluster.log.seen == []


def test_operational_change_of_dead_node_refires_dead_node(cluster) -> None:
    dn = cluster.add(0, op_state=Op.IN_MAINTENANCE)
    cluster.run(10 * M + 3_000)
    assert cluster.health(dn) is NodeState.DEAD
    cluster.log.clear()
    cluster.nm.set_operational_state(dn, Op.IN_SERVICE)
    assert cluster.log.seen == [(SCMEvent.DEAD_NODE, dn)]


def test_operational_change_of_unknown_node_is_refused(cluster, build) -> None:
    with pytest.raises(SCMException) as err:
        cluster.nm.set_operational_state(build.dn_id(3), Op.DECOMMISSIONING)
    assert err.value.code is ResultCode.NO_SUCH_DATANODE


def test_node_registers_with_persisted_operational_state_and_expiry(cluster) -> None:
    dn = cluster.add(0, op_state=Op.IN_MAINTENANCE, expiry=77)
    status = cluster.nm.node(dn).status
    assert (status.operational_state, status.op_state_expiry_epoch_sec, status.health) == (
        Op.IN_MAINTENANCE,
        77,
        NodeState.HEALTHY,
    )
    assert cluster.nm.healthy_in_service() == []


# ---------------------------------------------------------------------------------------- re-registration
def test_reregistration_with_new_address_fires_node_address_update(cluster, build) -> None:
    dn = cluster.add(0)
    cluster.log.clear()
    moved = build.details(0, hostname="new-host.example.com", ip="10.9.9.9")
    info = cluster.nm.register(moved, build.node_report())
    assert cluster.log.seen == [(SCMEvent.NODE_ADDRESS_UPDATE, dn)]
    assert (info.details.hostname, info.details.ip_address) == ("new-host.example.com", "10.9.9.9")
    assert len(cluster.nm.nodes()) == 1


@pytest.mark.parametrize("change", ["ip", "hostname"])
def test_either_address_part_counts_as_a_change(cluster, build, change: str) -> None:
    dn = cluster.add(0)
    cluster.log.clear()
    kwargs = {"ip": "10.9.9.9"} if change == "ip" else {"hostname": "other.example.com"}
    cluster.nm.register(build.details(0, **kwargs))
    assert cluster.log.seen == [(SCMEvent.NODE_ADDRESS_UPDATE, dn)]


def test_reregistration_with_same_address_only_updates_details(cluster, build) -> None:
    dn = cluster.add(0)
    cluster.log.clear()
    old = cluster.nm.node(dn).details
    newer = DatanodeDetails(old.uuid, old.hostname, old.ip_address, (("RATIS", 9858),), version="2.0")
    info = cluster.nm.register(newer)
    assert cluster.log.seen == []
    assert info.details.version == "2.0"
    assert info.details.port("RATIS") == 9858
    assert info.status.health is NodeState.HEALTHY


def test_node_report_replaces_storage(cluster, build) -> None:
    dn = cluster.add(0)
    cluster.nm.process_node_report(dn, build.node_report(data_volumes=3, metadata_volumes=2))
    info = cluster.nm.node(dn)
    assert (info.healthy_volume_count(), info.metadata_volume_count()) == (3, 2)


def test_count_by_state(cluster) -> None:
    a = cluster.add(0)
    cluster.add(1)
    cluster.add(2, op_state=Op.DECOMMISSIONING)
    cluster.nm.set_operational_state(a, Op.ENTERING_MAINTENANCE)
    assert cluster.nm.count() == 3
    assert cluster.nm.count(op=Op.IN_SERVICE) == 1
    assert cluster.nm.count(health=NodeState.HEALTHY) == 3
    assert cluster.nm.count(op=Op.DECOMMISSIONING, health=NodeState.HEALTHY) == 1
    assert len(cluster.nm.healthy_in_service()) == 1


def test_heartbeat_without_queue_report_keeps_the_last_counts(cluster) -> None:
    nm = cluster.nm
    dn = cluster.add(0)
    nm.process_heartbeat(dn, command_queue_report={T.replicateContainerCommand: 4})
    nm.add_datanode_command(dn, command(T.closeContainerCommand))
    nm.process_heartbeat(dn)
    assert nm.node_queued_command_count(dn, T.replicateContainerCommand) == 4
    assert nm.node_queued_command_count(dn, T.closeContainerCommand) == -1
