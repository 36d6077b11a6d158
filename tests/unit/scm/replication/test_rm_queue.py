from __future__ import annotations

from pyozone.scm.replication.queue import NullQueue, ReplicationQueue
from pyozone.scm.replication.results import (
    HealthType,
    MisReplicatedHealthResult,
    OverReplicatedHealthResult,
    UnderReplicatedHealthResult,
)
from tests.unit.scm.replication.rm_builders import container


def under(cid: int, redundancy: int, out_of_service: bool = False, requeue: int = 0):
    return UnderReplicatedHealthResult(
        container(cid=cid), redundancy, out_of_service, False, False, requeue_count=requeue
    )


def test_weighted_redundancy() -> None:
    assert under(1, 1).weighted_redundancy == 1
    assert under(1, 2, out_of_service=True).weighted_redundancy == 5
    assert under(1, 0, requeue=3).weighted_redundancy == 3
    mis = MisReplicatedHealthResult.of(container(), True)
    assert (mis.remaining_redundancy, mis.due_to_out_of_service, mis.weighted_redundancy) == (6, False, 6)
    assert mis.health_type is HealthType.MIS_REPLICATED and mis.is_mis_replicated
    assert under(1, 1).health_type is HealthType.UNDER_REPLICATED


def test_every_enqueue_bumps_requeue_count() -> None:
    q = ReplicationQueue()
    queued = q.enqueue_under(under(1, 1))
    assert queued.requeue_count == 1 and queued.weighted_redundancy == 2
    again = q.enqueue_under(q.dequeue_under())
    assert again.requeue_count == 2


def test_under_queue_order() -> None:
    q = ReplicationQueue()
    q.enqueue_under(under(1, 2))  # weight 3
    q.enqueue_under(MisReplicatedHealthResult.of(container(cid=2), False))  # weight 7
    q.enqueue_under(under(3, 1, out_of_service=True))  # weight 6
    q.enqueue_under(under(4, 0))  # weight 1
    q.enqueue_under(under(5, 1, requeue=1))  # weight 3, requeue 2: after container 1
    q.enqueue_under(under(6, 2))  # weight 3, requeue 1: FIFO after container 1
    order = [q.dequeue_under().container.container_id for _ in range(q.under_size())]
    assert order == [4, 1, 6, 5, 3, 2]
    assert q.dequeue_under() is None


def test_over_queue_is_fifo() -> None:
    q = ReplicationQueue()
    for cid, excess in ((1, 3), (2, 1), (3, 2)):
        q.enqueue_over(OverReplicatedHealthResult(container(cid=cid), excess, False))
    assert q.over_size() == 3 and not q.is_empty()
    assert [q.dequeue_over().container.container_id for _ in range(3)] == [1, 2, 3]
    assert q.dequeue_over() is None and q.is_empty()


def test_null_queue_keeps_nothing() -> None:
    q = NullQueue()
    assert q.enqueue_under(under(1, 1)).requeue_count == 1
    q.enqueue_over(OverReplicatedHealthResult(container(), 1, False))
    assert q.under_size() == q.over_size() == 0 and q.is_empty()
    assert q.dequeue_under() is None and q.dequeue_over() is None
