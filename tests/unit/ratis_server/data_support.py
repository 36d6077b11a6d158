"""In-process members of groups whose entries carry state machine data (a `DataStateMachine`, as a datanode
pipeline's ContainerStateMachine will be): real rpc connections on 127.0.0.1, each member's log in a
`MemoryStorage`, its "block files" (what `write_data` wrote) in a dict that survives its restarts. Each node
serves its groups on one port (`RaftDivisions`)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.hdds.security.x509 import CertRole
from pyozone.ratis.messages import LogEntry, RaftPeerId
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.settings import RaftSettings
from pyozone.ratis_server.member_api import DataWriteError
from pyozone.ratis_server.server import RaftMember
from pyozone.ratis_server.state_machine_data import LEADER_PENDING_BYTES
from pyozone.ratis_server.transport import RaftDivisions, RaftGroup, RaftPeer
from tests.polling import wait_for_async
from tests.unit.ratis_server.shell_support import SETTINGS, MemoryStorage, ports_of


class DataMachine:
    """A `DataStateMachine`: `write_data` keeps an entry's bytes (its "block file", `data`, kept over a
    restart), optionally held by `gate` or failing; `apply_async` records (index, payload, data) after a
    random number of loop turns, so entries complete out of order."""

    def __init__(self, data: dict[int, bytes] | None = None) -> None:
        self.data: dict[int, bytes] = data if data is not None else {}
        self.applied: list[tuple[int, bytes, bytes]] = []
        self.gate: asyncio.Event | None = None
        self.fail_writes = False
        self.writes_started: list[int] = []
        self.reads: list[int] = []
        self.failures: list[str] = []
        self._rng = random.Random(7)

    def apply(self, entry: LogEntry) -> object:
        raise AssertionError("a DataStateMachine's entries go to apply_async")

    async def write_data(self, entry: LogEntry, data: memoryview) -> None:
        self.writes_started.append(entry.index)
        if self.fail_writes:
            raise DataWriteError(f"the disk under entry {entry.index} failed")
        if self.gate is not None:
            await self.gate.wait()
        self.data[entry.index] = bytes(data)

    async def read_data(self, entry: LogEntry) -> bytes:
        self.reads.append(entry.index)
        return self.data[entry.index]

    def apply_async(self, entry: LogEntry) -> asyncio.Future[object]:
        return asyncio.ensure_future(self._apply(entry))

    async def _apply(self, entry: LogEntry) -> object:
        for _ in range(self._rng.randrange(4)):
            await asyncio.sleep(0)
        held = self.data[entry.index] if entry.data_size else b""
        self.applied.append((entry.index, entry.payload, held))
        return entry.index

    def notify_failed(self, reason: str) -> None:
        self.failures.append(reason)

    def contents(self) -> dict[int, tuple[bytes, bytes]]:
        """What it applied, by index: (payload, data)."""
        return {index: (payload, data) for index, payload, data in self.applied}


@dataclass
class DataNode:
    id: RaftPeerId
    port: int
    divisions: RaftDivisions | None = None
    storages: dict[str, MemoryStorage] = field(default_factory=dict)
    machines: dict[str, DataMachine] = field(default_factory=dict)
    members: dict[str, RaftMember] = field(default_factory=dict)


class DataGroups:
    """`size` nodes, each one port (its `RaftDivisions`) serving a member of each of `group_ids`."""

    def __init__(
        self,
        group_ids: tuple[str, ...] = ("pipeline-1",),
        size: int = 3,
        settings: RaftSettings = SETTINGS,
        pending_bytes: int = LEADER_PENDING_BYTES,
        tls: dict[str, TlsStore] | None = None,
    ) -> None:
        ports = ports_of(size)
        self.nodes = {
            RaftPeerId(f"dn{i + 1}"): DataNode(RaftPeerId(f"dn{i + 1}"), port) for i, port in enumerate(ports)
        }
        self.groups = {
            g: RaftGroup(g, tuple(RaftPeer(n.id, HostPort("127.0.0.1", n.port)) for n in self.nodes.values()))
            for g in group_ids
        }
        self.settings = settings
        self.pending_bytes = pending_bytes
        self.tls = tls or {}

    async def start_node(self, peer: RaftPeerId) -> None:
        node = self.nodes[peer]
        tls = self.tls.get(peer.id)
        node.divisions = RaftDivisions(
            HostPort("127.0.0.1", node.port), tls, CertRole.DATANODE, self.settings.append_byte_limit
        )
        for group_id in self.groups:
            await self.start(peer, group_id)
        await node.divisions.start()

    async def start(self, peer: RaftPeerId, group_id: str) -> RaftMember:
        """Starts `peer`'s member of `group_id` from its log; its state machine keeps the data written
        before and applies the log again."""
        node = self.nodes[peer]
        storage = node.storages.setdefault(group_id, MemoryStorage())
        old = node.machines.get(group_id)
        machine = node.machines[group_id] = DataMachine(old.data if old is not None else None)
        member = RaftMember(
            peer,
            self.groups[group_id],
            storage,
            machine,
            self.settings,
            tls=self.tls.get(peer.id),
            role=CertRole.DATANODE,
            server=node.divisions,
            leader_pending_bytes=self.pending_bytes,
        )
        await member.start()
        node.members[group_id] = member
        return member

    async def stop(self, peer: RaftPeerId, group_id: str) -> None:
        member = self.nodes[peer].members.pop(group_id, None)
        if member is not None:
            await member.stop()

    async def stop_node(self, peer: RaftPeerId) -> None:
        node = self.nodes[peer]
        for group_id in list(node.members):
            await self.stop(peer, group_id)
        if node.divisions is not None:
            await node.divisions.stop()
            node.divisions = None

    def members(self, group_id: str) -> list[RaftMember]:
        return [n.members[group_id] for n in self.nodes.values() if group_id in n.members]

    def machine(self, peer: RaftPeerId, group_id: str) -> DataMachine:
        return self.nodes[peer].machines[group_id]

    async def leader(self, group_id: str, timeout_s: float = 15.0) -> RaftMember:
        def agreed() -> RaftMember | None:
            members = [m for m in self.members(group_id) if m.running]
            leaders = [m for m in members if m.status().role is RaftPeerRole.LEADER]
            if len(leaders) != 1:
                return None
            term = leaders[0].status().term
            if all(m.status().leader == leaders[0].me and m.status().term == term for m in members):
                return leaders[0]
            return None

        return await wait_for_async(agreed, timeout_s, f"one leader of {group_id} all members follow")

    async def applied_everywhere(self, group_id: str, index: int, timeout_s: float = 15.0) -> None:
        def done() -> bool:
            return all(m.status().applied_index >= index for m in self.members(group_id) if m.running)

        await wait_for_async(done, timeout_s, f"every running member of {group_id} applied {index}")


@asynccontextmanager
async def data_groups(**kwargs: object) -> AsyncIterator[DataGroups]:
    groups = DataGroups(**kwargs)  # type: ignore[arg-type]
    try:
        for peer in groups.nodes:
            await groups.start_node(peer)
        yield groups
    finally:
        for peer in groups.nodes:
            await groups.stop_node(peer)
        await asyncio.sleep(0)
