"""Commands SCM queues for a datanode; they leave with that datanode's next heartbeat response."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import count
from typing import Any

from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import SCMCommandType

_command_ids = count(1)


@dataclass(frozen=True, slots=True)
class SCMCommand:
    type: SCMCommandType
    payload: dict[str, Any] = field(default_factory=dict)
    term: int = 0
    deadline_epoch_ms: int = 0
    id: int = field(default_factory=lambda: next(_command_ids))


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
