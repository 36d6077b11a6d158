"""Commands about the datanode itself: operational state, layout finalization, volume usage."""

from __future__ import annotations

import logging

from pyozone.datanode.command_queue import CommandHandler
from pyozone.datanode.commands.context import CommandContext
from pyozone.datanode.reports import Periodic
from pyozone.hdds.commands import SCMCommand, SetNodeOperationalStateCommand

log = logging.getLogger(__name__)


class SetNodeOperationalStateHandler(CommandHandler):
    """Persists SCM's operational state in datanode.id: every heartbeat reports it (persistedOpState), and
    SCM's decommission/maintenance workflow waits until the datanode has persisted it. Out of service,
    the replication pool grows (ReplicationSupervisor)."""

    def __init__(self, ctx: CommandContext) -> None:
        self.ctx = ctx

    async def handle(self, command: SetNodeOperationalStateCommand) -> None:
        state, expiry = command.state, command.expiry_epoch_s
        current = self.ctx.identity.identity
        if (current.persisted_op_state, current.persisted_op_state_expiry) == (state, expiry):
            return
        await self.ctx.blocking(
            lambda: self.ctx.identity.update(persisted_op_state=state, persisted_op_state_expiry=expiry)
        )
        log.info(
            "operational state %s -> %s (expiry %d)", current.persisted_op_state.name, state.name, expiry
        )
        self.ctx.op_state_changed(state)


class FinalizeLayoutHandler(CommandHandler):
    """pyozone has one datanode layout version, so there is nothing to finalize."""

    async def handle(self, command: SCMCommand) -> None:
        log.info("finalizeNewLayoutVersion: already at the only layout version; nothing to do")


class RefreshVolumeUsageHandler(CommandHandler):
    """SCM wants fresh usage figures: a node report goes with the next heartbeat."""

    def __init__(self, ctx: CommandContext) -> None:
        self.ctx = ctx

    async def handle(self, command: SCMCommand) -> None:
        self.ctx.reports.request(Periodic.NODE)
