"""The under/over-replication processors: in-flight limit, should-run, requeue of failures (Ozone's
UnhealthyReplicationProcessor)."""

from __future__ import annotations

import pytest

from pyozone.scm.replication.commands import CommandTargetOverloadedError, InsufficientDatanodesError
from pyozone.scm.replication.metrics import ReplicationManagerMetrics
from pyozone.scm.replication.processing import (
    OverReplicatedProcessor,
    UnderReplicatedProcessor,
    handle_over_replicated,
    handle_under_replicated,
)
from pyozone.scm.replication.queue import ReplicationQueue
from tests.unit.scm.replication.processing.rmp_fakes import FakeContext, container, dn, over, replica, under


def queued_under(*cids: int) -> ReplicationQueue:
    queue = ReplicationQueue()
    for cid in cids:
        queue.enqueue_under(under(container(cid=cid)))
    return queue


def drain_under(queue: ReplicationQueue) -> list:
    items = []
    while (item := queue.dequeue_under()) is not None:
        items.append(item)
    return items


def processor(cls, queue, handle, limit=0, pending=lambda: 0, run=lambda: True, metrics=None):
    return cls(lambda: queue, handle, lambda: limit, pending, run, metrics or ReplicationManagerMetrics())


def test_the_pass_stops_once_pending_adds_reach_the_inflight_limit() -> None:
    ctx = FakeContext()
    for i in range(1, 8):
        ctx.nodes.add(dn(i), f"/r{i % 2}")
    queue = ReplicationQueue()
    for cid in range(1, 6):
        ctx.set_replicas(replica(dn(1), cid=cid), replica(dn(2), cid=cid))  # each needs 1 copy
        queue.enqueue_under(under(container(cid=cid)))
    p = UnderReplicatedProcessor(
        lambda: queue,
        lambda r: handle_under_replicated(r, ctx),
        lambda: 3,
        ctx.pending_ops.pending_add_count,
        lambda: True,
        ctx.metrics,
    )
    assert p.process_all() == 3
    assert ctx.pending_ops.pending_add_count() == 3
    assert ctx.metrics.pending_replication_limit_reached_total == 1
    assert queue.under_size() == 2
    assert p.process_all() == 0  # still at the limit: nothing dequeued
    assert queue.under_size() == 2


def test_a_zero_limit_means_no_limit() -> None:
    queue = queued_under(1, 2, 3)
    metrics = ReplicationManagerMetrics()
    p = processor(
        UnderReplicatedProcessor, queue, lambda r: 5, limit=0, pending=lambda: 10**6, metrics=metrics
    )
    assert p.process_all() == 15
    assert metrics.pending_replication_limit_reached_total == 0


def test_the_limit_is_computed_once_per_pass() -> None:
    calls = []
    queue = queued_under(1, 2, 3)

    def limit() -> int:
        calls.append(1)
        return 100

    p = UnderReplicatedProcessor(
        lambda: queue, lambda r: 1, limit, lambda: 0, lambda: True, ReplicationManagerMetrics()
    )
    p.process_all()
    assert len(calls) == 1


def test_should_run_is_checked_before_every_item() -> None:
    queue = queued_under(1, 2, 3)
    answers = iter([True, True, False])
    p = processor(UnderReplicatedProcessor, queue, lambda r: 1, run=lambda: next(answers))
    assert p.process_all() == 2
    assert queue.under_size() == 1


@pytest.mark.parametrize(
    "error", [CommandTargetOverloadedError("busy"), InsufficientDatanodesError(2, 1), RuntimeError("bug")]
)
def test_failed_results_are_requeued_at_the_end_of_the_pass_with_the_requeue_count_bumped(error) -> None:
    queue = queued_under(1, 2)
    handled = []

    def handle(result) -> int:
        handled.append(result.container.container_id)
        if result.container.container_id == 1:
            raise error
        return 1

    p = processor(UnderReplicatedProcessor, queue, handle)
    assert p.process_all() == 1
    assert handled == [1, 2]  # the failure was not retried within the pass
    [requeued] = drain_under(queue)
    assert (requeued.container.container_id, requeued.requeue_count) == (1, 2)


def test_over_replicated_processing_is_never_inflight_limited_and_requeues_fifo() -> None:
    queue = ReplicationQueue()
    for cid in (1, 2, 3):
        queue.enqueue_over(over(container(cid=cid)))

    def handle(result) -> int:
        if result.container.container_id == 2:
            raise CommandTargetOverloadedError("delete limit")
        return 1

    metrics = ReplicationManagerMetrics()
    p = processor(OverReplicatedProcessor, queue, handle, limit=1, pending=lambda: 10**6, metrics=metrics)
    assert p.process_all() == 2
    assert metrics.pending_replication_limit_reached_total == 0
    assert queue.dequeue_over().container.container_id == 2
    assert queue.dequeue_over() is None


def test_processors_drive_the_real_handlers() -> None:
    ctx = FakeContext()
    for i in range(1, 6):
        ctx.nodes.add(dn(i), f"/r{i % 2}")
    ctx.set_replicas(*(replica(dn(i)) for i in range(1, 5)))
    queue = ReplicationQueue()
    queue.enqueue_over(over(container()))
    p = OverReplicatedProcessor(
        lambda: queue,
        lambda r: handle_over_replicated(r, ctx),
        lambda: 0,
        lambda: 0,
        lambda: True,
        ctx.metrics,
    )
    assert p.process_all() == 1
    assert ctx.metrics.deletion_cmds_sent_total == 1
