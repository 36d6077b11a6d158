"""reconstructECContainers: this datanode coordinates the rebuild of an EC container's missing indexes
(Ozone's ReconstructECContainersCommandHandler and ECReconstructionCoordinatorTask).

The command runs on the replication workers (command_admission.REPLICATION_TYPES), after the same term and
deadline checks as replicateContainer; its deadline bounds the whole reconstruction. The outcome goes to
SCM as the command's status (EXECUTED or FAILED) and to the log; SCM's replication manager sees the new
replicas in the targets' reports, or retries once the command's pending operations time out.
"""

from __future__ import annotations

import logging
import time

from pyozone.datanode.command_queue import CommandHandler
from pyozone.datanode.commands.context import CommandContext
from pyozone.datanode.ec import Connect, ReconstructionError, RpcPeers, reconstruct_container
from pyozone.datanode.ec.coordinator import Reconstruction
from pyozone.hdds.commands import ReconstructECContainersCommand, SCMCommand
from pyozone.hdds.messages import CommandStatusReport
from pyozone.hdds.states import CommandStatus

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 600.0
"""A command without a deadline still ends (SCM always sets one)."""


def reconstruction_of(command: ReconstructECContainersCommand) -> Reconstruction:
    """The command's sources and targets by replica index; ValueError names what does not fit."""
    missing = list(command.missing_indexes)
    if len(missing) != len(command.targets):
        raise ValueError(f"{len(command.targets)} targets for the {len(missing)} missing indexes {missing}")
    if len(set(missing)) != len(missing):
        raise ValueError(f"missing indexes {missing} repeat")
    sources = {}
    for source in command.sources:
        if source.replica_index in sources:
            raise ValueError(f"two sources for replica index {source.replica_index}")
        sources[source.replica_index] = source.datanode
    targets = dict(zip(missing, command.targets, strict=True))
    return Reconstruction(command.container_id, command.replication_config, sources, targets)


class ReconstructECHandler(CommandHandler):
    def __init__(self, ctx: CommandContext, connect: Connect | None = None) -> None:
        """`connect`: streams to datanodes (tests pass in-process ones); by default RPC, one channel per
        datanode for each command."""
        self.ctx = ctx
        self.connect = connect

    def on_dropped(self, command: SCMCommand, reason: str) -> None:
        self._status(command, CommandStatus.FAILED)

    async def handle(self, command: ReconstructECContainersCommand) -> None:
        cid = command.container_id
        try:
            job = reconstruction_of(command)
        except ValueError as e:
            log.error("reconstructECContainers for container %d refused: %s", cid, e)
            self._status(command, CommandStatus.FAILED)
            return
        timeout_s = DEFAULT_TIMEOUT_S
        if command.deadline_epoch_ms:
            timeout_s = max(0.001, command.deadline_epoch_ms / 1000 - time.time())
        peers = RpcPeers(timeout_s, self.ctx.tls)  # opens channels only when used
        connect = self.connect or peers.connect
        try:
            outcome = await reconstruct_container(
                job, connect, self.ctx.datanode_uuid, self.ctx.executor, timeout_s, self.ctx.tokens
            )
        except ReconstructionError as e:
            log.error("%s (cause: %r)", e, e.__cause__)
            self._status(command, CommandStatus.FAILED)
            return
        finally:
            await peers.close()
        log.info(
            "reconstructed container %d (%s) indexes %s on %s: %d block groups, %d bytes, %.2fs, %.1f MB/s",
            cid, command.replication_config.ec_name, sorted(job.targets),
            [str(job.targets[i].uuid)[:8] for i in sorted(job.targets)], outcome.block_groups,
            outcome.bytes_written, outcome.seconds, outcome.bytes_written / 1e6 / max(outcome.seconds, 1e-9),
        )  # fmt: skip
        self._status(command, CommandStatus.EXECUTED)

    def _status(self, command: SCMCommand, status: CommandStatus) -> None:
        self.ctx.reports.set_command_status(CommandStatusReport(command.id, command.type, status))
