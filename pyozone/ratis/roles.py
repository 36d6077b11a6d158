"""The member's role (Ratis's RaftPeerRole; the paper's Figure 4 states)."""

from __future__ import annotations

import enum


class RaftPeerRole(enum.Enum):
    FOLLOWER = "FOLLOWER"
    CANDIDATE = "CANDIDATE"
    LEADER = "LEADER"
