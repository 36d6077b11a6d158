"""A Raft group of in-process members for the shell's tests: real rpc connections on 127.0.0.1, a storage
kept in memory (what `flush` made durable survives a member's restart, nothing else) and a small key-value
state machine."""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

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
# Election timeouts long enough for a loaded two-core machine, short enough for quick tests.
SETTINGS = RaftSettings(rpc_timeout_min_ms=300, rpc_timeout_max_ms=600)


def ports_of(n: int) -> list[int]:
    """Ports free now from PYOZONE_PORT_RANGE (LOW-HIGH) when it is set, however narrow (free_ports asks
    the kernel below 1000 ports), held together so no two are the same."""
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
        self.entries: list[LogEntry] = []
        self.flushes = 0
        self.flushes_begun = 0
        self.hold: threading.Event | None = None
        """When set, `flush` waits for it (a slow disk)."""

    def load(self) -> PersistentState:
        with self._lock:
            return PersistentState(self.term, self.voted_for, tuple(self.entries), self.snapshot)

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
                if persist.entries:
                    first = persist.entries[0].index - self.snapshot.index
                    del self.entries[first - 1 :]
                    self.entries.extend(persist.entries)

    def purge(self, up_to_index: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


@dataclass
class KeyValues:
    """The state machine: each payload is JSON {"put": [key, value]}; the result is the entry's index."""

    values: dict[str, str] = field(default_factory=dict)
    applied: list[int] = field(default_factory=list)

    def apply(self, entry: LogEntry) -> object:
        key, value = json.loads(entry.payload)["put"]
        self.values[key] = value
        self.applied.append(entry.index)
        return entry.index


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
        self, size: int = 3, tls: dict[str, TlsStore] | None = None, group_id: str = GROUP_ID
    ) -> None:
        ports = ports_of(size)
        ids = [RaftPeerId(f"om{i + 1}") for i in range(size)]
        self.group = RaftGroup(
            group_id, tuple(RaftPeer(i, HostPort("127.0.0.1", p)) for i, p in zip(ids, ports, strict=True))
        )
        self.nodes = {i: Node(i) for i in ids}
        self.tls = tls or {}

    async def start(self, peer: RaftPeerId) -> RaftMember:
        """Starts `peer` from its storage, with an empty state machine (replayed from the log)."""
        node = self.nodes[peer]
        node.machine = KeyValues()
        node.member = RaftMember(
            peer, self.group, node.storage, node.machine, SETTINGS, tls=self.tls.get(peer.id)
        )
        await node.member.start()
        return node.member

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
async def running_group(size: int = 3, tls: dict[str, TlsStore] | None = None) -> AsyncIterator[Group]:
    group = Group(size, tls)
    try:
        for peer in group.nodes:
            await group.start(peer)
        yield group
    finally:
        for peer in group.nodes:
            await group.stop(peer)
        await asyncio.sleep(0)
