"""Deterministic simulation of Raft groups over `pyozone.ratis` (issue 30).

N cores on a virtual network and virtual disks, all driven by one seeded `random.Random`: message loss,
duplication, reordering and delay, partitions and one-way link cuts and their heals, crashes that lose
whatever the disk had not acknowledged (`persisted`), restarts from what it had. Members checkpoint their
state machine (the applied prefix) and purge their logs; a restart loads the checkpoint and applies the log
after it; a follower left behind a leader's purged log is notified and fetches the leader's checkpoint (as OM
does), which fails when the leader is out of reach. An operator adds and removes members one at a time, in
bursts of attempts milliseconds apart (a spare server joins as a learner; a removed one keeps running, refused
by the others). Clients write (retrying a call with the same call id, following leader hints, until it is
answered), read (some from a leader a later term deposed, which does not know it yet) and hand leadership
over. After every step the invariants of the Raft paper's Figure 3 are checked, incrementally: election
safety, log matching, leader completeness, state machine safety (across checkpoints and the entries applied
after them), that every answered request is what every member applies at its index and its answer that entry's
result, that a member hands its state machine only entries its own disk holds, that the applied index is the
gap-free prefix of the applies completed (a state machine completes them in any order), that a leader
announces each call it appends (`Appended`) before the entry's write and sizes its appends with each entry's
state machine data, that every committed entry is durable on a majority of the configuration in force when it
committed, that a leader's configuration differs by at most one member from the last one committed (one change
at a time), that no call with a client id is applied twice (the retry cache), that reads are linearizable, and
that a leader cut off from a majority for longer than `raft.server.rpc.timeout.max` (plus the heartbeat
interval its checks run at) no longer leads. After the faults stop, liveness: within a bound of virtual time a
leader is elected and a new request is applied by every member of the configuration it committed in; then,
once every member committed the leader's whole log, the leader is cut off and the others elect one of them
within 10 election timeouts, whatever the step-down wait. Members have random priorities on half the
seeds (a member of the highest priority must lead within 10 election timeouts of the final write applied
everywhere), a short first election on a quarter, and `NoLeader` / `FollowerSlow` must come exactly when a
member had no leader (a leader was not answered by a follower) for their timeouts, never earlier. Writes
carry random amounts of state machine data (`data_size`), and on half the seeds one writer has no client id
(no retry cache: its retries are appended again, as a datanode's idempotent container operations).

The checks are `tests/ratis_invariants.py`'s, mixed into `Simulation`. Replay a seed:
`python -m tests.ratis_sim --seed 17 --members 5 [--trace]`.
"""

from __future__ import annotations

import argparse
import heapq
import random
import sys
from dataclasses import dataclass, field, replace
from typing import Any

from pyozone.hdds.clock import ManualClock
from pyozone.ratis.messages import (
    AppendEntriesReply,
    AppendEntriesRequest,
    ClientCall,
    EntryKind,
    InstallSnapshotReply,
    InstallSnapshotRequest,
    LogEntry,
    Message,
    RaftPeerId,
    TermIndex,
    WatchLevel,
)
from pyozone.ratis.outputs import (
    Appended,
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
    ReadReady,
    Reply,
    Send,
    TransferDone,
    TransferRefused,
    WatchDone,
    WatchFailed,
)
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.server import PersistentState, RaftServer
from pyozone.ratis.settings import RaftSettings
from tests.ratis_invariants import Invariants, InvariantViolation

NO_SNAPSHOT = TermIndex(0, 0)
FAULT_MS = 1500  # virtual time with faults
LIVENESS_BOUND_MS = 4000  # after the heal: a leader and a request applied everywhere within this
REELECTION_BOUND_MS = 3000  # 10 election timeouts: then a top-priority member leads; cut off, others elect
WRITERS = 4  # clients that write, each one call at a time (retried until answered)
MAX_STEPS = 100_000  # a run is a few thousand steps: more is a message storm


@dataclass
class Disk:
    """What a member's disk holds durably, and the writes it has been given but not yet synced: term, vote,
    the log from `base + 1` on (before it, purged), and the state machine's latest checkpoint (`snapshot`
    and the applied prefix it holds), durable as soon as it is taken or installed."""

    term: int = 0
    voted_for: RaftPeerId | None = None
    base: int = 0
    entries: list[LogEntry] = field(default_factory=list)
    unsynced: list[Persist] = field(default_factory=list)
    snapshot: TermIndex = NO_SNAPSHOT
    snapshot_state: tuple[LogEntry, ...] = ()
    snapshot_configuration: tuple[RaftPeerId, ...] = ()  # the members in force at the snapshot

    def sync(self, seq: int) -> int:
        """Make the writes up to `seq` durable; returns how many stored entries they overwrote."""
        overwritten = 0
        while self.unsynced and self.unsynced[0].seq <= seq:
            p = self.unsynced.pop(0)
            self.term, self.voted_for = p.term, p.voted_for
            if p.snapshot is not None:
                self.base, self.entries = p.snapshot.index, []
            written = [e for e in p.entries if e.index > self.base]
            if written and written[0].index > self.base + len(self.entries) + 1:
                # Past the stored log's end: the member restarted from a checkpoint ahead of it, which covers
                # the gap (a write applied before this disk held it); the log restarts after the checkpoint.
                self.base, self.entries = written[0].index - 1, []
            if written:
                position = written[0].index - self.base - 1
                overwritten += max(0, len(self.entries) - position)
                del self.entries[position:]
                self.entries.extend(written)
        return overwritten

    def purge(self, up_to: int) -> None:
        if up_to > self.base:
            del self.entries[: up_to - self.base]
            self.base = up_to

    def holds(self, entry: LogEntry) -> bool:
        """Is `entry` durable here (in the log, or covered by the checkpoint)?"""
        if entry.index <= self.snapshot.index:
            return True
        position = entry.index - self.base - 1
        return 0 <= position < len(self.entries) and self.entries[position].term == entry.term

    def log_after_snapshot(self) -> tuple[LogEntry, ...]:
        return tuple(self.entries[max(0, self.snapshot.index - self.base) :])


@dataclass
class Member:
    peer: RaftPeerId
    server: RaftServer | None
    disk: Disk = field(default_factory=Disk)
    incarnation: int = 0
    applied: list[LogEntry] = field(default_factory=list)  # the in-memory state machine: lost on a crash
    # Its applies: handed out in order (`applied`), completed in any order; done through `applied_prefix`, and
    # those after it in `done_ahead`; `applying` the entries handed out and not yet done.
    applied_prefix: int = 0
    done_ahead: set[int] = field(default_factory=set)
    applying: dict[int, LogEntry] = field(default_factory=dict)
    seen_commit: int = 0
    was_leader_term: int = 0
    leader_since_ms: int = 0
    # NoLeader: when it last had a leader (a leader's message it took, or its own leadership), and when it
    # last reported having none; FollowerSlow: when it last reported each follower, as leader.
    leader_seen_ms: int = 0
    was_leading: bool = False
    no_leader_reported_ms: int | None = None
    slow_reported_ms: dict[RaftPeerId, int] = field(default_factory=dict)
    cache_horizon: int = 0  # calls applied up to here came in a snapshot: its retry cache never saw them
    started: bool = False  # the spare is started when it is first added
    members_arg: tuple[RaftPeerId, ...] = ()  # the configuration it was first started with
    tick_token: int = 0
    tick_at: int | None = None


@dataclass(frozen=True)
class Faults:
    """This seed's fault rates, drawn from its random source."""

    loss: float
    duplicate: float
    max_delay_ms: int
    max_disk_ms: int
    fault_every_ms: int
    client_every_ms: int
    snapshot_every: int  # a member checkpoints its state machine every this many applied entries (0: never)
    max_apply_ms: int  # an apply completes within this long, in any order (0: at once, in order)


class Simulation(Invariants):
    def __init__(self, seed: int, members: int = 3, trace: bool = False) -> None:
        self.seed = seed
        self.n = members
        self.rng = random.Random(seed)
        self.clock = ManualClock()
        self.trace = trace
        self.settings = RaftSettings(
            append_byte_limit=64,
            append_element_limit=self.rng.choice([0, 1, 3]),
            outstanding_appends_max=self.rng.choice([1, 4]),
            leader_step_down_wait_ms=self.rng.choice([0, 300, 1000, 10_000]),
            purge_gap=self.rng.choice([1, 4, 16]),
            push_commit=self.rng.random() < 0.5,
        )
        self.push = "push_commit on" if self.settings.push_commit else "push_commit off"
        self.faults = Faults(
            loss=self.rng.choice([0.0, 0.05, 0.2]),
            duplicate=self.rng.choice([0.0, 0.05]),
            max_delay_ms=self.rng.choice([5, 20, 80]),
            max_disk_ms=self.rng.choice([1, 5, 20, 60]),
            fault_every_ms=self.rng.choice([100, 300, 1000]),
            client_every_ms=self.rng.choice([20, 60]),
            snapshot_every=self.rng.choice([0, 3, 10]),
            max_apply_ms=self.rng.choice([0, 5, 40]),
        )
        # Priorities (on half the seeds; the spare's too), a short first election on a quarter, and the
        # failure notifications' timeouts (0: off).
        first = self.rng.choice([None, None, None, (0, 20)])
        self.settings = replace(
            self.settings,
            first_election_timeout_min_ms=first and first[0],
            first_election_timeout_max_ms=first and first[1],
            no_leader_timeout_ms=self.rng.choice([0, 400, 1000]),
            rpc_slowness_timeout_ms=self.rng.choice([0, 400, 1000]),
        )
        peers = [RaftPeerId(f"n{i}") for i in range(members + 1)]
        self.priorities = (
            {p: self.rng.randint(0, 2) for p in peers} if self.rng.random() < 0.5 else dict.fromkeys(peers, 0)
        )
        # On half the seeds one writer has no client id: no retry cache, each retry appended again.
        self.writers = ("" if self.rng.random() < 0.5 else "w0", *(f"w{i}" for i in range(1, WRITERS)))
        # The group's members and one spare: an operator adds and removes members one at a time.
        self.peers = tuple(RaftPeerId(f"n{i}") for i in range(members + 1))
        self.initial = self.peers[:members]
        self.members = {p: Member(p, None, members_arg=self.initial) for p in self.peers}
        # A partition: members on different sides do not hear each other.
        self.side: dict[RaftPeerId, int] = {p: 0 for p in self.peers}
        self.cut: set[tuple[RaftPeerId, RaftPeerId]] = set()  # one-way links down: (sender, receiver)
        self.events: list[tuple[int, int, str, tuple[Any, ...]]] = []
        self.counter = 0
        self.faulty = True
        self.steps = 0
        self.counts: dict[str, int] = {}  # what happened: crashes, partitions, lost messages, ...
        # What the checks remember.
        self.leaders: dict[int, RaftPeerId] = {}
        self.entries_seen: dict[tuple[int, int], tuple[bytes, EntryKind, int | None]] = {}
        self.committed: dict[int, tuple[LogEntry, int]] = {}  # index -> entry, the term it was committed by
        self.commit_high = 0  # the highest index committed so far
        self.applied: dict[int, LogEntry] = {}
        self.acked: dict[bytes, int] = {}
        self.call_applied_at: dict[tuple[str, int], int] = {}  # a client call -> the index it was applied at
        self.resent_at: set[int] = set()  # where a call without a client id was applied again
        self.outstanding: dict[int, ClientCall] = {}  # writes not yet answered, by call id: retried
        self.heard: dict[tuple[RaftPeerId, RaftPeerId], int] = {}  # (leader, follower) -> its last answer
        self.answered: dict[tuple[RaftPeerId, RaftPeerId], int] = {}  # the same, answers of the leader's term
        self.leader_horizon: dict[int, int] = {}  # term -> its leader's retry cache horizon
        self.goal_configuration: tuple[RaftPeerId, ...] = self.initial  # who must apply the final write
        # Linearizable reads: what a read must see, the highest index acknowledged or seen by a read so far.
        self.read_floor = 0
        self.read_floors: dict[int, int] = {}  # call id -> the floor when the read was invoked
        self.calls = 0
        self.watches: dict[int, int] = {}  # call id -> when the watch was sent
        self.hint: RaftPeerId | None = None
        for p in self.initial:
            self._start(self.members[p])

    # ---- the event loop

    def _schedule(self, at: int, kind: str, *args: Any) -> None:
        self.counter += 1
        heapq.heappush(self.events, (at, self.counter, kind, args))

    def run(self) -> None:
        now = 0
        self._count(f"seeds ({self.push})")
        self._schedule(self.rng.randint(0, self.faults.fault_every_ms), "fault")
        self._schedule(self.rng.randint(0, self.faults.client_every_ms), "client")
        self._schedule(FAULT_MS, "heal")
        goal: bytes | None = None
        goal_at: int | None = None  # when every member applied the final write
        lost: tuple[RaftPeerId, int, int] | None = (
            None  # the leader cut off after the final write, term, when
        )
        while self.events:
            now, _, kind, args = heapq.heappop(self.events)
            if lost is not None and now > lost[2] + REELECTION_BOUND_MS:
                self._fail(
                    f"no leader: {REELECTION_BOUND_MS} ms after {lost[0]}, leader of term {lost[1]}, was cut "
                    f"off, the others connected elected nobody (roles: "
                    f"{[(str(m.peer), m.server and m.server.role.value) for m in self.members.values()]})"
                )
            if goal_at is None and not self.faulty and now > FAULT_MS + self._liveness_bound_ms():
                break
            self.clock.set(now)
            self.steps += 1
            if self.steps > MAX_STEPS:
                self._fail(f"a message storm: {MAX_STEPS} steps, {len(self.events)} events queued")
            if self.trace:
                print(f"{now:6d} {kind} {args}")
            getattr(self, f"_on_{kind}")(*args)
            if goal is None and not self.faulty:
                goal = b"final-%d" % self.seed
                self._schedule(now, "final", goal)
            if lost is not None:
                if any(
                    m.server is not None
                    and m.server.role is RaftPeerRole.LEADER
                    and m.server.current_term > lost[1]
                    for m in self.members.values()
                ):
                    return
            elif (
                goal is not None
                and goal in self.acked
                and all(self.members[p].applied_prefix >= self.acked[goal] for p in self._goal_members())
            ):
                goal_at = now if goal_at is None else goal_at
                lost = self._cut_off_leader(goal_at)
        members = self.members.values()
        self._fail(
            f"no progress: {self._liveness_bound_ms()} ms after the faults healed, request {goal!r} is not "
            f"applied by every member (applied: {[m.applied_prefix for m in members]}, "
            f"roles: {[(str(m.peer), m.server and m.server.role.value) for m in members]})"
        )

    def _liveness_bound_ms(self) -> int:
        """How long after the heal a leader must have taken the final write everywhere. A member that stepped
        down for a lost majority and has heard from no leader since may hold the only log the others can
        elect, and stands only after `raft.server.leaderelection.leader.step-down.wait-time` (as Ratis's)."""
        return LIVENESS_BOUND_MS + self.settings.leader_step_down_wait_ms

    def _cut_off_leader(self, goal_at: int) -> tuple[RaftPeerId, int, int] | None:
        """Liveness once more. Priorities: within `REELECTION_BOUND_MS` of the final write applied everywhere,
        a member of the highest priority in its configuration leads (a leader of lower priority hands over to
        it once it holds the whole log). Then, once every member of the leader's configuration has committed
        its whole log (so each has followed it, and holds the same log and configuration), the leader is cut
        off from the others, which must elect one of them within `REELECTION_BOUND_MS`, whatever the
        step-down wait (R11 defect 4: members that had stepped down from leading during the faults waited it
        out although they had followed a newer leader since). None until then (a later step tries again)."""
        leaders = [
            m.server
            for m in self.members.values()
            if m.server is not None and m.server.role is RaftPeerRole.LEADER
        ]
        late = self.clock.now_ms() > goal_at + REELECTION_BOUND_MS
        if not leaders:
            if late:
                self._fail(f"no leader {REELECTION_BOUND_MS} ms after the final write was applied everywhere")
            return None
        leader = max(leaders, key=lambda server: server.current_term)
        top = max(self.priorities[p] for p in leader.configuration)
        if self.priorities[leader.me] < top:
            if late:
                self._fail(
                    f"priorities: {REELECTION_BOUND_MS} ms after the final write was applied everywhere, "
                    f"{leader.me} (priority {self.priorities[leader.me]}) still leads term "
                    f"{leader.current_term} of {[(str(p), self.priorities[p]) for p in leader.configuration]}"
                )
            return None
        if any(commit != leader.log.last_index for _, commit in leader.commit_infos()):
            if late:
                self._fail(f"{leader.me}'s log is not committed on every member: {leader.commit_infos()}")
            return None
        self.side[leader.me] = 1
        self._count("leaders cut off after the heal")
        return leader.me, leader.current_term, self.clock.now_ms()

    def _goal_members(self) -> list[RaftPeerId]:
        """Who must apply the final write: the members when it committed that are members still (a removed
        one is no longer replicated to), as the most advanced server sees the configuration."""
        servers = [m.server for m in self.members.values() if m.server is not None]
        latest = max(servers, key=lambda s: (s.current_term, s.commit_index)).configuration
        return [p for p in self.goal_configuration if p in latest]

    def _count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def _fail(self, message: str) -> None:
        raise InvariantViolation(
            f"seed {self.seed} ({self.n} members), step {self.steps}, "
            f"t={self.clock.now_ms()} ms: {message}\n"
            f"replay: python -m tests.ratis_sim --seed {self.seed} --members {self.n} "
            f"--trace"
        )

    def _start(self, member: Member) -> None:
        disk = member.disk
        member.incarnation += 1
        member.started = True
        member.applied = list(disk.snapshot_state)  # the state machine loads its checkpoint
        member.applied_prefix = len(member.applied)
        member.done_ahead, member.applying = set(), {}
        member.seen_commit = disk.snapshot.index
        member.cache_horizon = disk.snapshot.index
        member.was_leader_term = 0
        member.tick_at = None
        member.leader_seen_ms, member.was_leading, member.no_leader_reported_ms = (
            self.clock.now_ms(),
            False,
            None,
        )
        member.server = RaftServer(
            member.peer,
            member.members_arg,
            self.settings,
            self.clock,
            random.Random(self.rng.random()),
            PersistentState(
                disk.term,
                disk.voted_for,
                disk.log_after_snapshot(),
                disk.snapshot,
                disk.snapshot_configuration,
            ),
            priorities=self.priorities,
        )
        self._after(member, [])

    def _on_tick(self, peer: RaftPeerId, token: int) -> None:
        member = self.members[peer]
        if member.server is None or token != member.tick_token:
            return
        member.tick_at = None
        self._after(member, member.server.tick())

    def _on_deliver(self, to: RaftPeerId, sender: RaftPeerId, message: Message) -> None:
        member = self.members[to]
        if member.server is None or self.side[to] != self.side[sender] or (sender, to) in self.cut:
            return
        server = member.server
        if isinstance(message, AppendEntriesReply | InstallSnapshotReply):
            self.heard[(to, sender)] = self.clock.now_ms()
        # An answer to the leader of its term: the follower is not silent (FollowerSlow).
        answer = (
            isinstance(message, AppendEntriesReply | InstallSnapshotReply)
            and server.role is RaftPeerRole.LEADER
            and message.term == server.current_term
        )
        try:
            outputs = server.receive(sender, message)
        except ValueError as refused:  # from a server outside the configuration (removed, or not yet added)
            if "not another member" not in str(refused):
                raise
            self._count("messages refused from non-members")
            return
        if answer:
            self.answered[(to, sender)] = self.clock.now_ms()
        if (
            isinstance(message, AppendEntriesRequest | InstallSnapshotRequest)
            and server.current_term == message.leader_term
            and server.leader_id == sender
        ):
            member.leader_seen_ms = self.clock.now_ms()  # it took a current leader's message (NoLeader)
        self._after(member, outputs)

    def _on_sync(self, peer: RaftPeerId, incarnation: int, seq: int) -> None:
        member = self.members[peer]
        if member.server is None or member.incarnation != incarnation:
            return
        self.counts["entries overwritten on disk"] = self.counts.get(
            "entries overwritten on disk", 0
        ) + member.disk.sync(seq)
        self._after(member, member.server.persisted(seq))

    def _on_client(self) -> None:
        if self.faulty:
            self._schedule(self.clock.now_ms() + self.rng.randint(1, self.faults.client_every_ms), "client")
        self.calls += 1
        action = self.rng.random()
        if action < 0.03:
            # An operator's tool retries and repeats: a burst of attempts within milliseconds, each as the
            # member it asks sees the configuration (a retry under the same call id now and then).
            at = self.clock.now_ms()
            for _ in range(self.rng.randint(1, 5)):
                self._schedule(at, "reconfigure", self.rng.random() < 0.3)
                at += self.rng.randint(0, max(5, self.faults.max_delay_ms))
        elif action < 0.05:
            self._transfer()
        elif action < 0.3:
            self._read()
        elif action < 0.4:
            self._watch()
        else:
            writer = self.rng.choice(self.writers)
            if any(call.client_id == writer for call in self.outstanding.values()):
                return  # a writer has one call at a time: it is still retrying its last
            data_size = self.rng.choice([0, 0, 8, 40, 100])  # state machine data beside the entry
            call = ClientCall(writer, self.calls, b"call-%d" % self.calls, data_size)
            self.outstanding[call.call_id] = call
            self._submit(call)
            self._schedule(self.clock.now_ms() + self.rng.randint(50, 300), "retry", call.call_id)

    def _on_retry(self, call_id: int) -> None:
        """The client has no answer (lost, refused, or the member failed): it retries the same call."""
        call = self.outstanding.get(call_id)
        if call is not None:
            self._count("retries")
            self._submit(call)
            self._schedule(self.clock.now_ms() + self.rng.randint(50, 300), "retry", call_id)

    def _on_final(self, payload: bytes) -> None:
        """After the heal a client writes once more and retries, following leader hints, until answered."""
        self.calls += 1
        call = ClientCall("final", self.calls, payload)
        self.outstanding[call.call_id] = call
        self._submit(call)
        self._schedule(self.clock.now_ms() + 50, "retry", call.call_id)

    def _target(self) -> Member:
        follow_hint = self.hint is not None and self.rng.random() < 0.8
        peer = self.hint if follow_hint and self.hint is not None else self.rng.choice(self.peers)
        return self.members[peer]

    def _submit(self, call: ClientCall) -> None:
        member = self._target()
        if member.server is not None:
            self._after(member, member.server.submit(call))

    def _transfer(self) -> None:
        """An operator hands leadership to another member (`pyozone admin om transfer` to come)."""
        member = self._target()
        if member.server is not None:
            others = [p for p in member.server.configuration if p != member.peer]
            if others:
                to = self.rng.choice(others)
                call = ClientCall("admin", self.calls, b"")
                self._after(member, member.server.transfer_leadership(call, to))

    def _on_reconfigure(self, retry: bool) -> None:
        """An operator adds the server outside the configuration (starting it if it never ran) or removes
        one, as the member it asks sees the configuration (`pyozone om --bootstrap` to come)."""
        if not retry:
            self.calls += 1
        member = self._target()
        if member.server is None:
            return
        configuration = member.server.configuration
        if len(configuration) > self.n:
            wanted = tuple(p for p in configuration if p != self.rng.choice(configuration))
        else:
            (added,) = [p for p in self.peers if p not in configuration]
            joining = self.members[added]
            if not joining.started:
                joining.members_arg = (*configuration, added)
                self._start(joining)
            wanted = (*configuration, added)
        self._after(member, member.server.set_configuration(ClientCall("admin", self.calls, b""), wanted))

    def _read(self, to_deposed: bool = False) -> None:
        """A read goes where the client thinks the leader is, or (`to_deposed`, and half the time anyway) to a
        leader deposed by a later term that does not know it yet (a client holding an old leader hint), which
        must not serve it."""
        member = self._target()
        if to_deposed or self.rng.random() < 0.5:
            latest = max(self.leaders, default=0)
            deposed = [
                m
                for m in self.members.values()
                if m.server is not None
                and m.server.role is RaftPeerRole.LEADER
                and m.server.current_term < latest
            ]
            if deposed:
                member = self.rng.choice(deposed)
                self._count("reads sent to a deposed leader")
            elif to_deposed:
                return
        if member.server is not None:
            self.read_floors[self.calls] = self.read_floor
            self._after(member, member.server.read(ClientCall("sim", self.calls, b"")))

    def _watch(self) -> None:
        """A client waits for an index (committed or not, perhaps past the log) to be committed on a majority
        or on every member, as a datanode client's watchForCommit."""
        member = self._target()
        if member.server is not None:
            call = ClientCall("watch", self.calls, b"")
            index = self.rng.randint(1, self.commit_high + 3)
            level = self.rng.choice(list(WatchLevel))
            self.watches[call.call_id] = self.clock.now_ms()
            self._after(member, member.server.watch(call, index, level, self.rng.choice([50, 300])))

    def _on_read_deposed(self) -> None:
        self.calls += 1
        self._read(to_deposed=True)

    def _on_fault(self) -> None:
        if not self.faulty:
            return
        self._schedule(self.clock.now_ms() + self.rng.randint(1, self.faults.fault_every_ms), "fault")
        peer = self.rng.choice([p for p in self.peers if self.members[p].started])
        member = self.members[peer]
        what = self.rng.choice(["crash", "restart", "partition", "cut-link", "heal-partition"])
        self._count(what)
        if what == "crash" and member.server is not None:
            member.server = None
            self.counts["unsynced writes lost"] = self.counts.get("unsynced writes lost", 0) + len(
                member.disk.unsynced
            )
            member.disk.unsynced.clear()
            member.incarnation += 1
        elif what == "restart" and member.server is None:
            self._start(member)
        elif what == "partition":
            self.side = {p: self.rng.randint(0, 1) for p in self.peers}
        elif what == "cut-link":
            self.cut.add((peer, self.rng.choice(self.peers)))
        elif what == "heal-partition":
            self.side = {p: 0 for p in self.peers}
            self.cut.clear()

    def _on_heal(self) -> None:
        self.faulty = False
        self.side = {p: 0 for p in self.peers}
        self.cut.clear()
        for member in self.members.values():
            if member.server is None and member.started:
                self._start(member)

    # ---- the shell: carry out a core's outputs

    def _after(self, member: Member, outputs: list[Output]) -> None:
        server = member.server
        assert server is not None
        announced: dict[int, ClientCall] = {}  # the calls this step's `Appended` named, by index
        for output in outputs:
            if isinstance(output, Send):
                if isinstance(output.message, AppendEntriesRequest):
                    self._check_append_size(output.message)
                self._send(member.peer, output)
            elif isinstance(output, Appended):
                announced[output.index] = output.call
            elif isinstance(output, Persist):
                self._check_persist(server, output)
                self._check_announced(server, output, announced)
                member.disk.unsynced.append(output)
                delay = self.rng.randint(1, self.faults.max_disk_ms) if self.faulty else 1
                self._schedule(
                    self.clock.now_ms() + delay, "sync", member.peer, member.incarnation, output.seq
                )
            elif isinstance(output, Apply):
                for entry in output.entries:
                    if not member.disk.holds(entry):
                        self._fail(f"{member.peer} applies {entry}, which its disk does not hold durably")
                    self._apply(member, entry)
                    member.applying[entry.index] = entry
                    if self.faults.max_apply_ms == 0:
                        self._complete(member, entry.index)
                    else:
                        at = self.clock.now_ms() + self.rng.randint(0, self.faults.max_apply_ms)
                        self._schedule(at, "complete", member.peer, member.incarnation, entry.index)
            elif isinstance(output, PurgeLog):
                self._count("log purges")
                member.disk.purge(output.up_to_index)
            elif isinstance(output, InstallSnapshot):
                self._count("snapshots to install")
                delay = self.rng.randint(1, 3 * self.faults.max_delay_ms)
                self._schedule(
                    self.clock.now_ms() + delay, "download", member.peer, member.incarnation, output.leader_id
                )
            elif isinstance(output, Reply):
                self._check_reply(output)
                if output.call.client_id == "final":
                    self.goal_configuration = server.log.configuration_at(output.index)
            elif isinstance(output, ConfigurationDone):
                self._count("configurations changed")
            elif isinstance(output, ConfigurationRefused):
                self._count("configuration changes refused")
            elif isinstance(output, ReadReady):
                self._check_read(member, output)
            elif isinstance(output, TransferDone):
                self._count("transfers done" if output.stepped_down else "transfers timed out")
            elif isinstance(output, TransferRefused):
                self._count("transfers refused")
            elif isinstance(output, WatchDone):
                self._check_watch(server, output)
            elif isinstance(output, WatchFailed):
                self._count(f"watches of {output.level.name} timed out")
            elif isinstance(output, NotLeader):
                self.hint = output.leader_hint
            elif isinstance(output, NoLeader):
                self._check_no_leader_notice(member, output)
            elif isinstance(output, FollowerSlow):
                self._check_slow_notice(member, output)
        self._check_roles(member)
        self._check_notices_due(member)
        deadline = max(server.deadline_ms() or 0, self.clock.now_ms())  # groups here have 3 or 5 members
        if member.tick_at is None or deadline < member.tick_at:
            member.tick_token += 1
            member.tick_at = deadline
            self._schedule(deadline, "tick", member.peer, member.tick_token)

    def _on_complete(self, peer: RaftPeerId, incarnation: int, index: int) -> None:
        member = self.members[peer]
        if member.server is not None and member.incarnation == incarnation and index in member.applying:
            self._complete(member, index)

    def _complete(self, member: Member, index: int) -> None:
        """The state machine finished applying `index` (perhaps before an earlier one): the core hears its
        result; the applied prefix must be the gap-free one; a checkpoint is taken as it passes a multiple of
        the snapshot interval."""
        assert member.server is not None
        entry = member.applying.pop(index)
        if index != member.applied_prefix + 1:
            self._count("applies completed out of order")
        before = member.applied_prefix
        member.done_ahead.add(index)
        while member.applied_prefix + 1 in member.done_ahead:
            member.applied_prefix += 1
            member.done_ahead.remove(member.applied_prefix)
        self._after(member, member.server.applied(index, self._result(entry)))
        if member.server.applied_index != member.applied_prefix:
            self._fail(
                f"{member.peer}'s core reports applied index {member.server.applied_index}, but its state "
                f"machine completed every apply through {member.applied_prefix} "
                f"(and {sorted(member.done_ahead)})"
            )
        every = self.faults.snapshot_every
        if every and member.applied_prefix // every > before // every:
            self._take_snapshot(member)

    @staticmethod
    def _result(entry: LogEntry) -> tuple[int, int, bytes]:
        """The state machine's answer for an entry names the entry: an answer given for another shows."""
        return (entry.index, entry.term, entry.payload)

    def _take_snapshot(self, member: Member) -> None:
        """The state machine checkpoints what it applied through its applied prefix (durably, at once), with
        the last configuration that holds, and tells the core."""
        assert member.server is not None
        state = tuple(member.applied[: member.applied_prefix])
        last = state[-1]
        member.disk.snapshot = TermIndex(last.term, last.index)
        member.disk.snapshot_state = state
        member.disk.snapshot_configuration = next(
            (e.peers for e in reversed(state) if e.kind is EntryKind.CONFIGURATION), self.initial
        )
        self._after(member, member.server.snapshot_taken(member.disk.snapshot))

    def _on_download(self, peer: RaftPeerId, incarnation: int, leader: RaftPeerId) -> None:
        """The state machine fetches the leader's latest checkpoint (OM downloads the leader's RocksDB
        checkpoint): it fails if the leader is down or out of reach; a checkpoint not ahead of what the state
        machine applied is not loaded."""
        member, source = self.members[peer], self.members[leader]
        if member.server is None or member.incarnation != incarnation:
            return  # the crash ended the download
        if source.server is None or self.side[peer] != self.side[leader] or (leader, peer) in self.cut:
            self._count("snapshot downloads failed")
            self._after(member, member.server.snapshot_installed(None))
            return
        # It finishes what it is applying first (the shell reports every earlier apply before the install).
        for index in self.rng.sample(sorted(member.applying), len(member.applying)):
            if member.server is not None and index in member.applying:
                self._complete(member, index)
        disk = source.disk
        snapshot, state, configuration = disk.snapshot, disk.snapshot_state, disk.snapshot_configuration
        if snapshot.index > member.applied_prefix:
            self._count("snapshots installed")
            member.applied = list(state)
            member.applied_prefix = len(state)
            member.disk.snapshot, member.disk.snapshot_state = snapshot, state
            member.disk.snapshot_configuration = configuration
            member.seen_commit = max(member.seen_commit, snapshot.index)
            member.cache_horizon = max(member.cache_horizon, snapshot.index)
        self._after(member, member.server.snapshot_installed(snapshot, configuration))

    def _send(self, sender: RaftPeerId, send: Send) -> None:
        self._count(f"messages sent ({self.push})")
        copies = 1
        if self.faulty:
            if self.rng.random() < self.faults.loss:
                self._count("lost")
                return
            if self.rng.random() < self.faults.duplicate:
                self._count("duplicated")
                copies = 2
        for _ in range(copies):
            delay = self.rng.randint(1, self.faults.max_delay_ms if self.faulty else 5)
            self._schedule(self.clock.now_ms() + delay, "deliver", send.to, sender, send.message)

    def _apply(self, member: Member, entry: LogEntry) -> None:
        if entry.index != len(member.applied) + 1:
            self._fail(f"{member.peer} applies index {entry.index} after {len(member.applied)}")
        member.applied.append(entry)
        known = self.applied.setdefault(entry.index, entry)
        if known != entry:
            self._fail(f"state machine safety: {member.peer} applies {entry} where {known} was applied")
        if entry.kind is EntryKind.STATE_MACHINE and not entry.client_id:
            first = self.call_applied_at.setdefault(("", entry.call_id), entry.index)
            if first != entry.index and entry.index not in self.resent_at:
                self.resent_at.add(entry.index)  # counted once per index, not per member applying it
                self._count("calls without a client id appended again")
        elif entry.client_id:
            first = self.call_applied_at.setdefault((entry.client_id, entry.call_id), entry.index)
            if first != entry.index:
                # The one hole the retry cache leaves (as Ratis's): a leader that restarted from, or
                # installed, a snapshot covering the first never saw it applied.
                if first > self.leader_horizon.get(entry.term, 0):
                    self._fail(
                        f"call {entry.client_id}/{entry.call_id} applied twice: at {first} and {entry.index}"
                    )
                self._count("calls applied again after a snapshot hid them")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--members", type=int, default=3)
    parser.add_argument("--trace", action="store_true", help="print every event")
    args = parser.parse_args()
    sim = Simulation(args.seed, args.members, trace=args.trace)
    sim.run()
    print(
        f"seed {args.seed}: {sim.steps} steps, {len(sim.acked)} requests acknowledged, "
        f"{len(sim.leaders)} terms with a leader, {sim.counts}: all invariants hold"
    )


if __name__ == "__main__":
    sys.exit(main())
