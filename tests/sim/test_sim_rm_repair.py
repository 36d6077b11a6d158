"""The Replication Manager through the whole core on virtual time: a dead datanode's containers are
copied back to three replicas, at once (event-driven, issue 5) and within every throttle, checked at
every tick. The helpers here serve the decommission and maintenance scenarios too."""

from __future__ import annotations

from collections.abc import Callable

from pyozone.config import OzoneConfiguration
from pyozone.datanode.command_admission import QueueLimits
from pyozone.hdds.commands import ReplicateContainerCommand
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import LifeCycleState, NodeOperationalState, NodeState, ReplicaState, SCMCommandType
from pyozone.scm.events import SCMEvent
from pyozone.sim.cluster import SimCluster

SECOND = 1_000
MINUTE = 60 * SECOND
HEARTBEAT = 30 * SECOND
REPLICATE = SCMCommandType.replicateContainerCommand

# Small containers so a few hundred block writes fill dozens of them; the rest are Ozone's defaults
# (stale 5m, dead 10m, RM scan 5m, processors 30s, monitor 30s) unless a test says otherwise.
SMALL = {
    "ozone.scm.container.size": "10MB",
    "ozone.scm.block.size": "1MB",
    "ozone.scm.close.container.wait.duration": "10s",
}
# Throttles tight enough to bind with a few dozen containers: 3 commands per datanode, and a cluster
# in-flight cap of ceil(healthy x 3 x 0.1) = 3 pending ADDs.
TIGHT = {
    "hdds.scm.replication.datanode.replication.limit": "3",
    "hdds.scm.replication.inflight.limit.factor": "0.1",
}


def closed_cluster(
    overrides: dict[str, str] | None = None, datanodes: int = 10, blocks: int = 600
) -> SimCluster:
    """A cluster out of safe mode whose Replication Manager may run, holding only CLOSED containers."""
    c = SimCluster(datanodes, conf=OzoneConfiguration({**SMALL, **(overrides or {})}), seed=7)
    # all the pipelines the limit allows (2 per node) open, so containers spread over every node
    wanted = 2 * datanodes // 3
    assert c.run_until(lambda: len(c.scm.pipelines.open_pipelines(RATIS_THREE)) >= wanted, 10 * MINUTE)
    for _ in range(blocks):  # a block a second: reports fill containers up, as SCM counts no allocation
        c.write_block(1 << 20)
        c.advance(SECOND)
    for container in c.scm.containers.containers(LifeCycleState.OPEN):
        c.scm.events.fire(SCMEvent.CLOSE_CONTAINER, container.container_id)
    assert c.run_until(lambda: all_closed(c), 5 * MINUTE)
    assert c.run_until(c.scm.replication.should_run, 10 * MINUTE)
    return c


def written(c: SimCluster) -> list[int]:
    """Containers holding data. Block allocation may also leave a container SCM allocated but no
    datanode ever created (no replicas, no keys): the Replication Manager closes that one by itself
    after 5 scans and it is EMPTY, never under-replicated."""
    return [info.container_id for info in c.scm.containers.containers() if info.number_of_keys > 0]


def all_closed(c: SimCluster) -> bool:
    return bool(written(c)) and all(
        c.scm.containers.get(cid).state is LifeCycleState.CLOSED
        and [r.state for r in c.scm.containers.replicas(cid)] == [ReplicaState.CLOSED] * 3
        for cid in written(c)
    )


def live_closed_replicas(c: SimCluster, cid: int, op_states: tuple[NodeOperationalState, ...]) -> int:
    """CLOSED replicas SCM knows of on heartbeating nodes in one of `op_states`."""
    n = 0
    for replica in c.scm.containers.replicas(cid):
        info = c.scm.nodes.get(replica.datanode)
        if (
            replica.state is ReplicaState.CLOSED
            and info is not None
            and info.status.health is not NodeState.DEAD
            and info.status.operational_state in op_states
        ):
            n += 1
    return n


def assert_throttles(c: SimCluster) -> None:
    """ReplicationManager's throttling at this instant: no datanode has more replication queued than its limit
    (SCM's count and the datanode's real queue), and pending ADDs are within the cluster in-flight limit (a
    hard cap: the sender refuses a command that would pass it, see docs/differences.md)."""
    rm = c.scm.replication
    for dn, node in c.datanodes.items():
        if c.scm.nodes.get(dn) is None:
            continue
        limit = rm.sender.replication_limit(dn)
        assert rm.sender.replication_load(dn) <= limit, (dn, rm.sender.replication_load(dn), limit)
        assert len(node.replications()) <= limit, (dn, len(node.replications()), limit)
    inflight = rm.inflight_limit()
    pending = rm.pending_ops.pending_add_count()
    assert inflight == 0 or pending <= inflight, (pending, inflight)


def run_checked(
    c: SimCluster,
    done: Callable[[], bool],
    timeout_ms: int,
    check: Callable[[], None] = lambda: None,
) -> bool:
    """Advances one tick at a time until `done`, asserting the throttles and `check` at every tick."""
    waited = 0
    while not done():
        if waited >= timeout_ms:
            return False
        c.advance(c.tick_ms)
        waited += c.tick_ms
        assert_throttles(c)
        check()
    return True


def fully_replicated_in_service(c: SimCluster) -> bool:
    in_service = (NodeOperationalState.IN_SERVICE,)
    return all(live_closed_replicas(c, cid, in_service) >= 3 for cid in written(c))


def busiest_node(c: SimCluster) -> str:
    return max(sorted(c.datanodes), key=lambda dn: len(c.scm.nodes.containers(dn)))


def test_one_dead_node_among_ten_every_container_back_to_three_replicas():
    c = closed_cluster(TIGHT)
    victim = busiest_node(c)
    held = set(c.scm.nodes.containers(victim))
    assert len(held) >= 5
    c.kill(victim)
    assert run_checked(c, lambda: c.scm.nodes.node(victim).status.health is NodeState.DEAD, 15 * MINUTE)
    assert run_checked(c, lambda: fully_replicated_in_service(c), 60 * MINUTE)
    for cid in written(c):
        replicas = c.scm.containers.replicas(cid)
        assert len(replicas) == 3 and victim not in {r.datanode for r in replicas}
        assert {r.sequence_id for r in replicas} == {c.scm.containers.get(cid).sequence_id}
    rm = c.scm.replication
    assert rm.metrics.replicas_created_total >= len(held)
    # every copy SCM saw created was pushed by a source datanode
    assert sum(n.replications_done for n in c.datanodes.values()) == rm.metrics.replicas_created_total
    assert rm.metrics.pending_replication_limit_reached_total > 0  # the in-flight cap did bind
    report = rm.process_all()
    assert report.stat("UNDER_REPLICATED") == 0 and report.stat("OVER_REPLICATED") == 0


def test_repairs_leave_the_tick_the_node_is_declared_dead_not_a_scan_later():
    c = closed_cluster({"hdds.scm.replication.thread.interval": "1h"})
    rm = c.scm.replication
    victim = busiest_node(c)
    at_notify: list[tuple[int, int]] = []  # (commands sent, full scans run) once the RM has handled it
    c.scm.events.add_handler(
        SCMEvent.REPLICATION_MANAGER_NOTIFY,
        lambda _: at_notify.append((rm.metrics.replication_cmds_sent_total, rm.scan_task.runs)),
    )
    c.kill(victim)
    sent, scans = rm.metrics.replication_cmds_sent_total, rm.scan_task.runs
    while c.scm.nodes.node(victim).status.health is not NodeState.DEAD:
        assert rm.metrics.replication_cmds_sent_total == sent  # nothing before death
        c.advance(c.tick_ms)
    # the notification itself sent the repairs, before any full scan could (the scan is hourly; the
    # empty queue woke it too, as Ozone's notifyNodeStateChange, but only after)
    [(sent_then, scans_then)] = at_notify
    assert sent_then >= len(rm.pending_ops.containers()) > 0
    assert sent_then > sent and scans_then == scans
    dead_at = c.clock.now_ms()
    # ...and the sources run them with their next heartbeat
    executed = lambda: sum(n.executed.get(REPLICATE, 0) for n in c.datanodes.values())  # noqa: E731
    assert c.run_until(lambda: executed() > 0, HEARTBEAT + SECOND)
    assert c.clock.now_ms() - dead_at <= HEARTBEAT + SECOND
    assert run_checked(c, lambda: fully_replicated_in_service(c), 20 * MINUTE)


def test_expired_replicate_commands_are_dropped_by_the_datanode():
    """By the datanode's own rules: past its deadline on arrival, or when a worker would take it."""
    c = closed_cluster()
    node = next(iter(c.datanodes.values()))
    node.start_process(
        QueueLimits(replication_streams=1, replication_queue=10, out_of_service_factor=2.0, per_type={})
    )
    first, second = sorted(node.replicas)[:2]
    target = next(dn for dn in c.datanodes if not {first, second} & set(c.datanodes[dn].replicas))
    now, term = c.clock.wall_ms(), c.scm.context.known_term

    def command(cid: int, deadline_ms: int) -> ReplicateContainerCommand:
        details = c.scm.nodes.node(target).details
        return ReplicateContainerCommand(
            container_id=cid, target=details, term=term, deadline_epoch_ms=deadline_ms
        )

    node.receive([command(second, now - 1)], term, now)
    assert node.commands_dropped == 1 and node.replications() == []
    running, waiting = command(first, now + 60_000), command(second, now + 1)
    node.receive([running, waiting], term, now)
    assert node.replications_running == [running] and list(node.replication_queue) == [waiting]
    node.run_replications(now + 2, c.datanodes)  # the one worker copies `first`, then `second` is stale
    assert first in c.datanodes[target].replicas and second not in c.datanodes[target].replicas
    assert node.replications_expired == 1 and node.replications() == []
