"""The invariants `tests/ratis_sim.py` checks as it carries out each step's outputs (the Raft paper's Figure 3
and more): log matching, election safety, leader completeness, state machine safety and the rest its
docstring lists. Mixed into `Simulation`, whose records (what was committed, applied, acknowledged, heard)
they read and extend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyozone.ratis.messages import (
    AppendEntriesRequest,
    ClientCall,
    EntryKind,
    LogEntry,
    RaftPeerId,
    WatchLevel,
)
from pyozone.ratis.outputs import FollowerSlow, NoLeader, Persist, ReadReady, Reply, WatchDone
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.server import RaftServer
from pyozone.ratis.settings import RaftSettings

if TYPE_CHECKING:
    import random

    from pyozone.hdds.clock import ManualClock
    from tests.ratis_sim import Member


class InvariantViolation(AssertionError):
    pass


class Invariants:
    """The checks; `Simulation` mixes them in."""

    # The simulation's, read and extended here.
    rng: random.Random
    clock: ManualClock
    settings: RaftSettings
    members: dict[RaftPeerId, Member]
    leaders: dict[int, RaftPeerId]
    entries_seen: dict[tuple[int, int], tuple[bytes, EntryKind, int | None]]
    committed: dict[int, tuple[LogEntry, int]]
    commit_high: int
    applied: dict[int, LogEntry]
    acked: dict[bytes, int]
    outstanding: dict[int, ClientCall]
    heard: dict[tuple[RaftPeerId, RaftPeerId], int]
    answered: dict[tuple[RaftPeerId, RaftPeerId], int]
    leader_horizon: dict[int, int]
    read_floor: int
    read_floors: dict[int, int]
    watches: dict[int, int]
    counts: dict[str, int]
    push: str

    if TYPE_CHECKING:

        def _fail(self, message: str) -> None: ...

        def _count(self, what: str) -> None: ...

        def _schedule(self, at: int, kind: str, *args: Any) -> None: ...

        @staticmethod
        def _result(entry: LogEntry) -> tuple[int, int, bytes]: ...

    def _check_persist(self, server: RaftServer, persist: Persist) -> None:
        """Log matching: any two entries with one index and term hold one payload and follow the same term
        (so, by induction, the same prefix). Each entry enters a log through a Persist: all are seen."""
        for entry in persist.entries:
            fact = (entry.payload, entry.kind, server.log.term_at(entry.index - 1))
            known = self.entries_seen.setdefault((entry.index, entry.term), fact)
            if known != fact:
                self._fail(
                    f"log matching: {server.me} holds {entry} after term {fact[2]}, another log holds "
                    f"{known[0]!r} after term {known[2]} at that index and term"
                )

    def _check_append_size(self, append: AppendEntriesRequest) -> None:
        """An append holds more than one entry only within the byte limit, each entry counted with its state
        machine data, and within the element limit."""
        size = sum(len(e.payload) + e.data_size for e in append.entries)
        limit = self.settings.append_element_limit
        if len(append.entries) > 1 and (
            size > self.settings.append_byte_limit or (limit and len(append.entries) > limit)
        ):
            self._fail(f"an append of {len(append.entries)} entries, {size} bytes with their data: too big")

    def _check_announced(
        self, server: RaftServer, persist: Persist, announced: dict[int, ClientCall]
    ) -> None:
        """A leader announces each call it appends (`Appended`, with its index) before the entry's write, and
        the entry carries the call and its state machine data."""
        for entry in persist.entries:
            call = announced.pop(entry.index, None)
            if call is not None and (call.client_id, call.call_id, call.payload, call.data_size) != (
                entry.client_id,
                entry.call_id,
                entry.payload,
                entry.data_size,
            ):
                self._fail(f"{server.me} announced {call} at {entry.index} but writes {entry}")
            if (
                call is None
                and server.role is RaftPeerRole.LEADER
                and entry.term == server.current_term
                and entry.kind is EntryKind.STATE_MACHINE
            ):
                self._fail(f"{server.me} writes {entry} of its own term without announcing its call")
        if announced:
            self._fail(f"{server.me} announced calls at {sorted(announced)} that its next write lacks")

    def _check_reply(self, reply: Reply) -> None:
        applied = self.applied.get(reply.index)
        if applied is None or (applied.client_id, applied.call_id, applied.payload) != (
            reply.call.client_id,
            reply.call.call_id,
            reply.call.payload,
        ):
            self._fail(f"acknowledged {reply.call} at index {reply.index}, where {applied} was applied")
        if reply.result != self._result(applied):
            self._fail(f"answered {reply.call} with {reply.result}: not the result of {applied}")
        self.acked[reply.call.payload] = reply.index
        self.outstanding.pop(reply.call.call_id, None)
        self.read_floor = max(self.read_floor, reply.index)

    def _check_read(self, member: Member, ready: ReadReady) -> None:
        """Linearizable reads: a read served from `member`'s state machine sees every write acknowledged, and
        everything any read saw, before the read was invoked."""
        seen = member.applied_prefix
        floor = self.read_floors.pop(ready.call.call_id)
        if seen < ready.read_index or seen < floor:
            self._fail(
                f"stale read: {member.peer} serves read {ready.call.call_id} at applied index {seen} "
                f"(read index {ready.read_index}), though {floor} was acknowledged or read before"
            )
        self.read_floor = max(self.read_floor, seen)
        self._count("reads served")

    def _check_watch(self, leader: RaftServer, done: WatchDone) -> None:
        """A watch is done only when its index is committed, and durable on every member (ALL) or on a
        majority (MAJORITY) of the configuration its infos name: the leader's as the watch ended (its
        configuration may change later in the same step, by one member)."""
        entry = self.committed.get(done.index, (None, 0))[0]
        if entry is None:
            self._fail(
                f"{leader.me} ends a watch of {done.level.name} at {done.index}, which is not committed"
            )
        members = [peer for peer, _ in done.infos]
        if len(set(members) ^ set(leader.configuration)) > 1:
            self._fail(f"{leader.me}'s watch names {members}, not its configuration {leader.configuration}")
        holders = [p for p in members if self.members[p].disk.holds(entry)]
        needed = len(members) if done.level is WatchLevel.ALL else len(members) // 2 + 1
        if len(holders) < needed:
            self._fail(
                f"{leader.me} ends a watch of {done.level.name} at {done.index} (infos {done.infos}), but "
                f"only {[str(h) for h in holders]} hold it durably"
            )
        waited = self.clock.now_ms() - self.watches[done.call.call_id]
        self._count(f"watches of {done.level.name} done ({self.push})")
        self.counts[f"ms waited for watches of {done.level.name} ({self.push})"] = (
            self.counts.get(f"ms waited for watches of {done.level.name} ({self.push})", 0) + waited
        )

    def _check_roles(self, member: Member) -> None:
        server = member.server
        assert server is not None
        if server.role is RaftPeerRole.LEADER and member.was_leader_term != server.current_term:
            member.was_leader_term = server.current_term
            member.leader_since_ms = self.clock.now_ms()
            self.leader_horizon[server.current_term] = member.cache_horizon
            other = self.leaders.setdefault(server.current_term, member.peer)
            if other != member.peer:
                self._fail(f"election safety: {member.peer} and {other} both lead term {server.current_term}")
            for _ in range(self.rng.randint(0, 3)):  # clients still reading from the leader it deposed
                self._schedule(self.clock.now_ms() + self.rng.randint(10, 300), "read_deposed")
            for index, (entry, term) in self.committed.items():
                if term < server.current_term:
                    self._check_holds(server, index, entry, term)
        if server.commit_index > member.seen_commit and server.role is RaftPeerRole.LEADER:
            entry = server.log.entry(server.commit_index)
            voters = server.configuration
            holders = [p for p in voters if self.members[p].disk.holds(entry)]
            if len(holders) <= len(voters) // 2:
                self._fail(
                    f"{server.me} commits {entry.index} held durably by {[str(h) for h in holders]} only, "
                    f"not a majority of {[str(v) for v in voters]}"
                )
        if server.commit_index > member.seen_commit:
            for index in range(
                max(member.seen_commit, server.log.snapshot.index) + 1, server.commit_index + 1
            ):
                entry = server.log.entry(index)
                self.commit_high = max(self.commit_high, index)
                known, _ = self.committed.setdefault(index, (entry, server.current_term))
                if known != entry:
                    self._fail(f"{server.me} commits {entry} where {known} was committed")
                for other in self.members.values():
                    leader = other.server
                    if (
                        leader is not None
                        and leader.role is RaftPeerRole.LEADER
                        and leader.current_term > self.committed[index][1]
                    ):
                        self._check_holds(leader, index, entry, self.committed[index][1])
            member.seen_commit = server.commit_index
        if server.role is RaftPeerRole.LEADER:
            self._check_leader_contact(member)
            self._check_one_change(server)

    def _follower_silent_since(self, member: Member, peer: RaftPeerId) -> int:
        return max(member.leader_since_ms, self.answered.get((member.peer, peer), member.leader_since_ms))

    def _check_no_leader_notice(self, member: Member, notice: NoLeader) -> None:
        """`NoLeader` never while a leader reached the member (or it led) within the timeout, and it names
        when that last happened."""
        now, timeout = self.clock.now_ms(), self.settings.no_leader_timeout_ms
        if not timeout or now - member.leader_seen_ms < timeout or notice.since_ms != member.leader_seen_ms:
            self._fail(
                f"{member.peer} reports no leader since {notice.since_ms} ms, but had one at "
                f"{member.leader_seen_ms} ms (raft.server.notification.no-leader.timeout {timeout} ms)"
            )
        member.no_leader_reported_ms = now
        self._count("no-leader notices")

    def _check_slow_notice(self, member: Member, notice: FollowerSlow) -> None:
        """`FollowerSlow(p)` only from a leader not answered by p within the timeout, naming how long."""
        now, timeout = self.clock.now_ms(), self.settings.rpc_slowness_timeout_ms
        since = self._follower_silent_since(member, notice.peer)
        if (
            member.server is None
            or member.server.role is not RaftPeerRole.LEADER
            or not timeout
            or now - since < timeout
            or notice.silent_ms != now - since
        ):
            self._fail(
                f"{member.peer} reports {notice.peer} silent for {notice.silent_ms} ms, but heard from it at "
                f"{since} ms (raft.server.rpc.slowness.timeout {timeout} ms)"
            )
        member.slow_reported_ms[notice.peer] = now
        self._count("follower-slow notices")

    def _check_notices_due(self, member: Member) -> None:
        """Each notification is given once its condition held for its timeout: a member without a leader (and
        not leading) reports it; a leader reports each member of its configuration it has not heard from."""
        server = member.server
        assert server is not None
        now = self.clock.now_ms()
        leading = server.role is RaftPeerRole.LEADER
        if leading or member.was_leading:
            member.leader_seen_ms = now
        member.was_leading = leading
        timeout = self.settings.no_leader_timeout_ms
        reported = member.no_leader_reported_ms
        if (
            timeout
            and now - member.leader_seen_ms > timeout
            and (reported is None or reported < member.leader_seen_ms)
        ):
            self._fail(
                f"{member.peer} has had no leader since {member.leader_seen_ms} ms and did not report it"
            )
        timeout = self.settings.rpc_slowness_timeout_ms
        if not leading or not timeout:
            return
        for peer in server.configuration:
            since = self._follower_silent_since(member, peer)
            if (
                peer != member.peer
                and now - since > timeout
                and member.slow_reported_ms.get(peer, -1) < since
            ):
                self._fail(f"{member.peer} has not heard from {peer} since {since} ms and did not report it")

    def _check_one_change(self, leader: RaftServer) -> None:
        """One change at a time, directly: the configuration a leader decides with differs by at most one
        member from the last configuration committed (as its log holds it), so any two configurations in
        force at once have overlapping majorities (the thesis, section 4.1)."""
        high = min(self.commit_high, leader.log.last_index)
        if high > leader.log.snapshot.index and (
            high not in self.committed or leader.log.entry(high) != self.committed[high][0]
        ):
            return  # a leader of an older term, its log diverged: it can no longer commit
        committed = leader.log.configuration_at(high)
        if len(set(committed) ^ set(leader.configuration)) > 1:
            self._fail(
                f"two changes at once: {leader.me} decides with {[str(p) for p in leader.configuration]} "
                f"while {[str(p) for p in committed]} is the last configuration committed"
            )

    def _check_leader_contact(self, member: Member) -> None:
        """CheckQuorum: a leader that has heard from no majority for the window (Ratis's checkLeadership runs
        at each heartbeat tick) has stepped down."""
        now = self.clock.now_ms()
        window = self.settings.rpc_timeout_max_ms + self.settings.heartbeat_interval_ms + 1
        if now - member.leader_since_ms <= window:
            return
        assert member.server is not None
        voters = member.server.configuration
        heard = sum(
            1 for p in voters if p == member.peer or now - self.heard.get((member.peer, p), -window) <= window
        )
        if heard <= len(voters) // 2:
            self._fail(f"{member.peer} still leads term {member.was_leader_term}, having heard from {heard}")

    def _check_holds(self, leader: RaftServer, index: int, entry: LogEntry, term: int) -> None:
        """Leader completeness: a leader of a later term holds every entry committed before."""
        if index <= leader.log.snapshot.index:
            return  # in its state machine's snapshot: checked as it was applied
        if leader.log.term_at(index) is None or leader.log.entry(index) != entry:
            self._fail(
                f"leader completeness: {leader.me}, leader of term {leader.current_term}, lacks "
                f"{entry} committed in term {term}"
            )
