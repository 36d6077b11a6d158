"""Commands SCM queues for a datanode; they leave with that datanode's next heartbeat response."""

from __future__ import annotations

from collections import Counter

from pyozone.hdds.commands import SCMCommand
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import SCMCommandType


class CommandQueue:
    """Per-datanode FIFO with per-type counts kept up to date (RM throttling reads them often)."""

    def __init__(self) -> None:
        self._queues: dict[DatanodeID, list[SCMCommand]] = {}
        self._counts: dict[DatanodeID, Counter[SCMCommandType]] = {}

    def add(self, dn: DatanodeID, command: SCMCommand) -> None:
        self._queues.setdefault(dn, []).append(command)
        self._counts.setdefault(dn, Counter())[command.type] += 1

    def drain(self, dn: DatanodeID) -> list[SCMCommand]:
        commands = self._queues.pop(dn, [])
        self._counts.pop(dn, None)
        return commands

    def count(self, dn: DatanodeID, command_type: SCMCommandType) -> int:
        counts = self._counts.get(dn)
        return counts[command_type] if counts else 0

    def peek(self, dn: DatanodeID) -> tuple[SCMCommand, ...]:
        return tuple(self._queues.get(dn, ()))
