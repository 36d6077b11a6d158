"""ContainerStateMachine under the Raft shell (issue 30): three in-process members of one pipeline,
each a RaftMember on its own RaftDivisions port over a temporary datanode's storage, written through the
leader's `submit(payload, data=)` as the datanode's routing writes (`PipelineGroups`): every member closes at
one BCSID, a follower that was down catches up with the chunk data the leader reads back (`read_data`), and a
follower whose data write fails reports the pipeline failed while the others go on at majority."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyozone.common.net import HostPort
from pyozone.datanode.ratis.state_machine import ContainerStateMachine
from pyozone.datanode.xceiver import Dispatcher
from pyozone.hdds.security.x509 import CertRole
from pyozone.hdds.states import ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol.ratis import entry_data, entry_payload
from pyozone.ratis.messages import RaftPeerId
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis_server.server import RaftMember
from pyozone.ratis_server.transport import RaftDivisions, RaftGroup, RaftPeer
from tests.polling import wait_for_async
from tests.unit.datanode.dns_helpers import (
    PIPELINE,
    Node,
    block_writes,
    chunk,
    close,
    get_small_file,
    open_node,
    payload,
    small_file,
    write,
)
from tests.unit.ratis_server.shell_support import SETTINGS, MemoryStorage, ports_of

CID = 5


@dataclass
class Datanode:
    peer: RaftPeerId
    node: Node
    divisions: RaftDivisions
    storage: MemoryStorage = field(default_factory=MemoryStorage)
    failures: list[tuple[str, str]] = field(default_factory=list)
    sm: ContainerStateMachine | None = None
    member: RaftMember | None = None


@dataclass
class Pipeline:
    group: RaftGroup
    datanodes: list[Datanode]
    executor: ThreadPoolExecutor
    root: Path

    async def start(self, dn: Datanode) -> None:
        """`dn`'s member from its log, with a new state machine (a restart keeps the datanode's storage)."""
        dispatcher = Dispatcher(dn.node.containers, dn.node.uuid, lambda _cid: None)
        on_failure: Callable[[str, str], None] = lambda p, r: dn.failures.append((p, r))  # noqa: E731
        dn.sm = ContainerStateMachine(PIPELINE, dispatcher, self.executor, self.root / dn.peer.id, on_failure)
        dn.member = RaftMember(
            dn.peer, self.group, dn.storage, dn.sm, SETTINGS,
            role=CertRole.DATANODE, server=dn.divisions, leader_pending_bytes=100_000,
        )  # fmt: skip
        await dn.member.start()

    async def leader(self) -> Datanode:
        def one() -> Datanode | None:
            leaders = [
                d for d in self.datanodes
                if d.member and d.member.running and d.member.status().role is RaftPeerRole.LEADER
            ]  # fmt: skip
            return leaders[0] if len(leaders) == 1 else None

        return await wait_for_async(one, 15, "one leader")

    async def write(self, requests: list[pb.ContainerCommandRequestProto]) -> list[str]:
        """Each request through the leader, in turn; the Result names of the leader's applies."""
        leader = (await self.leader()).member
        assert leader is not None
        answers: list[Any] = []
        for request in requests:
            data = entry_data(request)
            answers.append(await leader.submit(entry_payload(request), "", 0, data=data or None))
        return [pb.Result.Name(a.result) for a in answers]

    async def applied_everywhere(self, members: list[Datanode]) -> None:
        leader = (await self.leader()).member
        assert leader is not None
        last = leader.status().last_index

        def done() -> bool:
            return all(d.member is not None and d.member.status().applied_index >= last for d in members)

        await wait_for_async(done, 15, f"applied up to {last}")


@asynccontextmanager
async def pipeline(root: Path) -> AsyncIterator[Pipeline]:
    ports = ports_of(3)
    peers = [RaftPeerId(f"dn{i}") for i in range(3)]
    group = RaftGroup(
        PIPELINE,
        tuple(RaftPeer(p, HostPort("127.0.0.1", port)) for p, port in zip(peers, ports, strict=True)),
    )
    with ThreadPoolExecutor(4, thread_name_prefix="csm-shell") as executor:
        datanodes = [
            Datanode(
                peer,
                open_node(
                    root / peer.id, f"{i}{i}{i}{i}0000-0000-4000-8000-00000000000{i}", container_size="8MB"
                ),
                RaftDivisions(
                    HostPort("127.0.0.1", port), None, CertRole.DATANODE, SETTINGS.append_byte_limit
                ),
            )
            for i, (peer, port) in enumerate(zip(peers, ports, strict=True))
        ]
        made = Pipeline(group, datanodes, executor, root / "ratis")
        try:
            for dn in datanodes:
                await made.start(dn)
                await dn.divisions.start()
            yield made
        finally:
            for dn in datanodes:
                if dn.member is not None:
                    await dn.member.stop()
                await dn.divisions.stop()
                dn.node.close()


def run(scenario: Any) -> None:
    asyncio.run(asyncio.wait_for(scenario, 90))


def _replica(dn: Datanode) -> tuple[ReplicaState, int, list[tuple[int, int]]]:
    container = dn.node.containers.get(CID)
    assert container is not None
    return container.state, container.bcsid, [(b.block_id.local_id, b.size) for b in container.list_blocks()]


def test_a_follower_down_catches_up_and_every_member_closes_at_one_bcsid(tmp_path: Path) -> None:
    """A follower is down while a block, a small file and the close are written (more chunk data than the
    leader caches): restarted from its log, it gets the entries' data read back from the leader's block
    files and ends with the others' replica, closed at the small file's BCSID."""

    async def scenario() -> None:
        async with pipeline(tmp_path) as p:
            leader = await p.leader()
            down = next(d for d in p.datanodes if d is not leader)
            assert down.member is not None
            await down.member.stop()
            writes, _ = block_writes(CID, 1, payload(1, 300_000), 65536)
            answers = await p.write([*writes, small_file(CID, 2, payload(2, 1000)), close(CID), writes[0]])
            assert answers == ["SUCCESS"] * (len(writes) + 2) + ["CLOSED_CONTAINER_IO"]
            reads = leader.member.data_reads if leader.member else 0
            await p.start(down)
            await p.applied_everywhere(p.datanodes)
            assert leader.member is not None and leader.member.data_reads > reads
            replicas = [_replica(d) for d in p.datanodes]
            assert replicas[0][0] is ReplicaState.CLOSED and replicas == [replicas[0]] * 3
            assert replicas[0][2] == [(1, 300_000), (2, 1000)]
            for dn in p.datanodes:
                assert dn.failures == []
                assert dn.sm is not None
                answer = dn.sm.dispatcher.dispatch(get_small_file(CID, 2))
                assert answer.getSmallFile.data.data == payload(2, 1000)

    run(scenario())


def test_a_follower_whose_data_write_fails_reports_the_pipeline_failed(tmp_path: Path) -> None:
    """One follower's disk fails under its data stage (IO_EXCEPTION): its member fails for the group and
    its state machine reports the pipeline failed (SCM closes it); the leader and the other follower
    commit and apply at majority."""

    async def scenario() -> None:
        async with pipeline(tmp_path) as p:
            leader = await p.leader()
            victim, other = [d for d in p.datanodes if d is not leader]
            assert victim.sm is not None

            def disk_failed(request: pb.ContainerCommandRequestProto, *_: object) -> Any:
                return pb.ContainerCommandResponseProto(
                    cmdType=request.cmdType, result=pb.IO_EXCEPTION, message="disk failed"
                )

            victim.sm.dispatcher.write_data = disk_failed  # type: ignore[method-assign]
            writes, _ = block_writes(CID, 1, payload(1, 100_000), 65536)
            assert await p.write(writes) == ["SUCCESS"] * len(writes)
            await p.applied_everywhere([leader, other])
            await wait_for_async(lambda: bool(victim.failures), 15, "the victim's pipeline failure")
            assert len(victim.failures) == 1 and "IO_EXCEPTION" in victim.failures[0][1]
            assert leader.failures == other.failures == []
            assert _replica(leader) == _replica(other) == (ReplicaState.OPEN, len(writes) + 1, [(1, 100_000)])

    run(scenario())


def test_a_follower_down_gets_the_entries_every_data_stage_refused(tmp_path: Path) -> None:
    """R13 D2: a client's bad chunks (a writeChunk and a putSmallFile whose checksums are not their bytes)
    are refused at every data stage, nothing written to a block file. A follower down meanwhile needs them
    once the leader's cache has evicted them: the leader reads them back from the refusals it kept (before,
    read_data failed on every attempt and the follower stayed behind for good), and the follower refuses
    them alike, ending with the others' replica, nobody failed."""

    async def scenario() -> None:
        async with pipeline(tmp_path) as p:
            leader = await p.leader()
            down = next(d for d in p.datanodes if d is not leader)
            assert down.member is not None
            await down.member.stop()
            bad = payload(3, 4096)
            refused = [
                write(CID, 3, chunk("3_chunk_0", 0, bad), bytes([bad[0] ^ 1]) + bad[1:]),
                small_file(CID, 4, payload(4, 10), chunk("4_chunk", 0, payload(5, 10))),
            ]
            writes, _ = block_writes(CID, 1, payload(1, 300_000), 65536)  # past the leader's cache
            answers = await p.write([*refused, *writes])
            assert answers == ["CHECKSUM_MISMATCH"] * 2 + ["SUCCESS"] * len(writes)
            await p.start(down)
            await p.applied_everywhere(p.datanodes)
            replicas = [_replica(d) for d in p.datanodes]
            assert replicas == [replicas[0]] * 3 and replicas[0][2] == [(1, 300_000)]
            assert all(d.failures == [] for d in p.datanodes)

    run(scenario())
