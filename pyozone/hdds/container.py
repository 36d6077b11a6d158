"""ContainerInfo and ContainerReplica: what SCM knows of a container and of each copy (Ozone's classes of
those names)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyozone.hdds.ids import ContainerID, DatanodeID, PipelineID, ReplicationConfig
from pyozone.hdds.states import LifeCycleState, ReplicaState


@dataclass(frozen=True, slots=True)
class ContainerInfo:
    """The container record; `sequence_id` is its BCSID, the highest any healthy replica reported.

    Stats (used bytes, keys, BCSID) change in memory with every report; the record is written to the store
    on allocation and on state changes, as Ozone's ContainerStateManagerImpl does.

    `replicas_reported`: a datanode reported a replica of it, so it was created on one (a write reached
    it). Not Ozone's: SCM learns keys and BCSID only from full reports (hdds.container.report.interval,
    60 minutes), so this alone tells a container that lost every replica from one never written.
    """

    container_id: ContainerID
    state: LifeCycleState
    state_entered_ms: int
    pipeline_id: PipelineID | None
    replication_config: ReplicationConfig
    owner: str
    used_bytes: int = 0
    number_of_keys: int = 0
    sequence_id: int = 0
    suppressed: bool = False
    replicas_reported: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "containerID": self.container_id,
            "state": self.state.name,
            "stateEnterTime": self.state_entered_ms,
            "pipelineID": self.pipeline_id,
            "replicationConfig": str(self.replication_config),
            "owner": self.owner,
            "usedBytes": self.used_bytes,
            "numberOfKeys": self.number_of_keys,
            "sequenceId": self.sequence_id,
            "suppressed": self.suppressed,
            "replicasReported": self.replicas_reported,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ContainerInfo:
        return cls(
            container_id=data["containerID"],
            state=LifeCycleState[data["state"]],
            state_entered_ms=data["stateEnterTime"],
            pipeline_id=data.get("pipelineID"),
            replication_config=ReplicationConfig.parse(data["replicationConfig"]),
            owner=data["owner"],
            used_bytes=data.get("usedBytes", 0),
            number_of_keys=data.get("numberOfKeys", 0),
            sequence_id=data.get("sequenceId", 0),
            suppressed=data.get("suppressed", False),
            replicas_reported=data.get("replicasReported", False),
        )


@dataclass(frozen=True, slots=True)
class ContainerReplica:
    """One copy of a container on one datanode, as last reported; SCM keeps at most one per datanode."""

    container_id: ContainerID
    datanode: DatanodeID
    state: ReplicaState
    origin_node_id: DatanodeID
    sequence_id: int
    key_count: int = 0
    bytes_used: int = 0
    replica_index: int = 0
    is_empty: bool = False
    data_checksum: int = 0
