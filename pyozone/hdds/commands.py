"""The commands SCM sends a datanode with its heartbeat response: one frozen dataclass per SCMCommandType.

Every command carries the envelope of Ozone's SCMCommandProto (term, deadline, id); its own fields are
typed, so a reader names an attribute instead of a string key. `COMMAND_CLASSES` maps each type to its class
(the protocol's converters and the datanode's handlers are keyed by it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from itertools import count
from typing import Any, ClassVar

from pyozone.hdds.datanode import DatanodeDetails, LayoutVersion
from pyozone.hdds.ids import ContainerID, DatanodeID, PipelineID, ReplicationConfig
from pyozone.hdds.states import NodeOperationalState, ReplicationType, SCMCommandType

_command_ids = count(1)


def _next_id() -> int:
    return next(_command_ids)


def seed_command_ids(floor: int) -> None:
    """Command ids go on from at least `floor`, never back. An SCM daemon seeds them from the clock (epoch
    ms, as Ozone's HddsIdFactory), so a new leader's or a restarted SCM's ids do not repeat the ones of the
    SCM before it: a datanode and SCM's delete-command tracking key statuses by id."""
    global _command_ids
    _command_ids = count(max(floor, next(_command_ids)))


class ReplicationCommandPriority(Enum):
    """Ozone's ReplicationCommandPriority: LOW commands (e.g. for mis-replication) yield to NORMAL ones."""

    NORMAL = 1
    LOW = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class SCMCommand:
    """The envelope: the SCM term it was issued in, the deadline after which a datanode drops it, its id."""

    TYPE: ClassVar[SCMCommandType]
    term: int = 0
    deadline_epoch_ms: int = 0
    id: int = field(default_factory=_next_id)

    @property
    def type(self) -> SCMCommandType:
        return self.TYPE


@dataclass(frozen=True, slots=True)
class DeletedBlocksTransaction:
    """One entry of SCM's deleted block log, and of a deleteBlocksCommand."""

    tx_id: int
    container_id: ContainerID
    local_ids: tuple[int, ...]
    count: int = 0  # deprecated in Ozone, always 0; kept so the stored record matches Ozone's

    def to_dict(self) -> dict[str, Any]:
        return {
            "txID": self.tx_id,
            "containerID": self.container_id,
            "localIDs": list(self.local_ids),
            "count": self.count,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DeletedBlocksTransaction:
        return cls(data["txID"], data["containerID"], tuple(data["localIDs"]), data.get("count", 0))


@dataclass(frozen=True, slots=True, kw_only=True)
class ReregisterCommand(SCMCommand):
    TYPE: ClassVar = SCMCommandType.reregisterCommand


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteBlocksCommand(SCMCommand):
    TYPE: ClassVar = SCMCommandType.deleteBlocksCommand
    transactions: tuple[DeletedBlocksTransaction, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CloseContainerCommand(SCMCommand):
    TYPE: ClassVar = SCMCommandType.closeContainerCommand
    container_id: ContainerID
    pipeline_id: PipelineID | None = None
    force: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteContainerCommand(SCMCommand):
    TYPE: ClassVar = SCMCommandType.deleteContainerCommand
    container_id: ContainerID
    force: bool = False
    replica_index: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicateContainerCommand(SCMCommand):
    """Push (to `target`, sent to a source) or pull (from `sources`, sent to the target)."""

    TYPE: ClassVar = SCMCommandType.replicateContainerCommand
    container_id: ContainerID
    target: DatanodeDetails | None = None
    sources: tuple[DatanodeDetails, ...] = ()
    replica_index: int = 0
    priority: ReplicationCommandPriority = ReplicationCommandPriority.NORMAL


def is_low_priority_replication(command: SCMCommand) -> bool:
    """A LOW priority replicate (the Container Balancer's moves): it counts neither in the datanode's
    commandQueueReport nor in SCM's view of the datanode's replication load, so the Replication Manager
    schedules its NORMAL work on that datanode as if it were not there (Ozone's HDDS-7844; the datanode
    runs it only when no NORMAL work waits)."""
    return (
        isinstance(command, ReplicateContainerCommand) and command.priority is ReplicationCommandPriority.LOW
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatePipelineCommand(SCMCommand):
    """Members by uuid; `datanodes`, when known, holds each member's details (or None) in that order."""

    TYPE: ClassVar = SCMCommandType.createPipelineCommand
    pipeline_id: PipelineID
    replication_type: ReplicationType = ReplicationType.RATIS
    factor: int
    nodes: tuple[DatanodeID, ...]
    suggested_leader: DatanodeID | None = None
    datanodes: tuple[DatanodeDetails | None, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClosePipelineCommand(SCMCommand):
    TYPE: ClassVar = SCMCommandType.closePipelineCommand
    pipeline_id: PipelineID


@dataclass(frozen=True, slots=True, kw_only=True)
class SetNodeOperationalStateCommand(SCMCommand):
    TYPE: ClassVar = SCMCommandType.setNodeOperationalStateCommand
    state: NodeOperationalState
    expiry_epoch_s: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class FinalizeNewLayoutVersionCommand(SCMCommand):
    TYPE: ClassVar = SCMCommandType.finalizeNewLayoutVersionCommand
    layout: LayoutVersion | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RefreshVolumeUsageCommand(SCMCommand):
    TYPE: ClassVar = SCMCommandType.refreshVolumeUsageInfo


@dataclass(frozen=True, slots=True)
class ReconstructionSource:
    datanode: DatanodeDetails
    replica_index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ReconstructECContainersCommand(SCMCommand):
    TYPE: ClassVar = SCMCommandType.reconstructECContainersCommand
    container_id: ContainerID
    sources: tuple[ReconstructionSource, ...]
    targets: tuple[DatanodeDetails, ...]
    missing_indexes: bytes
    replication_config: ReplicationConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class ReconcileContainerCommand(SCMCommand):
    TYPE: ClassVar = SCMCommandType.reconcileContainerCommand
    container_id: ContainerID
    peers: tuple[DatanodeDetails, ...] = ()


COMMAND_CLASSES: dict[SCMCommandType, type[SCMCommand]] = {
    cls.TYPE: cls
    for cls in (
        ReregisterCommand,
        DeleteBlocksCommand,
        CloseContainerCommand,
        DeleteContainerCommand,
        ReplicateContainerCommand,
        CreatePipelineCommand,
        ClosePipelineCommand,
        SetNodeOperationalStateCommand,
        FinalizeNewLayoutVersionCommand,
        RefreshVolumeUsageCommand,
        ReconstructECContainersCommand,
        ReconcileContainerCommand,
    )
}
