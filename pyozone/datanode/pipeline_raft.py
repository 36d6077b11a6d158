"""The datanode pipelines' Raft settings, read from Ozone's keys once, and the reasons a member gives SCM when
it asks to close its pipeline: sans-IO, shared by the daemon (`datanode/ratis`: PipelineGroups and the
ContainerStateMachine) and the simulator's datanodes (pyozone/sim/datanode.py), which decide when a member
raises the pipeline action with the core's own rule (`RaftSettings.slow_at_ms`, `no_leader_at_ms`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyozone.ratis.settings import RaftSettings

if TYPE_CHECKING:
    from pyozone.config import OzoneConfiguration

ELECTION_SPREAD_MS = 200
"""raft.server.rpc.timeout.max = min + 200 ms (Ozone's XceiverServerRatis.setRatisLeaderElectionTimeout)."""
FIRST_ELECTION_MAX_MS = 10
"""SCM's suggested leader stands within this of joining a new pipeline (raft.server.rpc.first-election
.timeout.max); the others wait a whole election timeout first."""
MAX_PENDING_APPLY = 100_000
"""dfs.container.ratis.statemachine.max.pending.apply-transactions (Ozone's default: the snapshot
threshold)."""
SNAPSHOT_THRESHOLD = 100_000
"""dfs.ratis.snapshot.threshold: applied entries between two snapshots."""
NO_LEADER_REASON = "no leader for hdds.ratis.raft.server.Notification.no-leader.timeout"
"""The pipeline action's reason after `NoLeader` (Ozone's XceiverServerRatis.handleNoLeader)."""


def slow_member_reason(member: str) -> str:
    """The pipeline action's reason after `FollowerSlow` (Ozone's XceiverServerRatis.handleNodeSlowness)."""
    return f"member {member} silent for hdds.ratis.raft.server.rpc.slowness.timeout"


@dataclass(frozen=True)
class PipelineRaftConfig:
    """The datanode's Ratis settings for its pipelines (Ozone's DatanodeRatisServerConfig and the
    dfs.container.ratis.* keys), with Ozone's names and defaults."""

    election_timeout_ms: int = 5000  # hdds.ratis.leader.election.minimum.timeout.duration
    slowness_timeout_ms: int = 300_000  # hdds.ratis.raft.server.rpc.slowness.timeout
    no_leader_timeout_ms: int = 300_000  # hdds.ratis.raft.server.Notification.no-leader.timeout
    write_element_limit: int = 1024  # hdds.ratis.raft.server.write.element-limit
    leader_pending_bytes: int = 1 << 30  # dfs.container.ratis.leader.pending.bytes.limit
    appender_queue_bytes: int = 32 << 20  # dfs.container.ratis.log.appender.queue.byte-limit
    snapshot_threshold: int = SNAPSHOT_THRESHOLD  # dfs.ratis.snapshot.threshold
    purge_gap: int = 1_000_000  # dfs.container.ratis.log.purge.gap
    # dfs.container.ratis.statemachine.max.pending.apply-transactions
    max_pending_apply: int = MAX_PENDING_APPLY
    watch_timeout_s: float = 30.0  # hdds.ratis.raft.server.watch.timeout
    request_timeout_s: float = 60.0  # hdds.ratis.raft.server.rpc.request.timeout

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> PipelineRaftConfig:
        return cls(
            election_timeout_ms=conf.get("hdds.ratis.leader.election.minimum.timeout.duration"),
            slowness_timeout_ms=conf.get("hdds.ratis.raft.server.rpc.slowness.timeout"),
            no_leader_timeout_ms=conf.get("hdds.ratis.raft.server.Notification.no-leader.timeout"),
            write_element_limit=conf.get("hdds.ratis.raft.server.write.element-limit"),
            leader_pending_bytes=conf.get("dfs.container.ratis.leader.pending.bytes.limit"),
            appender_queue_bytes=conf.get("dfs.container.ratis.log.appender.queue.byte-limit"),
            snapshot_threshold=conf.get("dfs.ratis.snapshot.threshold"),
            purge_gap=conf.get("dfs.container.ratis.log.purge.gap"),
            max_pending_apply=conf.get("dfs.container.ratis.statemachine.max.pending.apply-transactions"),
            watch_timeout_s=conf.get("hdds.ratis.raft.server.watch.timeout") / 1000,
            request_timeout_s=conf.get("hdds.ratis.raft.server.rpc.request.timeout") / 1000,
        )

    def settings(self, suggested_leader: bool) -> RaftSettings:
        return RaftSettings(
            rpc_timeout_min_ms=self.election_timeout_ms,
            rpc_timeout_max_ms=self.election_timeout_ms + ELECTION_SPREAD_MS,
            append_byte_limit=self.appender_queue_bytes,
            purge_gap=self.purge_gap,
            push_commit=True,
            first_election_timeout_min_ms=0 if suggested_leader else None,
            first_election_timeout_max_ms=FIRST_ELECTION_MAX_MS if suggested_leader else None,
            no_leader_timeout_ms=self.no_leader_timeout_ms,
            rpc_slowness_timeout_ms=self.slowness_timeout_ms,
        )
