"""Throttling holds for any cluster: a property over random node loads, states and containers.

Within one processor pass (under- then over-replication):
* every replicate/reconstruct command goes to a datanode whose load was below its limit when it was
  queued, so a node ends at most at limit - 1 + weight (1 for a replication, 3 for a reconstruction);
  every (throttled) delete to a node with fewer than 40 deletes queued;
* the under-replication pass only starts an item while the cluster has fewer pending ADDs than the
  in-flight limit, so it ends with at most limit - 1 + A pending ADDs, where A is what its last item
  scheduled, at most the container's replica count (3 for RATIS/THREE, 5 for RS-3-2). That is the
  exact bound Ozone's UnhealthyReplicationProcessor allows: the limit is checked before each item, never
  within one.
* handlers fail only in the expected ways (busy nodes, too few targets, no target at all).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyozone.hdds.commands import ReplicationCommandPriority
from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.states import NodeState
from pyozone.scm.replication.commands import CommandTargetOverloadedError, InsufficientDatanodesError
from pyozone.scm.replication.processing import (
    OverReplicatedProcessor,
    UnderReplicatedProcessor,
    handle_over_replicated,
    handle_under_replicated,
)
from pyozone.scm.replication.queue import ReplicationQueue
from pyozone.scm.replication.targets import is_no_suitable_node
from tests.unit.scm.replication.processing.rmp_fakes import (
    FakeContext,
    Op,
    T,
    container,
    dn,
    ec,
    over,
    replica,
    under,
)

EXPECTED = (CommandTargetOverloadedError, InsufficientDatanodesError)
WEIGHT = {T.replicateContainerCommand: 1, T.reconstructECContainersCommand: 3}
LOW = ReplicationCommandPriority.LOW


@st.composite
def clusters(draw):
    racks = draw(st.integers(1, 4))
    n = draw(st.integers(6, 14))
    ctx = FakeContext(seed=draw(st.integers(0, 2**16)))
    for i in range(1, n + 1):
        op = draw(st.sampled_from([Op.IN_SERVICE] * 4 + [Op.DECOMMISSIONING, Op.IN_MAINTENANCE]))
        health = draw(st.sampled_from([NodeState.HEALTHY] * 5 + [NodeState.STALE]))
        ctx.nodes.add(dn(i), f"/r{i % racks}", op, health)
        ctx.nodes.report(dn(i), T.replicateContainerCommand, draw(st.integers(0, 45)))
        ctx.nodes.report(dn(i), T.reconstructECContainersCommand, draw(st.integers(0, 8)))
        ctx.nodes.report(dn(i), T.deleteContainerCommand, draw(st.integers(0, 45)))
    nodes = [dn(i) for i in range(1, n + 1)]
    under_q, over_q = ReplicationQueue(), ReplicationQueue()
    for cid in range(1, draw(st.integers(1, 14)) + 1):
        kind = draw(st.sampled_from(["ratis-under", "ratis-over", "ec-under", "ec-over"]))
        if kind.startswith("ratis"):
            count = draw(st.integers(1, 2)) if kind == "ratis-under" else draw(st.integers(4, 5))
            hosts = draw(st.permutations(nodes))[:count]
            ctx.set_replicas(*(replica(h, cid=cid) for h in hosts))
            c = container(cid=cid)
        else:
            indexes = [1, 2, 3, 4, 5]
            if kind == "ec-under":
                indexes = sorted(draw(st.permutations(indexes))[: draw(st.integers(3, 4))])
            else:
                indexes += [draw(st.integers(1, 5))]
            hosts = draw(st.permutations(nodes))[: len(indexes)]
            ctx.set_replicas(*(replica(h, index=i, cid=cid) for h, i in zip(hosts, indexes, strict=False)))
            c = ec(cid=cid)
        if kind.endswith("under"):
            under_q.enqueue_under(under(c))
        else:
            over_q.enqueue_over(over(c))
    return ctx, under_q, over_q, draw(st.integers(0, 12))


class Recorder:
    """Wraps the node manager's queueing and a handler to see the state before each step."""

    def __init__(self, ctx: FakeContext) -> None:
        self.ctx = ctx
        self.violations: list[str] = []
        self.items: list[tuple[int, int, int]] = []  # (pending ADDs before, after, replica count)
        self.bugs: list[BaseException] = []
        queue = ctx.nodes.add_datanode_command

        def checked(node, command):
            sender = ctx.sender
            if command.type in WEIGHT and getattr(command, "priority", None) is not LOW:
                load, limit = sender.replication_load(node), sender.replication_limit(node)
                if load >= limit:
                    self.violations.append(f"{command.type.name} to {node} at load {load}/{limit}")
            if command.type is T.deleteContainerCommand:
                queued = ctx.nodes.total_datanode_command_count(node, T.deleteContainerCommand)
                if queued >= ctx.config.datanode_delete_container_limit:
                    self.violations.append(f"delete to {node} with {queued} queued")
            queue(node, command)

        ctx.nodes.add_datanode_command = checked

    def handler(self, handle, measure: bool):
        def wrapped(result) -> int:
            before = self.ctx.pending_ops.pending_add_count()
            try:
                return handle(result, self.ctx)
            except Exception as e:
                if not (isinstance(e, EXPECTED) or (isinstance(e, SCMException) and is_no_suitable_node(e))):
                    self.bugs.append(e)
                raise
            finally:
                if measure:
                    after = self.ctx.pending_ops.pending_add_count()
                    self.items.append((before, after, result.container.replication_config.required_nodes))

        return wrapped


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_no_pass_exceeds_a_datanode_limit_or_the_inflight_bound(scenario) -> None:
    ctx, under_q, over_q, limit = scenario
    recorder = Recorder(ctx)
    pending = ctx.pending_ops.pending_add_count
    under_p = UnderReplicatedProcessor(
        lambda: under_q,
        recorder.handler(handle_under_replicated, True),
        lambda: limit,
        pending,
        lambda: True,
        ctx.metrics,
    )
    over_p = OverReplicatedProcessor(
        lambda: over_q,
        recorder.handler(handle_over_replicated, False),
        lambda: limit,
        pending,
        lambda: True,
        ctx.metrics,
    )
    under_p.process_all()
    adds_after_under = pending()
    over_p.process_all()

    assert recorder.bugs == []
    assert recorder.violations == []
    for before, after, replicas in recorder.items:
        assert limit == 0 or before < limit
        assert after - before <= replicas
    if limit and recorder.items:
        before, after, replicas = recorder.items[-1]
        assert adds_after_under == after <= limit - 1 + (after - before) <= limit - 1 + replicas
    assert pending() == adds_after_under  # deletes never add
