"""What the Raft core asks its shell to do. The shell performs them in the order given.

A `Persist` must be durable before the shell reports `persisted(seq)`; the core holds back every `Send` of a
vote, a vote request or an acknowledgement that follows a `Persist` until that report, so none leaves before
what it promises is on disk (Figure 2: "updated on stable storage before responding to RPCs"). A leader's
appends leave at once: it may replicate before its own write is durable, it only does not count itself in
the commit majority until then (the thesis, section 10.2.1).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.ratis.messages import (
    ClientCall,
    CommitInfos,
    LogEntry,
    Message,
    RaftPeerId,
    TermIndex,
    WatchLevel,
)


@dataclass(frozen=True)
class Send:
    to: RaftPeerId
    message: Message


@dataclass(frozen=True)
class Persist:
    """Make durable, in this order: the current term and vote; with `snapshot`, that the log now starts after
    it (every stored entry is dropped: a snapshot from the leader replaced them); then the log from
    `entries[0].index` on (what was stored at and after that index is replaced). `seq` names it in the
    `persisted(seq)` report."""

    seq: int
    term: int
    voted_for: RaftPeerId | None
    entries: tuple[LogEntry, ...]
    snapshot: TermIndex | None = None
    configuration: tuple[RaftPeerId, ...] = ()  # with `snapshot`: the members in force at it


@dataclass(frozen=True)
class Appended:
    """The leader appended `call` at `index` (output before the entry's `Persist`): the shell files the call's
    state machine data (`ClientCall.data_size` bytes) under that index before it must write or send it
    (Ratis's startTransaction has the state machine split a request into log data and state machine data)."""

    call: ClientCall
    index: int


@dataclass(frozen=True)
class Apply:
    """Committed entries, in index order, for the state machine (Ratis's applyTransaction). Each is committed
    and durable on this member (Ratis's RaftLogBase.updateCommitIndex: min(majority index, flush index)), so
    what the shell wrote beside the entry at append (its state machine data) is there before it applies. The
    shell reports each result with `applied(index, result)`, in any order (a state machine may apply
    independent entries in parallel, as Ozone's ContainerStateMachine per container); each entry once."""

    entries: tuple[LogEntry, ...]


@dataclass(frozen=True)
class Reply:
    """The state machine's result for a client call, once its entry is applied on the leader."""

    call: ClientCall
    index: int
    result: object


@dataclass(frozen=True)
class ReadReady:
    """A linearizable read may now be served from the state machine: the leader confirmed its leadership
    after the read arrived, and the state machine has applied `read_index` (section 6.4, ReadIndex)."""

    call: ClientCall
    read_index: int


@dataclass(frozen=True)
class TransferDone:
    """The end of a leadership transfer (Ratis's TransferLeadership): we stepped down for a higher term (the
    target's, unless another member won it), or, not within `raft.server.rpc.timeout.max`, we still lead."""

    call: ClientCall
    stepped_down: bool


@dataclass(frozen=True)
class TransferRefused:
    """A transfer to `in_progress_to` is running, and this one names another member: refused, as Ratis's
    TransferLeadership refuses with TransferLeadershipException ("a previous ... exists"). A second transfer
    to the same member waits for the first's outcome instead."""

    call: ClientCall
    in_progress_to: RaftPeerId


@dataclass(frozen=True)
class WatchDone:
    """A `watch` reached its level: `infos` are the members' commit indexes then (Ratis's RaftClientReply of
    a WatchRequest, with its commitInfos)."""

    call: ClientCall
    index: int
    level: WatchLevel
    infos: CommitInfos


@dataclass(frozen=True)
class WatchFailed:
    """A `watch` did not reach its level within its timeout (Ratis's NotReplicatedException), or could not
    wait (`raft.server.watch.element-limit` watches of its level already wait: ResourceUnavailableException;
    the `reason` names which); `infos` are the members' commit indexes then, so the client can tell which
    member lags. A leader that steps down answers its watches `NotLeader` instead."""

    call: ClientCall
    index: int
    level: WatchLevel
    infos: CommitInfos
    reason: str


@dataclass(frozen=True)
class NotLeader:
    """Ratis's NotLeaderException: this member is not (or no longer) the leader; try `leader_hint`."""

    call: ClientCall
    leader_hint: RaftPeerId | None


@dataclass(frozen=True)
class PurgeLog:
    """A snapshot covers the log up to `up_to_index`: the shell may drop those entries from disk
    (`RaftStorage.purge`). The core no longer reads them."""

    up_to_index: int
    configuration: tuple[RaftPeerId, ...]  # the members in force at it, for a restart after the purge


@dataclass(frozen=True)
class ConfigurationDone:
    """A `set_configuration` call's configuration entry, at `index`, committed (Ratis's SetConfiguration
    reply)."""

    call: ClientCall
    index: int


@dataclass(frozen=True)
class ConfigurationRefused:
    """A `set_configuration` call refused: another change is in progress (Ratis's
    ReconfigurationInProgressException), a leadership transfer runs, or it does not add or remove exactly
    one member (one at a time here); or failed: the member it adds made no progress while staging (Ratis's
    ReconfigurationTimeoutException; nothing changed)."""

    call: ClientCall
    reason: str


@dataclass(frozen=True)
class InstallSnapshot:
    """The leader `leader_id` no longer holds the entries we need: the state machine fetches the leader's
    latest checkpoint itself (OzoneManagerStateMachine.notifyInstallSnapshotFromLeader), loads it, and the
    shell reports `snapshot_installed(its TermIndex)`, or `snapshot_installed(None)` if it could not."""

    leader_id: RaftPeerId
    first_available: TermIndex


@dataclass(frozen=True)
class NoLeader:
    """This member has had no leader (as a follower or a candidate) since `since_ms`, for
    `raft.server.notification.no-leader.timeout` (Ratis's StateMachine.notifyExtendedNoLeader; Ozone's
    datanode closes the pipeline, XceiverServerRatis.handleNoLeader). Once per such period: the next one
    follows a leader's message or our own leadership."""

    since_ms: int


@dataclass(frozen=True)
class FollowerSlow:
    """As leader, we have not heard from `peer` for `silent_ms` (since its last answer, or since we began to
    lead), at least `raft.server.rpc.slowness.timeout` (Ratis's LeaderEventApi.notifyFollowerSlowness;
    Ozone's datanode closes the pipeline, handleNodeSlowness). Once per silence: the next one follows an
    answer."""

    peer: RaftPeerId
    silent_ms: int


Output = (
    Send
    | Persist
    | Appended
    | Apply
    | Reply
    | ReadReady
    | TransferDone
    | TransferRefused
    | NotLeader
    | PurgeLog
    | InstallSnapshot
    | ConfigurationDone
    | ConfigurationRefused
    | WatchDone
    | WatchFailed
    | NoLeader
    | FollowerSlow
)
