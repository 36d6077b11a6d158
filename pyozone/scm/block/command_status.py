"""Status of the deleteBlocks commands SCM created, per datanode (Ozone's
SCMDeleteBlocksCommandStatusManager).

A transaction in an outstanding command (TO_BE_SENT or SENT) is not sent to that datanode again;
a SENT command the datanode never reports on is forgotten after a timeout, making its transactions
eligible again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from enum import Enum

from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import CommandStatus

log = logging.getLogger(__name__)


class CmdStatus(Enum):
    TO_BE_SENT = "TO_BE_SENT"
    SENT = "SENT"


@dataclass(frozen=True, slots=True)
class CommandRecord:
    command_id: int
    tx_ids: frozenset[int]
    status: CmdStatus
    updated_ms: int


class DeleteBlocksCommandStatusManager:
    def __init__(self, clock, timeout_ms: int) -> None:
        self.clock = clock
        self.timeout_ms = timeout_ms
        self._records: dict[DatanodeID, dict[int, CommandRecord]] = {}

    def record(self, dn: DatanodeID, command_id: int, tx_ids: frozenset[int]) -> None:
        self._records.setdefault(dn, {})[command_id] = CommandRecord(
            command_id, tx_ids, CmdStatus.TO_BE_SENT, self.clock.now_ms()
        )

    def records(self, dn: DatanodeID) -> tuple[CommandRecord, ...]:
        return tuple(self._records.get(dn, {}).values())

    def outstanding(self, dns: set[DatanodeID]) -> dict[DatanodeID, set[int]]:
        """Per datanode, the transactions in its TO_BE_SENT or SENT commands."""
        result: dict[DatanodeID, set[int]] = {}
        for dn in dns:
            records = self._records.get(dn)
            if records:
                result[dn] = {tx for record in records.values() for tx in record.tx_ids}
        return result

    def update(self, dn: DatanodeID, command_id: int, status: CommandStatus) -> None:
        """PENDING (also the heartbeat "sent" hook): -> SENT; EXECUTED/FAILED: the record goes."""
        records = self._records.get(dn)
        record = records.get(command_id) if records else None
        if record is None:
            log.debug("Status %s for unknown deleteBlocks command %d from %s", status.name, command_id, dn)
            return
        if status is CommandStatus.PENDING:
            records[command_id] = replace(record, status=CmdStatus.SENT, updated_ms=self.clock.now_ms())
            return
        if record.status is CmdStatus.TO_BE_SENT:
            log.error(
                "Received %s for deleteBlocks command %d to %s that was never sent",
                status.name,
                command_id,
                dn,
            )
        del records[command_id]

    def clean_timeouts(self, dn: DatanodeID | None = None) -> None:
        """Drops SENT records not updated for longer than the timeout (of one datanode, or all)."""
        now = self.clock.now_ms()
        for node in [dn] if dn is not None else list(self._records):
            records = self._records.get(node, {})
            for command_id, record in list(records.items()):
                if record.status is CmdStatus.SENT and now - record.updated_ms > self.timeout_ms:
                    del records[command_id]
                    log.warning(
                        "deleteBlocks command %d to %s dropped after %d ms without update",
                        command_id,
                        node,
                        now - record.updated_ms,
                    )

    def on_datanode_dead(self, dn: DatanodeID) -> None:
        self._records.pop(dn, None)
