"""A hand-driven Raft group for unit tests: messages are delivered and writes made durable only when a test
says so, so each test walks one path of the Raft paper step by step. The state machine applies each entry
handed to it at once, in order, unless the group holds applies (`hold_applies`): then a test reports each
(`report`) when and in the order it chooses."""

from __future__ import annotations

import random
from collections.abc import Callable

from pyozone.hdds.clock import ManualClock
from pyozone.ratis.log import payload_bytes
from pyozone.ratis.messages import LogEntry, Message, RaftPeerId
from pyozone.ratis.outputs import (
    Appended,
    Apply,
    FollowerSlow,
    NoLeader,
    Output,
    Persist,
    ReadReady,
    Reply,
    Send,
    TransferDone,
    WatchDone,
    WatchFailed,
)
from pyozone.ratis.server import PersistentState, RaftServer
from pyozone.ratis.settings import RaftSettings

A, B, C, D, E = (RaftPeerId(name) for name in "abcde")


def entries(*terms: int) -> tuple[LogEntry, ...]:
    """A log with these terms at indexes 1, 2, ...; payloads name index and term."""
    return tuple(LogEntry(term, index, b"%d@%d" % (index, term)) for index, term in enumerate(terms, start=1))


class Group:
    def __init__(
        self,
        *members: RaftPeerId,
        settings: RaftSettings | None = None,
        states: dict[RaftPeerId, PersistentState] | None = None,
        entry_bytes: Callable[[LogEntry], int] = payload_bytes,
        hold_applies: bool = False,
        priorities: dict[RaftPeerId, int] | None = None,
    ) -> None:
        self.clock = ManualClock()
        self.hold_applies = hold_applies
        self.members = members
        self.servers = {
            m: RaftServer(
                m,
                members,
                settings or RaftSettings(),
                self.clock,
                random.Random(i),
                (states or {}).get(m, PersistentState()),
                entry_bytes,
                priorities,
            )
            for i, m in enumerate(members)
        }
        self.outbox: list[tuple[RaftPeerId, Send]] = []  # sent, not yet delivered
        self.persists: dict[RaftPeerId, list[Persist]] = {m: [] for m in members}
        self.replies: list[Reply] = []
        self.reads: list[ReadReady] = []
        self.transfers: list[TransferDone] = []
        self.applied: dict[RaftPeerId, list[LogEntry]] = {m: [] for m in members}  # handed to it, in order
        self.appended: list[Appended] = []
        self.watches: list[WatchDone | WatchFailed] = []
        self.notices: dict[RaftPeerId, list[NoLeader | FollowerSlow]] = {m: [] for m in members}

    def take(self, member: RaftPeerId, outputs: list[Output]) -> list[Output]:
        for output in outputs:
            if isinstance(output, Send):
                self.outbox.append((member, output))
            elif isinstance(output, Persist):
                self.persists[member].append(output)
            elif isinstance(output, Apply):
                for entry in output.entries:
                    self.applied[member].append(entry)
                    if not self.hold_applies:
                        self.report(member, entry.index)
            elif isinstance(output, Appended):
                self.appended.append(output)
            elif isinstance(output, WatchDone | WatchFailed):
                self.watches.append(output)
            elif isinstance(output, Reply):
                self.replies.append(output)
            elif isinstance(output, ReadReady):
                self.reads.append(output)
            elif isinstance(output, TransferDone):
                self.transfers.append(output)
            elif isinstance(output, NoLeader | FollowerSlow):
                self.notices[member].append(output)
        return outputs

    def report(self, member: RaftPeerId, index: int) -> list[Output]:
        """The member's state machine finished applying `index`: its result names the index."""
        return self.take(member, self.servers[member].applied(index, f"result {index}"))

    def sync(self, member: RaftPeerId) -> list[Output]:
        """The member's disk makes every write so far durable."""
        if not self.persists[member]:
            return []
        seq = self.persists[member][-1].seq
        self.persists[member].clear()
        return self.take(member, self.servers[member].persisted(seq))

    def deliver(self, sender: RaftPeerId, to: RaftPeerId, message: Message) -> list[Output]:
        return self.take(to, self.servers[to].receive(sender, message))

    def sent(self, sender: RaftPeerId | None = None, to: RaftPeerId | None = None) -> list[Message]:
        """Take the undelivered messages from `sender` to `to` out of the outbox."""
        taken = [
            (s, send)
            for s, send in self.outbox
            if (sender is None or s == sender) and (to is None or send.to == to)
        ]
        self.outbox = [item for item in self.outbox if item not in taken]
        return [send.message for _, send in taken]

    def settle(self, *down: RaftPeerId) -> None:
        """Make every write durable and deliver every message (none to or from `down`) until quiet."""
        while True:
            for member in self.members:
                if member not in down:
                    self.sync(member)
            if not self.outbox:
                return
            outbox, self.outbox = self.outbox, []
            for sender, send in outbox:
                if sender not in down and send.to not in down:
                    self.deliver(sender, send.to, send.message)

    def tick(self, member: RaftPeerId, advance_ms: int = 0) -> list[Output]:
        self.clock.advance(advance_ms)
        return self.take(member, self.servers[member].tick())

    def elect(self, member: RaftPeerId, *down: RaftPeerId) -> None:
        """Time out `member` and run its (pre-vote and) election to the end."""
        deadline = self.servers[member].deadline_ms()
        assert deadline is not None
        self.tick(member, max(0, deadline - self.clock.now_ms()))
        self.settle(*down)
