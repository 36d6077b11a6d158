"""The Pipeline record as SCM persists it, plus the per-member report times it keeps in memory."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pyozone.hdds.ids import DatanodeID, PipelineID, ReplicationConfig
from pyozone.hdds.states import PipelineState, ReplicationType


@dataclass(frozen=True, slots=True)
class Pipeline:
    id: PipelineID
    replication_config: ReplicationConfig
    state: PipelineState
    nodes: tuple[DatanodeID, ...]
    created_ms: int
    state_entered_ms: int
    suggested_leader: DatanodeID | None = None
    leader: DatanodeID | None = None
    reported: frozenset[DatanodeID] = field(default=frozenset(), compare=False)

    def is_healthy(self) -> bool:
        """Ratis: every member reported the pipeline and a leader is known (Pipeline.isHealthy)."""
        if self.replication_config.type is ReplicationType.EC:
            return True
        return self.leader is not None and self.reported >= set(self.nodes)

    def is_closed(self) -> bool:
        return self.state is PipelineState.CLOSED

    def with_state(self, state: PipelineState, now_ms: int) -> Pipeline:
        return replace(self, state=state, state_entered_ms=now_ms)

    def with_report(self, dn: DatanodeID, is_leader: bool) -> Pipeline:
        leader = dn if is_leader or self.replication_config.factor == 1 else self.leader
        return replace(self, reported=self.reported | {dn}, leader=leader)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "replicationConfig": str(self.replication_config),
            "state": self.state.name,
            "nodes": list(self.nodes),
            "createdMs": self.created_ms,
            "stateEnteredMs": self.state_entered_ms,
            "suggestedLeader": self.suggested_leader,
            "leader": self.leader,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Pipeline:
        return cls(
            id=data["id"],
            replication_config=ReplicationConfig.parse(data["replicationConfig"]),
            state=PipelineState[data["state"]],
            nodes=tuple(data["nodes"]),
            created_ms=data["createdMs"],
            state_entered_ms=data["stateEnteredMs"],
            suggested_leader=data.get("suggestedLeader"),
            leader=data.get("leader"),
        )
