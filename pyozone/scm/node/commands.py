"""Commands SCM queues for a datanode; they leave with that datanode's next heartbeat response.

The command barrier (an HA leader's): each command records the store's epoch when it was queued (the last
transaction the core had closed), and leaves only once that epoch applied. In an HA service no
CreatePipeline, deleteBlocks or close command tied to a write leaves before the write commits (Ozone's
@Replicate returns after apply); a lone SCM's store applies at once (epochs stay 0), nothing waits.
"""

from __future__ import annotations

from collections import Counter
from typing import Protocol

from pyozone.hdds.commands import SCMCommand
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import SCMCommandType


class Epochs(Protocol):
    """Where the barrier reads the epochs: the SCM's metadata store."""

    @property
    def epoch(self) -> int: ...

    @property
    def applied_epoch(self) -> int: ...


class _Direct:
    epoch = 0
    applied_epoch = 0


class CommandQueue:
    """Per-datanode FIFO with per-type counts kept up to date (RM throttling reads them often)."""

    def __init__(self, epochs: Epochs | None = None) -> None:
        self._epochs = epochs or _Direct()
        self._queues: dict[DatanodeID, list[tuple[int, SCMCommand]]] = {}
        self._counts: dict[DatanodeID, Counter[SCMCommandType]] = {}

    def add(self, dn: DatanodeID, command: SCMCommand) -> None:
        self._queues.setdefault(dn, []).append((self._epochs.epoch, command))
        self._counts.setdefault(dn, Counter())[command.type] += 1

    def drain(self, dn: DatanodeID) -> list[SCMCommand]:
        """The commands whose epoch applied, in order; later ones wait (epochs only grow along a queue)."""
        queue = self._queues.get(dn)
        if not queue:
            return []
        applied = self._epochs.applied_epoch
        released = 0
        while released < len(queue) and queue[released][0] <= applied:
            released += 1
        if released == len(queue):
            del self._queues[dn]
            self._counts.pop(dn, None)
            return [command for _, command in queue]
        commands = [command for _, command in queue[:released]]
        del queue[:released]
        counts = self._counts[dn]
        for command in commands:
            counts[command.type] -= 1
        return commands

    def held(self, dn: DatanodeID) -> int:
        """Commands queued for `dn` whose epoch has not applied yet."""
        applied = self._epochs.applied_epoch
        return sum(1 for epoch, _ in self._queues.get(dn, ()) if epoch > applied)

    def clear(self) -> None:
        """A step-down (Ozone's SCMStateMachine.notifyNotLeader): the queued commands were the deposed
        leader's."""
        self._queues.clear()
        self._counts.clear()

    def count(self, dn: DatanodeID, command_type: SCMCommandType) -> int:
        counts = self._counts.get(dn)
        return counts[command_type] if counts else 0

    def peek(self, dn: DatanodeID) -> tuple[SCMCommand, ...]:
        return tuple(command for _, command in self._queues.get(dn, ()))
