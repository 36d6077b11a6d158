"""A miniature of the issue's acceptance run, on the processing stage alone: a node of ten dies, and
repeated passes (each followed by datanodes running what they were sent) bring every container back
to three replicas, never exceeding a datanode's limit or the in-flight limit on the way."""

from __future__ import annotations

from pyozone.hdds.states import NodeState
from pyozone.scm.replication.processing import UnderReplicatedProcessor, handle_under_replicated
from pyozone.scm.replication.queue import ReplicationQueue
from pyozone.scm.replication.ratis_count import RatisContainerReplicaCount
from tests.unit.scm.replication.processing.rmp_fakes import FakeContext, T, container, dn, replica, under

NODES, CONTAINERS = 10, 60


def test_one_dead_node_of_ten_is_repaired_within_the_limits() -> None:
    ctx = FakeContext(seed=5)
    for i in range(1, NODES + 1):
        ctx.nodes.add(dn(i), f"/r{i % 3}")
    for cid in range(1, CONTAINERS + 1):
        ctx.set_replicas(*(replica(dn((cid + k) % NODES + 1), cid=cid) for k in range(3)))
    ctx.nodes.set_state(dn(1), health=NodeState.DEAD)
    for cid in ctx.replica_map:  # SCM drops a dead node's replicas
        ctx.replica_map[cid] = [r for r in ctx.replica_map[cid] if r.datanode != dn(1)]

    limit = 5
    for _ in range(30):
        queue = ReplicationQueue()
        for cid in ctx.replica_map:
            count = RatisContainerReplicaCount(
                container(cid=cid), ctx.replicas(cid), ctx.pending_ops.ops(cid), 2, False, ctx.node_status
            )
            if not count.is_sufficiently_replicated(True):
                queue.enqueue_under(under(container(cid=cid)))
        if queue.is_empty() and ctx.pending_ops.pending_add_count() == 0:
            break
        processor = UnderReplicatedProcessor(
            lambda q=queue: q,
            lambda r: handle_under_replicated(r, ctx),
            lambda: limit,
            ctx.pending_ops.pending_add_count,
            lambda: True,
            ctx.metrics,
        )
        processor.process_all()
        assert ctx.pending_ops.pending_add_count() <= limit - 1 + 3
        for i in range(1, NODES + 1):
            assert ctx.sender.replication_load(dn(i)) <= ctx.sender.replication_limit(dn(i))
        _datanodes_run_their_commands(ctx)

    assert all(len(ctx.replicas(cid)) == 3 for cid in ctx.replica_map)
    assert all(dn(1) not in {r.datanode for r in ctx.replicas(cid)} for cid in ctx.replica_map)
    assert ctx.metrics.replication_cmds_sent_total == CONTAINERS * 3 // NODES


def _datanodes_run_their_commands(ctx: FakeContext) -> None:
    """Every queued replicate command succeeds: the target reports the new replica (completing the ADD)."""
    for sent in ctx.sent:
        if sent.type is T.replicateContainerCommand:
            cid, target = sent.command.container_id, sent.command.target.uuid
            if target not in {r.datanode for r in ctx.replicas(cid)}:
                ctx.set_replicas(replica(target, cid=cid))
                ctx.pending_ops.complete_add(cid, target, 0)
    ctx.sent.clear()
    ctx.nodes.drain()
