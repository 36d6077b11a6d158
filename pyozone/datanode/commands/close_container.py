"""closeContainer: the datanode side of spec 7.2 (Ozone's CloseContainerCommandHandler)."""

from __future__ import annotations

import logging

from pyozone.datanode.command_queue import CommandHandler
from pyozone.datanode.commands.context import CommandContext
from pyozone.datanode.storage import ContainerError, KeyValueContainer
from pyozone.hdds.states import ReplicaState
from pyozone.scm.node.commands import SCMCommand

log = logging.getLogger(__name__)


class CloseContainerHandler(CommandHandler):
    """OPEN -> CLOSING (reported at once), then CLOSED when this datanode is in the container's pipeline
    (the stand-in for closing through Ratis, where every member closes at the same log index) or when
    forced; otherwise QUASI_CLOSED, because without the pipeline this replica may lag the others.
    QUASI_CLOSED becomes CLOSED only by force; CLOSED, UNHEALTHY and missing replicas are left alone."""

    def __init__(self, ctx: CommandContext) -> None:
        self.ctx = ctx

    async def handle(self, command: SCMCommand) -> None:
        container_id = command.payload["containerID"]
        container = self.ctx.containers.get(container_id)
        if container is None:
            log.info("closeContainer %d: no such container here; nothing to do", container_id)
            return
        try:
            await self.ctx.blocking(
                self._close, container, command.payload.get("pipelineID"), command.payload.get("force", False)
            )
        except ContainerError as e:
            log.error("closeContainer %d failed: %s", container_id, e)

    def _close(self, container: KeyValueContainer, pipeline_id: str | None, force: bool) -> None:
        if container.state is ReplicaState.QUASI_CLOSED:
            if force:
                container.close(force=True)
            return
        if container.state not in (ReplicaState.OPEN, ReplicaState.CLOSING):
            return
        container.mark_closing()
        in_pipeline = pipeline_id is not None and pipeline_id in self.ctx.pipelines
        if in_pipeline or force:
            container.close()
        else:
            log.info(
                "container %d: pipeline %s is not here; quasi-closing", container.container_id, pipeline_id
            )
            container.quasi_close()
