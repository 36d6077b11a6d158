"""The simulator's datanode decides as the daemon does: fed the same replication commands, it takes and
drops the same ones and reports the same queue counts as the daemon's CommandQueue, because both call
pyozone/datanode/command_admission.py. (The simulator runs every other command at once, where the daemon
runs them on one worker, so only replication work can wait in both.)"""

from __future__ import annotations

import asyncio

from pyozone.datanode.command_queue import CommandHandler, CommandQueue, QueueLimits
from pyozone.hdds.commands import (
    ReplicateContainerCommand,
    ReplicationCommandPriority,
    SCMCommand,
    SetNodeOperationalStateCommand,
)
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.states import NodeOperationalState, SCMCommandType
from pyozone.sim.datanode import SimDatanode
from pyozone.sim.storage import node_report

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
    # an older term, a passed deadline, then seven: 2 start, 3 wait, 2 find the queue full
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


async def daemon_decisions() -> list[tuple[list[bool], dict[SCMCommandType, int]]]:
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
        await asyncio.sleep(0.05)  # the operational state command runs on its worker
        replication = {
            SCMCommandType.replicateContainerCommand: queue.counts()[SCMCommandType.replicateContainerCommand]
        }
        seen.append((taken, replication))
    await queue.close(0)
    return seen


def sim_decisions() -> list[tuple[list[bool], dict[SCMCommandType, int]]]:
    node = SimDatanode(DatanodeDetails("dn-sim", "sim", "127.0.0.1"), node_report("dn-sim", 1, 1))
    node.start_process(LIMITS)
    seen = []
    for batch in BATCHES:
        taken = []
        for command in batch:
            dropped = node.commands_dropped
            node.receive([command], TERM, NOW)
            taken.append(node.commands_dropped == dropped)
        counts = node.admission.counts(node.replications()) if node.admission else {}
        seen.append(
            (
                taken,
                {SCMCommandType.replicateContainerCommand: counts[SCMCommandType.replicateContainerCommand]},
            )
        )
    return seen


def test_sim_and_daemon_take_and_count_the_same_commands() -> None:
    daemon = asyncio.run(daemon_decisions())
    sim = sim_decisions()
    assert sim == daemon
    first, _, third = daemon
    assert first == (
        [False, False, True, True, True, True, True, False, False],
        {SCMCommandType.replicateContainerCommand: 5},
    )
    assert third[1] == {SCMCommandType.replicateContainerCommand: 8}  # 3 workers + 5 waiting
