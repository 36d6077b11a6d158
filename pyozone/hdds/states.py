"""The enums of Ozone's hdds.proto, with Ozone's names and numbers.

Numbers matter: the container lifecycle only ever moves to a state with a larger number (monotonic),
and the numbers are what the protobuf and the metadata store carry.
"""

from __future__ import annotations

from enum import IntEnum


class LifeCycleState(IntEnum):
    OPEN = 1
    CLOSING = 2
    QUASI_CLOSED = 3
    CLOSED = 4
    DELETING = 5
    DELETED = 6
    RECOVERING = 7


class LifeCycleEvent(IntEnum):
    FINALIZE = 1
    QUASI_CLOSE = 2
    CLOSE = 3
    FORCE_CLOSE = 4
    DELETE = 5
    CLEANUP = 6


class ReplicaState(IntEnum):
    """State of one container replica as a datanode reports it."""

    OPEN = 1
    CLOSING = 2
    QUASI_CLOSED = 3
    CLOSED = 4
    UNHEALTHY = 5
    INVALID = 6
    DELETED = 7
    RECOVERING = 8
    """An EC replica being rebuilt by reconstruction; it closes once whole (never written by clients)."""


class NodeState(IntEnum):
    """Datanode health as SCM sees it."""

    HEALTHY = 1
    STALE = 2
    DEAD = 3
    HEALTHY_READONLY = 6


class NodeOperationalState(IntEnum):
    IN_SERVICE = 1
    ENTERING_MAINTENANCE = 2
    IN_MAINTENANCE = 3
    DECOMMISSIONING = 4
    DECOMMISSIONED = 5

    @property
    def is_decommission(self) -> bool:
        return self in (NodeOperationalState.DECOMMISSIONING, NodeOperationalState.DECOMMISSIONED)

    @property
    def is_maintenance(self) -> bool:
        return self in (NodeOperationalState.ENTERING_MAINTENANCE, NodeOperationalState.IN_MAINTENANCE)


class PipelineState(IntEnum):
    ALLOCATED = 1
    OPEN = 2
    DORMANT = 3
    CLOSED = 4


class ReplicationType(IntEnum):
    RATIS = 1
    STAND_ALONE = 2
    CHAINED = 3
    EC = 4


class ReplicationFactor(IntEnum):
    ONE = 1
    THREE = 3


class SCMCommandType(IntEnum):
    reregisterCommand = 1
    deleteBlocksCommand = 2
    closeContainerCommand = 3
    deleteContainerCommand = 4
    replicateContainerCommand = 5
    createPipelineCommand = 6
    closePipelineCommand = 7
    setNodeOperationalStateCommand = 8
    finalizeNewLayoutVersionCommand = 9
    refreshVolumeUsageInfo = 10
    reconstructECContainersCommand = 11
    reconcileContainerCommand = 12


class CommandStatus(IntEnum):
    PENDING = 1
    EXECUTED = 2
    FAILED = 3
