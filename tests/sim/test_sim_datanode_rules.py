"""The simulator's datanode decides as the daemon does, because both call the datanode's own rules.

Fed the same replication commands, it takes and drops the same ones and reports the same queue counts as
the daemon's CommandQueue (pyozone/datanode/command_admission.py; the simulator runs every other command
at once, where the daemon runs them on one worker, so only replication work can wait in both). Fed the same
writes, it asks SCM to close a container on the same write as the daemon's dispatcher
(pyozone/datanode/container_full.py)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from pyozone.config import OzoneConfiguration
from pyozone.datanode.command_queue import CommandHandler, CommandQueue, QueueLimits
from pyozone.datanode.xceiver import Dispatcher
from pyozone.hdds.commands import (
    ReplicateContainerCommand,
    ReplicationCommandPriority,
    SCMCommand,
    SetNodeOperationalStateCommand,
)
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.states import NodeOperationalState, SCMCommandType
from pyozone.scm.node.storage_report import node_report
from pyozone.sim.cluster import SimCluster
from pyozone.sim.datanode import SimDatanode
from tests.polling import wait_for_async
from tests.unit.datanode.dns_helpers import chunk, create, open_node, payload, write

NOW = 1_700_000_000_000
TERM = 5
LIMITS = QueueLimits(replication_streams=2, replication_queue=3, out_of_service_factor=1.5, per_type={})
TARGET = DatanodeDetails("dn-target", "target", "127.0.0.1")
LOW = ReplicationCommandPriority.LOW


def replicate(cid: int, term: int = TERM, deadline: int = NOW + 60_000, low: bool = False) -> SCMCommand:
    priority = LOW if low else ReplicationCommandPriority.NORMAL
    return ReplicateContainerCommand(
        container_id=cid, target=TARGET, term=term, deadline_epoch_ms=deadline, priority=priority
    )


BATCHES: list[list[SCMCommand]] = [
    # an older term, a passed deadline, then seven (every other one LOW): 2 start, 3 wait, then the LOW
    # one finds the queue full and the NORMAL one fits (NORMAL work counts only NORMAL work)
    [
        replicate(1, term=TERM - 1),
        replicate(2, deadline=NOW - 1),
        *(replicate(c, low=c % 2 == 0) for c in range(3, 10)),
    ],
    # leaving service: 3 workers and a queue of 5 (1.5 x, rounded up), so some of these fit
    [SetNodeOperationalStateCommand(state=NodeOperationalState.DECOMMISSIONING, term=TERM)],
    [replicate(c) for c in range(10, 16)],
]


class Blocked(CommandHandler):
    """A replication that runs until the test ends, so the daemon's workers stay busy as the sim's do."""

    def __init__(self) -> None:
        self.forever = asyncio.Event()

    async def handle(self, command: SCMCommand) -> None:
        await self.forever.wait()


class OperationalState(CommandHandler):
    def __init__(self, queue: list[CommandQueue]) -> None:
        self.queue = queue

    async def handle(self, command: SCMCommand) -> None:
        assert isinstance(command, SetNodeOperationalStateCommand)
        self.queue[0].set_out_of_service(command.state is not NodeOperationalState.IN_SERVICE)


async def daemon_decisions() -> list[tuple[list[bool], dict[SCMCommandType, int], int]]:
    holder: list[CommandQueue] = []
    handlers = {
        SCMCommandType.replicateContainerCommand: Blocked(),
        SCMCommandType.setNodeOperationalStateCommand: OperationalState(holder),
    }
    queue = CommandQueue(handlers, LIMITS, now_ms=lambda: NOW)
    holder.append(queue)
    seen = []
    for batch in BATCHES:
        queue.observe_term(TERM)
        taken = [queue.submit(command) for command in batch]
        await wait_for_async(lambda: queue.counts()[SCMCommandType.setNodeOperationalStateCommand] == 0, 5)
        rep = SCMCommandType.replicateContainerCommand
        seen.append((taken, {rep: queue.counts()[rep]}, queue.queue_report()[rep]))
    await queue.close(0)
    return seen


def sim_decisions() -> list[tuple[list[bool], dict[SCMCommandType, int], int]]:
    node = SimDatanode(DatanodeDetails("dn-sim", "sim", "127.0.0.1"), node_report("dn-sim", 1, 1))
    node.start_process(LIMITS)
    seen = []
    for batch in BATCHES:
        taken = []
        for command in batch:
            dropped = node.commands_dropped
            node.receive([command], TERM, NOW)
            taken.append(node.commands_dropped == dropped)
        assert node.admission is not None
        rep = SCMCommandType.replicateContainerCommand
        counts = node.admission.counts(node.replications())
        reported = node.admission.queue_report(node.replications())  # what its heartbeat tells SCM
        seen.append((taken, {rep: counts[rep]}, reported[rep]))
    return seen


def test_sim_and_daemon_take_and_count_the_same_commands() -> None:
    daemon = asyncio.run(daemon_decisions())
    sim = sim_decisions()
    assert sim == daemon
    first, _, third = daemon
    assert first == (
        [False, False, True, True, True, True, True, False, True],
        {SCMCommandType.replicateContainerCommand: 6},
        4,  # the queue report leaves the two LOW ones (4 and 6) out
    )
    assert third[1] == {SCMCommandType.replicateContainerCommand: 9}  # 3 workers + 5 NORMAL and 1 LOW waiting


def test_sim_and_dispatcher_call_a_container_full_on_the_same_write(tmp_path: Path) -> None:
    sizes = [random.Random(7).randrange(60_000, 220_000) for _ in range(30)]
    settings = {
        "ozone.scm.container.size": "1MB",
        "ozone.scm.block.size": "256KB",
        "hdds.container.close.threshold": "0.6",
    }
    c = SimCluster(3, conf=OzoneConfiguration(settings), seed=3)
    assert c.run_until(lambda: not c.scm.safe_mode.in_safe_mode(), 10 * 60_000)
    writes: list[tuple[int, int]] = []  # (container, bytes), in order
    sim_full: list[int] = []  # indexes of the writes that made a container full
    for i, size in enumerate(sizes):
        block = c.write_block(size)
        writes.append((block.container_id, size))
        actions = c.datanodes[block.pipeline.nodes[0]].container_actions
        if any(a.container_id == block.container_id for a in actions):
            sim_full.append(i)
            actions.clear()
    assert sim_full, "the writes should fill at least one container"

    node = open_node(tmp_path / "dn", "aaaaaaaa-0000-4000-8000-000000000001", "1MB")
    try:
        dispatcher = Dispatcher(node.containers, node.uuid, node.full.append, close_threshold=0.6)
        daemon_full = []
        for i, (cid, size) in enumerate(writes):
            if node.containers.get(cid) is None:
                dispatcher.dispatch(create(cid))
            data = payload(i, size)
            before = len(node.full)
            dispatcher.dispatch(write(cid, i + 1, chunk(f"c{i}", 0, data), data))
            if len(node.full) > before:
                daemon_full.append(i)
    finally:
        node.close()
    assert daemon_full == sim_full, (daemon_full, sim_full)
