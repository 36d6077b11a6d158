"""What SCM knows of a datanode: its identity (from registration) and its reported storage."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.node_status import NodeStatus
from pyozone.hdds.states import NodeOperationalState, SCMCommandType


@dataclass(frozen=True, slots=True)
class DatanodeDetails:
    uuid: DatanodeID
    hostname: str
    ip_address: str
    ports: tuple[tuple[str, int], ...] = ()
    network_location: str = "/default-rack"
    persisted_op_state: NodeOperationalState = NodeOperationalState.IN_SERVICE
    persisted_op_state_expiry: int = 0
    version: str = ""

    def port(self, name: str) -> int | None:
        return dict(self.ports).get(name)


@dataclass(frozen=True, slots=True)
class StorageReport:
    """One data volume (or metadata volume) as a node report carries it."""

    storage_uuid: str
    location: str
    capacity: int
    used: int
    remaining: int
    failed: bool = False
    committed: int = 0
    """Space promised to the volume's open containers and not yet written (Ozone's committed bytes)."""
    free_space_to_spare: int = 0
    """The free-space floor the volume keeps (hdds.datanode.volume.min.free.space and its percent form)."""

    @property
    def usable(self) -> int:
        """What a new container may take: Ozone's VolumeUsage.getUsableSpace, remaining less committed
        less the floor (negative once the floor is crossed). One rule for the datanode's volume choice and
        SCM's placement."""
        return self.remaining - self.committed - self.free_space_to_spare


@dataclass(frozen=True, slots=True)
class NodeReport:
    storage: tuple[StorageReport, ...] = ()
    metadata_storage: tuple[StorageReport, ...] = ()

    def has_volume_for(self, size: int) -> bool:
        """A working data volume whose usable space exceeds `size` (SCMCommonPlacementPolicy.hasEnoughSpace:
        a replica lives on one volume)."""
        return any(not s.failed and s.usable > size for s in self.storage)


@dataclass(frozen=True, slots=True)
class LayoutVersion:
    metadata_layout_version: int
    software_layout_version: int


@dataclass(slots=True)
class DatanodeInfo:
    """Mutable per-node state owned by NodeManager; other managers read it, never write it."""

    details: DatanodeDetails
    status: NodeStatus
    last_heartbeat_ms: int
    registered_ms: int
    layout: LayoutVersion
    report: NodeReport = field(default_factory=NodeReport)
    command_counts: dict[SCMCommandType, int] = field(default_factory=dict)
    last_heartbeat_wall_ms: int = 0

    @property
    def uuid(self) -> DatanodeID:
        return self.details.uuid

    def healthy_volume_count(self) -> int:
        return sum(1 for s in self.report.storage if not s.failed)

    def failed_volume_count(self) -> int:
        return sum(1 for s in self.report.storage if s.failed)

    def metadata_volume_count(self) -> int:
        return len(self.report.metadata_storage)

    def capacity(self) -> int:
        return sum(s.capacity for s in self.report.storage if not s.failed)

    def used(self) -> int:
        return sum(s.used for s in self.report.storage if not s.failed)

    def remaining(self) -> int:
        return sum(s.remaining for s in self.report.storage if not s.failed)
