"""Elections: the vote rules (Figure 2, RequestVote; section 5.4.1) and a candidate's tally, with Ratis's
pre-vote phase (LeaderElection.Phase PRE_VOTE, then ELECTION).

A pre-vote asks "could I win `candidate_term`?" and changes no one's term or vote, so a member that was cut
off and timed out over and over cannot raise the term of a healthy group when it returns (the Raft thesis,
section 9.6; Ratis's `raft.server.leaderelection.pre-vote`).
"""

from __future__ import annotations

import enum

from pyozone.ratis.log import RaftLog
from pyozone.ratis.messages import RaftPeerId, RequestVoteRequest


class Phase(enum.Enum):
    """Ratis's LeaderElection.Phase."""

    PRE_VOTE = "PRE_VOTE"
    ELECTION = "ELECTION"


def grants_pre_vote(
    request: RequestVoteRequest, *, current_term: int, log: RaftLog, leader_alive: bool
) -> bool:
    """A pre-vote is granted to a candidate whose would-be term is ahead of ours, whose log is at least as up
    to date, and only while we have not heard from a leader within the minimum election timeout."""
    return (
        request.candidate_term > current_term
        and not leader_alive
        and log.is_up_to_date(request.last_log_term, request.last_log_index)
    )


def grants_vote(
    request: RequestVoteRequest, *, current_term: int, voted_for: RaftPeerId | None, log: RaftLog
) -> bool:
    """The vote of Figure 2, once the voter has moved to a higher candidate term: at most one candidate per
    term, and only one whose log is at least as up to date as the voter's (section 5.4.1)."""
    return (
        request.candidate_term == current_term
        and voted_for in (None, request.candidate_id)
        and log.is_up_to_date(request.last_log_term, request.last_log_index)
    )


class ElectionTally:
    """The grants a candidate has counted in one round: one phase of one election (Ratis's LeaderElection's
    votes). Only replies naming `round` count: a pre-vote round that timed out is followed by one for the
    same term, and a late grant from the first must not count in the second."""

    def __init__(self, phase: Phase, term: int, voters: tuple[RaftPeerId, ...], round: int) -> None:
        self.phase = phase
        self.term = term
        self.round = round
        self._voters = voters  # the configuration in force when the round started
        self._majority = len(voters) // 2 + 1
        self._granted: set[RaftPeerId] = set()

    def grant(self, voter: RaftPeerId) -> bool:
        """Count `voter`'s grant (if it is one of the voters); true once a majority of them has granted."""
        if voter in self._voters:
            self._granted.add(voter)
        return len(self._granted) >= self._majority
