"""What datanodes tell SCM, as plain values: the sans-IO inputs of the core.

The protocol converters (pyozone.protocol) turn protobuf into these; the simulator builds them directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from pyozone.hdds.datanode import DatanodeDetails, LayoutVersion, NodeReport
from pyozone.hdds.ids import ContainerID, DatanodeID, PipelineID
from pyozone.hdds.states import CommandStatus, NodeOperationalState, ReplicaState, SCMCommandType


@dataclass(frozen=True, slots=True)
class ContainerReplicaReport:
    """One replica in a full or incremental container report (Ozone's ContainerReplicaProto)."""

    container_id: ContainerID
    state: ReplicaState
    sequence_id: int = 0  # the replica's BCSID
    origin_node_id: DatanodeID = ""
    key_count: int = 0
    used_bytes: int = 0
    replica_index: int = 0
    is_empty: bool = False
    data_checksum: int = 0


class ContainerActionReason(Enum):
    CONTAINER_FULL = 1
    CONTAINER_UNHEALTHY = 2


@dataclass(frozen=True, slots=True)
class ContainerAction:
    """A datanode asks SCM to close a container (the only action Ozone has)."""

    container_id: ContainerID
    reason: ContainerActionReason


@dataclass(frozen=True, slots=True)
class PipelineReport:
    pipeline_id: PipelineID
    is_leader: bool = False
    bytes_written: int = 0


@dataclass(frozen=True, slots=True)
class PipelineAction:
    """A datanode asks SCM to close a pipeline (a member failed or is too slow)."""

    pipeline_id: PipelineID
    reason: str = ""


@dataclass(frozen=True, slots=True)
class DeleteBlockTransactionResult:
    tx_id: int
    container_id: ContainerID
    success: bool


@dataclass(frozen=True, slots=True)
class CommandStatusReport:
    command_id: int
    type: SCMCommandType
    status: CommandStatus
    block_deletion_results: tuple[DeleteBlockTransactionResult, ...] = ()


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Ozone's SCMHeartbeatRequestProto; None means 'not sent this time'."""

    datanode: DatanodeDetails
    node_report: NodeReport | None = None
    container_report: tuple[ContainerReplicaReport, ...] | None = None
    incremental_container_reports: tuple[ContainerReplicaReport, ...] = ()
    command_status_reports: tuple[CommandStatusReport, ...] = ()
    container_actions: tuple[ContainerAction, ...] = ()
    pipeline_actions: tuple[PipelineAction, ...] = ()
    pipeline_reports: tuple[PipelineReport, ...] | None = None
    layout: LayoutVersion | None = None
    command_queue_report: dict[SCMCommandType, int] | None = None
    persisted_op_state: NodeOperationalState | None = field(default=None)
