"""Usage follows stored bytes, not declared ones (issue 28, defect 2): a user opened a key with dataSize=1 in
a volume with a 7 MB quota, wrote two 4 MiB chunks to the datanode and committed 1 byte; OM charged 1 byte.
Under a space quota OM now asks a datanode holding each block what it stores (GetCommittedBlockLength)
and refuses a commit that declares another length; and a block committed longer than OM allocated it is
refused whatever the quota. A real datanode dispatcher serves the block here; OM's SCM is faked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from pyozone.hdds.block import ExcludeList
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import RATIS_ONE, BlockID, ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import LifeCycleState, PipelineState
from pyozone.om.metadata import OPEN_KEY_TABLE
from pyozone.om.scm import ContainerLocation
from pyozone.om.server import OmDaemon
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.proto import OmClientProtocol_pb2_grpc as pb_grpc
from pyozone.proto import hdds_pb2
from pyozone.protocol.block import BlockLocation
from tests.builders import dn_id
from tests.unit.datanode.dns_helpers import block_writes, create, exchange, open_node, results, serve
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import conf, run

MiB = 1 << 20
CID = 7
DN = dn_id(1)


class OneDatanodeScm(FakeScm):
    """Allocates every block in container CID on one datanode, which the test serves."""

    def __init__(self, port: int) -> None:
        super().__init__()
        self.container = CID
        member = DatanodeDetails(DN, "localhost", "127.0.0.1", (("STANDALONE", port),))
        self.members = {DN: member}
        self.pipeline = Pipeline(
            "22222222-2222-4222-8222-222222222222", RATIS_ONE, PipelineState.OPEN, (DN,), 0, 0, leader=DN
        )
        self.locations[CID] = ContainerLocation(
            CID, LifeCycleState.OPEN, RATIS_ONE, self.pipeline, self.members, ()
        )

    def allocate_blocks(
        self, size: int, config: ReplicationConfig, num_blocks: int, excluded: ExcludeList, owner: str
    ) -> list[BlockLocation]:
        blocks = super().allocate_blocks(size, config, num_blocks, excluded, owner)
        return [BlockLocation(b.block_id, self.pipeline, self.members) for b in blocks]


@dataclass
class Cluster:
    om: OmDaemon
    stub: pb_grpc.OzoneManagerServiceStub
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
        return core.info_bucket("vol1", "bkt1").used_bytes, core.info_volume("vol1").used_bytes


@asynccontextmanager
async def cluster(tmp_path: Path, quota: int) -> AsyncIterator[Cluster]:
    node = open_node(tmp_path / "dn", DN, container_size="64MB")
    executor = ThreadPoolExecutor(2)
    try:
        async with serve(node, executor) as served:
            assert set(results(await exchange(served.xceiver, [create(CID)]))) == {"SUCCESS"}
            configuration = conf(tmp_path / "om")
            configuration.set("ozone.scm.block.size", "8MB")  # a key of unknown size may hold 8 MiB
            om = OmDaemon(configuration, OneDatanodeScm(served.address.port))
            try:
                await om.start()
                async with grpc.aio.insecure_channel(f"127.0.0.1:{om.rpc_port}") as channel:
                    stub = pb_grpc.OzoneManagerServiceStub(channel)
                    await stub.createVolume(pb.CreateVolumeRequest(volume="vol1", quotaInBytes=quota))
                    await stub.createBucket(pb.CreateBucketRequest(volume="vol1", bucket="bkt1"))
                    yield Cluster(om, stub, served.xceiver)
            finally:
                await om.stop(0.5)
    finally:
        executor.shutdown()
        node.close()


async def refusal(call) -> tuple[grpc.StatusCode, str]:  # type: ignore[no-untyped-def]
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await call
    return e.value.code(), e.value.details() or ""


def test_the_probe_stored_8_mib_and_declared_1_byte(tmp_path: Path) -> None:
    async def body() -> None:
        async with cluster(tmp_path, quota=7 * 1000 * 1000) as c:
            # dataSize=1, two 4 MiB chunks stored (this datanode checks no token), 1 byte committed
            code, details = await refusal(c.put("k", 1, 8 * MiB))
            assert code is grpc.StatusCode.FAILED_PRECONDITION
            assert (
                details.startswith("INVALID_BLOCK_LIST: locations[0]:")
                and f"holds {8 * MiB} bytes" in details
            )
            assert c.used() == (0, 0)
            assert c.om.core is not None and list(c.om.core.store.scan(OPEN_KEY_TABLE)) == []  # abandoned

            await c.put("honest", 3000, 3000)  # what is stored is what is charged
            assert c.used() == (3000, 3000)

    run(body())


def test_a_block_longer_than_allocated_is_refused_without_a_quota(tmp_path: Path) -> None:
    async def body() -> None:
        async with cluster(tmp_path, quota=0) as c:
            code, details = await refusal(c.put("k", 1, 8 * MiB, committed=8 * MiB))
            assert code is grpc.StatusCode.FAILED_PRECONDITION
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
