"""replicateContainer: push a closed replica to the target SCM named (reconstruction is reconstruct_ec.py)."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from pyozone.common.net import HostPort
from pyozone.datanode.command_queue import CommandHandler
from pyozone.datanode.commands.context import CommandContext
from pyozone.hdds.commands import ReplicateContainerCommand
from pyozone.hdds.datanode import DatanodeDetails

log = logging.getLogger(__name__)

REPLICATION_PORT = "REPLICATION"
DEFAULT_TIMEOUT_S = 600.0

Push = Callable[..., Awaitable[int]]
"""push_container(containers, container_id, target, executor, replica_index=..., timeout_s=...) -> bytes."""


def replication_target(details: DatanodeDetails) -> HostPort | None:
    port = details.port(REPLICATION_PORT)
    host = details.ip_address or details.hostname
    return HostPort(host, port) if port and host else None


class ReplicateContainerHandler(CommandHandler):
    """Push model (Ozone's ReplicateContainerCommand): SCM sends the command to a source, which streams the
    closed container to the target; the target verifies, imports and reports it. Ozone sends no command status
    for this, so the outcome is only logged; SCM sees the new replica (or not) in the target's reports."""

    def __init__(self, ctx: CommandContext, push: Push) -> None:
        self.ctx = ctx
        self.push = push

    async def handle(self, command: ReplicateContainerCommand) -> None:
        container_id, target_details = command.container_id, command.target
        if target_details is None:
            log.error("replicateContainer %d: no target (pull replication is not supported)", container_id)
            return
        target = replication_target(target_details)
        if target is None:
            log.error(
                "replicateContainer %d: target %s advertises no %s port", container_id, target_details.uuid,
                REPLICATION_PORT,
            )  # fmt: skip
            return
        timeout_s = DEFAULT_TIMEOUT_S
        if command.deadline_epoch_ms:
            timeout_s = max(0.001, command.deadline_epoch_ms / 1000 - time.time())
        started = time.monotonic()
        try:
            sent = await self.push(
                self.ctx.containers, container_id, target, self.ctx.executor,
                replica_index=command.replica_index, timeout_s=timeout_s,
            )  # fmt: skip
        except Exception as e:  # ReplicationError, or anything the push hit: logged, SCM retries elsewhere
            log.error(
                "replicateContainer %d to %s (%s) failed: %s", container_id, target_details.uuid, target, e
            )
            return
        log.info(
            "replicated container %d to %s (%s): %d bytes in %.1fs",
            container_id, target_details.uuid, target, sent, time.monotonic() - started,
        )  # fmt: skip
