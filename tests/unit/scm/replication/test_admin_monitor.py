"""DatanodeAdminMonitor (Ozone's DatanodeAdminMonitorImpl): when decommission and maintenance may complete,
and when they abort."""

from __future__ import annotations

from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.ids import RATIS_ONE
from pyozone.hdds.states import NodeOperationalState, NodeState
from pyozone.scm.replication.offline import healthy_enough_for_offline
from tests.unit.scm.replication.rm_builders import container, replica, statuses
from tests.unit.scm.replication.rm_harness import RMHarness

Op = NodeOperationalState


def op_state(h: RMHarness, dn: str) -> Op:
    return h.scm.nodes.node(dn).status.operational_state


def test_decommission_waits_for_replicas_elsewhere_then_completes():
    h = RMHarness()
    node = h.dns[0]
    cid = h.container(h.dns[:3])
    h.set_op_state(node, Op.DECOMMISSIONING)
    h.scm.admin_monitor.run()
    progress = h.scm.admin_monitor.progress(node)
    assert (progress.under_replicated, progress.unclosed, progress.containers_left) == (1, 0, 1)
    assert op_state(h, node) is Op.DECOMMISSIONING
    h.add_replica(cid, h.dns[3])  # the Replication Manager's copy arrived
    h.scm.admin_monitor.run()
    assert op_state(h, node) is Op.DECOMMISSIONED
    assert h.scm.admin_monitor.progress(node) is None
    assert node not in h.scm.admin_monitor.tracked()


def test_decommission_waits_for_the_datanode_to_persist_its_state():
    h = RMHarness()
    node = h.dns[0]
    h.set_op_state(node, Op.DECOMMISSIONING, persisted=False)
    h.scm.admin_monitor.run()
    assert op_state(h, node) is Op.DECOMMISSIONING
    h.set_op_state(node, Op.DECOMMISSIONING)
    h.scm.admin_monitor.run()
    assert op_state(h, node) is Op.DECOMMISSIONED


def test_workflow_start_closes_the_nodes_pipelines():
    h = RMHarness()
    node = h.dns[0]
    h.scm.pipelines.create_pipeline(RATIS_ONE, excluded_nodes=h.dns[1:])
    assert h.scm.nodes.pipelines(node)
    h.set_op_state(node, Op.DECOMMISSIONING)
    h.scm.admin_monitor.run()
    assert not h.scm.nodes.pipelines(node)
    assert op_state(h, node) is Op.DECOMMISSIONED


def test_unclosed_containers_hold_the_node_back():
    h = RMHarness()
    node = h.dns[0]
    cid = h.container(h.dns[:3], state="CLOSING")
    h.set_op_state(node, Op.DECOMMISSIONING)
    h.scm.admin_monitor.run()
    assert h.scm.admin_monitor.progress(node).unclosed == 1
    assert op_state(h, node) is Op.DECOMMISSIONING
    assert cid in h.scm.nodes.containers(node)


def test_deleting_containers_are_ignored():
    h = RMHarness()
    node = h.dns[0]
    h.container([node], state="DELETING", replica_state="CLOSED")
    h.set_op_state(node, Op.DECOMMISSIONING)
    h.scm.admin_monitor.run()
    assert op_state(h, node) is Op.DECOMMISSIONED


def test_maintenance_needs_only_the_minimum_in_service():
    h = RMHarness()
    a, b = h.dns[0], h.dns[1]
    cid = h.container(h.dns[:3])
    h.set_op_state(a, Op.ENTERING_MAINTENANCE)
    h.scm.admin_monitor.run()
    assert op_state(h, a) is Op.IN_MAINTENANCE  # two in-service copies remain: enough
    h.set_op_state(b, Op.ENTERING_MAINTENANCE)
    h.scm.admin_monitor.run()
    assert op_state(h, b) is Op.ENTERING_MAINTENANCE  # only one would remain
    assert h.scm.admin_monitor.progress(b).under_replicated == 1
    h.add_replica(cid, h.dns[3])
    h.scm.admin_monitor.run()
    assert op_state(h, b) is Op.IN_MAINTENANCE
    assert {a, b} <= h.scm.admin_monitor.tracked()  # kept for their end time


def test_maintenance_ends_at_its_expiry():
    h = RMHarness()
    node = h.dns[0]
    end = h.clock.wall_ms() // 1000 + 3600
    h.set_op_state(node, Op.ENTERING_MAINTENANCE, expiry=end)
    h.scm.admin_monitor.run()
    assert op_state(h, node) is Op.IN_MAINTENANCE
    assert h.scm.nodes.node(node).status.op_state_expiry_epoch_sec == end
    h.clock.advance(3600 * 1000)
    h.scm.admin_monitor.run()
    assert op_state(h, node) is Op.IN_SERVICE
    assert node not in h.scm.admin_monitor.tracked()


def test_dead_node_not_in_maintenance_goes_back_in_service():
    h = RMHarness()
    node = h.dns[0]
    h.container(h.dns[:3])
    h.set_op_state(node, Op.DECOMMISSIONING)
    h.scm.admin_monitor.run()
    info = h.scm.nodes.node(node)
    info.status = info.status.with_health(NodeState.DEAD)
    h.scm.admin_monitor.run()
    assert op_state(h, node) is Op.IN_SERVICE
    assert node not in h.scm.admin_monitor.tracked()


def test_dead_node_in_maintenance_stays():
    h = RMHarness()
    node = h.dns[0]
    h.set_op_state(node, Op.ENTERING_MAINTENANCE)
    h.scm.admin_monitor.run()
    info = h.scm.nodes.node(node)
    info.status = info.status.with_health(NodeState.DEAD)
    h.scm.admin_monitor.run()
    assert op_state(h, node) is Op.IN_MAINTENANCE


def test_recommissioned_node_is_dropped():
    h = RMHarness()
    node = h.dns[0]
    h.container(h.dns[:2])
    h.set_op_state(node, Op.DECOMMISSIONING)
    h.scm.admin_monitor.run()
    assert node in h.scm.admin_monitor.tracked()
    h.set_op_state(node, Op.IN_SERVICE)
    h.scm.admin_monitor.run()
    assert node not in h.scm.admin_monitor.tracked()
    assert op_state(h, node) is Op.IN_SERVICE


def ec_container(state: str = "CLOSED") -> ContainerInfo:
    return container(state, "EC/RS-3-2-1024k")


def ec_replicas(*states: str) -> tuple[ContainerReplica, ...]:
    return tuple(replica(f"dn{i}", s, index=i + 1) for i, s in enumerate(states))


def test_ec_offline_rule_counts_unhealthy_in_service_copies():
    fine = ec_replicas("CLOSED", "CLOSED", "CLOSED", "CLOSED", "CLOSED")
    assert healthy_enough_for_offline(ec_container(), fine, statuses())
    unhealthy = ec_replicas("CLOSED", "CLOSED", "CLOSED", "CLOSED", "UNHEALTHY")
    assert not healthy_enough_for_offline(ec_container(), unhealthy, statuses())
    # ... unless that copy's node is itself leaving service
    leaving = statuses({"dn4": Op.DECOMMISSIONING})
    assert healthy_enough_for_offline(ec_container(), unhealthy, leaving)
    assert not healthy_enough_for_offline(ec_container("CLOSING"), fine, statuses())


def test_ratis_offline_rule_ignores_unhealthy_copies():
    replicas = (replica("a"), replica("b"), replica("c", "UNHEALTHY"))
    assert healthy_enough_for_offline(container(), replicas, statuses())
    assert not healthy_enough_for_offline(container("OPEN"), replicas, statuses())
    every_node_leaving = statuses({dn: Op.DECOMMISSIONING for dn in "abc"})
    assert not healthy_enough_for_offline(container(), replicas, every_node_leaving)


def test_status_of_unknown_nodes_is_in_service():
    replicas = (replica("a"), replica("b"))
    assert healthy_enough_for_offline(container(), replicas, lambda dn: None)
