"""One member of a Raft group, sans-IO (the role of Ratis's RaftServerImpl with FollowerState,
LeaderElection and LeaderStateImpl composed in).

Inputs: `receive` (a peer's message), `submit` (a client's write), `read` (a client's linearizable read),
`transfer_leadership`, `set_configuration` (add or remove a member), `persisted` (the disk has made every
`Persist` up to a sequence number durable: a group commit), `applied` (the state machine's result for each
index it applied, in any order), `snapshot_taken` (the state machine durably checkpointed what it applied),
`snapshot_installed` (it loaded the leader's checkpoint after an `InstallSnapshot`), `watch` (a client waits
until an index is committed on a majority or on every member), `tick` (the injected clock moved; call it at
`deadline_ms()` at the latest). Each returns the outputs of `pyozone.ratis.outputs` for the shell to carry
out in order. The client calls' inputs (`submit`, `read`, `watch`, `applied`) and the state that answers them
are `client_calls.ClientCalls`, mixed in; this module is elections, replication, commit, snapshots, leadership
transfer and membership. A member restarts from what its disk holds (`PersistentState`): term, vote, the
snapshot its state machine loads and the log after it; everything else is rebuilt (the commit index is
relearned from the leader, the state machine applies the log after its snapshot again).

A member commits, and so hands to its state machine, only what its own disk holds (Ratis's
RaftLogBase.updateCommitIndex: min(majority index, flush index), for every group): a leader counts itself
in the majority once its write is durable, a follower commits what its leader says is committed once its
own write of it is durable. So a state machine that writes data beside the log at append (Ozone's
ContainerStateMachine writes a chunk's bytes, `LogEntry.data_size`) has it on disk before it applies.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pyozone.ratis.client_calls import ClientCalls
from pyozone.ratis.election import ElectionTally, Phase, grants_pre_vote, grants_vote
from pyozone.ratis.leader import LeaderState
from pyozone.ratis.log import RaftLog, payload_bytes
from pyozone.ratis.messages import (
    AppendEntriesReply,
    AppendEntriesRequest,
    AppendResult,
    ClientCall,
    EntryKind,
    InstallSnapshotReply,
    InstallSnapshotRequest,
    InstallSnapshotResult,
    LogEntry,
    Message,
    RaftPeerId,
    RequestVoteReply,
    RequestVoteRequest,
    StartLeaderElectionRequest,
    TermIndex,
)
from pyozone.ratis.outputs import (
    Apply,
    ConfigurationDone,
    ConfigurationRefused,
    FollowerSlow,
    InstallSnapshot,
    NoLeader,
    NotLeader,
    Output,
    Persist,
    PurgeLog,
    Send,
    TransferDone,
    TransferRefused,
)
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.settings import RaftSettings
from pyozone.ratis.validation import check_leader_claim, named_sender, refuse, validate

if TYPE_CHECKING:
    from pyozone.hdds.clock import Clock  # the protocol only: the core never loads a clock that reads time


_EMPTY_PREFIX = TermIndex(0, 0)


@dataclass(frozen=True)
class PersistentState:
    """Figure 2's persistent state: what a member restarts from. `snapshot` is the last entry the state
    machine's latest snapshot covers, `configuration` the members in force at it (empty: the group's initial
    members); `entries` follow it (from index `snapshot.index + 1`)."""

    current_term: int = 0
    voted_for: RaftPeerId | None = None
    entries: tuple[LogEntry, ...] = ()
    snapshot: TermIndex = _EMPTY_PREFIX
    configuration: tuple[RaftPeerId, ...] = ()


@dataclass(frozen=True)
class _PendingPersist:
    seq: int
    first_index: int | None  # the first log index it rewrites, None for term and vote only
    last_index: int


@dataclass(frozen=True)
class _Reconfiguration:
    call: ClientCall
    peers: tuple[RaftPeerId, ...]
    added: RaftPeerId | None  # caught up as a learner before its configuration entry is appended
    started_ms: int
    index: int | None = None  # the configuration entry, once appended
    retries: tuple[ClientCall, ...] = ()  # the same call again: answered with its outcome


@dataclass(frozen=True)
class _Transfer:
    calls: tuple[ClientCall, ...]  # a second transfer to the same target waits for the first's outcome
    target: RaftPeerId
    deadline_ms: int
    started: bool = False  # StartLeaderElection sent


class RaftServer(ClientCalls):
    def __init__(
        self,
        me: RaftPeerId,
        members: tuple[RaftPeerId, ...],
        settings: RaftSettings,
        clock: Clock,
        rng: random.Random,
        state: PersistentState = PersistentState(),
        entry_bytes: Callable[[LogEntry], int] = payload_bytes,
        priorities: Mapping[RaftPeerId, int] | None = None,
    ) -> None:
        """`entry_bytes` is what an entry costs in an append, which the leader fills up to
        `raft.server.log.appender.buffer.byte-limit`: the shell gives the entry's wire bytes, framing and
        client id included, so the appends it sends fit the limit as sized (Ratis's appender counts each
        entry's serialized size). `priorities` are the members' priorities (Ratis's RaftPeer.priority; a
        member not named has 0, as every member of a group without them): at equal logs a voter refuses a
        candidate of lower priority than its own, and a leader hands over to a follower of higher priority
        that holds its whole log (Ozone gives SCM's suggested leader of a pipeline priority 1)."""
        if me not in members:
            raise ValueError(f"{me} is not a member of the group {[str(m) for m in members]}")
        self.me = me
        self._initial = members
        self._settings = settings
        self._clock = clock
        self._rng = rng
        self._priorities = dict(priorities or {})
        self.current_term = state.current_term
        self.voted_for = state.voted_for
        self.log = RaftLog(state.entries, state.snapshot, state.configuration or members, entry_bytes)
        self.role = RaftPeerRole.FOLLOWER
        self.leader_id: RaftPeerId | None = None
        # The state machine starts from its snapshot: commit and apply resume after it.
        self.commit_index = state.snapshot.index  # also the last index handed to the state machine
        self._init_client_calls(me, settings, state.snapshot.index)
        # A follower: the last index its leader said is committed and its log holds as the leader's; it
        # commits up to there as its own disk makes the entries durable.
        self._leader_commit = state.snapshot.index
        # The commit index the leader's last append carried, whatever this log holds (Ratis's commit infos
        # of the leader, read by Ozone's SCMStateMachine.getLeaderCommitIndex): how far a restarted
        # follower must apply before its state is the service's (SCM's catch-up target).
        self.leader_commit_index = state.snapshot.index
        self._last_purged = state.snapshot.index
        self._last_leader_contact_ms: int | None = None
        self._lost_majority_ms: int | None = None  # when we last stepped down for LOST_MAJORITY_HEARTBEATS
        self._election_deadline_ms = 0
        self._first_election = True  # until we first stand or hear from a leader (firstElectionSinceStartup)
        self._reset_election_timer()
        # NoLeader: when we last had a leader (heard from one, or led); whether this stretch was reported.
        self._leader_seen_ms = self._clock.now_ms()
        self._no_leader_reported = False
        self._yielded_ms: int | None = None  # a leader's last hand-over to a follower of higher priority
        self._tally: ElectionTally | None = None
        # Rounds are numbered from the clock at start and are a minimum timeout apart, so a restarted
        # member does not reuse the number of a round whose late replies may still arrive.
        self._round = self._clock.now_ms()
        self._leader: LeaderState | None = None
        self._transfer: _Transfer | None = None
        self._reconfiguration: _Reconfiguration | None = None
        self._failed_reconfiguration: tuple[tuple[str, int], str] | None = None  # the last one: call, why
        self._installing: TermIndex | None = None  # the notification our state machine is acting on
        self._install_from: tuple[RaftPeerId, int, int] | None = None  # its leader, term and call id
        # Durability: what the disk holds for sure, what is on its way, and the sends waiting for it.
        self._next_seq = 1
        self._durable_seq = 0
        self._durable_last_index = self.log.last_index
        self._persisting: deque[_PendingPersist] = deque()
        self._held: deque[tuple[int, Send]] = deque()
        self._out: list[Output] = []

    @property
    def known_committed_index(self) -> int:
        """The last index this member knows is committed: its own commit index or, if higher, what its leader
        said is committed over entries it holds as the leader's, not all durable here yet (so not committed
        here: `commit_index`, what it applies and reports, waits for its disk). No later leader's append may
        contradict an entry up to here (`validation.check_leader_claim`)."""
        return max(self.commit_index, self._leader_commit)

    @property
    def configuration(self) -> tuple[RaftPeerId, ...]:
        """The members in force: the last configuration entry's, appended, committed or not."""
        return self.log.configuration

    def _peers(self) -> tuple[RaftPeerId, ...]:
        return tuple(m for m in self.log.configuration if m != self.me)

    def _known(self) -> set[RaftPeerId]:
        """Who may send to us: the members in force at the commit index and in every configuration appended
        since (a leader removing itself still leads until its removal commits), and a leader's learner."""
        known = set(self.log.configuration_at(self.commit_index))
        for index in self.log.configuration_indexes():
            if index > self.commit_index:
                known.update(self.log.entry(index).peers)
        if self._leader is not None:
            known.update(self._leader.followers)
        known.discard(self.me)
        return known

    # ---- inputs

    def tick(self) -> list[Output]:
        """The clock moved: start an election after an election timeout without a leader (Figure 2,
        Followers/Candidates), or, as leader, step down without a majority's answers or send the appends and
        heartbeats due."""
        now = self._clock.now_ms()
        if self._transfer is not None and now >= self._transfer.deadline_ms:
            self._end_transfer(stepped_down=False)
        self._expire_watches(now)
        if self._leader is not None:
            if self._leader.has_majority_contact(now, self.log.configuration):
                self._check_staging(now)
                self._yield_to_higher_priority()
                for peer, silent_ms in self._leader.slow_followers(now):
                    self._out.append(FollowerSlow(peer, silent_ms))
                self._send_appends()
            else:
                self._lost_majority_ms = now
                self._step_down(self.current_term)
            return self._drain()
        self._check_no_leader(now)
        if now >= self._election_deadline_ms:
            if (
                self._lost_majority_ms is not None
                and now - self._lost_majority_ms < self._settings.leader_step_down_wait_ms
            ):
                # Ratis's FollowerState.lostMajorityHeartbeatsRecently: a leader that lost its majority does
                # not stand again at once, so a leader cut off alone cannot churn the group's term. Only until
                # it hears from a leader or a candidate of a later term (`_follow`, `_on_request_vote`): the
                # wait is that of the FollowerState its step-down started. It still grants votes and pre-votes
                # meanwhile (Ratis's VoteContext does not look at it).
                self._reset_election_timer()
            elif self.me not in self.log.configuration and self.me not in self.log.configuration_at(
                self.commit_index
            ):
                # Removed (or not yet added): it stands no more (thesis 4.2.3). Until it knows its removal
                # committed it still stands, not counting its own vote (thesis 4.2.2): it may hold the only
                # log that a majority of the new configuration can elect, and then the removal commits only
                # through it.
                self._reset_election_timer()
            else:
                self._start_election(Phase.PRE_VOTE if self._settings.pre_vote else Phase.ELECTION)
        return self._drain()

    def deadline_ms(self) -> int | None:
        """When `tick` next has something to do, if no other input comes first (None: never, for the
        leader of a group of one)."""
        if self._leader is not None:
            due = [
                self._leader.next_heartbeat_ms(),
                self._transfer.deadline_ms if self._transfer is not None else None,
                self._watches.next_deadline_ms(),
                self._leader.next_slowness_ms(),
            ]
            return min((at for at in due if at is not None), default=None)
        no_leader_at = self._settings.no_leader_at_ms(self._leader_seen_ms)
        if no_leader_at is not None and not self._no_leader_reported:
            return min(self._election_deadline_ms, no_leader_at)
        return self._election_deadline_ms

    def _check_no_leader(self, now: int) -> None:
        """Ratis's notifyExtendedNoLeader: once per leaderless stretch of `raft.server.notification
        .no-leader.timeout` (0: never)."""
        due = self._settings.no_leader_at_ms(self._leader_seen_ms)
        if due is not None and not self._no_leader_reported and now >= due:
            self._no_leader_reported = True
            self._out.append(NoLeader(self._leader_seen_ms))

    def receive(self, sender: RaftPeerId, message: Message) -> list[Output]:
        """A peer's message. One from outside the group, naming another member than the one it came from, or
        malformed, or a leader's claim that contradicts what we know (a second leader in a term, an append
        against an entry we committed: `validation.check_leader_claim`), is refused with ValueError before it
        changes anything (the shell reports it). A leader of our term or a later one is heard even if our
        configuration does not name it yet: a member added, or one that missed the change, learns the
        configuration from it (the thesis, section 4.2.1)."""
        named = named_sender(message)
        from_a_leader = (
            isinstance(message, AppendEntriesRequest | InstallSnapshotRequest)
            and message.leader_term >= self.current_term
        )
        if named != sender or sender == self.me or (sender not in self._known() and not from_a_leader):
            raise ValueError(
                f"refused a {type(message).__name__} from {sender} (naming {named}): not "
                f"another member of this group"
            )
        validate(message)
        if isinstance(message, RequestVoteRequest):
            self._on_request_vote(message)
        elif isinstance(message, RequestVoteReply):
            self._on_vote_reply(message)
        elif isinstance(message, AppendEntriesRequest):
            self._on_append_entries(message)
        elif isinstance(message, StartLeaderElectionRequest):
            self._on_start_leader_election(message)
        elif isinstance(message, InstallSnapshotRequest):
            self._on_install_snapshot(message)
        elif isinstance(message, InstallSnapshotReply):
            self._on_install_reply(sender, message)
        else:
            self._on_append_reply(sender, message)
        return self._drain()

    def persisted(self, seq: int) -> list[Output]:
        """Every `Persist` up to `seq` is durable: release what waited for it (the acknowledgements, the
        commit of what the leader said is committed). A `seq` never handed out is the shell's bug, refused
        with ValueError before anything changes: taken, it would release later acknowledgements before their
        writes are durable."""
        if seq >= self._next_seq:
            last = self._next_seq - 1
            raise ValueError(f"persisted {seq}: no Persist of that number was issued (last {last})")
        while self._persisting and self._persisting[0].seq <= seq:
            done = self._persisting.popleft()
            if done.first_index is not None:
                self._durable_last_index = done.last_index
        self._durable_seq = max(self._durable_seq, seq)
        if self._leader is None:
            self._commit(min(self._leader_commit, self._durable_match()))
        while self._held and self._held[0][0] <= self._durable_seq:
            send = self._held.popleft()[1]
            message = send.message
            if isinstance(message, AppendEntriesReply) and message.result is AppendResult.SUCCESS:
                # As Ratis builds the reply once the append is flushed: with the commit that made possible.
                follower_commit = min(self.commit_index, message.match_index)
                send = Send(send.to, replace(message, follower_commit=follower_commit))
            self._out.append(send)
        tally = self._tally
        if (
            self.role is RaftPeerRole.CANDIDATE
            and tally is not None
            and tally.phase is Phase.ELECTION
            and tally.term == self.current_term
            and self._durable_seq >= self._next_seq - 1
        ):
            if tally.grant(self.me):  # our own vote counts once it is on disk
                self._become_leader()
        elif self._leader is not None:
            self._advance_commit()
        return self._drain()

    def transfer_leadership(self, call: ClientCall, target: RaftPeerId) -> list[Output]:
        """Hand leadership to `target` (the thesis's section 3.10; Ratis's TransferLeadership): stop taking
        writes, let `target` catch up, then tell it to stand at once. Answered by `TransferDone`; while one
        runs, another to the same target waits for its outcome, one to another target is refused
        (`TransferRefused`), as Ratis's TransferLeadership.start."""
        if target not in self._peers():
            raise ValueError(f"cannot transfer leadership to {target}: not another member of this group")
        transfer = self._transfer
        if self._leader is None:
            self._out.append(NotLeader(call, self.leader_id))
        elif transfer is None:
            self._transfer = _Transfer(
                (call,), target, self._clock.now_ms() + self._settings.rpc_timeout_max_ms
            )
            self._continue_transfer()
        elif transfer.target == target:
            self._transfer = _Transfer(
                (*transfer.calls, call), target, transfer.deadline_ms, transfer.started
            )
        else:
            self._out.append(TransferRefused(call, transfer.target))
        return self._drain()

    def set_configuration(self, call: ClientCall, peers: tuple[RaftPeerId, ...]) -> list[Output]:
        """Add or remove one member (the Raft thesis, chapter 4, single-server changes; Ratis's
        SetConfiguration). Answered by `ConfigurationDone` once the configuration entry commits.

        One server at a time, not Ratis's joint consensus (`LogEntry.old_peers` stays empty): any two
        configurations that differ by one server have overlapping majorities, so no joint phase is needed,
        and the one change pyozone makes (`--bootstrap` an OM, decommission one) is of one server. The rules
        that keep it safe: a configuration takes effect as its entry is appended, committed or not; only one
        change is in progress (its entry uncommitted) at a time; and the leader has first committed an entry
        of its own term (the fix to the thesis's algorithm, raft-dev 2015). A new member is first caught up
        as a learner (Ratis's staging: replicated to, not counted) until it holds the leader's committed
        entries; one that has not answered for 3 x `raft.server.rpc.timeout.max` fails the change
        (`ConfigurationRefused`, Ratis's ReconfigurationTimeoutException), so it blocks no later change. A
        removal after which fewer than a majority of the members left answered within
        `raft.server.rpc.timeout.max` is refused (`ConfigurationRefused`; Ratis takes it). A
        retry of the call (same client and call id) waits for the outcome of the change in progress, or gets
        that of the last failed one. A leader that removes itself leads, not counting itself, until the entry
        commits, then steps down; a removed member stands until it knows its removal committed (not counting
        its own vote), then no more, and pre-vote keeps one that did not learn of it harmless."""
        current = self.log.configuration
        wanted = tuple(dict.fromkeys(peers))
        configurations = self.log.configuration_indexes()
        change = self._reconfiguration
        same_call = (call.client_id, call.call_id)
        if self._leader is None:
            self._out.append(NotLeader(call, self.leader_id))
        elif change is not None and (change.call.client_id, change.call.call_id) == same_call:
            self._reconfiguration = replace(change, retries=(*change.retries, call))
        elif self._failed_reconfiguration is not None and self._failed_reconfiguration[0] == same_call:
            self._out.append(ConfigurationRefused(call, self._failed_reconfiguration[1]))
        elif self._transfer is not None:
            self._out.append(ConfigurationRefused(call, "a leadership transfer is in progress"))
        elif self._reconfiguration is not None or (configurations and configurations[-1] > self.commit_index):
            self._out.append(ConfigurationRefused(call, "another configuration change is in progress"))
        elif set(wanted) == set(current):
            self._out.append(ConfigurationDone(call, configurations[-1] if configurations else 0))
        elif not wanted or len(set(wanted) ^ set(current)) != 1:
            self._out.append(
                ConfigurationRefused(call, f"{[str(p) for p in wanted]} changes other than one member")
            )
        elif len(wanted) < len(current) and len(answering := self._answering(wanted)) <= len(wanted) // 2:
            self._out.append(
                ConfigurationRefused(
                    call,
                    f"only {len(answering)} of the {len(wanted)} members left "
                    f"({', '.join(map(str, answering))}) answered within raft.server.rpc.timeout.max: the "
                    "new configuration would have no majority to commit its entry or elect a leader",
                )
            )
        else:
            added = next(iter(set(wanted) - set(current)), None)
            self._reconfiguration = _Reconfiguration(call, wanted, added, self._clock.now_ms())
            if added is not None:
                self._leader.add_follower(added)
                self._send_appends()
            self._continue_reconfiguration()
        return self._drain()

    def _answering(self, wanted: tuple[RaftPeerId, ...]) -> tuple[RaftPeerId, ...]:
        """The members of `wanted` that answered us lately. A removal must leave a majority of them, not in
        Ratis (whose docs only warn to keep the new majority online): past it the group has no leader."""
        assert self._leader is not None
        return self._leader.answering(self._clock.now_ms(), wanted)

    def snapshot_taken(self, snapshot: TermIndex) -> list[Output]:
        """The state machine durably checkpointed everything it applied up to `snapshot`: the log up to it
        goes, once `raft.server.log.purge.gap` entries have gathered since the last purge (Ratis's
        RaftLog.purge). Up to the snapshot index even if a follower still needs those entries, as OM sets
        `ozone.om.ratis.log.purge.upto.snapshot.index` (true; Ratis's own default, false, would keep them):
        that follower is notified to install a snapshot instead."""
        if snapshot.index > self._applied_index:
            raise ValueError(f"snapshot {snapshot} is past the applied index {self._applied_index}")
        held = self.log.term_at(snapshot.index)
        if held is not None and held != snapshot.term:
            raise ValueError(f"snapshot {snapshot} does not match the log's term {held} at that index")
        if held is not None and snapshot.index - self._last_purged >= self._settings.purge_gap:
            self.log.purge(snapshot)
            self._last_purged = snapshot.index
            self._out.append(PurgeLog(snapshot.index, self.log.snapshot_configuration))
        return self._drain()

    def snapshot_installed(
        self, snapshot: TermIndex | None, configuration: tuple[RaftPeerId, ...] = ()
    ) -> list[Output]:
        """The state machine loaded the leader's checkpoint, up to `snapshot`, with the members in force at it
        (`configuration`: a checkpoint records the last configuration it applied; empty: the group's initial
        members), or None: it could not fetch one; the leader's next notification starts another try). The log
        is replaced by it (Figure 13: entries after it are kept if the log holds it), durably, and commit and
        apply resume after it; then the leader hears SNAPSHOT_INSTALLED. A checkpoint not ahead of what the
        state machine applied changes nothing (the state machine keeps its newer state, as OM's
        installCheckpoint does); the leader hears ALREADY_INSTALLED with what we hold and committed."""
        self._installing = None
        source, self._install_from = self._install_from, None
        answer_to = source if source is not None and source[1] == self.current_term else None
        if snapshot is None:
            return self._drain()
        if snapshot.index <= self._applied_index:
            # Nothing to load, but the leader must hear where we stand, or it notifies us (and we fetch its
            # checkpoint) every heartbeat, never resuming its appends.
            self._answer_installed(answer_to, InstallSnapshotResult.ALREADY_INSTALLED, self._held_through())
            return self._drain()
        self.log.purge(snapshot, configuration or self._initial)
        self.commit_index = max(self.commit_index, snapshot.index)
        self._leader_commit = max(min(self._leader_commit, self.log.last_index), snapshot.index)
        self._applied_index = snapshot.index
        self._applied_ahead = {index for index in self._applied_ahead if index > snapshot.index}
        self._advance_applied()
        self._last_purged = snapshot.index
        self._persist(self.log.entries(), snapshot, self.log.snapshot_configuration)
        self._answer_installed(answer_to, InstallSnapshotResult.SNAPSHOT_INSTALLED, snapshot.index)
        return self._drain()

    def _answer_installed(
        self, answer_to: tuple[RaftPeerId, int, int] | None, result: InstallSnapshotResult, index: int
    ) -> None:
        """Tells the leader whose notification started the install (if still of our term) how it ended."""
        if answer_to is not None:
            self._send(
                answer_to[0], InstallSnapshotReply(self.me, self.current_term, result, index, answer_to[2])
            )

    # ---- elections

    def _reset_election_timer(self) -> None:
        if self._first_election:
            low, high = self._settings.first_election_timeout_ms
        else:
            low, high = self._settings.rpc_timeout_min_ms, self._settings.rpc_timeout_max_ms
        self._election_deadline_ms = self._clock.now_ms() + self._rng.randint(low, high)

    def _leader_alive(self) -> bool:
        if self.role is RaftPeerRole.LEADER:
            return True
        return (
            self._last_leader_contact_ms is not None
            and self._clock.now_ms() - self._last_leader_contact_ms < self._settings.rpc_timeout_min_ms
        )

    def _start_election(self, phase: Phase) -> None:
        self.role = RaftPeerRole.CANDIDATE
        self.leader_id = None
        self._first_election = False
        self._reset_election_timer()
        self._round += 1
        voters = self.log.configuration
        if phase is Phase.PRE_VOTE:
            term = self.current_term + 1
            self._tally = ElectionTally(phase, term, voters, self._round)
            if self._tally.grant(self.me):
                self._start_election(Phase.ELECTION)
                return
        else:
            self.current_term += 1
            self.voted_for = self.me
            term = self.current_term
            self._tally = ElectionTally(phase, term, voters, self._round)
            self._persist(())
        request = RequestVoteRequest(
            self.me, term, self.log.last_term, self.log.last_index, phase is Phase.PRE_VOTE, self._round
        )
        for peer in self._peers():
            self._send(peer, request)

    def _on_request_vote(self, request: RequestVoteRequest) -> None:
        if request.candidate_id not in self.log.configuration:
            # Not a member in our configuration (removed, or not yet added): refused, and its term is not
            # taken, so a removed server cannot disrupt the group (the thesis, section 4.2.3).
            reply = RequestVoteReply(self.me, self.current_term, False, request.pre_vote, request.call_id)
            self._send(request.candidate_id, reply)
            return
        mine, theirs = self._priority(self.me), self._priority(request.candidate_id)
        if request.pre_vote:
            granted = grants_pre_vote(
                request,
                current_term=self.current_term,
                log=self.log,
                leader_alive=self._leader_alive(),
                priority=mine,
                candidate_priority=theirs,
            )
        else:
            if request.candidate_term > self.current_term:
                self._step_down(request.candidate_term)
                self._lost_majority_ms = None  # Ratis: changeToFollower(force) for a later term's candidate
            granted = grants_vote(
                request,
                current_term=self.current_term,
                voted_for=self.voted_for,
                log=self.log,
                priority=mine,
                candidate_priority=theirs,
            )
            if granted and self.voted_for is None:
                self.voted_for = request.candidate_id
                self._persist(())
            if granted:
                self._reset_election_timer()
        reply = RequestVoteReply(self.me, self.current_term, granted, request.pre_vote, request.call_id)
        self._send(request.candidate_id, reply)

    def _on_vote_reply(self, reply: RequestVoteReply) -> None:
        if reply.term > self.current_term:
            self._step_down(reply.term)
            return
        tally = self._tally
        if (
            self.role is not RaftPeerRole.CANDIDATE
            or tally is None
            or not reply.granted
            or reply.call_id != tally.round
        ):
            return
        if reply.pre_vote and tally.phase is Phase.PRE_VOTE and tally.term == self.current_term + 1:
            if tally.grant(reply.voter_id):
                self._start_election(Phase.ELECTION)
        elif (
            not reply.pre_vote
            and tally.phase is Phase.ELECTION
            and reply.term == self.current_term
            and tally.grant(reply.voter_id)
        ):  # our own vote is counted: its Persist preceded our requests
            self._become_leader()

    def _step_down(self, term: int, leader: RaftPeerId | None = None) -> None:
        """A higher term seen anywhere makes us a follower of it (Figure 2, All Servers); so does a lost
        majority (same term). The calls we held are refused naming `leader`, if we know who leads now."""
        if term > self.current_term:
            self.current_term = term
            self.voted_for = None
            self.leader_id = None
            self._persist(())
        if self.role is RaftPeerRole.LEADER:
            self._leader_seen_ms = self._clock.now_ms()  # leaderless from here
            self._no_leader_reported = False
        if self.role is not RaftPeerRole.FOLLOWER:
            self._reset_election_timer()
        if leader is not None or self.role is RaftPeerRole.LEADER:
            self.leader_id = leader
        self.role = RaftPeerRole.FOLLOWER
        self._tally = None
        self._leader = None
        pending = [call for calls in self._pending_calls.values() for call in calls]
        if self._reconfiguration is not None:
            pending += (self._reconfiguration.call, *self._reconfiguration.retries)
            self._reconfiguration = None
        pending += (watch.call for watch in self._watches.drop())
        for call in [*pending, *self._reads.drop()]:
            self._out.append(NotLeader(call, self.leader_id))
        self._pending_calls.clear()
        if self._transfer is not None:
            self._end_transfer(stepped_down=True)

    def _become_leader(self) -> None:
        """Won: lead, and append a no-op of our term, so entries of earlier terms commit through it
        (section 8; Ratis appends its configuration entry at the start of each term)."""
        self.role = RaftPeerRole.LEADER
        self.leader_id = self.me
        self._tally = None
        self._lost_majority_ms = None
        self._yielded_ms = None
        self._leader = LeaderState(
            self.me, self.current_term, self._peers(), self.log, self._settings, self._clock.now_ms()
        )
        self._append_as_leader(LogEntry(self.current_term, self.log.last_index + 1, b"", EntryKind.NOOP))

    # ---- replication

    def _append_as_leader(self, entry: LogEntry) -> None:
        self.log.append(entry)
        self._persist((entry,))
        self._send_appends()

    def _send_appends(self, heartbeat_all: bool = False) -> None:
        assert self._leader is not None
        for peer, request in self._leader.appends(self._clock.now_ms(), self.commit_index, heartbeat_all):
            self._send(peer, request)

    def _follow(self, leader_id: RaftPeerId, leader_term: int) -> None:
        """A message of a current leader: follow it and restart the election timeout."""
        if leader_term > self.current_term or self.role is not RaftPeerRole.FOLLOWER:
            self._step_down(leader_term, leader_id)
        self.leader_id = leader_id
        # Ratis's appendEntries starts a new FollowerState (changeToFollower with force): the wait after a
        # step-down for a lost majority belongs to the one the step-down started, and ends here.
        self._lost_majority_ms = None
        self._first_election = False
        self._last_leader_contact_ms = self._leader_seen_ms = self._clock.now_ms()
        self._no_leader_reported = False
        self._reset_election_timer()

    def _on_append_entries(self, request: AppendEntriesRequest) -> None:
        if request.leader_term < self.current_term:
            self._answer(request, AppendResult.NOT_LEADER, 0, self.log.last_index + 1)
            return
        check_leader_claim(request, self.current_term, self.leader_id, self.log, self.known_committed_index)
        self._follow(request.leader_id, request.leader_term)
        self.leader_commit_index = request.leader_commit
        # What a snapshot covers is committed, so it matches the leader's log.
        held = self.log.term_at(request.previous_index)
        if held != request.previous_term and request.previous_index >= self.log.snapshot.index:
            if held is None:
                resume = self.log.last_index + 1
            else:
                resume = max(self.commit_index + 1, self.log.first_index_of_term_at(request.previous_index))
            self._answer(request, AppendResult.INCONSISTENCY, 0, resume)
            return
        written = self.log.merge(request.entries)
        if written:
            self._persist(written)
            # What the leader said is committed and our log held as its: no longer past a rewritten entry.
            self._leader_commit = min(self._leader_commit, written[0].index - 1)
        match = request.previous_index + len(request.entries)
        self._leader_commit = max(self._leader_commit, min(request.leader_commit, match))
        # Ratis's appendEntries: updateCommitIndex(min(leaderCommit, match)) once the append is flushed.
        self._commit(min(self._leader_commit, self._durable_match()))
        self._answer(request, AppendResult.SUCCESS, match, match + 1)

    def _answer(
        self, request: AppendEntriesRequest, result: AppendResult, match_index: int, next_index: int
    ) -> None:
        follower_commit = min(self.commit_index, match_index) if result is AppendResult.SUCCESS else 0
        reply = AppendEntriesReply(
            self.me, self.current_term, result, match_index, next_index, request.call_id, follower_commit
        )
        self._send(request.leader_id, reply)

    def _on_append_reply(self, sender: RaftPeerId, reply: AppendEntriesReply) -> None:
        if reply.term > self.current_term:
            self._step_down(reply.term)
            return
        if self._leader is None or reply.term < self.current_term or sender not in self._leader.followers:
            return
        if reply.next_index < 1 or reply.match_index > self.log.last_index:
            # Our appends of this term name nothing past our log, and a follower resumes at index 1 at least.
            raise refuse(reply, f"match index {reply.match_index}, next index {reply.next_index}: never sent")
        if reply.follower_commit > reply.match_index:
            raise refuse(
                reply, f"commit index {reply.follower_commit} past its match index {reply.match_index}"
            )
        self._leader.on_response(sender, self._clock.now_ms())
        self._reads.on_answer(sender, reply.call_id)
        self._serve_reads()
        if reply.result is AppendResult.SUCCESS:
            self._leader.on_success(sender, reply.match_index, reply.follower_commit)
            self._advance_commit()
            self._continue_transfer()
            self._continue_reconfiguration()
            if self._leader is not None:
                self._yield_to_higher_priority()
        elif reply.result is AppendResult.INCONSISTENCY:
            self._leader.on_inconsistency(sender, reply.next_index, reply.call_id)
        if self._leader is not None:  # not if the commit removed us
            self._send_appends()

    # ---- snapshots

    def _on_install_snapshot(self, request: InstallSnapshotRequest) -> None:
        """Our leader no longer holds what we need: have the state machine fetch its checkpoint (once; the
        leader repeats the notification until we answer that our snapshot reaches its log)."""
        if request.leader_term < self.current_term:
            self._answer_install(request, InstallSnapshotResult.NOT_LEADER)
            return
        check_leader_claim(request, self.current_term, self.leader_id, self.log, self.known_committed_index)
        self._follow(request.leader_id, request.leader_term)
        if self._held_through() + 1 >= request.first_available.index:
            # What we hold and committed reaches the leader's log: a late INCONSISTENCY answer may have sent
            # the leader's next index for us back below its log after we had committed past its checkpoint.
            self._answer_install(request, InstallSnapshotResult.ALREADY_INSTALLED)
            return
        self._install_from = (request.leader_id, request.leader_term, request.call_id)
        if self._installing is None:
            self._installing = request.first_available
            self._out.append(InstallSnapshot(request.leader_id, request.first_available))
        self._answer_install(request, InstallSnapshotResult.IN_PROGRESS)

    def _held_through(self) -> int:
        """The last index up to which our log (with its snapshot) surely matches any current leader's: what
        our snapshot covers or we committed (a committed entry is in every later leader's log)."""
        return max(self.log.snapshot.index, self.commit_index)

    def _answer_install(self, request: InstallSnapshotRequest, result: InstallSnapshotResult) -> None:
        held = self._held_through()
        reply = InstallSnapshotReply(self.me, self.current_term, result, held, request.call_id)
        self._send(request.leader_id, reply)

    def _on_install_reply(self, sender: RaftPeerId, reply: InstallSnapshotReply) -> None:
        if reply.term > self.current_term:
            self._step_down(reply.term)
            return
        if self._leader is None or reply.term < self.current_term or sender not in self._leader.followers:
            return
        if reply.snapshot_index > self.log.last_index:
            raise refuse(reply, f"snapshot index {reply.snapshot_index} is past our log")
        self._leader.on_response(sender, self._clock.now_ms())
        self._reads.on_answer(sender, reply.call_id)
        self._serve_reads()
        if reply.result in (
            InstallSnapshotResult.ALREADY_INSTALLED,
            InstallSnapshotResult.SNAPSHOT_INSTALLED,
        ):
            self._leader.on_snapshot_installed(sender, reply.snapshot_index)
            self._advance_commit()
            self._continue_transfer()
            self._continue_reconfiguration()
            if self._leader is not None:
                self._send_appends()

    # ---- leadership transfer

    def _continue_transfer(self) -> None:
        """Once the target holds our whole log, tell it to stand (once)."""
        transfer = self._transfer
        if transfer is None or transfer.started or self._leader is None:
            return
        target = self._leader.followers.get(transfer.target)
        if target is not None and target.match_index == self.log.last_index:
            self._transfer = _Transfer(transfer.calls, transfer.target, transfer.deadline_ms, started=True)
            self._send(
                transfer.target, StartLeaderElectionRequest(self.me, self.current_term, self.log.last_index)
            )

    def _priority(self, peer: RaftPeerId) -> int:
        return self._priorities.get(peer, 0)

    def _yield_to_higher_priority(self) -> None:
        """Ratis's LeaderStateImpl.yieldLeaderToHigherPriorityPeer: tell the follower of the highest priority
        above ours that holds our whole log to stand now (StartLeaderElection, as a transfer does, but
        writes go on meanwhile), at most once per `raft.server.rpc.timeout.max`, and not while a transfer
        runs. One still behind is caught up first by the appends."""
        assert self._leader is not None
        now = self._clock.now_ms()
        if self._transfer is not None or (
            self._yielded_ms is not None and now - self._yielded_ms < self._settings.rpc_timeout_max_ms
        ):
            return
        mine = self._priority(self.me)
        caught_up = [
            peer
            for peer in self._peers()
            if self._priority(peer) > mine
            and (info := self._leader.followers.get(peer)) is not None
            and info.match_index == self.log.last_index
        ]
        if caught_up:
            target = max(caught_up, key=self._priority)
            self._yielded_ms = now
            self._send(target, StartLeaderElectionRequest(self.me, self.current_term, self.log.last_index))

    def _end_transfer(self, stepped_down: bool) -> None:
        assert self._transfer is not None
        for call in self._transfer.calls:
            self._out.append(TransferDone(call, stepped_down))
        self._transfer = None

    def _on_start_leader_election(self, request: StartLeaderElectionRequest) -> None:
        """Our leader hands over: stand now if it is our current leader and we hold its whole log."""
        if (
            request.leader_term == self.current_term
            and self.me in self.log.configuration
            and self.leader_id == request.leader_id
            and self.role is RaftPeerRole.FOLLOWER
            and self.log.last_index >= request.leader_last_index
            and self.log.term_at(request.leader_last_index) == self.current_term
        ):
            self._start_election(Phase.ELECTION)

    # ---- commit

    def _durable_match(self) -> int:
        """The last index up to which our disk holds the log as it stands in memory: what the last durable
        write reached, but not past the first entry a pending write replaces (a follower's log rewritten
        after a conflict is durable only up to where the rewrite starts, until the rewrite is)."""
        return min(
            [
                self._durable_last_index,
                *(p.first_index - 1 for p in self._persisting if p.first_index is not None),
            ]
        )

    def _advance_commit(self) -> None:
        assert self._leader is not None
        own_match = self._durable_match()
        committed = self.commit_index
        self._commit(self._leader.commit_index(own_match, self.commit_index, self.log.configuration))
        self._after_commit_as_leader()
        if self._leader is None:
            return
        self._check_watches()
        if self.commit_index > committed and self._settings.push_commit:
            self._send_appends()
        self._continue_reconfiguration()
        if self._reads.held and self.log.term_at(self.commit_index) == self.current_term:
            held, self._reads.held = self._reads.held, []
            for call in held:
                self._start_read(call)

    # ---- configuration changes

    def _continue_reconfiguration(self) -> None:
        """Append the configuration entry once it is safe: an entry of our term committed, and an added
        member caught up to our commit index."""
        change = self._reconfiguration
        if change is None or change.index is not None or self._leader is None:
            return
        if self.log.term_at(self.commit_index) != self.current_term:
            return
        if change.added is not None and self._leader.followers[change.added].match_index < self.commit_index:
            return
        entry = LogEntry(
            self.current_term, self.log.last_index + 1, kind=EntryKind.CONFIGURATION, peers=change.peers
        )
        self._reconfiguration = replace(change, index=entry.index)
        self._append_as_leader(entry)

    def _check_staging(self, now: int) -> None:
        """Ratis's checkProgress NOPROGRESS: a learner that has not answered for the staging timeout (since
        the change began, if it never did) fails the change, so it does not block every later one; its call,
        and a retry of it, are answered with the failure (ReconfigurationTimeoutException)."""
        change = self._reconfiguration
        if change is None or change.added is None or change.index is not None or self._leader is None:
            return
        answered = self._leader.followers[change.added].last_response_ms
        if now - max(change.started_ms, answered or 0) <= self._settings.staging_timeout_ms:
            return
        why = (
            f"ReconfigurationTimeoutException: {change.added} made no progress for "
            f"{self._settings.staging_timeout_ms} ms while catching up"
        )
        self._reconfiguration = None
        self._failed_reconfiguration = ((change.call.client_id, change.call.call_id), why)
        self._leader.drop_followers(self._peers())
        for call in (change.call, *change.retries):
            self._out.append(ConfigurationRefused(call, why))

    def _after_commit_as_leader(self) -> None:
        """Once the configuration in force is committed: answer its call, stop replicating to removed
        members, and step down if we are no longer one (the thesis, section 4.2.2)."""
        assert self._leader is not None
        change = self._reconfiguration
        configurations = self.log.configuration_indexes()
        if configurations and configurations[-1] > self.commit_index:
            return
        if change is not None and change.index is not None:
            for call in (change.call, *change.retries):
                self._out.append(ConfigurationDone(call, change.index))
            self._reconfiguration = change = None
        learner = (change.added,) if change is not None and change.added is not None else ()
        self._leader.drop_followers((*self._peers(), *learner))
        if self.me not in self.log.configuration:
            self._step_down(self.current_term)

    def _commit(self, index: int) -> None:
        """Committed entries go to the state machine in index order, each once per incarnation."""
        if index <= self.commit_index:
            return
        entries = tuple(self.log.entry(i) for i in range(self.commit_index + 1, index + 1))
        self.commit_index = index
        self._out.append(Apply(entries))

    # ---- outputs

    def _persist(
        self,
        entries: tuple[LogEntry, ...],
        snapshot: TermIndex | None = None,
        configuration: tuple[RaftPeerId, ...] = (),
    ) -> None:
        last = self._out[-1] if self._out else None
        if (
            not entries
            and snapshot is None
            and isinstance(last, Persist)
            and not last.entries
            and not last.snapshot
        ):
            # A new term and then a vote in one step: one write.
            self._out[-1] = Persist(last.seq, self.current_term, self.voted_for, ())
            return
        seq = self._next_seq
        self._next_seq += 1
        first = entries[0].index if entries else None if snapshot is None else snapshot.index + 1
        last_index = entries[-1].index if entries else self.log.last_index
        self._persisting.append(_PendingPersist(seq, first, last_index))
        self._out.append(Persist(seq, self.current_term, self.voted_for, entries, snapshot, configuration))

    def _send(self, to: RaftPeerId, message: Message) -> None:
        """A vote, a vote request or an acknowledgement leaves only after every `Persist` before it is durable
        (Figure 2: stable storage is updated before responding). A leader's appends leave at once: it counts
        its own entries toward commit only once they are durable (`_advance_commit`)."""
        send = Send(to, message)
        if self._durable_seq >= self._next_seq - 1 or isinstance(
            message, AppendEntriesRequest | InstallSnapshotRequest
        ):
            self._out.append(send)
        else:
            self._held.append((self._next_seq - 1, send))

    def _drain(self) -> list[Output]:
        out, self._out = self._out, []
        return out
