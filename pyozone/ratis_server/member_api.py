"""What a daemon embedding a Raft member deals with (the role of Ratis's StateMachine interface and its
client-facing exceptions): the state machine it implements, the errors `RaftMember`'s calls raise, and the
status it shows. `server.py` is the member that drives them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from pyozone.common.net import HostPort
from pyozone.ratis.messages import LogEntry, RaftPeerId, TermIndex
from pyozone.ratis.roles import RaftPeerRole


class StateMachine(Protocol):
    """What the group replicates (Ratis's StateMachine.applyTransaction): `apply` is called with every
    committed client entry, in log order, once per entry per incarnation of the member, on the event loop.
    It must be deterministic: every member applies the same entries and must reach the same state. What it
    returns is the entry's result (the leader answers the client with it); an exception it raises is the
    result too, raised to the client. (CONFIGURATION and no-op entries are the shell's: never applied here.)

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
