"""Decommission and maintenance through the whole core on virtual time (DatanodeAdminMonitorImpl): the admin
command only flips the operational state; the datanode persists it, the Replication Manager copies replicas
away within its throttles, and the admin monitor completes the workflow once nothing depends on the node.
Every tick asserts the throttles and that no container drops below its minimum."""

from __future__ import annotations

import itertools

from pyozone.hdds.states import NodeOperationalState
from pyozone.sim.cluster import SimCluster
from tests.sim.test_sim_rm_repair import (
    HEARTBEAT,
    MINUTE,
    TIGHT,
    closed_cluster,
    fully_replicated_in_service,
    live_closed_replicas,
    run_checked,
    written,
)

Op = NodeOperationalState
HOLDING = (Op.IN_SERVICE, Op.DECOMMISSIONING, Op.DECOMMISSIONED, Op.ENTERING_MAINTENANCE, Op.IN_MAINTENANCE)


def op_state(c: SimCluster, dn: str) -> Op:
    return c.scm.nodes.node(dn).status.operational_state


def sharing_pair(c: SimCluster) -> tuple[str, str, set[int]]:
    """Two nodes holding replicas of the same containers, so both leaving at once needs copies."""
    best = max(
        itertools.combinations(sorted(c.datanodes), 2),
        key=lambda p: len(c.scm.nodes.containers(p[0]) & c.scm.nodes.containers(p[1])),
    )
    shared = set(c.scm.nodes.containers(best[0]) & c.scm.nodes.containers(best[1]))
    assert shared
    return best[0], best[1], shared


def test_two_nodes_decommissioned_without_any_container_below_its_minimum():
    c = closed_cluster(TIGHT)
    a, b, shared = sharing_pair(c)
    data = written(c)

    def never_below_minimum() -> None:
        # RatisContainerReplicaCount: decommissioning copies still exist and are readable until the node is
        # gone, so a RATIS/THREE container's three healthy copies must exist at all times: no copy is
        # removed before its replacement is in.
        for cid in data:
            assert live_closed_replicas(c, cid, HOLDING) >= 3, cid

    for dn in (a, b):
        c.scm.nodes.set_operational_state(dn, Op.DECOMMISSIONING)
    both_gone = lambda: op_state(c, a) is op_state(c, b) is Op.DECOMMISSIONED  # noqa: E731
    assert run_checked(c, both_gone, 90 * MINUTE, never_below_minimum)
    # every container now has three copies on IN_SERVICE nodes; the old ones stay on the dead-end nodes
    assert fully_replicated_in_service(c)
    # the datanodes learn it with their next heartbeat
    assert c.run_until(lambda: all(c.datanodes[dn].op_state is Op.DECOMMISSIONED for dn in (a, b)), HEARTBEAT)
    assert not c.scm.nodes.pipelines(a) and not c.scm.nodes.pipelines(b)
    report = c.scm.replication.process_all()
    assert report.stat("UNDER_REPLICATED") == report.stat("OVER_REPLICATED") == 0
    assert c.scm.replication.metrics.replication_cmds_sent_total >= len(shared)


def test_progress_is_visible_while_decommissioning():
    c = closed_cluster(TIGHT)
    node = max(sorted(c.datanodes), key=lambda dn: len(c.scm.nodes.containers(dn)))
    held = len(c.scm.nodes.containers(node))
    c.scm.nodes.set_operational_state(node, Op.DECOMMISSIONING)
    seen = []

    def record() -> None:
        progress = c.scm.admin_monitor.progress(node)
        if progress is not None:
            seen.append(progress.containers_left)

    assert run_checked(c, lambda: op_state(c, node) is Op.DECOMMISSIONED, 60 * MINUTE, record)
    assert seen[0] == held and len(set(seen)) > 2
    assert seen == sorted(seen, reverse=True)  # copies only ever complete
    assert c.scm.admin_monitor.progress(node) is None  # done: no longer in a workflow


def test_maintenance_keeps_the_minimum_in_service_and_survives_the_nodes_dying():
    c = closed_cluster(TIGHT)
    minimum = c.conf.get("hdds.scm.replication.maintenance.replica.minimum")
    a, b, shared = sharing_pair(c)
    data = written(c)

    def in_service_minimum() -> None:
        # A node may be IN_MAINTENANCE only while every container it holds keeps `minimum` copies on
        # IN_SERVICE nodes (RatisContainerReplicaCount): maintenance copies are only expected back.
        for dn in (a, b):
            if op_state(c, dn) is Op.IN_MAINTENANCE:
                for cid in c.scm.nodes.containers(dn):
                    assert live_closed_replicas(c, cid, (Op.IN_SERVICE,)) >= minimum, (dn, cid)
        for cid in data:
            assert live_closed_replicas(c, cid, HOLDING) >= minimum

    for dn in (a, b):
        c.scm.nodes.set_operational_state(dn, Op.ENTERING_MAINTENANCE)
    both_in = lambda: op_state(c, a) is op_state(c, b) is Op.IN_MAINTENANCE  # noqa: E731
    assert run_checked(c, both_in, 60 * MINUTE, in_service_minimum)
    for cid in shared:  # both copies in maintenance: one more was made in service
        assert live_closed_replicas(c, cid, (Op.IN_SERVICE,)) >= minimum
    # Nodes in maintenance may die: their replicas are kept (they are expected back), nothing repairs.
    sent = c.scm.replication.metrics.replication_cmds_sent_total
    c.kill(a)
    c.kill(b)
    assert run_checked(c, lambda: False, 15 * MINUTE, in_service_minimum) is False
    assert c.scm.replication.metrics.replication_cmds_sent_total == sent
    assert all(a in {r.datanode for r in c.scm.containers.replicas(cid)} for cid in c.scm.nodes.containers(a))
    # Ending maintenance of a dead node makes it an ordinary dead node: its containers are repaired.
    for dn in (a, b):
        c.scm.nodes.set_operational_state(dn, Op.IN_SERVICE)
    assert run_checked(c, lambda: fully_replicated_in_service(c), 60 * MINUTE)
