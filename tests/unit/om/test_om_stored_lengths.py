"""Usage follows stored bytes, not declared ones (issue 28, defect 2): a user opened a key with dataSize=1 in
a volume with a 7 MB quota, wrote two 4 MiB chunks to the datanode and committed 1 byte; OM charged 1 byte.
Under a space quota OM now asks the datanodes holding each block what they store (GetCommittedBlockLength),
all at once within a deadline, and charges what is stored (up to the block's allocation; the allocation when
no answer comes in time); a commit is refused only when every replica holds less than it declares; and a
block committed longer than OM allocated it is refused whatever the quota. A real datanode dispatcher serves
the block here (a hung one stands for a stopped datanode); OM's SCM is faked."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.datanode.xceiver import xceiver_server
from pyozone.framework.om import OM_SERVICE
from pyozone.hdds.block import ExcludeList
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import RATIS_ONE, BlockID, ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import LifeCycleState, PipelineState
from pyozone.om.metadata import OPEN_KEY_TABLE
from pyozone.om.scm import ContainerLocation
from pyozone.om.server import OmDaemon
from pyozone.proto import DatanodeClientProtocol_pb2 as data_pb2
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.proto import hdds_pb2
from pyozone.protocol.block import BlockLocation
from tests.builders import dn_id
from tests.unit.datanode.dns_helpers import (
    block_id,
    block_writes,
    chunk,
    create,
    exchange,
    open_node,
    put,
    request,
    results,
    serve,
    write,
)
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import conf, om_channel, run

MiB = 1 << 20
TIMEOUT_S = 1
"""ozone.om.commit.block.length.check.timeout in these tests."""
CID = 7
DN = dn_id(1)
HUNG = dn_id(2)


class OneDatanodeScm(FakeScm):
    """Allocates every block in container CID on the datanodes the test serves (one, by default)."""

    def __init__(self, port: int, hung_port: int = 0, only_hung: bool = False) -> None:
        """`hung_port`: a datanode that never answers, listed first among the container's members;
        `only_hung`: the container's only one."""
        super().__init__()
        self.container = CID
        members = (
            [DatanodeDetails(HUNG, "localhost", "127.0.0.1", (("STANDALONE", hung_port),))]
            if hung_port
            else []
        )
        if not only_hung:
            members.append(DatanodeDetails(DN, "localhost", "127.0.0.1", (("STANDALONE", port),)))
        self.members = {m.uuid: m for m in members}
        self.pipeline = Pipeline(
            "22222222-2222-4222-8222-222222222222", RATIS_ONE, PipelineState.OPEN, (members[0].uuid,), 0, 0,
            leader=members[0].uuid,
        )  # fmt: skip
        self.locations[CID] = ContainerLocation(
            CID, LifeCycleState.OPEN, RATIS_ONE, self.pipeline, self.members, ()
        )

    scm_hangs = threading.Event()
    """Set: container_location waits until `scm_answers` is set (a hung SCM)."""
    scm_answers = threading.Event()

    def container_location(self, container_id: int) -> ContainerLocation:
        if self.scm_hangs.is_set():
            self.scm_answers.wait()
        return super().container_location(container_id)

    def allocate_blocks(
        self, size: int, config: ReplicationConfig, num_blocks: int, excluded: ExcludeList, owner: str
    ) -> list[BlockLocation]:
        blocks = super().allocate_blocks(size, config, num_blocks, excluded, owner)
        return [BlockLocation(b.block_id, self.pipeline, self.members) for b in blocks]


@dataclass
class Cluster:
    om: OmDaemon
    stub: rpc.Stub
    datanode: object  # the served datanode's xceiver stub

    async def put(self, key: str, declared: int, stored: int, committed: int | None = None) -> object:
        """openKey(dataSize=declared), `stored` bytes to the datanode in 4 MiB chunks, commitKey of
        `committed` bytes (default: `declared`)."""
        return await self.stub.commitKey(await self.write(key, declared, stored, committed))

    async def write(
        self, key: str, declared: int, stored: int, committed: int | None = None
    ) -> pb.CommitKeyRequest:
        """put's openKey and writes; the commitKey request it would send."""
        committed = declared if committed is None else committed
        opened = await self.stub.openKey(
            pb.OpenKeyRequest(volume="vol1", bucket="bkt1", key=key, dataSize=declared, type=hdds_pb2.RATIS,
                              factor=hdds_pb2.ONE)
        )  # fmt: skip
        location = opened.keyInfo.locations[0]
        block = BlockID(
            location.blockID.containerBlockID.containerID, location.blockID.containerBlockID.localID
        )
        requests, _ = block_writes(block.container_id, block.local_id, b"x" * stored, 4 * MiB)
        assert set(results(await exchange(self.datanode, requests))) == {"SUCCESS"}  # type: ignore[arg-type]
        commit = pb.KeyLocation(blockID=location.blockID, offset=0, length=committed)
        return pb.CommitKeyRequest(
            volume="vol1",
            bucket="bkt1",
            key=key,
            clientID=opened.clientID,
            dataSize=committed,
            locations=[commit],
        )

    def used(self) -> tuple[int, int]:
        core = self.om.core
        assert core is not None
        return core.bucket_info("vol1", "bkt1").used_bytes, core.volume_info("vol1").used_bytes


class Hung:
    """A datanode that takes a request and never answers (a stopped process, a stuck disk)."""

    async def send(self, request_iterator, context):  # type: ignore[no-untyped-def]
        await asyncio.Event().wait()
        yield data_pb2.ContainerCommandResponseProto()


@asynccontextmanager
async def hung_datanode() -> AsyncIterator[int]:
    server = xceiver_server()
    server.add_service(rpc.service(data_pb2, "XceiverClientProtocolService"), Hung())
    port = await server.start("127.0.0.1", 0)
    try:
        yield port
    finally:
        await server.stop(0)


@asynccontextmanager
async def cluster(
    tmp_path: Path, quota: int, hung_port: int = 0, only_hung: bool = False
) -> AsyncIterator[Cluster]:
    """OM with a volume of `quota` and its bucket; OneDatanodeScm's datanodes."""
    node = open_node(tmp_path / "dn", DN, container_size="64MB")
    executor = ThreadPoolExecutor(2)
    try:
        async with serve(node, executor) as served:
            created = create(CID)
            created.pipelineID = ""  # no pipeline log here: OM's finalize names the fake SCM's pipeline
            assert set(results(await exchange(served.xceiver, [created]))) == {"SUCCESS"}
            configuration = conf(tmp_path / "om")
            configuration.set("ozone.scm.block.size", "8MB")  # a key of unknown size may hold 8 MiB
            configuration.set("ozone.om.commit.block.length.check.timeout", f"{TIMEOUT_S}s")
            om = OmDaemon(configuration, OneDatanodeScm(served.data_address.port, hung_port, only_hung))
            try:
                await om.start()
                async with om_channel(om.rpc_port) as channel:
                    stub = rpc.Stub(channel, OM_SERVICE)
                    await stub.createVolume(pb.CreateVolumeRequest(volume="vol1", quotaInBytes=quota))
                    await stub.createBucket(pb.CreateBucketRequest(volume="vol1", bucket="bkt1"))
                    yield Cluster(om, stub, served.xceiver)
            finally:
                await om.stop(0.5)
    finally:
        executor.shutdown()
        node.close()


async def refusal(call) -> tuple[rpc.StatusCode, str]:  # type: ignore[no-untyped-def]
    with pytest.raises(rpc.RpcError) as e:
        await call
    return e.value.code(), e.value.details() or ""


def test_the_probe_stored_8_mib_and_declared_1_byte(tmp_path: Path) -> None:
    """The probe's steps with a key of unknown size (its block allocated 8 MiB: a key announced smaller is
    allocated, and its token allows, only its size, which the datanode holds it to)."""

    async def body() -> None:
        async with cluster(tmp_path, quota=20 * 1000 * 1000) as c:
            await c.put(
                "k", 0, 8 * MiB, committed=1
            )  # two 4 MiB chunks stored (no token here), 1 byte committed
            assert c.used() == (8 * MiB, 8 * MiB)  # what is stored is charged
            await c.put("honest", 3000, 3000)
            assert c.used() == (8 * MiB + 3000, 8 * MiB + 3000)
            await c.stub.deleteKey(pb.DeleteKeyRequest(volume="vol1", bucket="bkt1", key="k"))
            assert c.used() == (3000, 3000)  # the charge goes with the key

    run(body())


def test_a_block_longer_than_allocated_is_refused_without_a_quota(tmp_path: Path) -> None:
    async def body() -> None:
        async with cluster(tmp_path, quota=0) as c:
            code, details = await refusal(c.put("k", 1, 8 * MiB, committed=8 * MiB))
            assert code is rpc.StatusCode.FAILED_PRECONDITION
            assert "more than the 1 allocated to it" in details
            assert c.used() == (0, 0)

    run(body())


def test_a_repeated_commit_under_a_quota_is_answered_as_the_first(tmp_path: Path) -> None:
    """A client retries a commit whose answer was lost (issue 28 defect 15): the length check does not
    stand in the way of answering it as the first."""

    async def body() -> None:
        async with cluster(tmp_path, quota=7 * 1000 * 1000) as c:
            request = await c.write("k", 1000, 1000)
            first = await c.stub.commitKey(request)
            assert await c.stub.commitKey(request) == first
            assert c.used() == (1000, 1000)

    run(body())


H = 512 * 1024


def test_a_replica_holding_more_than_acknowledged_commits_charged_what_it_stores(tmp_path: Path) -> None:
    """Review of defect 2 (A): a block's last putBlock was applied but its ALL_COMMITTED watch failed (a
    follower stalled), so the client commits the block at its acknowledged length and rewrites the rest to a
    new block. The commit is a normal one: it succeeds, and usage counts the bytes the replica stores."""

    async def body() -> None:
        async with cluster(tmp_path, quota=100 * MiB) as c:
            opened = await c.stub.openKey(
                pb.OpenKeyRequest(
                    volume="vol1", bucket="bkt1", key="k", type=hdds_pb2.RATIS, factor=hdds_pb2.ONE
                )
            )
            first = opened.keyInfo.locations[0].blockID
            second = (
                await c.stub.allocateBlock(
                    pb.AllocateBlockRequest(volume="vol1", bucket="bkt1", key="k", clientID=opened.clientID)
                )
            ).location.blockID
            cid, a, b = CID, first.containerBlockID.localID, second.containerBlockID.localID
            half = b"x" * H
            c0, c1 = chunk(f"{a}_chunk_0", 0, half), chunk(f"{a}_chunk_1", H, half)
            acknowledged_then_not = [write(cid, a, c0, half), put(cid, a, [c0]), write(cid, a, c1, half),
                                     put(cid, a, [c0, c1])]  # fmt: skip
            assert set(results(await exchange(c.datanode, acknowledged_then_not))) == {"SUCCESS"}  # type: ignore[arg-type]
            rewritten = chunk(f"{b}_chunk_0", 0, half)
            requests = [write(cid, b, rewritten, half), put(cid, b, [rewritten])]
            assert set(results(await exchange(c.datanode, requests))) == {"SUCCESS"}  # type: ignore[arg-type]
            commit = pb.CommitKeyRequest(
                volume="vol1", bucket="bkt1", key="k", clientID=opened.clientID, dataSize=2 * H,
                locations=[pb.KeyLocation(blockID=first, offset=0, length=H),
                           pb.KeyLocation(blockID=second, offset=H, length=H)],
            )  # fmt: skip
            committed = await c.stub.commitKey(commit)
            assert committed.keyInfo.dataSize == 2 * H
            assert c.used() == (3 * H, 3 * H)  # the first block's 2 H stored, the second's H
            assert await c.stub.commitKey(commit) == committed  # a retry is answered as the first
            await c.stub.deleteKey(pb.DeleteKeyRequest(volume="vol1", bucket="bkt1", key="k"))
            assert c.used() == (0, 0)

    run(body())


def test_a_commit_no_replica_holds_is_refused_and_its_open_key_kept(tmp_path: Path) -> None:
    """Every replica answered and holds less than declared: the client claims bytes that are nowhere. The
    commit is refused, and the open key kept (a check is never a reason to drop a writer's session)."""

    async def body() -> None:
        async with cluster(tmp_path, quota=100 * MiB) as c:
            request = await c.write("k", 0, 1000, committed=3000)
            for _ in range(2):  # a retry is refused alike, not KEY_NOT_FOUND
                code, details = await refusal(c.stub.commitKey(request))
                assert code is rpc.StatusCode.FAILED_PRECONDITION
                assert details.startswith(
                    "INVALID_BLOCK_LIST: locations[0]: no datanode holds the 3000 bytes"
                )
            assert c.om.core is not None and len(list(c.om.core.store.scan(OPEN_KEY_TABLE))) == 1
            assert c.used() == (0, 0)

    run(body())


def test_a_hung_replica_costs_a_commit_one_deadline_at_most(tmp_path: Path) -> None:
    """Review of defect 2 (B): a datanode that never answers is listed first for a 4-block key. Every
    replica of every block is asked at once, on the event loop: the commit takes at most one deadline
    (ozone.om.commit.block.length.check.timeout), and the healthy replica's answers are what is charged."""

    async def body() -> None:
        async with hung_datanode() as hung, cluster(tmp_path, 100 * MiB, hung_port=hung) as c:
            request = await four_blocks(c)
            started = time.monotonic()
            await c.stub.commitKey(request, timeout=30)
            assert time.monotonic() - started < 2 * TIMEOUT_S  # asked one after another: 4 deadlines
            assert c.used() == (4 * MiB, 4 * MiB)

    run(body())


def test_when_no_replica_answers_in_time_the_allocation_is_charged(tmp_path: Path) -> None:
    """The stored length cannot be learned: the commit does not wait or fail for it; each block is charged
    its allocation, the most its token lets a replica store."""

    async def body() -> None:
        async with hung_datanode() as hung, cluster(tmp_path, 100 * MiB, hung_port=hung, only_hung=True) as c:
            request = await c.write("k", 0, 0, committed=1000)  # nothing reaches a datanode
            started = time.monotonic()
            committed = await c.stub.commitKey(request, timeout=30)
            assert time.monotonic() - started < 2 * TIMEOUT_S
            assert committed.keyInfo.dataSize == 1000 and committed.keyInfo.chargedBytes == 8 * MiB
            assert c.used() == (8 * MiB, 8 * MiB)

    run(body())


def test_when_scm_does_not_say_where_the_block_is_the_allocation_is_charged(tmp_path: Path) -> None:
    """Locating the replicas counts against the same deadline: a hung SCM does not hold the commit."""

    async def body() -> None:
        async with cluster(tmp_path, 100 * MiB) as c:
            request = await c.write("k", 0, 1000, committed=1000)
            scm = c.om.scm
            assert isinstance(scm, OneDatanodeScm)
            scm.scm_hangs.set()
            try:
                started = time.monotonic()
                committed = await c.stub.commitKey(request, timeout=30)
                assert time.monotonic() - started < 2 * TIMEOUT_S
            finally:
                scm.scm_answers.set()
            assert committed.keyInfo.chargedBytes == 8 * MiB
            assert c.used() == (8 * MiB, 8 * MiB)

    run(body())


async def four_blocks(c: Cluster) -> pb.CommitKeyRequest:
    """A key of four blocks of 1 MiB each, written to the served datanode; its commitKey."""
    opened = await c.stub.openKey(
        pb.OpenKeyRequest(volume="vol1", bucket="bkt1", key="k", dataSize=4 * MiB, type=hdds_pb2.RATIS,
                          factor=hdds_pb2.ONE)
    )  # fmt: skip
    locations = []
    for i in range(4):
        location = opened.keyInfo.locations[0] if i == 0 else (
            await c.stub.allocateBlock(
                pb.AllocateBlockRequest(volume="vol1", bucket="bkt1", key="k", clientID=opened.clientID)
            )
        ).location  # fmt: skip
        local = location.blockID.containerBlockID.localID
        requests, _ = block_writes(CID, local, b"x" * MiB, MiB)
        assert set(results(await exchange(c.datanode, requests))) == {"SUCCESS"}  # type: ignore[arg-type]
        locations.append(pb.KeyLocation(blockID=location.blockID, offset=i * MiB, length=MiB))
    return pb.CommitKeyRequest(
        volume="vol1", bucket="bkt1", key="k", clientID=opened.clientID, dataSize=4 * MiB, locations=locations
    )


def test_an_ec_key_under_a_quota_is_charged_its_allocation(tmp_path: Path) -> None:
    """Review of defect 2 (EC): no replica's length says what an EC block group holds, so under a quota a
    group is charged what its token lets each index store (the allocation's first index length, on every
    index), not what the writer declares; a key announced at its size is allocated about that."""

    async def body() -> None:
        async with cluster(tmp_path, quota=100 * MiB) as c:
            ec = hdds_pb2.ECReplicationConfig(data=3, parity=2, codec="rs", ecChunkSize=1024 * 1024)
            for key, announced in (("unknown", 0), ("announced", 1000)):
                opened = await c.stub.openKey(
                    pb.OpenKeyRequest(volume="vol1", bucket="bkt1", key=key, dataSize=announced,
                                      type=hdds_pb2.EC, ecReplicationConfig=ec)
                )  # fmt: skip
                location = pb.KeyLocation(blockID=opened.keyInfo.locations[0].blockID, offset=0, length=1000)
                await c.stub.commitKey(
                    pb.CommitKeyRequest(volume="vol1", bucket="bkt1", key=key, clientID=opened.clientID,
                                        dataSize=1000, locations=[location])
                )  # fmt: skip
            # five indexes, each allowed an 8 MiB block; then each allowed 1000 bytes (not 1000 + 2 x 1000)
            assert c.used()[0] == 5 * 8 * MiB + 5 * 1000

    run(body())


def test_a_parts_stored_bytes_stay_charged_through_completion_and_abort(tmp_path: Path) -> None:
    """A multipart part is charged as a key is (what its replica stores), and its upload's completion keeps
    that charge in the key (KeyInfo.chargedBytes) until the key goes; an abort releases it."""

    async def body() -> None:
        async with cluster(tmp_path, quota=100 * MiB) as c:
            for key, before in (("completed", 0), ("aborted", 3000)):
                upload = await c.stub.initiateMultipartUpload(
                    pb.InitiateMultipartUploadRequest(
                        volume="vol1", bucket="bkt1", key=key, type=hdds_pb2.RATIS, factor=hdds_pb2.ONE
                    )
                )
                opened = await c.stub.openKey(
                    pb.OpenKeyRequest(volume="vol1", bucket="bkt1", key=key, type=hdds_pb2.RATIS,
                                      factor=hdds_pb2.ONE, multipartUploadID=upload.uploadID,
                                      multipartNumber=1)
                )  # fmt: skip
                location = opened.keyInfo.locations[0]
                local = location.blockID.containerBlockID.localID
                requests, _ = block_writes(CID, local, b"x" * 3000, 3000)
                assert set(results(await exchange(c.datanode, requests))) == {"SUCCESS"}  # type: ignore[arg-type]
                part = await c.stub.commitMultipartUploadPart(
                    pb.CommitMultipartUploadPartRequest(
                        volume="vol1", bucket="bkt1", key=key, clientID=opened.clientID,
                        multipartUploadID=upload.uploadID, multipartNumber=1, dataSize=1000,
                        locations=[pb.KeyLocation(blockID=location.blockID, offset=0, length=1000)],
                    )
                )  # fmt: skip
                assert c.used() == (before + 3000, before + 3000)  # what the part's replica stores
                if key == "aborted":
                    await c.stub.abortMultipartUpload(
                        pb.AbortMultipartUploadRequest(
                            volume="vol1", bucket="bkt1", key=key, uploadID=upload.uploadID
                        )
                    )
                    assert c.used() == (before, before)  # the completed key's alone
                    continue
                done = await c.stub.completeMultipartUpload(
                    pb.CompleteMultipartUploadRequest(
                        volume="vol1", bucket="bkt1", key=key, uploadID=upload.uploadID,
                        parts=[pb.Part(partNumber=1, partName=part.partName)],
                    )
                )  # fmt: skip
                assert (done.keyInfo.dataSize, done.keyInfo.chargedBytes) == (1000, 3000)
                assert c.used() == (3000, 3000)
            await c.stub.deleteKey(pb.DeleteKeyRequest(volume="vol1", bucket="bkt1", key="completed"))
            assert c.used() == (0, 0)

    run(body())


async def write_after_commit(c: Cluster, key: str) -> tuple[list[str], int]:
    """The review's repro (defect 2, review D): a key of 8 MiB announced, 1000 bytes written and committed,
    then the rest of its allocation written into the committed block with the same (unexpiring) rights and
    a putBlock of it all. The results of those writes, and the length the replica then holds."""
    opened = await c.stub.openKey(
        pb.OpenKeyRequest(volume="vol1", bucket="bkt1", key=key, dataSize=8 * MiB, type=hdds_pb2.RATIS,
                          factor=hdds_pb2.ONE)
    )  # fmt: skip
    location = opened.keyInfo.locations[0]
    lid = location.blockID.containerBlockID.localID
    first = b"a" * 1000
    c0 = chunk(f"{lid}_chunk_0", 0, first)
    assert set(results(await exchange(c.datanode, [write(CID, lid, c0, first), put(CID, lid, [c0])]))) == {  # type: ignore[arg-type]
        "SUCCESS"
    }
    await c.stub.commitKey(
        pb.CommitKeyRequest(volume="vol1", bucket="bkt1", key=key, clientID=opened.clientID, dataSize=1000,
                            locations=[pb.KeyLocation(blockID=location.blockID, offset=0, length=1000)])
    )  # fmt: skip
    more = b"b" * (4 * MiB)
    c1 = chunk(f"{lid}_chunk_1", 1000, more)
    c2 = chunk(f"{lid}_chunk_2", 1000 + 4 * MiB, more[: 4 * MiB - 1000])
    after = await exchange(
        c.datanode,  # type: ignore[arg-type]
        [write(CID, lid, c1, more), write(CID, lid, c2, more[: 4 * MiB - 1000]), put(CID, lid, [c0, c1, c2])],
    )
    body = data_pb2.GetCommittedBlockLengthRequestProto(blockID=block_id(CID, lid))
    [length] = await exchange(
        c.datanode,  # type: ignore[arg-type]
        [request(data_pb2.GetCommittedBlockLength, CID, getCommittedBlockLength=body)],
    )
    return results(after), length.getCommittedBlockLength.blockLength


def test_under_a_quota_a_committed_block_takes_no_more_writes(tmp_path: Path) -> None:
    """Review D of defect 2: a write token stays valid after its key's commit, so its holder wrote 8 MiB
    more into each committed block, stored uncharged. Under a quota OM now finalizes each block at the
    commit (FinalizeBlock): the datanode refuses every later write to it, and what OM charged is what the
    replica holds."""

    async def body() -> None:
        async with cluster(tmp_path, quota=10 * 1000 * 1000) as c:
            stored = 0
            for n in range(3):
                after, length = await write_after_commit(c, f"k{n}")
                assert after == ["BLOCK_ALREADY_FINALIZED"] * 3
                stored += length
            assert stored == 3000
            assert c.used() == (stored, stored)

    run(body())


def test_without_a_quota_no_block_is_finalized(tmp_path: Path) -> None:
    """Keys outside any quota commit as before: no FinalizeBlock is sent (its cost is paid only where a
    quota makes the lengths matter), so the block still takes writes after the commit."""

    async def body() -> None:
        async with cluster(tmp_path, quota=0) as c:
            after, length = await write_after_commit(c, "k")
            assert after == ["SUCCESS"] * 3
            assert length == 8 * MiB
            assert c.used() == (1000, 1000)

    run(body())
