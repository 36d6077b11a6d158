"""deleteContainer: removes a replica SCM no longer wants here (Ozone's DeleteContainerCommandHandler)."""

from __future__ import annotations

import logging

from pyozone.datanode.command_queue import CommandHandler
from pyozone.datanode.commands.context import CommandContext
from pyozone.datanode.storage import ContainerError
from pyozone.hdds.commands import DeleteContainerCommand

log = logging.getLogger(__name__)


class DeleteContainerHandler(CommandHandler):
    """Deletes through ContainerSet, which reports the replica DELETED (an incremental report). Without
    force, an OPEN or non-empty replica is refused: SCM only asks that for replicas it believes empty."""

    def __init__(self, ctx: CommandContext) -> None:
        self.ctx = ctx

    async def handle(self, command: DeleteContainerCommand) -> None:
        container_id, force, replica_index = command.container_id, command.force, command.replica_index
        container = self.ctx.containers.get(container_id)
        if container is None:
            log.info("deleteContainer %d: no such container here; nothing to do", container_id)
            return
        if replica_index and container.data.replica_index != replica_index:
            log.warning(
                "deleteContainer %d: replica index %d here, command names %d; not deleted",
                container_id, container.data.replica_index, replica_index,
            )  # fmt: skip
            return
        try:
            await self.ctx.blocking(self.ctx.containers.delete, container_id, force)
        except ContainerError as e:
            log.warning("deleteContainer %d (force=%s) refused: %s", container_id, force, e)
