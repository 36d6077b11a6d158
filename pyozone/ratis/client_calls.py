"""A member's client calls, sans-IO (the part of Ratis's RaftServerImpl that answers RaftClientRequests):
writes (`submit`: appended by the leader, answered once applied, never appended twice for one client and call
id: the retry cache), linearizable reads (`read`: ReadIndex, `read_index.py`), watches (`watch`: an index
committed on a majority or on every member, `watches.py`), and the state machine's results that answer them
(`applied`, in any order, with the gap-free applied prefix). Mixed into `server.RaftServer`, which owns
elections, replication, commit, snapshots and membership, and whose state these read (the leader's view of
its followers, the log, the commit index); the state they own is set up by `_init_client_calls`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyozone.ratis.messages import ClientCall, CommitInfos, LogEntry, RaftPeerId, WatchLevel
from pyozone.ratis.outputs import Appended, NotLeader, Output, ReadReady, Reply, WatchDone, WatchFailed
from pyozone.ratis.read_index import ReadIndexReads
from pyozone.ratis.retry_cache import RetryCache
from pyozone.ratis.settings import RaftSettings
from pyozone.ratis.watches import PendingWatches, Watch

if TYPE_CHECKING:
    from pyozone.hdds.clock import Clock
    from pyozone.ratis.leader import LeaderState
    from pyozone.ratis.log import RaftLog
    from pyozone.ratis.server import _Transfer


class ClientCalls:
    """A member's client calls and their answers; `RaftServer` mixes it in and calls `_init_client_calls`."""

    # The member's (`RaftServer`), read here.
    me: RaftPeerId
    log: RaftLog
    current_term: int
    commit_index: int
    leader_id: RaftPeerId | None
    _settings: RaftSettings
    _clock: Clock
    _leader: LeaderState | None
    _transfer: _Transfer | None
    _out: list[Output]

    if TYPE_CHECKING:

        def _append_as_leader(self, entry: LogEntry) -> None: ...

        def _send_appends(self, heartbeat_all: bool = False) -> None: ...

        def _drain(self) -> list[Output]: ...

    def _init_client_calls(self, me: RaftPeerId, settings: RaftSettings, applied_index: int) -> None:
        """The state machine starts from its snapshot: it applied every index up to `applied_index`."""
        self._applied_index = applied_index  # the state machine applied every index up to here
        self._applied_ahead: set[int] = set()  # and these after it (applied out of order)
        self._pending_calls: dict[int, list[ClientCall]] = {}  # by the index of their entry
        self._retry_cache = RetryCache(settings.retry_cache_expiry_ms)
        self._reads = ReadIndexReads(me)
        self._watches = PendingWatches(settings.watch_element_limit)  # a leader's watches not yet done

    @property
    def applied_index(self) -> int:
        """The state machine applied every index up to here (Ratis's lastAppliedIndex): the gap-free prefix
        of what it reported `applied`."""
        return self._applied_index

    def commit_infos(self) -> CommitInfos:
        """Each member's commit index, as this member knows it (Ratis's commitInfos): a leader knows its
        followers' from their answers; another member knows only its own."""
        if self._leader is None:
            return ((self.me, self.commit_index),)
        followers = self._leader.followers
        infos = []
        for peer in self.log.configuration:
            info = followers.get(peer)
            known = self.commit_index if peer == self.me else info.commit_index if info is not None else 0
            infos.append((peer, known))
        return tuple(infos)

    def submit(self, call: ClientCall) -> list[Output]:
        """A client's write: a leader appends it and answers once it is applied; others refuse with the
        leader they know of (Ratis's NotLeaderException). A retried call (same client and call id) is never
        appended twice: if applied, it is answered from the retry cache with the original result; if still
        in the log, it waits for that entry. A call without a client id ("") bypasses the cache: each
        submission is appended (its operation must be idempotent). The leader outputs `Appended` before the
        entry's `Persist`, so the shell files the call's state machine data under its index first. A negative
        `data_size` is the caller's bug, refused with ValueError before anything changes: followers would
        refuse every append carrying the entry (`validation.validate`), and the group would stall for good."""
        if call.data_size < 0:
            raise ValueError(f"call {call.client_id}:{call.call_id} has {call.data_size} bytes of data")
        if self._transfer is not None:  # a leader handing over takes no writes: try its successor
            self._out.append(NotLeader(call, self._transfer.target))
            return self._drain()
        if self._leader is None:
            self._out.append(NotLeader(call, self.leader_id))
            return self._drain()
        if call.client_id:
            cached = self._retry_cache.get(call.client_id, call.call_id, self._clock.now_ms())
            if cached is not None:
                self._out.append(Reply(call, cached.index, cached.result))
                return self._drain()
            index = self.log.index_of_call(call.client_id, call.call_id)
            if index is not None and not self._is_applied(index):
                self._pending_calls.setdefault(index, []).append(call)
                return self._drain()
        entry = LogEntry(
            self.current_term,
            self.log.last_index + 1,
            call.payload,
            client_id=call.client_id,
            call_id=call.call_id,
            data_size=call.data_size,
        )
        self._pending_calls[entry.index] = [call]
        self._out.append(Appended(call, entry.index))
        self._append_as_leader(entry)
        return self._drain()

    def watch(self, call: ClientCall, index: int, level: WatchLevel, timeout_ms: int) -> list[Output]:
        """A client waits until `index` is committed on a majority of the members or on all of them, as their
        commit indexes reach the leader (Ratis's WatchRequest; Ozone's XceiverClientRatis.watchForCommit with
        ALL_COMMITTED): `WatchDone` with each member's commit index, `WatchFailed` after `timeout_ms`
        (NotReplicatedException), `NotLeader` from a member that does not lead or steps down. A member commits
        only what its disk holds, so ALL means the entry (and what its shell wrote beside it) is durable on
        every member. A malformed watch (a level not a `WatchLevel`, an index not a non-negative int, a
        timeout not a positive int) is refused with ValueError before anything changes. One that must wait
        while `raft.server.watch.element-limit` watches of its level wait fails at once (Ratis's
        ResourceUnavailableException)."""
        if not isinstance(level, WatchLevel):
            raise ValueError(f"watch level {level!r}: not one of {[str(w) for w in WatchLevel]}")
        for name, value, least in (("index", index, 0), ("timeout (ms)", timeout_ms, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"watch {name} {value!r}: must be an int of at least {least}")
        if self._leader is None:
            self._out.append(NotLeader(call, self.leader_id))
            return self._drain()
        if index <= self._watched_index(level):
            self._out.append(WatchDone(call, index, level, self.commit_infos()))
        elif self._watches.full(level):
            why = (
                f"ResourceUnavailableException: {self._settings.watch_element_limit} watches of "
                f"{level.value} already wait (raft.server.watch.element-limit)"
            )
            self._out.append(WatchFailed(call, index, level, self.commit_infos(), why))
        else:
            self._watches.add(Watch(call, index, level, self._clock.now_ms() + timeout_ms, timeout_ms))
        return self._drain()

    def _watched_index(self, level: WatchLevel) -> int:
        """The highest index committed on a majority of the members (MAJORITY) or on every one (ALL)
        (Ratis's LeaderStateImpl.commitIndexChanged: getMajorityMin of the commit indexes)."""
        commits = sorted((commit for _, commit in self.commit_infos()), reverse=True)
        if not commits:
            return 0
        return commits[len(commits) // 2] if level is WatchLevel.MAJORITY else commits[-1]

    def _check_watches(self) -> None:
        if not self._watches:
            return
        done = self._watches.reached({level: self._watched_index(level) for level in WatchLevel})
        if done:
            infos = self.commit_infos()
            for watch in done:
                self._out.append(WatchDone(watch.call, watch.index, watch.level, infos))

    def _expire_watches(self, now: int) -> None:
        expired = self._watches.expired(now)
        if not expired:
            return
        infos = self.commit_infos()
        for watch in expired:
            why = (
                f"NotReplicatedException: index {watch.index} not {watch.level.value} within "
                f"{watch.timeout_ms} ms"
            )
            self._out.append(WatchFailed(watch.call, watch.index, watch.level, infos, why))

    def read(self, call: ClientCall) -> list[Output]:
        """A client's linearizable read: a leader answers `ReadReady` once it is safe to serve (ReadIndex);
        others refuse as `submit` does."""
        if self._leader is None:
            self._out.append(NotLeader(call, self.leader_id))
        elif self.log.term_at(self.commit_index) != self.current_term:
            self._reads.held.append(call)
        else:
            self._start_read(call)
        return self._drain()

    def applied(self, index: int, result: object) -> list[Output]:
        """The state machine applied `index`, one of the entries an `Apply` handed it, in any order (Ozone's
        ContainerStateMachine applies each container's entries in order, containers in parallel): remember
        the result of the client call it carried (the retry cache), answer the clients waiting for it if we
        are their leader, and, as the gap-free applied prefix advances (`applied_index`, Ratis's
        updateLastApplied), the reads waiting for it. An index reported twice or never handed out is the
        shell's bug: ValueError, before anything changes."""
        if not self._applied_index < index <= self.commit_index or index in self._applied_ahead:
            raise ValueError(
                f"applied index {index}: not an entry handed to the state machine and not yet reported "
                f"(applied through {self._applied_index}, handed out through {self.commit_index})"
            )
        self._applied_ahead.add(index)
        self._advance_applied()
        if self.log.first_index <= index <= self.log.last_index:
            entry = self.log.entry(index)
            if entry.client_id:
                self._retry_cache.record(entry.client_id, entry.call_id, index, result, self._clock.now_ms())
        for call in self._pending_calls.pop(index, []):
            self._out.append(Reply(call, index, result))
        self._serve_reads()
        return self._drain()

    def _advance_applied(self) -> None:
        while self._applied_index + 1 in self._applied_ahead:
            self._applied_index += 1
            self._applied_ahead.remove(self._applied_index)

    def _is_applied(self, index: int) -> bool:
        return index <= self._applied_index or index in self._applied_ahead

    def _start_read(self, call: ClientCall) -> None:
        self._reads.start(call, self.commit_index)
        self._serve_reads()

    def _serve_reads(self) -> None:
        """Serve the reads confirmed and applied, and send the next heartbeat round for the reads waiting."""
        while True:
            if self._leader is not None and self._reads.round_due():
                self._reads.begin_round(self._leader.next_call_ids())
                self._send_appends(heartbeat_all=True)
            for read in self._reads.ready(self._applied_index, self.log.configuration):
                self._out.append(ReadReady(read.call, read.read_index))
            if self._leader is None or not self._reads.round_due():
                return
