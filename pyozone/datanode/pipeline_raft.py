"""The datanode pipelines' fixed Raft constants and the reasons a member gives SCM when it asks to close its
pipeline: sans-IO, shared by the daemon (`datanode/ratis`: PipelineGroups and the ContainerStateMachine) and
the simulator's datanodes (pyozone/sim/datanode.py), which decide when a member raises the pipeline action
with the core's own rule (`RaftSettings.slow_at_ms`, `no_leader_at_ms`). The configured ones are
settings.py's PipelineRaftConfig."""

from __future__ import annotations

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
