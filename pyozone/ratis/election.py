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


def log_allows(request: RequestVoteRequest, log: RaftLog, priority: int, candidate_priority: int) -> bool:
    """Ratis's VoteContext.decideVote: a candidate whose log is more up to date than ours gets our vote, one
    whose log is behind does not (section 5.4.1), and at equal last entries only one of at least our priority
    (Ratis's RaftPeer.priority): the log decides first, so priorities never elect a log that lacks a committed
    entry."""
    if not log.is_up_to_date(request.last_log_term, request.last_log_index):
        return False
    if (request.last_log_term, request.last_log_index) != (log.last_term, log.last_index):
        return True
    return priority <= candidate_priority


def grants_pre_vote(
    request: RequestVoteRequest,
    *,
    current_term: int,
    log: RaftLog,
    leader_alive: bool,
    priority: int = 0,
    candidate_priority: int = 0,
) -> bool:
    """A pre-vote is granted to a candidate whose would-be term is ahead of ours, whose log `log_allows`, and
    only while we have not heard from a leader within the minimum election timeout."""
    return (
        request.candidate_term > current_term
        and not leader_alive
        and log_allows(request, log, priority, candidate_priority)
    )


def grants_vote(
    request: RequestVoteRequest,
    *,
    current_term: int,
    voted_for: RaftPeerId | None,
    log: RaftLog,
    priority: int = 0,
    candidate_priority: int = 0,
) -> bool:
    """The vote of Figure 2, once the voter has moved to a higher candidate term: at most one candidate per
    term, and only one whose log `log_allows` (section 5.4.1, with Ratis's priority at equal logs)."""
    return (
        request.candidate_term == current_term
        and voted_for in (None, request.candidate_id)
        and log_allows(request, log, priority, candidate_priority)
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
