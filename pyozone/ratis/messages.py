"""What crosses the Raft core: peers, log entries and the RPCs of the Raft paper's Figure 2.

Names follow Ratis's Raft.proto (RequestVoteRequestProto, AppendEntriesRequestProto and their replies);
every message is a frozen dataclass so a shell can queue, duplicate or reorder it without aliasing.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class RaftPeerId:
    """A member of the group (Ratis's RaftPeerId)."""

    id: str

    def __str__(self) -> str:
        return self.id


class EntryKind(enum.Enum):
    """What a log entry carries (Ratis's LogEntryProto cases)."""

    STATE_MACHINE = "STATE_MACHINE"  # a client request, applied by the state machine
    NOOP = "NOOP"  # a new leader's first entry (Raft paper, section 8), so it can commit its term
    CONFIGURATION = "CONFIGURATION"  # the group's members from this entry on (the thesis, chapter 4)


@dataclass(frozen=True, order=True)
class TermIndex:
    """A log position and the term of its entry (Ratis's TermIndex): what a snapshot covers."""

    term: int
    index: int


@dataclass(frozen=True)
class LogEntry:
    """One entry of the replicated log: the term it was created in, its index (from 1) and its payload.

    A STATE_MACHINE entry names the client call it carries (`client_id`, `call_id`: Ratis's
    StateMachineLogEntryProto), so every member's retry cache knows it (`client_id` "": a call without one);
    `data_size` counts the bytes of state machine data that travel with it in an append but are never in the
    log (Ratis's stateMachineData, as Ozone's ContainerStateMachine keeps a writeChunk's bytes out of the
    log): the shell holds them, the core only counts them. A CONFIGURATION entry carries the members from it
    on (`peers`) and, during a change, those before (`old_peers`), as Ratis's RaftConfigurationProto."""

    term: int
    index: int
    payload: bytes = b""
    kind: EntryKind = EntryKind.STATE_MACHINE
    client_id: str = ""
    call_id: int = 0
    peers: tuple[RaftPeerId, ...] = ()
    old_peers: tuple[RaftPeerId, ...] = ()
    data_size: int = 0


@dataclass(frozen=True)
class RequestVoteRequest:
    """RequestVote (Figure 2); with `pre_vote`, Ratis's pre-vote: could I win `candidate_term`? (It changes
    nothing on the voter.) `call_id` names the candidate's round (Ratis's RaftRpcRequestProto.callId): a
    reply counts only in the round it answers, so a late grant from an earlier round does not."""

    candidate_id: RaftPeerId
    candidate_term: int
    last_log_term: int
    last_log_index: int
    pre_vote: bool = False
    call_id: int = 0


@dataclass(frozen=True)
class RequestVoteReply:
    """The vote: `term` is the voter's current term, so a stale candidate learns it; `call_id` is the
    request's."""

    voter_id: RaftPeerId
    term: int
    granted: bool
    pre_vote: bool
    call_id: int = 0


class AppendResult(enum.Enum):
    """Ratis's AppendEntriesReplyProto.AppendResult."""

    SUCCESS = "SUCCESS"
    NOT_LEADER = "NOT_LEADER"  # the sender's term is stale
    INCONSISTENCY = "INCONSISTENCY"  # the previous entry does not match: go back to `next_index`


@dataclass(frozen=True)
class AppendEntriesRequest:
    """AppendEntries (Figure 2); no entries is a heartbeat. `call_id` numbers the leader's appends to one
    follower (Ratis's RaftRpcRequestProto.callId), so the leader can tell which append an answer is for."""

    leader_id: RaftPeerId
    leader_term: int
    previous_index: int
    previous_term: int
    entries: tuple[LogEntry, ...]
    leader_commit: int
    call_id: int


@dataclass(frozen=True)
class AppendEntriesReply:
    """The follower's answer. On SUCCESS `match_index` is the last index known to match the leader's log, and
    `follower_commit` the follower's commit index as the reply leaves, at most `match_index` (Ratis's
    followerCommit): the reply leaves once its entries are durable and a member commits only what its disk
    holds, so it names entries durable there; the leader's watches count it. On INCONSISTENCY `next_index` is
    where the leader should resume (the first index of the conflicting term, section 5.3's optimisation, so a
    diverged follower costs one round trip per term, not per entry)."""

    follower_id: RaftPeerId
    term: int
    result: AppendResult
    match_index: int
    next_index: int
    call_id: int
    follower_commit: int = 0


@dataclass(frozen=True)
class StartLeaderElectionRequest:
    """A leader handing over leadership tells its caught-up successor to stand now, without waiting for a
    timeout or a pre-vote (the Raft thesis's TimeoutNow, section 3.10; Ratis's StartLeaderElectionRequestProto
    with the leader's last entry)."""

    leader_id: RaftPeerId
    leader_term: int
    leader_last_index: int


@dataclass(frozen=True)
class InstallSnapshotRequest:
    """The leader no longer holds the entries a follower needs (its `next_index` is below the leader's first
    log index): it notifies the follower to install a snapshot itself, as Ozone's OM runs Ratis
    (InstallSnapshotRequestProto with a NotificationProto; OzoneManagerStateMachine
    .notifyInstallSnapshotFromLeader downloads the leader's checkpoint). `first_available` is the leader's
    first log entry (Ratis's firstAvailableTermIndex): a snapshot up to just before it lets appends resume."""

    leader_id: RaftPeerId
    leader_term: int
    first_available: TermIndex
    call_id: int


class InstallSnapshotResult(enum.Enum):
    """Ratis's InstallSnapshotResult (the values the notification path uses)."""

    NOT_LEADER = "NOT_LEADER"  # the sender's term is stale
    IN_PROGRESS = "IN_PROGRESS"  # the follower's state machine is fetching the leader's checkpoint
    ALREADY_INSTALLED = "ALREADY_INSTALLED"  # the follower's snapshot already reaches the leader's log
    SNAPSHOT_INSTALLED = "SNAPSHOT_INSTALLED"  # installed now, up to `snapshot_index`


@dataclass(frozen=True)
class InstallSnapshotReply:
    """The follower's answer to a notification; with ALREADY_INSTALLED or SNAPSHOT_INSTALLED its log matches
    the leader's up to `snapshot_index`: what its snapshot covers or it committed (committed entries only)."""

    follower_id: RaftPeerId
    term: int
    result: InstallSnapshotResult
    snapshot_index: int
    call_id: int


Message = (
    RequestVoteRequest
    | RequestVoteReply
    | AppendEntriesRequest
    | AppendEntriesReply
    | StartLeaderElectionRequest
    | InstallSnapshotRequest
    | InstallSnapshotReply
)


class WatchLevel(enum.Enum):
    """How far a watched index must be replicated (Ratis's ReplicationLevel): committed on a majority of the
    members (MAJORITY_COMMITTED) or on every member (ALL_COMMITTED), each counting the commit index the leader
    knows of it (a member commits only what its disk holds)."""

    MAJORITY = "MAJORITY_COMMITTED"
    ALL = "ALL_COMMITTED"


CommitInfos = tuple[tuple[RaftPeerId, int], ...]
"""Each member's commit index as the leader knows it (Ratis's CommitInfoProto list)."""


@dataclass(frozen=True)
class ClientCall:
    """A client's write request, as Ratis's RaftClientRequest (client id and call id name it). `client_id` ""
    asks for no retry cache: a retry is appended again, for requests that are idempotent when applied (a
    datanode's container operations). `data_size`: the bytes of state machine data the shell holds for it
    (`LogEntry.data_size`)."""

    client_id: str
    call_id: int
    payload: bytes
    data_size: int = 0
