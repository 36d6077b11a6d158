"""Handlers for SCM's commands, one module per command family; `build_handlers` maps types to them."""

from __future__ import annotations

from pyozone.datanode.command_queue import CommandHandler
from pyozone.datanode.commands.close_container import CloseContainerHandler
from pyozone.datanode.commands.context import CommandContext
from pyozone.datanode.commands.delete_blocks import DeleteBlocksHandler
from pyozone.datanode.commands.delete_container import DeleteContainerHandler
from pyozone.datanode.commands.node import (
    FinalizeLayoutHandler,
    RefreshVolumeUsageHandler,
    SetNodeOperationalStateHandler,
)
from pyozone.datanode.commands.pipeline import ClosePipelineHandler, CreatePipelineHandler
from pyozone.datanode.commands.reconstruct_ec import ReconstructECHandler
from pyozone.datanode.commands.replicate import Push, ReplicateContainerHandler
from pyozone.hdds.states import SCMCommandType as T


def build_handlers(ctx: CommandContext, push: Push) -> dict[T, CommandHandler]:
    """Every command type the datanode runs. reregisterCommand is not here: the heartbeat loop acts on it
    at once, ahead of anything queued. reconcileContainerCommand has no handler (not built yet)."""
    return {
        T.createPipelineCommand: CreatePipelineHandler(ctx),
        T.closePipelineCommand: ClosePipelineHandler(ctx),
        T.closeContainerCommand: CloseContainerHandler(ctx),
        T.deleteBlocksCommand: DeleteBlocksHandler(ctx),
        T.deleteContainerCommand: DeleteContainerHandler(ctx),
        T.replicateContainerCommand: ReplicateContainerHandler(ctx, push),
        T.reconstructECContainersCommand: ReconstructECHandler(ctx),
        T.setNodeOperationalStateCommand: SetNodeOperationalStateHandler(ctx),
        T.finalizeNewLayoutVersionCommand: FinalizeLayoutHandler(),
        T.refreshVolumeUsageInfo: RefreshVolumeUsageHandler(ctx),
    }


__all__ = ["CommandContext", "build_handlers"]
