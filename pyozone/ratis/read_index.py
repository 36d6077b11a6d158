"""Linearizable reads by ReadIndex (Raft paper section 6.4 / the thesis's 6.4; Ratis's ReadIndex option,
`raft.server.read.option` LINEARIZABLE, with its ReadIndexHeartbeats).

The leader notes its commit index as the read index, then confirms it is still the leader: a majority
(itself counted) must answer an append sent after the read arrived. Only then, once its state machine has
applied the read index, may the read be served. A leader that has not yet committed an entry of its own
term does not know the latest commit index; it holds reads until its no-op commits.

Reads share heartbeat rounds, as Ratis's ReadIndexHeartbeats: one round is in flight at a time, and the reads
that arrive meanwhile wait together for the next, sent as soon as the one in flight is confirmed. A read never
joins a round already sent: an answer to a heartbeat that left before the read arrived does not prove we still
led when it arrived (a new leader may have committed a write the reader saw acknowledged in between). So a
burst of reads costs two rounds at most, whatever its size, and each read is handled a constant number of
times: rounds are confirmed in order and read indexes never decrease within a term, so confirmed reads wait
in read index order.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from pyozone.ratis.messages import ClientCall, RaftPeerId


@dataclass(frozen=True)
class PendingRead:
    call: ClientCall
    read_index: int


@dataclass
class _Round:
    """One heartbeat round confirming leadership for the reads that arrived before it was sent."""

    confirm_from: dict[RaftPeerId, int]  # per follower, the first call id whose answer confirms leadership
    reads: list[PendingRead]
    confirmed_by: set[RaftPeerId] = field(default_factory=set)


class ReadIndexReads:
    """A leader's reads: held for its term's first commit, then waiting for a heartbeat round, then confirming
    leadership in it, then waiting for the state machine to reach their read index."""

    def __init__(self, me: RaftPeerId) -> None:
        self._me = me
        self.held: list[ClientCall] = []
        self._waiting: list[PendingRead] = []  # for the next round
        self._round: _Round | None = None  # the round in flight
        self._confirmed: deque[PendingRead] = deque()  # in read index order

    def start(self, call: ClientCall, read_index: int) -> None:
        self._waiting.append(PendingRead(call, read_index))

    def round_due(self) -> bool:
        """Reads wait and no round is in flight: the leader must send one (`begin_round`, then a heartbeat to
        every follower)."""
        return self._round is None and bool(self._waiting)

    def begin_round(self, next_call_ids: dict[RaftPeerId, int]) -> None:
        """The waiting reads are confirmed by answers to the appends carrying `next_call_ids` or later."""
        self._round = _Round(next_call_ids, self._waiting, {self._me})
        self._waiting = []

    def on_answer(self, peer: RaftPeerId, call_id: int) -> None:
        """A follower answered an append of our term: it still follows us, as of when that append left."""
        if self._round is not None and call_id >= self._round.confirm_from.get(peer, call_id + 1):
            self._round.confirmed_by.add(peer)

    def ready(self, applied_index: int, voters: tuple[RaftPeerId, ...]) -> list[PendingRead]:
        """The reads confirmed by a majority of `voters` (the configuration in force) whose read index the
        state machine has applied: serve them."""
        confirmed = self._round
        if confirmed is not None and len(confirmed.confirmed_by.intersection(voters)) > len(voters) // 2:
            self._confirmed.extend(confirmed.reads)
            self._round = None
        done = []
        while self._confirmed and self._confirmed[0].read_index <= applied_index:
            done.append(self._confirmed.popleft())
        return done

    def drop(self) -> list[ClientCall]:
        """We are no longer the leader: every read still here must be refused."""
        in_flight = self._round.reads if self._round is not None else []
        calls = self.held + [r.call for r in (*self._confirmed, *in_flight, *self._waiting)]
        self.held, self._waiting, self._round, self._confirmed = [], [], None, deque()
        return calls
