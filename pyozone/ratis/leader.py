"""The leader's view of its followers and of the commit index (Ratis's LeaderStateImpl and FollowerInfo;
Figure 2's nextIndex/matchIndex and the commit rule of section 5.4.2 / Figure 8).

Appends are batched (up to `raft.server.log.appender.buffer.byte-limit` bytes per append, each entry counted
at the cost the shell gives: its wire bytes) and pipelined: the leader moves `next_index` past what it sent
without waiting for the answer, up to `raft.grpc.server.leader.outstanding.appends.max` appends in flight per
follower, as Ratis's GrpcLogAppender.
A lost append shows up as an INCONSISTENCY answer to a later one (or to a heartbeat), which resets the
follower's pipeline to the index the follower names. Only an answer to an append sent since the last reset
may reset it again: the other appends of a broken pipeline fail too, and if each of their answers restarted
the pipeline, every reset would send a pipeline's worth of appends that fail in turn (the simulation found
this storm).

A follower whose `next_index` falls below the leader's first log index (the entries it needs were purged
after a snapshot) gets an InstallSnapshotRequest notification instead, once per heartbeat interval, until it
answers that its own snapshot reaches the leader's log (Ratis's LogAppender.shouldInstallSnapshot).

The leader also checks that it still leads (Ratis's LeaderStateImpl.checkLeadership, "CheckQuorum"): once it
has led for `raft.server.rpc.timeout.max`, a majority (itself counted) must have answered within that long,
or it steps down (StepDownReason LOST_MAJORITY_HEARTBEATS): a leader cut off from the majority must not hold
its clients' requests and reads forever (the thesis, section 6.2).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from pyozone.ratis.log import RaftLog
from pyozone.ratis.messages import (
    AppendEntriesRequest,
    InstallSnapshotRequest,
    LogEntry,
    RaftPeerId,
    TermIndex,
)
from pyozone.ratis.settings import RaftSettings


@dataclass
class FollowerInfo:
    """What the leader knows of one follower (Ratis's FollowerInfo)."""

    next_index: int
    match_index: int = 0
    last_sent_ms: int | None = None
    in_flight: deque[int] = field(default_factory=deque)  # the last index of each append not yet answered
    next_call_id: int = 0
    pipeline_call_id: int = 0  # the first call of the pipeline since its last reset
    last_response_ms: int | None = None  # when it last answered us (FollowerInfo.lastRpcResponseTime)
    commit_index: int = 0  # its commit index, as its last answers said (FollowerInfo.commitIndex)
    sent_commit: int = 0  # the highest commit index we wrote to it


class LeaderState:
    def __init__(
        self,
        me: RaftPeerId,
        term: int,
        followers: tuple[RaftPeerId, ...],
        log: RaftLog,
        settings: RaftSettings,
        now_ms: int,
    ) -> None:
        self._me = me
        self._term = term
        self._log = log
        self._settings = settings
        self._since_ms = now_ms
        self.followers = {peer: FollowerInfo(next_index=log.last_index + 1) for peer in followers}
        # For raft.server.rpc.slowness.timeout: each peer's last answer while we lead (kept if it is dropped
        # and added again), and those reported slow since.
        self._answered: dict[RaftPeerId, int] = {}
        self._slow_reported: set[RaftPeerId] = set()

    def appends(
        self, now_ms: int, leader_commit: int, heartbeat_all: bool = False
    ) -> list[tuple[RaftPeerId, AppendEntriesRequest | InstallSnapshotRequest]]:
        """The appends due now: new entries to every follower with room in its pipeline, and a heartbeat to
        every follower not written to for a heartbeat interval (to all of them with `heartbeat_all`, as a
        read confirms leadership); a snapshot notification instead to a follower that needs purged entries.
        With `push_commit`, also a heartbeat to a follower with nothing in flight that was never sent the
        commit index and does not report it (once per commit index: a lost one waits for the next heartbeat,
        and a follower that does not answer gets none while its appends are in flight)."""
        due: list[tuple[RaftPeerId, AppendEntriesRequest | InstallSnapshotRequest]] = []
        for peer, info in self.followers.items():
            heartbeat_due = (
                heartbeat_all
                or info.last_sent_ms is None
                or now_ms - info.last_sent_ms >= self._settings.heartbeat_interval_ms
            )
            if info.next_index < self._log.first_index:
                if heartbeat_due:
                    due.append((peer, self._notification(info)))
                    info.last_sent_ms = now_ms
                continue
            sent = False
            limit = self._settings.outstanding_appends_max
            while info.next_index <= self._log.last_index and len(info.in_flight) < limit:
                entries = self._log.entries_from(
                    info.next_index, self._settings.append_byte_limit, self._settings.append_element_limit
                )
                due.append((peer, self._request(info, entries, leader_commit)))
                info.next_index += len(entries)
                info.in_flight.append(info.next_index - 1)
                sent = True
            push = (
                self._settings.push_commit
                and not info.in_flight
                and info.commit_index < leader_commit
                and info.sent_commit < leader_commit
            )
            if not sent and (heartbeat_due or push):
                due.append((peer, self._request(info, (), leader_commit)))
                sent = True
            if sent:
                info.last_sent_ms = now_ms
                info.sent_commit = max(info.sent_commit, leader_commit)
        return due

    def next_call_ids(self) -> dict[RaftPeerId, int]:
        """The call id each follower's next append will carry."""
        return {peer: info.next_call_id + 1 for peer, info in self.followers.items()}

    def next_heartbeat_ms(self) -> int | None:
        return min(
            (
                (info.last_sent_ms or 0) + self._settings.heartbeat_interval_ms
                for info in self.followers.values()
            ),
            default=None,
        )

    def _notification(self, info: FollowerInfo) -> InstallSnapshotRequest:
        first = self._log.first_index
        first_term = self._log.term_at(first)
        info.next_call_id += 1
        return InstallSnapshotRequest(
            self._me,
            self._term,
            TermIndex(self._term if first_term is None else first_term, first),
            info.next_call_id,
        )

    def _request(
        self, info: FollowerInfo, entries: tuple[LogEntry, ...], leader_commit: int
    ) -> AppendEntriesRequest:
        previous = info.next_index - 1
        term = self._log.term_at(previous)
        assert term is not None
        info.next_call_id += 1
        return AppendEntriesRequest(
            self._me, self._term, previous, term, entries, leader_commit, info.next_call_id
        )

    def add_follower(self, peer: RaftPeerId) -> None:
        """Replicate to `peer` from now on (a new member catching up as a learner, Ratis's staging)."""
        self.followers.setdefault(peer, FollowerInfo(self._log.last_index + 1))

    def drop_followers(self, keep: tuple[RaftPeerId, ...]) -> None:
        """Stop replicating to those no longer members (once their removal committed)."""
        self.followers = {peer: info for peer, info in self.followers.items() if peer in keep}

    def on_response(self, peer: RaftPeerId, now_ms: int) -> None:
        self.followers[peer].last_response_ms = self._answered[peer] = now_ms
        self._slow_reported.discard(peer)

    def slow_followers(self, now_ms: int) -> list[tuple[RaftPeerId, int]]:
        """Followers silent for `raft.server.rpc.slowness.timeout` (since their last answer, or since we began
        to lead) not yet reported, with how long (Ratis's LeaderStateImpl.checkHealth); each is reported once
        per silence. None with the timeout 0 (off)."""
        slow = []
        for peer in self.followers:
            last = self._answered.get(peer, self._since_ms)
            due = self._settings.slow_at_ms(last)
            if due is not None and peer not in self._slow_reported and now_ms >= due:
                self._slow_reported.add(peer)
                slow.append((peer, now_ms - last))
        return slow

    def next_slowness_ms(self) -> int | None:
        """When the next follower not yet reported becomes slow, if none answers first."""
        due = [
            self._settings.slow_at_ms(self._answered.get(peer, self._since_ms))
            for peer in self.followers
            if peer not in self._slow_reported
        ]
        return min((at for at in due if at is not None), default=None)

    def has_majority_contact(self, now_ms: int, voters: tuple[RaftPeerId, ...]) -> bool:
        """Ratis's checkLeadership: false once we have led for `raft.server.rpc.timeout.max` and fewer than a
        majority of `voters` (us counted, if we are one) answered within that long. Only answers count: Ratis
        starts each FollowerInfo as if it had just answered, which would count a follower that never did."""
        if now_ms - self._since_ms < self._settings.rpc_timeout_max_ms:
            return True
        return len(self.answering(now_ms, voters)) > len(voters) // 2

    def answering(self, now_ms: int, voters: tuple[RaftPeerId, ...]) -> tuple[RaftPeerId, ...]:
        """Those of `voters` that answered within `raft.server.rpc.timeout.max`, with us if we are one."""
        window = self._settings.rpc_timeout_max_ms
        active = []
        for peer in voters:
            answered = self.followers[peer].last_response_ms if peer in self.followers else None
            if peer == self._me or (answered is not None and now_ms - answered <= window):
                active.append(peer)
        return tuple(active)

    def on_snapshot_installed(self, peer: RaftPeerId, snapshot_index: int) -> None:
        """The follower's log matches ours up to its snapshot (what it covers or the follower committed):
        resume appends after it."""
        info = self.followers[peer]
        info.pipeline_call_id = info.next_call_id + 1
        info.in_flight.clear()
        info.match_index = max(info.match_index, snapshot_index)
        info.commit_index = max(info.commit_index, snapshot_index)
        info.next_index = max(info.match_index + 1, min(info.next_index, self._log.last_index + 1))

    def on_success(self, peer: RaftPeerId, match_index: int, follower_commit: int) -> None:
        info = self.followers[peer]
        info.match_index = max(info.match_index, match_index)
        info.commit_index = max(info.commit_index, follower_commit)
        info.next_index = max(info.next_index, info.match_index + 1)
        while info.in_flight and info.in_flight[0] <= info.match_index:
            info.in_flight.popleft()

    def on_inconsistency(self, peer: RaftPeerId, next_index: int, call_id: int) -> None:
        """The follower's log does not hold our previous entry: drop the pipeline and resume where it says
        (never below what it already matched, never past our log), unless the answer is to an append of a
        pipeline already dropped."""
        info = self.followers[peer]
        if call_id < info.pipeline_call_id:
            return
        info.pipeline_call_id = info.next_call_id + 1
        info.in_flight.clear()
        info.next_index = min(max(next_index, info.match_index + 1), self._log.last_index + 1)
        if info.next_index < self._log.first_index:
            info.last_sent_ms = None  # notify it at once

    def commit_index(self, own_match: int, commit_index: int, voters: tuple[RaftPeerId, ...]) -> int:
        """The highest index stored by a majority of `voters` (the configuration in force; the leader counts
        `own_match`, what its own disk holds, if it is one) and by the leader's own disk (Ratis's
        RaftLogBase.updateCommitIndex: min(majority index, flush index); a majority of followers may hold an
        entry before the leader's write of it is durable), committed only if it is of the leader's own
        term: an older term's entry is committed only through a later entry of the current term (Figure 8)."""
        matches = sorted(
            (own_match if peer == self._me else self.followers[peer].match_index for peer in voters),
            reverse=True,
        )
        candidate = min(matches[len(matches) // 2], own_match)
        if candidate > commit_index and self._log.term_at(candidate) == self._term:
            return candidate
        return commit_index
