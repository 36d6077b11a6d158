"""deleteBlocks: applies SCM's block-deletion transactions and ACKs each one (Ozone's
DeleteBlocksCommandHandler)."""

from __future__ import annotations

import logging

from pyozone.datanode.command_queue import CommandHandler
from pyozone.datanode.commands.context import CommandContext
from pyozone.hdds.commands import DeleteBlocksCommand, DeletedBlocksTransaction, SCMCommand
from pyozone.hdds.messages import CommandStatusReport, DeleteBlockTransactionResult
from pyozone.hdds.states import CommandStatus, ReplicaState

log = logging.getLogger(__name__)


class DeleteBlocksHandler(CommandHandler):
    """Every deleteBlocks command ends in a status SCM acts on: PENDING while queued, EXECUTED with one
    result per transaction, or FAILED when it was dropped (SCM then resends its transactions).

    A transaction succeeds when its blocks are gone: applied now, applied before (a resent command), or
    the container is not here at all. It fails on an OPEN container (SCM only deletes from closed ones,
    so the replica is behind) and on a storage error; SCM retries failed transactions later."""

    def __init__(self, ctx: CommandContext) -> None:
        self.ctx = ctx

    def on_queued(self, command: SCMCommand) -> None:
        self._status(command, CommandStatus.PENDING)

    def on_dropped(self, command: SCMCommand, reason: str) -> None:
        self._status(command, CommandStatus.FAILED)

    async def handle(self, command: DeleteBlocksCommand) -> None:
        results: list[DeleteBlockTransactionResult] = []
        try:
            for tx in command.transactions:
                success = await self.ctx.blocking(self._apply, tx)
                results.append(DeleteBlockTransactionResult(tx.tx_id, tx.container_id, success))
        finally:
            self._status(command, CommandStatus.EXECUTED, tuple(results))

    def _apply(self, tx: DeletedBlocksTransaction) -> bool:
        container = self.ctx.containers.get(tx.container_id)
        if container is None:
            return True
        if container.state is ReplicaState.OPEN:
            log.warning("deleteBlocks tx %d: container %d is OPEN; not applied", tx.tx_id, tx.container_id)
            return False
        try:
            container.delete_blocks(tx.tx_id, tx.local_ids)
        except Exception as e:  # a failed volume or DB: this transaction fails, the others still run
            log.error("deleteBlocks tx %d on container %d failed: %s", tx.tx_id, tx.container_id, e)
            return False
        return True

    def _status(
        self,
        command: SCMCommand,
        status: CommandStatus,
        results: tuple[DeleteBlockTransactionResult, ...] = (),
    ) -> None:
        self.ctx.reports.set_command_status(CommandStatusReport(command.id, command.type, status, results))
