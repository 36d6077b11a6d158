"""The datanode's rules for SCM's commands, without the I/O: which it takes, in what order replication work
runs, how many workers run it, and the counts it reports to SCM.

The daemon's CommandQueue (command_queue.py) runs commands on asyncio workers with these rules, and the
simulator's datanode (pyozone/sim/datanode.py) applies the same ones on virtual time, so SCM's throttling
is tested against what a real datanode does.

As in Ozone's DatanodeStateMachine and ReplicationSupervisor: a command from an older SCM term
than the newest seen, or past its deadline, is dropped, and replication work is checked again when a
worker takes it; replication-type commands (replicate and EC reconstruction) wait in a queue of
hdds.datanode.replication.queue.limit, NORMAL priority before LOW, and run on
hdds.datanode.replication.streams.limit workers; both limits grow by the out-of-service factor while the
node is decommissioning or in maintenance; some types have a cap on how many may wait (deleteBlocks).
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from collections.abc import Iterable, Iterator

from pyozone.datanode.settings import QueueLimits
from pyozone.hdds.commands import (
    SCMCommand,
    is_low_priority_replication,
)
from pyozone.hdds.replication_limits import out_of_service_limit
from pyozone.hdds.states import SCMCommandType

REPLICATION_TYPES = frozenset(
    {SCMCommandType.replicateContainerCommand, SCMCommandType.reconstructECContainersCommand}
)
"""Long-running copies: they share the replication workers; every other command runs in arrival order."""


class WaitingCommands:
    """Commands taken and not yet run, NORMAL before LOW priority replicates, in arrival order within each
    (any other command is NORMAL), with the tallies admission reads
    kept as commands come and go: a heartbeat may bring thousands of replicates into a queue of thousands,
    and counting the queue for each of them was O(n) a command."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, SCMCommand]] = []
        self._arrival = itertools.count()
        self.of_type: Counter[SCMCommandType] = Counter()
        self.low_priority = 0  # LOW priority replicates among them (is_low_priority_replication)

    def push(self, command: SCMCommand) -> None:
        low = is_low_priority_replication(command)
        heapq.heappush(self._heap, (int(low), next(self._arrival), command))
        self._tally(command, 1)

    def pop(self) -> SCMCommand:
        _, _, command = heapq.heappop(self._heap)
        self._tally(command, -1)
        return command

    def _tally(self, command: SCMCommand, step: int) -> None:
        self.of_type[command.type] += step
        self.low_priority += step * is_low_priority_replication(command)

    def clear(self) -> None:
        self._heap.clear()
        self.of_type.clear()
        self.low_priority = 0

    def __len__(self) -> int:
        return len(self._heap)

    def __iter__(self) -> Iterator[SCMCommand]:
        """In no particular order (counting needs none)."""
        return (command for _, _, command in self._heap)


class CommandAdmission:
    def __init__(
        self, limits: QueueLimits, handled: Iterable[SCMCommandType], out_of_service: bool = False
    ) -> None:
        self.limits = limits
        self.handled = tuple(sorted(handled))
        self.out_of_service = out_of_service
        self.max_term = 0

    def observe_term(self, term: int) -> None:
        """A heartbeat response's term (and its commands'): commands of older terms are SCM's past."""
        self.max_term = max(self.max_term, term)

    def _scaled(self, value: int) -> int:
        if not self.out_of_service:
            return value
        return out_of_service_limit(value, self.limits.out_of_service_factor)

    @property
    def replication_workers(self) -> int:
        return self._scaled(self.limits.replication_streams)

    @property
    def replication_queue_limit(self) -> int:
        return self._scaled(self.limits.replication_queue)

    @staticmethod
    def expired(command: SCMCommand, now_epoch_ms: int) -> bool:
        return 0 < command.deadline_epoch_ms < now_epoch_ms

    def refusal(self, command: SCMCommand, now_epoch_ms: int, waiting: WaitingCommands) -> str:
        """Why the command is not taken ("" to take it); `waiting`: the commands of its lane not yet run."""
        if command.type not in self.handled:
            return f"no handler for {command.type.name}"
        if command.term < self.max_term:
            return f"term {command.term} is older than the newest SCM term {self.max_term}"
        if self.expired(command, now_epoch_ms):
            return f"its deadline {command.deadline_epoch_ms} has passed"
        if command.type in REPLICATION_TYPES and self._queue_full(command, waiting):
            return f"the replication queue is full ({self.replication_queue_limit})"
        limit = self.limits.per_type.get(command.type)
        if limit is not None and waiting.of_type[command.type] >= limit:
            return f"{limit} {command.type.name} commands are already queued"
        return ""

    def _queue_full(self, command: SCMCommand, waiting: WaitingCommands) -> bool:
        """A LOW priority replicate finds the queue full at the limit; NORMAL work counts only NORMAL
        work against it: SCM, which does not see the LOW replicates (`queue_report`), sends repairs to a
        datanode whose queue the balancer filled, and they must not be dropped (up to twice the limit
        wait then). Ozone's ReplicationSupervisor counts both (a dropped repair waits its SCM deadline)."""
        limit = self.replication_queue_limit
        if is_low_priority_replication(command):
            return len(waiting) >= limit
        return len(waiting) - waiting.low_priority >= limit

    def refusal_at_start(self, command: SCMCommand, now_epoch_ms: int) -> str:
        """Why a queued command is not run when a worker takes it ("" to run it): its deadline passed while
        it waited, or, for replication work (Ozone's ReplicationSupervisor), a newer SCM term was seen."""
        if self.expired(command, now_epoch_ms):
            return "its deadline passed while queued"
        if command.type in REPLICATION_TYPES and command.term < self.max_term:
            return f"term {command.term} became older than the newest SCM term {self.max_term} while queued"
        return ""

    def counts(self, queued_and_running: Iterable[SCMCommand]) -> dict[SCMCommandType, int]:
        """Queued and running commands of every handled type, zeros included. A reconstruction counts
        once, as in Ozone: SCM applies its weight (hdds.scm.replication.datanode.reconstruction.weight)."""
        counts = Counter(c.type for c in queued_and_running)
        return {t: counts.get(t, 0) for t in self.handled}

    def queue_report(self, queued_and_running: Iterable[SCMCommand]) -> dict[SCMCommandType, int]:
        """The commandQueueReport: `counts` without the LOW priority replicates
        (`is_low_priority_replication`); zeros included, so SCM knows they are 0."""
        return self.counts(c for c in queued_and_running if not is_low_priority_replication(c))
