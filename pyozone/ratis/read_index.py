"""Linearizable reads by ReadIndex (Raft paper section 6.4 / the thesis's 6.4; Ratis's ReadIndex option,
`raft.server.read.option` LINEARIZABLE, with its ReadIndexHeartbeats).

The leader notes its commit index as the read index, then confirms it is still the leader: a majority
(itself counted) must answer an append sent after the read arrived. Only then, once its state machine has
applied the read index, may the read be served. A leader that has not yet committed an entry of its own
term does not know the latest commit index; it holds reads until its no-op commits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pyozone.ratis.messages import ClientCall, RaftPeerId


@dataclass
class PendingRead:
    call: ClientCall
    read_index: int
    confirm_from: dict[RaftPeerId, int]  # per follower, the first call id whose answer confirms leadership
    confirmed_by: set[RaftPeerId] = field(default_factory=set)


class ReadIndexReads:
    """A leader's reads: held for its term's first commit, then confirming leadership, then waiting for the
    state machine to reach their read index."""

    def __init__(self, me: RaftPeerId) -> None:
        self._me = me
        self.held: list[ClientCall] = []
        self._reads: list[PendingRead] = []

    def start(self, call: ClientCall, read_index: int, next_call_ids: dict[RaftPeerId, int]) -> None:
        self._reads.append(PendingRead(call, read_index, next_call_ids, {self._me}))

    def on_answer(self, peer: RaftPeerId, call_id: int) -> None:
        """A follower answered an append of our term: it still follows us, as of when that append left."""
        for read in self._reads:
            if call_id >= read.confirm_from.get(peer, call_id + 1):
                read.confirmed_by.add(peer)

    def ready(self, applied_index: int, voters: tuple[RaftPeerId, ...]) -> list[PendingRead]:
        """The reads confirmed by a majority of `voters` (the configuration in force) whose read index the
        state machine has applied: serve them."""
        majority = len(voters) // 2 + 1
        done = [
            r
            for r in self._reads
            if len(r.confirmed_by.intersection(voters)) >= majority and r.read_index <= applied_index
        ]
        self._reads = [r for r in self._reads if r not in done]
        return done

    def drop(self) -> list[ClientCall]:
        """We are no longer the leader: every read still here must be refused."""
        calls = self.held + [r.call for r in self._reads]
        self.held, self._reads = [], []
        return calls
