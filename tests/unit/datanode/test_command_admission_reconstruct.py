"""EC reconstruction in the command queue: replication workers, term and deadline checks, plain counts."""

from __future__ import annotations

import asyncio

from pyozone.datanode.command_queue import CommandHandler, CommandQueue, QueueLimits
from pyozone.hdds.commands import ReconstructECContainersCommand, ReplicateContainerCommand, SCMCommand
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import SCMCommandType as T
from tests.polling import wait_for_async
from tests.unit.datanode.dnd_helpers import async_test

NOW_MS = 1_000_000
RS32 = ReplicationConfig.parse("rs-3-2-1024k")


class Gated(CommandHandler):
    def __init__(self, gate: asyncio.Event) -> None:
        self.gate = gate
        self.started: list[int] = []
        self.dropped: list[tuple[int, str]] = []

    async def handle(self, command: SCMCommand) -> None:
        self.started.append(command.id)
        await self.gate.wait()

    def on_dropped(self, command: SCMCommand, reason: str) -> None:
        self.dropped.append((command.id, reason))


def _reconstruct(cid: int, term: int = 0) -> ReconstructECContainersCommand:
    return ReconstructECContainersCommand(
        container_id=cid, sources=(), targets=(), missing_indexes=b"\x01", replication_config=RS32,
        id=cid, term=term,
    )  # fmt: skip


def _queue(handlers: dict[T, CommandHandler], streams: int) -> CommandQueue:
    return CommandQueue(handlers, QueueLimits(streams, 10, 2.0, {}), now_ms=lambda: NOW_MS)


@async_test
async def test_reconstructions_share_the_replication_workers_and_count_once_each() -> None:
    """The datanode reports plain counts; SCM weighs a reconstruction (reconstruction.weight 3)."""
    gate = asyncio.Event()
    rebuild, copy = Gated(gate), Gated(gate)
    queue = _queue({T.reconstructECContainersCommand: rebuild, T.replicateContainerCommand: copy}, streams=2)
    for cid in (1, 2):
        assert queue.submit(_reconstruct(cid))
    assert queue.submit(ReplicateContainerCommand(container_id=3, id=3))
    await wait_for_async(lambda: len(rebuild.started) == 2)
    assert copy.started == []  # both workers are busy rebuilding
    assert queue.counts() == {T.replicateContainerCommand: 1, T.reconstructECContainersCommand: 2}
    gate.set()
    await wait_for_async(lambda: copy.started == [3])
    await wait_for_async(lambda: sum(queue.counts().values()) == 0)


@async_test
async def test_a_newer_term_seen_while_a_reconstruction_waits_drops_it_at_start() -> None:
    gate = asyncio.Event()
    rebuild = Gated(gate)
    queue = _queue({T.reconstructECContainersCommand: rebuild}, streams=1)
    queue.observe_term(1)
    assert queue.submit(_reconstruct(1, term=1)) and queue.submit(_reconstruct(2, term=1))
    await wait_for_async(lambda: rebuild.started == [1])
    queue.observe_term(2)  # a new SCM leader: what the old one asked for is its past
    gate.set()
    await wait_for_async(lambda: rebuild.dropped)
    assert rebuild.started == [1]
    assert rebuild.dropped == [(2, "term 1 became older than the newest SCM term 2 while queued")]


def test_refusal_at_start_names_the_deadline_and_the_term() -> None:
    queue = _queue({T.reconstructECContainersCommand: CommandHandler()}, streams=1)
    admission = queue.admission
    admission.observe_term(5)
    late = ReconstructECContainersCommand(
        container_id=1, sources=(), targets=(), missing_indexes=b"\x01", replication_config=RS32,
        term=5, deadline_epoch_ms=NOW_MS - 1,
    )  # fmt: skip
    assert admission.refusal_at_start(late, NOW_MS) == "its deadline passed while queued"
    assert "term 4" in admission.refusal_at_start(_reconstruct(2, term=4), NOW_MS)
    assert admission.refusal_at_start(_reconstruct(3, term=5), NOW_MS) == ""
