"""closeContainer: the datanode side of a close (Ozone's CloseContainerCommandHandler)."""

from __future__ import annotations

import logging

from pyozone.datanode.command_queue import CommandHandler
from pyozone.datanode.commands.context import CommandContext
from pyozone.datanode.ratis import PipelineGroup
from pyozone.datanode.storage import ContainerError, KeyValueContainer
from pyozone.hdds.commands import CloseContainerCommand
from pyozone.hdds.states import ReplicaState
from pyozone.protocol.container import close_container_request, refusal

log = logging.getLogger(__name__)


class CloseContainerHandler(CommandHandler):
    """OPEN -> CLOSING (reported at once), then:
    - in the container's pipeline: closed through the pipeline log. The leader puts a closeContainer
      entry into the log, so every member closes the replica after the same writes, at the same BCSID; a
      follower only marks it CLOSING and waits for that entry (Ozone's followers ignore the command too).
    - not in the pipeline (it is gone): QUASI_CLOSED, because this replica may lag the others;
    - forced, or an EC replica (replica index > 0: its pipeline has no log, and SCM sends force for EC
      anyway): CLOSED at once.
    QUASI_CLOSED becomes CLOSED only by force; CLOSED, UNHEALTHY and missing replicas are left alone, and so
    is a RECOVERING one (an EC reconstruction's target: its coordinator closes it when it is whole)."""

    def __init__(self, ctx: CommandContext) -> None:
        self.ctx = ctx

    async def handle(self, command: CloseContainerCommand) -> None:
        container_id = command.container_id
        container = self.ctx.containers.get(container_id)
        if container is None:
            log.info("closeContainer %d: no such container here; nothing to do", container_id)
            return
        pipeline_id, force = command.pipeline_id, command.force
        group = self.ctx.groups.get(pipeline_id) if pipeline_id else None
        try:
            if (
                group is not None
                and not force
                and container.state in (ReplicaState.OPEN, ReplicaState.CLOSING)
            ):
                await self.ctx.blocking(container.mark_closing)
                if group.is_leader:
                    await self._close_through_log(group, container_id, pipeline_id)
                return
            await self.ctx.blocking(self._close, container, pipeline_id, force)
        except ContainerError as e:
            log.error("closeContainer %d failed: %s", container_id, e)

    async def _close_through_log(self, group: PipelineGroup, container_id: int, pipeline_id: str) -> None:
        request = close_container_request(container_id, pipeline_id, self.ctx.datanode_uuid)
        failure = refusal(await group.submit(request))
        if failure is not None:
            log.warning("closeContainer %d through pipeline %s: %s", container_id, pipeline_id, failure)

    def _close(self, container: KeyValueContainer, pipeline_id: str | None, force: bool) -> None:
        if container.state is ReplicaState.QUASI_CLOSED:
            if force:
                container.close(force=True)
            return
        if container.state not in (ReplicaState.OPEN, ReplicaState.CLOSING):
            return
        container.mark_closing()
        if force or container.data.replica_index > 0:
            container.close()
        else:
            log.info(
                "container %d: pipeline %s is not here; quasi-closing", container.container_id, pipeline_id
            )
            container.quasi_close()
