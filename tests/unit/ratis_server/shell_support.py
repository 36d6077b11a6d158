"""A Raft group of in-process members for the shell's tests: real rpc connections on 127.0.0.1, a storage
kept in memory (what `flush` made durable survives a member's restart, nothing else) and a small key-value
state machine whose checkpoint (its values, what it applied and the TermIndex it covers) survives a restart
and is what a member behind the leader's log "downloads" from the leader."""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace

from pyozone.cluster.layout import PORT_RANGE_VARIABLE, free_ports
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.ratis.messages import LogEntry, RaftPeerId, TermIndex
from pyozone.ratis.outputs import Persist
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.server import PersistentState
from pyozone.ratis.settings import RaftSettings
from pyozone.ratis_server.server import RaftMember
from pyozone.ratis_server.transport import RaftGroup, RaftPeer
from tests.polling import wait_for_async

GROUP_ID = "omServiceIdDefault"
_NOTHING = TermIndex(0, 0)
# Election timeouts long enough for a loaded two-core machine, short enough for quick tests.
SETTINGS = RaftSettings(rpc_timeout_min_ms=300, rpc_timeout_max_ms=600)


def ports_of(n: int) -> list[int]:
    """Ports free now from PYOZONE_PORT_RANGE (LOW-HIGH) when it is set, every port of it tried (free_ports
    tries 64 a port, then asks the kernel), held together so no two are the same."""
    raw = os.environ.get(PORT_RANGE_VARIABLE)
    if not raw:
        return free_ports(n)
    low, high = (int(p) for p in raw.split("-"))
    taken: list[socket.socket] = []
    try:
        for port in random.sample(range(low, high), high - low):
            if len(taken) == n:
                break
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                s.close()
                continue
            taken.append(s)
        return [s.getsockname()[1] for s in taken]
    finally:
        for s in taken:
            s.close()


class MemoryStorage:
    """`RaftStorage` in a dict: `write` queues, `flush` makes durable what was written before it began, and
    `load` returns only what is durable (as a crash would leave it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._written: list[Persist] = []
        self.term = 0
        self.voted_for: RaftPeerId | None = None
        self.snapshot = TermIndex(0, 0)
        self.configuration: tuple[RaftPeerId, ...] = ()
        self.entries: list[LogEntry] = []
        self.flushes = 0
        self.flushes_begun = 0
        self.purges = 0
        self.hold: threading.Event | None = None
        """When set, `flush` waits for it (a slow disk)."""

    def load(self) -> PersistentState:
        with self._lock:
            return PersistentState(
                self.term, self.voted_for, tuple(self.entries), self.snapshot, self.configuration
            )

    def write(self, persist: Persist) -> None:
        with self._lock:
            self._written.append(persist)

    def flush(self) -> None:
        with self._lock:
            written, self._written = self._written, []
            self.flushes_begun += 1
        if self.hold is not None:
            self.hold.wait(10)
        with self._lock:
            self.flushes += 1
            for persist in written:
                self.term, self.voted_for = persist.term, persist.voted_for
                if persist.snapshot is not None:
                    self.snapshot, self.entries = persist.snapshot, []
                    self.configuration = persist.configuration
                if persist.entries:
                    first = persist.entries[0].index - self.snapshot.index
                    del self.entries[first - 1 :]
                    self.entries.extend(persist.entries)

    def purge(self, up_to_index: int, configuration: tuple[RaftPeerId, ...] = ()) -> None:
        with self._lock:
            self.purges += 1
            drop = up_to_index - self.snapshot.index
            if drop <= 0:
                return
            self.snapshot = TermIndex(self.entries[drop - 1].term, up_to_index)
            self.configuration = configuration
            del self.entries[:drop]

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class Checkpoint:
    """The state machine's durable state (OM's om.db checkpoint with its TRANSACTIONINFO)."""

    values: dict[str, str]
    applied: tuple[int, ...]
    covers: TermIndex


@dataclass
class KeyValues:
    """The state machine: each payload is JSON {"put": [key, value]}; the result is the entry's index.
    `applied` lists the entries its state holds (restored with a checkpoint); `twice` the entries it was
    handed again although its state already held them (must stay empty)."""

    values: dict[str, str] = field(default_factory=dict)
    applied: list[int] = field(default_factory=list)
    last: TermIndex = field(default=_NOTHING)
    checkpoint: Checkpoint | None = None
    fetch: Callable[[RaftPeerId], Checkpoint | None] | None = None
    """How `install_snapshot` "downloads" a leader's checkpoint (the test's)."""
    twice: list[int] = field(default_factory=list)
    installs: list[TermIndex] = field(default_factory=list)

    @classmethod
    def restored(
        cls, checkpoint: Checkpoint | None, fetch: Callable[[RaftPeerId], Checkpoint | None]
    ) -> KeyValues:
        """A restart: the state its last checkpoint holds."""
        machine = cls(fetch=fetch)
        if checkpoint is not None:
            machine.load(checkpoint)
        return machine

    def load(self, checkpoint: Checkpoint) -> None:
        self.values = dict(checkpoint.values)
        self.applied = list(checkpoint.applied)
        self.last = checkpoint.covers
        self.checkpoint = checkpoint

    def apply(self, entry: LogEntry) -> object:
        if entry.index <= self.last.index:
            self.twice.append(entry.index)
        key, value = json.loads(entry.payload)["put"]
        self.values[key] = value
        self.applied.append(entry.index)
        self.last = TermIndex(entry.term, entry.index)
        return entry.index

    def take_checkpoint(self) -> Checkpoint:
        self.checkpoint = Checkpoint(dict(self.values), tuple(self.applied), self.last)
        return self.checkpoint

    def latest_snapshot(self) -> TermIndex | None:
        return self.checkpoint.covers if self.checkpoint is not None else None

    async def install_snapshot(
        self, leader_id: RaftPeerId, leader_address: HostPort | None, first_available: TermIndex
    ) -> tuple[TermIndex, tuple[RaftPeerId, ...]] | None:
        checkpoint = self.fetch(leader_id) if self.fetch is not None else None
        if checkpoint is None or checkpoint.covers.index + 1 < first_available.index:
            return None
        self.load(checkpoint)
        self.installs.append(checkpoint.covers)
        return checkpoint.covers, ()


def put(key: str, value: str) -> bytes:
    return json.dumps({"put": [key, value]}).encode()


@dataclass
class Node:
    id: RaftPeerId
    storage: MemoryStorage = field(default_factory=MemoryStorage)
    machine: KeyValues = field(default_factory=KeyValues)
    member: RaftMember | None = None


class Group:
    """Three (or `size`) members of one group, each startable and stoppable."""

    def __init__(
        self,
        size: int = 3,
        tls: dict[str, TlsStore] | None = None,
        group_id: str = GROUP_ID,
        settings: RaftSettings = SETTINGS,
    ) -> None:
        ports = ports_of(size)
        ids = [RaftPeerId(f"om{i + 1}") for i in range(size)]
        self.group = RaftGroup(
            group_id, tuple(RaftPeer(i, HostPort("127.0.0.1", p)) for i, p in zip(ids, ports, strict=True))
        )
        self.nodes = {i: Node(i) for i in ids}
        self.tls = tls or {}
        self.settings = settings

    def peer(self, peer: RaftPeerId) -> RaftPeer:
        return next(p for p in self.group.peers if p.id == peer)

    async def start(self, peer: RaftPeerId, members: tuple[RaftPeerId, ...] | None = None) -> RaftMember:
        """Starts `peer` from its storage, with the state machine its last checkpoint holds (empty without
        one: replayed from the log). `members`: the group it starts with (default: every node)."""
        node = self.nodes[peer]
        node.machine = KeyValues.restored(node.machine.checkpoint, self.checkpoint_of)
        group = self.group
        if members is not None:
            group = replace(group, peers=tuple(self.peer(p) for p in members))
        node.member = RaftMember(
            peer, group, node.storage, node.machine, self.settings, tls=self.tls.get(peer.id)
        )
        await node.member.start()
        return node.member

    def checkpoint_of(self, peer: RaftPeerId) -> Checkpoint | None:
        """What a member "downloads" from `peer`: its latest checkpoint."""
        return self.nodes[peer].machine.checkpoint

    def checkpoint(self, peer: RaftPeerId) -> TermIndex:
        """`peer`'s state machine checkpoints and tells its member (OM after its om.db checkpoint)."""
        node = self.nodes[peer]
        assert node.member is not None
        covers = node.machine.take_checkpoint().covers
        node.member.snapshot_taken(covers)
        return covers

    async def stop(self, peer: RaftPeerId) -> None:
        node = self.nodes[peer]
        if node.member is not None:
            await node.member.stop()
            node.member = None

    def running(self) -> list[RaftMember]:
        return [n.member for n in self.nodes.values() if n.member is not None]

    async def leader(self, timeout_s: float = 15.0) -> RaftMember:
        """The one leader every running member follows."""

        def agreed() -> RaftMember | None:
            members = self.running()
            leaders = [m for m in members if m.status().role is RaftPeerRole.LEADER]
            if len(leaders) != 1:
                return None
            leader = leaders[0]
            term = leader.status().term
            if all(m.status().leader == leader.me and m.status().term == term for m in members):
                return leader
            return None

        return await wait_for_async(agreed, timeout_s, "one leader all members follow")

    async def applied_everywhere(self, index: int, timeout_s: float = 15.0) -> None:
        await wait_for_async(
            lambda: all(
                n.machine.applied and n.machine.applied[-1] >= index
                for n in self.nodes.values()
                if n.member is not None
            ),
            timeout_s,
            f"every running member applied {index}",
        )


@asynccontextmanager
async def running_group(
    size: int = 3, tls: dict[str, TlsStore] | None = None, settings: RaftSettings = SETTINGS
) -> AsyncIterator[Group]:
    group = Group(size, tls, settings=settings)
    try:
        for peer in group.nodes:
            await group.start(peer)
        yield group
    finally:
        for peer in group.nodes:
            await group.stop(peer)
        await asyncio.sleep(0)
