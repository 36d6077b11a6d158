"""The settings the Raft core takes, by their Ratis keys (RaftServerConfigKeys) and defaults."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RaftSettings:
    """Ozone's OM sets its own election timeouts (`ozone.om.ratis.minimum.timeout`, 5 s) and purge gap
    (`ozone.om.ratis.log.purge.gap`, 1,000,000); Ratis's defaults are these."""

    rpc_timeout_min_ms: int = 150  # raft.server.rpc.timeout.min
    rpc_timeout_max_ms: int = 300  # raft.server.rpc.timeout.max
    pre_vote: bool = True  # raft.server.leaderelection.pre-vote
    append_byte_limit: int = 4 * 1024 * 1024  # raft.server.log.appender.buffer.byte-limit
    append_element_limit: int = 0  # raft.server.log.appender.buffer.element-limit (0: no limit)
    outstanding_appends_max: int = 128  # raft.grpc.server.leader.outstanding.appends.max
    leader_step_down_wait_ms: int = 10_000  # raft.server.leaderelection.leader.step-down.wait-time
    retry_cache_expiry_ms: int = 60_000  # raft.server.retrycache.expirytime
    purge_gap: int = 1024  # raft.server.log.purge.gap
    # When the leader's commit index advances, it writes at once to each follower that does not know it yet
    # (entries if it has any to send, else a heartbeat), so followers commit, and its watches of ALL complete,
    # a round trip after the commit instead of up to a heartbeat interval later (Ratis's leader notifies its
    # log appenders of a commit change). The datanode pipeline sets it; OM keeps its message count.
    push_commit: bool = False
    # raft.server.watch.element-limit: watches of one level (MAJORITY, ALL) that may wait on a leader; one
    # more fails at once (Ratis's ResourceUnavailableException).
    watch_element_limit: int = 65536
    # raft.server.rpc.first-election.timeout.min / .max: the election timeout until a member first stands or
    # hears from a leader after it starts (None: raft.server.rpc.timeout.min / .max, as Ratis's default). A
    # shell gives a short one to the member it wants to lead a fresh group (the datanode: SCM's suggested
    # leader), which then stands at once instead of after a full election timeout.
    first_election_timeout_min_ms: int | None = None
    first_election_timeout_max_ms: int | None = None
    # raft.server.notification.no-leader.timeout (Ozone's hdds.ratis.raft.server.Notification.no-leader
    # .timeout, 300 s): a member without a leader this long outputs `NoLeader` (notifyExtendedNoLeader).
    # raft.server.rpc.slowness.timeout (Ozone: hdds.ratis.raft.server.rpc.slowness.timeout, 300 s): a leader
    # that has not heard from a follower for this long outputs `FollowerSlow` (notifyFollowerSlowness).
    # 0 turns either off (OM: its state machine has nothing to do on them).
    no_leader_timeout_ms: int = 300_000
    rpc_slowness_timeout_ms: int = 300_000

    def __post_init__(self) -> None:
        # The leader writes to an idle follower every half minimum timeout: below 2 ms that interval is 0 and
        # the leader would heartbeat in a busy loop (its next deadline always now).
        if not 2 <= self.rpc_timeout_min_ms <= self.rpc_timeout_max_ms:
            raise ValueError(
                f"raft.server.rpc.timeout.min ({self.rpc_timeout_min_ms} ms) must be at least 2 ms (the "
                f"heartbeat interval, half of it, must be at least 1 ms) and at most "
                f"raft.server.rpc.timeout.max ({self.rpc_timeout_max_ms} ms)"
            )
        if self.append_byte_limit <= 0 or self.append_element_limit < 0 or self.outstanding_appends_max <= 0:
            raise ValueError("the appender's buffer limits and outstanding appends must be positive")
        low, high = self.first_election_timeout_ms
        if not 0 <= low <= high:
            raise ValueError(
                f"raft.server.rpc.first-election.timeout.min ({low} ms) must be at least 0 and at most "
                f"raft.server.rpc.first-election.timeout.max ({high} ms)"
            )
        if self.no_leader_timeout_ms < 0 or self.rpc_slowness_timeout_ms < 0:
            raise ValueError(
                "raft.server.notification.no-leader.timeout and raft.server.rpc.slowness.timeout must not be "
                "negative (0: off)"
            )
        if self.watch_element_limit <= 0:
            raise ValueError(f"raft.server.watch.element-limit ({self.watch_element_limit}) must be positive")
        if self.leader_step_down_wait_ms < 0 or self.retry_cache_expiry_ms <= 0 or self.purge_gap <= 0:
            raise ValueError(
                "raft.server.leaderelection.leader.step-down.wait-time must not be negative, "
                "raft.server.retrycache.expirytime and raft.server.log.purge.gap must be positive"
            )

    @property
    def heartbeat_interval_ms(self) -> int:
        """A leader writes to an idle follower every half minimum timeout (Ratis's LogAppender)."""
        return self.rpc_timeout_min_ms // 2

    @property
    def first_election_timeout_ms(self) -> tuple[int, int]:
        """The first election timeout's range (raft.server.rpc.first-election.timeout.min, .max)."""
        low = self.first_election_timeout_min_ms
        high = self.first_election_timeout_max_ms
        return (
            self.rpc_timeout_min_ms if low is None else low,
            self.rpc_timeout_max_ms if high is None else high,
        )

    def slow_at_ms(self, last_answer_ms: int) -> int | None:
        """When a follower last heard from at `last_answer_ms` (or since we lead) becomes slow: the leader
        outputs `FollowerSlow` from then on (`raft.server.rpc.slowness.timeout`; None: off). One rule for
        the core and for the simulator's pipelines (pyozone/sim/datanode.py)."""
        timeout = self.rpc_slowness_timeout_ms
        return last_answer_ms + timeout if timeout else None

    def no_leader_at_ms(self, leader_seen_ms: int) -> int | None:
        """When a member whose last leader (heard from, or itself) was at `leader_seen_ms` outputs
        `NoLeader` (`raft.server.notification.no-leader.timeout`; None: off). Shared as `slow_at_ms`."""
        timeout = self.no_leader_timeout_ms
        return leader_seen_ms + timeout if timeout else None

    @property
    def staging_timeout_ms(self) -> int:
        """A new member that has not answered for this long while staging fails the change (Ratis's
        LeaderStateImpl.checkProgress: three times `raft.server.rpc.timeout.max`)."""
        return 3 * self.rpc_timeout_max_ms
