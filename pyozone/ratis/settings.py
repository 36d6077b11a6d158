"""The settings the Raft core takes, by their Ratis keys (RaftServerConfigKeys) and defaults."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RaftSettings:
    """Ozone's OM sets its own election timeouts (`ozone.om.ratis.minimum.timeout`, 5 s); Ratis's defaults
    are these."""

    rpc_timeout_min_ms: int = 150  # raft.server.rpc.timeout.min
    rpc_timeout_max_ms: int = 300  # raft.server.rpc.timeout.max
    pre_vote: bool = True  # raft.server.leaderelection.pre-vote
    append_byte_limit: int = 4 * 1024 * 1024  # raft.server.log.appender.buffer.byte-limit
    append_element_limit: int = 0  # raft.server.log.appender.buffer.element-limit (0: no limit)
    outstanding_appends_max: int = 128  # raft.grpc.server.leader.outstanding.appends.max

    def __post_init__(self) -> None:
        if not 0 < self.rpc_timeout_min_ms <= self.rpc_timeout_max_ms:
            raise ValueError(
                f"raft.server.rpc.timeout.min ({self.rpc_timeout_min_ms} ms) must be positive "
                f"and at most raft.server.rpc.timeout.max ({self.rpc_timeout_max_ms} ms)"
            )
        if self.append_byte_limit <= 0 or self.append_element_limit < 0 or self.outstanding_appends_max <= 0:
            raise ValueError("the appender's buffer limits and outstanding appends must be positive")

    @property
    def heartbeat_interval_ms(self) -> int:
        """A leader writes to an idle follower every half minimum timeout (Ratis's LogAppender)."""
        return self.rpc_timeout_min_ms // 2
