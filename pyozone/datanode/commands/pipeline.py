"""createPipeline / closePipeline: this datanode's pipeline membership and its pipeline-log group."""

from __future__ import annotations

import logging

from pyozone.datanode.command_queue import CommandHandler
from pyozone.datanode.commands.context import CommandContext
from pyozone.datanode.pipelines import StreamAddress
from pyozone.datanode.reports import Periodic
from pyozone.datanode.storage import ContainerError
from pyozone.hdds.commands import ClosePipelineCommand, CreatePipelineCommand
from pyozone.hdds.states import ReplicaState

log = logging.getLogger(__name__)


class CreatePipelineHandler(CommandHandler):
    """Joins the pipeline and reports it promptly: SCM opens an ALLOCATED pipeline once every member
    has reported it, so this report is what makes the pipeline usable."""

    def __init__(self, ctx: CommandContext) -> None:
        self.ctx = ctx

    async def handle(self, command: CreatePipelineCommand) -> None:
        members = command.nodes
        if self.ctx.datanode_uuid not in members:
            log.warning("createPipeline %s does not name this datanode; ignored", command.pipeline_id)
            return
        addresses, streams = {}, {}
        for details in command.datanodes or ():
            if details is None:
                continue
            if port := details.port("RATIS"):
                addresses[str(details.uuid)] = f"{details.ip_address}:{port}"
            if port := details.port("RATIS_DATASTREAM"):
                streams[str(details.uuid)] = StreamAddress(details.ip_address, details.hostname, port)
        membership = await self.ctx.blocking(
            self.ctx.pipelines.add, command.pipeline_id, members, command.suggested_leader, addresses, streams
        )
        await self.ctx.groups.join(membership)
        self.ctx.reports.request(Periodic.PIPELINES, urgent=True)


class ClosePipelineHandler(CommandHandler):
    def __init__(self, ctx: CommandContext) -> None:
        self.ctx = ctx

    async def handle(self, command: ClosePipelineCommand) -> None:
        pipeline_id = command.pipeline_id
        await self.ctx.groups.leave(pipeline_id)
        if not await self.ctx.blocking(self.ctx.pipelines.remove, pipeline_id):
            log.info("closePipeline %s: not a member; nothing to do", pipeline_id)
        await self.ctx.blocking(self._quasi_close_waiting, pipeline_id)

    def _quasi_close_waiting(self, pipeline_id: str) -> None:
        """A CLOSING replica of this pipeline was waiting for the close entry of its log, which can no
        longer come: it quasi-closes now, as SCM's next closeContainer would make it do."""
        for container in self.ctx.containers.by_state(ReplicaState.CLOSING):
            if container.data.origin_pipeline_id == pipeline_id:
                log.info(
                    "container %d: pipeline %s closed; quasi-closing", container.container_id, pipeline_id
                )
                try:
                    container.quasi_close()
                except ContainerError as e:
                    log.warning("quasi-closing container %d: %s", container.container_id, e)
