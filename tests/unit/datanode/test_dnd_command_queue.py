"""The command queue on its own: ordering, the replication pool, deadlines, terms, limits and counts."""

from __future__ import annotations

import asyncio

from pyozone.datanode.command_queue import CommandHandler, CommandQueue, QueueLimits
from pyozone.hdds.commands import (
    COMMAND_CLASSES,
    DeleteBlocksCommand,
    ReplicateContainerCommand,
    ReplicationCommandPriority,
    SCMCommand,
)
from pyozone.hdds.states import SCMCommandType as T
from tests.polling import wait_for_async
from tests.unit.datanode.dnd_helpers import async_test

NOW_MS = 1_000_000


class Recorder(CommandHandler):
    """Records what ran and what was dropped; `gate` holds every command until it is set."""

    def __init__(self, log: list[tuple[str, int]], gate: asyncio.Event | None = None) -> None:
        self.log = log
        self.gate = gate
        self.dropped: list[tuple[int, str]] = []
        self.queued: list[int] = []

    async def handle(self, command: SCMCommand) -> None:
        self.log.append(("start", command.id))
        if self.gate is not None:
            await self.gate.wait()
        await asyncio.sleep(0)  # a turn of the loop between start and end, as a real handler's await
        self.log.append(("end", command.id))

    def on_queued(self, command: SCMCommand) -> None:
        self.queued.append(command.id)

    def on_dropped(self, command: SCMCommand, reason: str) -> None:
        self.dropped.append((command.id, reason))


def _queue(
    handlers: dict[T, CommandHandler], streams: int = 3, queue_limit: int = 100, out_of_service: bool = False
) -> CommandQueue:
    limits = QueueLimits(streams, queue_limit, 2.0, {T.deleteBlocksCommand: 2})
    return CommandQueue(handlers, limits, out_of_service, now_ms=lambda: NOW_MS)


def _cmd(kind: T, cid: int, **kwargs: object) -> SCMCommand:
    if kind is T.deleteBlocksCommand:
        return DeleteBlocksCommand(transactions=(), id=cid, **kwargs)  # type: ignore[arg-type]
    return COMMAND_CLASSES[kind](container_id=cid, id=cid, **kwargs)  # type: ignore[call-arg]


@async_test
async def test_ordinary_commands_run_one_at_a_time_in_arrival_order() -> None:
    log: list[tuple[str, int]] = []
    handler = Recorder(log)
    queue = _queue({T.closeContainerCommand: handler, T.deleteContainerCommand: handler})
    for i in range(1, 6):
        queue.submit(_cmd(T.closeContainerCommand if i % 2 else T.deleteContainerCommand, i))
    await wait_for_async(lambda: len(log) == 10)
    assert log == [(edge, i) for i in range(1, 6) for edge in ("start", "end")]


@async_test
async def test_replication_pool_runs_streams_in_parallel_and_doubles_out_of_service() -> None:
    log: list[tuple[str, int]] = []
    gate = asyncio.Event()
    queue = _queue({T.replicateContainerCommand: Recorder(log, gate)}, streams=3)
    assert queue.replication_workers == 3
    for i in range(1, 8):
        assert queue.submit(_cmd(T.replicateContainerCommand, i))
    await wait_for_async(lambda: len(log) == 3)
    assert queue.counts() == {T.replicateContainerCommand: 7}
    queue.set_out_of_service(True)
    assert queue.replication_workers == 6
    await wait_for_async(lambda: len(log) == 6)
    queue.set_out_of_service(False)
    assert queue.replication_workers == 3
    gate.set()
    await wait_for_async(lambda: queue.counts() == {T.replicateContainerCommand: 0})
    assert sorted(i for edge, i in log if edge == "end") == list(range(1, 8))


@async_test
async def test_out_of_service_at_start_scales_pool_and_queue() -> None:
    queue = _queue(
        {T.replicateContainerCommand: Recorder([])}, streams=10, queue_limit=50, out_of_service=True
    )
    assert queue.replication_workers == 20
    assert queue.replication_queue_limit == 100


@async_test
async def test_normal_priority_replication_goes_before_low() -> None:
    log: list[tuple[str, int]] = []
    gate = asyncio.Event()
    queue = _queue({T.replicateContainerCommand: Recorder(log, gate)}, streams=1)
    normal, low = ReplicationCommandPriority.NORMAL, ReplicationCommandPriority.LOW
    queue.submit(ReplicateContainerCommand(container_id=1, priority=normal, id=1))
    queue.submit(ReplicateContainerCommand(container_id=2, priority=low, id=2))
    queue.submit(ReplicateContainerCommand(container_id=3, priority=normal, id=3))
    gate.set()
    await wait_for_async(lambda: len(log) == 6)
    assert [i for edge, i in log if edge == "start"] == [1, 3, 2]


@async_test
async def test_expired_and_stale_term_commands_are_dropped() -> None:
    log: list[tuple[str, int]] = []
    handler = Recorder(log)
    queue = _queue({T.closeContainerCommand: handler})
    assert not queue.submit(_cmd(T.closeContainerCommand, 1, deadline_epoch_ms=NOW_MS - 1))
    assert queue.submit(_cmd(T.closeContainerCommand, 2, deadline_epoch_ms=NOW_MS + 1000))
    assert queue.submit(_cmd(T.closeContainerCommand, 3))  # 0: no deadline
    queue.observe_term(5)
    assert not queue.submit(_cmd(T.closeContainerCommand, 4, term=4))
    assert queue.submit(_cmd(T.closeContainerCommand, 5, term=5))
    await wait_for_async(lambda: len(log) == 6)
    assert [i for edge, i in log if edge == "start"] == [2, 3, 5]
    assert [i for i, _ in handler.dropped] == [1, 4]
    assert "deadline" in handler.dropped[0][1] and "term 4" in handler.dropped[1][1]


@async_test
async def test_a_deadline_passing_in_the_queue_drops_the_command() -> None:
    now = [NOW_MS]
    log: list[tuple[str, int]] = []
    gate = asyncio.Event()
    handler = Recorder(log, gate)
    limits = QueueLimits(1, 10, 2.0, {})
    queue = CommandQueue({T.deleteContainerCommand: handler}, limits, now_ms=lambda: now[0])
    queue.submit(_cmd(T.deleteContainerCommand, 1))
    queue.submit(_cmd(T.deleteContainerCommand, 2, deadline_epoch_ms=NOW_MS + 10))
    await wait_for_async(lambda: log)
    now[0] += 20
    gate.set()
    await wait_for_async(lambda: handler.dropped)
    assert [i for edge, i in log if edge == "start"] == [1]
    assert handler.dropped == [(2, "its deadline passed while queued")]


@async_test
async def test_queue_limits_per_type_and_for_replication() -> None:
    gate = asyncio.Event()
    blocks = Recorder([], gate)
    replicas = Recorder([], gate)
    queue = _queue(
        {T.deleteBlocksCommand: blocks, T.replicateContainerCommand: replicas}, streams=1, queue_limit=2
    )
    results = [queue.submit(_cmd(T.deleteBlocksCommand, i)) for i in range(1, 6)]
    assert results == [True, True, True, False, False]  # one running, two waiting (the limit)
    assert [i for i, _ in blocks.dropped] == [4, 5] and blocks.queued == [1, 2, 3]
    results = [queue.submit(_cmd(T.replicateContainerCommand, i)) for i in range(11, 15)]
    assert results == [True, True, True, False]
    assert queue.counts() == {T.deleteBlocksCommand: 3, T.replicateContainerCommand: 3}
    gate.set()


@async_test
async def test_unknown_types_are_dropped_and_counts_cover_every_handled_type() -> None:
    queue = _queue({T.closeContainerCommand: Recorder([]), T.deleteBlocksCommand: Recorder([])})
    assert not queue.submit(_cmd(T.reconcileContainerCommand, 1))
    assert queue.counts() == {T.deleteBlocksCommand: 0, T.closeContainerCommand: 0}


@async_test
async def test_close_abandons_waiting_and_cancels_running_after_the_grace() -> None:
    log: list[tuple[str, int]] = []
    gate = asyncio.Event()  # never set: the running command would block forever
    queue = _queue({T.closeContainerCommand: Recorder(log, gate)})
    for i in range(1, 4):
        queue.submit(_cmd(T.closeContainerCommand, i))
    await wait_for_async(lambda: log)
    await asyncio.wait_for(queue.close(0.05), 2)
    assert log == [("start", 1)]
    assert queue.counts() == {T.closeContainerCommand: 0}


@async_test
async def test_the_queue_report_to_scm_leaves_low_priority_replicates_out() -> None:
    """Ozone's HDDS-7844: SCM schedules NORMAL replication regardless of the balancer's LOW work, so the
    commandQueueReport does not count it; the datanode's own counts (web UI, metrics) do."""
    log: list[tuple[str, int]] = []
    gate = asyncio.Event()
    queue = _queue({T.replicateContainerCommand: Recorder(log, gate)}, streams=1)
    low = ReplicationCommandPriority.LOW
    for i in range(1, 4):
        assert queue.submit(_cmd(T.replicateContainerCommand, i, priority=low))
    assert queue.submit(_cmd(T.replicateContainerCommand, 4))
    await wait_for_async(lambda: len(log) == 1)  # one running, three waiting
    assert queue.counts() == {T.replicateContainerCommand: 4}
    assert queue.queue_report() == {T.replicateContainerCommand: 1}
    gate.set()
    await wait_for_async(lambda: sum(queue.counts().values()) == 0)


@async_test
async def test_a_queue_full_of_low_priority_replicates_still_takes_normal_work() -> None:
    """R27 D2: SCM does not see LOW replicates (the queue report leaves them out) and sends repairs to a
    datanode the balancer filled: NORMAL work counts only NORMAL work against the queue's limit."""
    log: list[tuple[str, int]] = []
    gate = asyncio.Event()
    queue = _queue({T.replicateContainerCommand: Recorder(log, gate)}, streams=1, queue_limit=3)
    low = ReplicationCommandPriority.LOW
    for i in range(1, 5):  # one runs, three wait: the queue is full for LOW work
        assert queue.submit(_cmd(T.replicateContainerCommand, i, priority=low))
    await wait_for_async(lambda: len(log) == 1)
    assert not queue.submit(_cmd(T.replicateContainerCommand, 5, priority=low))
    for i in range(6, 9):
        assert queue.submit(_cmd(T.replicateContainerCommand, i))
    assert not queue.submit(_cmd(T.replicateContainerCommand, 9))  # three NORMAL ones wait now
    gate.set()
    await wait_for_async(lambda: sum(queue.counts().values()) == 0)
    started = [i for edge, i in log if edge == "start"]
    assert started == [1, 6, 7, 8, 2, 3, 4]  # NORMAL before LOW
