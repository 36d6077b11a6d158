"""What a daemon embedding a Raft member deals with (the role of Ratis's StateMachine interface and its
client-facing exceptions): the state machine it implements, the errors `RaftMember`'s calls raise, and the
status it shows. `server.py` is the member that drives them."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Protocol

from pyozone.common.net import HostPort
from pyozone.ratis.messages import CommitInfos, LogEntry, RaftPeerId, TermIndex
from pyozone.ratis.roles import RaftPeerRole


class StateMachine(Protocol):
    """What the group replicates (Ratis's StateMachine.applyTransaction): `apply` is called with every
    committed client entry, in log order, once per entry per incarnation of the member, on the event loop.
    It must be deterministic: every member applies the same entries and must reach the same state. What it
    returns is the entry's result (the leader answers the client with it); an exception it raises is the
    result too, raised to the client, except `ApplyFailedError`: the entry could not be applied, and the
    member fails for its group rather than go past it. (CONFIGURATION and no-op entries are the shell's:
    never applied here.)

    A state machine with snapshots (OM's om.db) also has the methods of `SnapshotStateMachine`; the shell
    looks for them and, without them, starts from the log alone and refuses a leader's InstallSnapshot."""

    def apply(self, entry: LogEntry) -> object: ...


InstalledSnapshot = tuple[TermIndex, tuple[RaftPeerId, ...]]
"""What a state machine loaded from the leader: the last entry its checkpoint covers and the members in
force at it (empty: the group's initial members)."""


class SnapshotStateMachine(StateMachine, Protocol):
    """The optional part of the state machine (Ratis's StateMachine.getLatestSnapshot and
    notifyInstallSnapshotFromLeader, as OzoneManagerStateMachine implements them)."""

    def latest_snapshot(self) -> TermIndex | None:
        """The last entry the state machine's durable state covers (OM: om.db's TRANSACTIONINFO), read once
        at start: the member resumes after it (or after the log's own snapshot, if that is later)."""
        ...

    async def install_snapshot(
        self, leader_id: RaftPeerId, leader_address: HostPort | None, first_available: TermIndex
    ) -> InstalledSnapshot | None:
        """The leader no longer holds the entries this member needs (its log starts at `first_available`):
        fetch the leader's latest checkpoint, load it in place of the current state, and return what it
        covers; None when it could not (the leader's next notification starts another try). Called on the
        event loop; every entry handed to `apply` before it was applied."""
        ...


class DataStateMachine(StateMachine, Protocol):
    """A state machine whose entries carry data kept out of the log (Ratis's StateMachine.DataApi, as
    Ozone's ContainerStateMachine keeps a writeChunk's bytes out of the Raft log): `RaftMember.submit(...,
    data=)` ships the bytes beside the entry; every member writes them at append (`write_data`, Ratis's
    writeStateMachineData) and acknowledges the entry only once they are written (Ratis's flush), and
    applies committed entries with `apply_async` instead of `apply`."""

    async def write_data(self, entry: LogEntry, data: memoryview) -> None:
        """Write the entry's data (`entry.data_size` bytes) at append, leader and followers alike, before the
        member acknowledges the entry. Raises `DataWriteError` (or any exception) when it could not: the
        member fails for this group (no ack, no apply after it), as Ozone's unhealthy state machine."""
        ...

    async def read_data(self, entry: LogEntry) -> bytes:
        """The entry's data again (Ratis's StateMachine.DataApi.read), on the leader, for a follower that
        needs an entry whose data the leader no longer caches (`leader_pending_bytes`)."""
        ...

    def apply_async(self, entry: LogEntry) -> Awaitable[object]:
        """Apply a committed entry (handed out in log order); the awaitable's value is the entry's result, its
        exception the result too. Results may complete out of order (Ozone applies per container in
        parallel)."""
        ...


class StateMachineEvents(Protocol):
    """Hooks a state machine may have, each optional (Ratis's StateMachine.EventApi and LeaderEventApi, as
    Ozone's ContainerStateMachine implements them to close a failing pipeline through SCM). Called on the
    event loop; an exception a hook raises is logged and the member goes on."""

    def notify_leader_changed(self, leader: RaftPeerId) -> None:
        """This member learned of a new leader of its group, itself included (notifyLeaderChanged; Ozone's
        datanode then sends its pipeline report at once, handleLeaderChangedNotification)."""
        ...

    def notify_no_leader(self) -> None:
        """No leader for `RaftSettings.no_leader_timeout_ms` (notifyExtendedNoLeader; Ozone: handleNoLeader,
        the pipeline closes). Once per leaderless stretch."""
        ...

    def notify_follower_slow(self, peer: RaftPeerId) -> None:
        """This leader has not heard from `peer` for `RaftSettings.rpc_slowness_timeout_ms`
        (notifyFollowerSlowness; Ozone: handleNodeSlowness, the pipeline closes). Once per silence."""
        ...

    def notify_failed(self, reason: str) -> None:
        """The member failed for this group (its log or a `write_data` failed) and stopped (Ozone: the state
        machine unhealthy, the pipeline closes)."""
        ...


class ApplyFailedError(Exception):
    """`StateMachine.apply` could not apply a committed entry (its store's write failed, the entry is not
    one it can apply): its state now lacks the entry, so it must not apply a later one. The member fails
    for its group (`StateMachineEvents.notify_failed` with this text; the entry is not counted applied), as
    Ozone's SCMStateMachine and OzoneManagerStateMachine terminate on an applyTransaction failure
    (ExitUtils.terminate): a restart applies the entry again from the log."""


class DataWriteError(Exception):
    """`DataStateMachine.write_data` could not write an entry's data (Ozone: writeStateMachineData failed,
    the state machine is unhealthy and the pipeline closes)."""


class NotReplicatedError(Exception):
    """Ratis's NotReplicatedException: a `RaftMember.watch` did not reach its level (timeout, or too many
    watches waiting: `why`); `infos` are the members' commit indexes then, so the caller sees who lags."""

    def __init__(self, infos: CommitInfos, why: str) -> None:
        super().__init__(f"not replicated: {why} (commit indexes {dict(infos)})")
        self.infos = infos
        self.why = why


class StateMachineBehindLogError(Exception):
    """The state machine's durable state (`latest_snapshot`) ends before the member's log starts: the
    entries between were purged after a snapshot the state machine no longer holds, so the member cannot
    start (`RaftMember.start`). Ratis neither applies across such a gap (its StateMachineUpdater stops at
    the missing entry) nor cuts its log to fit (SegmentedRaftLog purges only a log that ends before the
    snapshot): the member keeps every entry it acknowledged, as it may be counted in their majority."""

    def __init__(
        self, me: RaftPeerId, state_machine_at: TermIndex | None, log_starts_after: TermIndex
    ) -> None:
        self.me = me
        self.state_machine_at = state_machine_at
        self.log_starts_after = log_starts_after
        at = "nothing" if state_machine_at is None else f"index {state_machine_at.index}"
        super().__init__(
            f"Raft member {me}: its state machine holds {at}, but its log starts after index "
            f"{log_starts_after.index}: the entries between are in neither, so it refuses to start"
        )


class TransferRefusedError(Exception):
    """Ratis's TransferLeadershipException: a transfer to another member is already running."""

    def __init__(self, me: RaftPeerId, target: RaftPeerId, in_progress_to: RaftPeerId) -> None:
        super().__init__(
            f"{me} refused to transfer leadership to {target}: a previous transfer to {in_progress_to} "
            f"is in progress"
        )
        self.in_progress_to = in_progress_to


class ReconfigurationError(Exception):
    """Ratis's SetConfiguration refused (ReconfigurationInProgressException and the like): `reason`."""

    def __init__(self, me: RaftPeerId, reason: str) -> None:
        super().__init__(f"{me} refused the configuration change: {reason}")
        self.reason = reason


class NotLeaderError(Exception):
    """Ratis's NotLeaderException: this member does not lead (or stopped); try `leader_id` at
    `leader_address` (both None when no leader is known): the client's failover proxy moves on."""

    def __init__(self, me: RaftPeerId, leader_id: RaftPeerId | None, leader_address: HostPort | None) -> None:
        hint = f"the leader is {leader_id} at {leader_address}" if leader_id else "no leader is known"
        super().__init__(f"{me} is not the leader: {hint}")
        self.leader_id = leader_id
        self.leader_address = leader_address


class EntryTooLargeError(ValueError):
    """A request larger than one append may carry (raft.server.log.appender.buffer.byte-limit)."""


@dataclass(frozen=True)
class FollowerStatus:
    peer: RaftPeerId
    match_index: int
    lag: int
    """Entries of the leader's log the follower is not known to hold."""


@dataclass(frozen=True)
class RaftStatus:
    """What the web UI and /prom show of a member (Ozone's `admin om roles` and OM's Ratis metrics)."""

    group_id: str
    me: RaftPeerId
    role: RaftPeerRole
    term: int
    leader: RaftPeerId | None
    last_index: int
    commit_index: int
    applied_index: int
    followers: tuple[FollowerStatus, ...]
    """Each follower's match index and lag, on the leader only."""
    leader_commit_index: int = 0
    """The commit index the leader's last append carried (a follower's own stops at the entries it holds;
    Ratis's getLeaderCommitIndex): how far a restarted follower must apply to be the service's state."""
