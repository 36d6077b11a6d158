"""The under- and over-replication processors: one pass over a replication queue (Ozone's
UnderReplicatedProcessor, OverReplicatedProcessor).

A pass takes results off the queue until it is empty, the Replication Manager must stop (checked before
every item), or, for under-replication only, the cluster has as many replicas pending creation as the
in-flight limit allows. Over-replication is never limited: deletes cost no network and free space.
A result whose repair failed (busy datanodes, too few targets, anything else) is put back at the end of
the pass, not at once, so one stubborn container cannot spin the loop; an under-replicated one sinks a
little in the queue with each requeue.

The in-flight limit is checked before each item, and an item may schedule several ADDs (a whole EC
reconstruction), so a pass ends with at most limit - 1 + (ADDs of its last item) replicas pending.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.states import NodeState
from pyozone.scm.replication import throttle
from pyozone.scm.replication.commands import CommandTargetOverloadedError, InsufficientDatanodesError
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.replication.metrics import ReplicationManagerMetrics
from pyozone.scm.replication.queue import ReplicationQueue
from pyozone.scm.replication.results import OverReplicatedHealthResult, UnderReplicatedHealthResult

log = logging.getLogger(__name__)

R = TypeVar("R", UnderReplicatedHealthResult, OverReplicatedHealthResult)


class NodeCounter(Protocol):
    def count(self, op: None = None, health: NodeState | None = None) -> int: ...


def cluster_inflight_limit(node_manager: NodeCounter, config: ReplicationManagerConfig) -> int:
    """Every HEALTHY node (any op state: a leaving node is still a source) may hold `replication.limit`
    of the cluster's pending ADDs, scaled by the factor; 0 means no limit. Counting nodes costs a scan,
    so processors ask once per pass."""
    healthy = node_manager.count(health=NodeState.HEALTHY)
    return throttle.inflight_limit(healthy, config.datanode_replication_limit, config.inflight_limit_factor)


class _Processor(ABC, Generic[R]):
    def __init__(
        self,
        queue_source: Callable[[], ReplicationQueue],
        handle: Callable[[R], int],
        inflight_limit: Callable[[], int],
        pending_add_count: Callable[[], int],
        should_run: Callable[[], bool],
        metrics: ReplicationManagerMetrics,
    ) -> None:
        self._queue_source = queue_source
        self._handle = handle
        self._inflight_limit = inflight_limit
        self._pending_add_count = pending_add_count
        self._should_run = should_run
        self._metrics = metrics

    def process_all(self) -> int:
        """One pass; returns the number of commands sent by the repairs that succeeded (one that failed
        part-way is requeued, and what it sent is in the metrics)."""
        queue = self._queue_source()
        limit = self._pass_limit()
        failed: list[R] = []
        sent = 0
        while self._should_run():
            if throttle.inflight_limit_reached(self._pending_add_count(), limit):
                log.info("%d replicas are pending creation, the in-flight limit; ending this pass", limit)
                self._metrics.pending_replication_limit_reached_total += 1
                break
            result = self._dequeue(queue)
            if result is None:
                break
            try:
                sent += self._handle(result)
            except (CommandTargetOverloadedError, InsufficientDatanodesError, SCMException) as e:
                log.debug("Container %s requeued: %s", result.container.container_id, e)
                failed.append(result)
            except Exception:
                log.exception("Repair of container %s failed; requeued", result.container.container_id)
                failed.append(result)
        for result in failed:
            self._requeue(queue, result)
        return sent

    @abstractmethod
    def _pass_limit(self) -> int: ...

    @abstractmethod
    def _dequeue(self, queue: ReplicationQueue) -> R | None: ...

    @abstractmethod
    def _requeue(self, queue: ReplicationQueue, result: R) -> None: ...


class UnderReplicatedProcessor(_Processor[UnderReplicatedHealthResult]):
    """Under- and mis-replicated results, most urgent first, within the cluster in-flight limit."""

    def _pass_limit(self) -> int:
        return self._inflight_limit()

    def _dequeue(self, queue: ReplicationQueue) -> UnderReplicatedHealthResult | None:
        return queue.dequeue_under()

    def _requeue(self, queue: ReplicationQueue, result: UnderReplicatedHealthResult) -> None:
        queue.enqueue_under(result)  # bumps requeue_count


class OverReplicatedProcessor(_Processor[OverReplicatedHealthResult]):
    """Over-replicated results in FIFO order. Takes the same arguments as the under-replicated
    processor but is never in-flight limited (the limit callables are not consulted)."""

    def _pass_limit(self) -> int:
        return 0

    def _dequeue(self, queue: ReplicationQueue) -> OverReplicatedHealthResult | None:
        return queue.dequeue_over()

    def _requeue(self, queue: ReplicationQueue, result: OverReplicatedHealthResult) -> None:
        queue.enqueue_over(result)
