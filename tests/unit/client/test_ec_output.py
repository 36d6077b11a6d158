"""The striped EC write against fake datanodes: cells per index, parity, putBlocks with the group length,
block groups, and a datanode failing mid-write (the group ends at its acknowledged stripes, the rest is
rewritten in a new group on another pipeline).

The fake datanodes take an EC pipeline's writes directly (no pipeline log, logIndex 0), as contract 4 says
a real datanode does; every index's bytes are read back from the fakes and put together by StripeLayout.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator

import pytest

from pyozone.client import OzoneClient
from pyozone.client.errors import BlockWriteError
from pyozone.hdds.ec.codec import codec_for
from pyozone.hdds.ec.layout import BLOCK_GROUP_LEN, StripeLayout
from pyozone.hdds.ids import ReplicationConfig
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.proto import OmClientProtocol_pb2 as om
from pyozone.proto import hdds_pb2
from pyozone.protocol.common import ec_config_to_proto
from tests.unit.client.fakes import (
    BLOCK,
    FLUSH,
    KB,
    FakeCluster,
    FakeDatanode,
    FakeOM,
    FakePipeline,
    small_conf,
)

RS = ReplicationConfig.parse("rs-3-2-1k")
XOR = ReplicationConfig.parse("xor-2-1-1k")


class ECPipeline(FakePipeline):
    """An EC pipeline: member i holds replica index i + 1."""

    def __init__(self, pid: str, members: list[FakeDatanode], ec: ReplicationConfig) -> None:
        super().__init__(pid, members)
        self.ec = ec

    def proto(self) -> hdds_pb2.Pipeline:
        return hdds_pb2.Pipeline(
            members=[m.proto() for m in self.members],
            state=hdds_pb2.PIPELINE_OPEN,
            type=hdds_pb2.EC,
            id=hdds_pb2.PipelineID(id=self.id),
            memberReplicaIndexes=range(1, len(self.members) + 1),
            ecReplicationConfig=ec_config_to_proto(self.ec, "ec"),
        )


class ECDatanode(FakeDatanode):
    """Applies an EC pipeline's writeChunk and putBlock itself and answers logIndex 0. `crash_at`: the
    writeChunk (1-based) at which the datanode dies: the stream breaks and the server stops."""

    crash_at = 0

    def _write_path(self, request: pb.ContainerCommandRequestProto) -> pb.ContainerCommandResponseProto:
        pipeline = self.cluster.pipelines.get(request.pipelineID)
        if not isinstance(pipeline, ECPipeline):
            return super()._write_path(request)
        if self not in pipeline.members or request.cmdType == pb.WatchForCommit:
            return pb.ContainerCommandResponseProto(result=pb.GROUP_MISMATCH, message=request.pipelineID)
        if self.cluster.container_state.get(request.containerID, "OPEN") != "OPEN":
            return pb.ContainerCommandResponseProto(result=pb.CLOSED_CONTAINER_IO, message="closed")
        index = pipeline.members.index(self) + 1
        if request.cmdType == pb.WriteChunk:
            if self.requests.count(pb.WriteChunk) == self.crash_at:
                threading.Thread(target=self.stop).start()
                raise RuntimeError(f"{self.name} crashed")
            body = request.writeChunk
            bid = body.blockID
            assert bid.replicaIndex == index
            self.chunks[(bid.containerID, bid.localID, body.chunkData.chunkName)] = body.data
            written = pb.WriteChunkResponseProto()
            return pb.ContainerCommandResponseProto(result=pb.SUCCESS, writeChunk=written)
        data = request.putBlock.blockData
        assert data.blockID.replicaIndex == index
        self.blocks[(data.blockID.containerID, data.blockID.localID)] = data
        length = pb.GetCommittedBlockLengthResponseProto(blockID=data.blockID, blockLength=data.size)
        return pb.ContainerCommandResponseProto(
            result=pb.SUCCESS, putBlock=pb.PutBlockResponseProto(committedBlockLength=length)
        )


class ECCluster(FakeCluster):
    """`pipelines` EC pipelines of `ec` on their own datanodes; OM allocates groups of data x BLOCK bytes."""

    def __init__(self, ec: ReplicationConfig, pipelines: int = 2) -> None:
        super().__init__(datanodes=0, block_size=BLOCK)
        self.om.server.stop()
        self.om = FakeOM(self, ec.ec_data * BLOCK)  # Ozone's OM: a group holds block size on each data index
        self.om.replace_excluded = False
        nodes = ec.ec_data + ec.ec_parity
        self.datanodes = [ECDatanode(self, i) for i in range(nodes * pipelines)]
        for p in range(pipelines):
            pid = str(uuid.UUID(int=5000 + p))
            self.pipelines[pid] = ECPipeline(pid, self.datanodes[p * nodes : (p + 1) * nodes], ec)
        self.ec = ec


@pytest.fixture(params=[RS, XOR], ids=["rs-3-2", "xor-2-1"])
def ec_cluster(request: pytest.FixtureRequest) -> Iterator[ECCluster]:
    c = ECCluster(request.param)
    yield c
    c.stop()


@pytest.fixture
def ec_client(ec_cluster: ECCluster) -> Iterator[OzoneClient]:
    with OzoneClient(small_conf(ec_cluster.om.address)) as client:
        client.create_volume("vol")
        client.create_bucket("vol", "bucket")
        yield client


def index_bytes(cluster: ECCluster, loc: om.KeyLocation) -> dict[int, tuple[bytes, pb.BlockData]]:
    """Each replica index's BlockData and its bytes: its chunks in order, as far as the group's length
    needs (a group ended by a failure may list later chunks an index never stored)."""
    bid = loc.blockID.containerBlockID
    layout = StripeLayout.of(cluster.ec)
    found = {}
    for index, dn in enumerate(cluster.pipeline_of(bid.containerID).members, start=1):
        block = dn.blocks[(bid.containerID, bid.localID)]
        data, want = b"", layout.index_length(loc.length, index)
        for chunk in block.chunks:
            if len(data) >= want:
                break
            data += dn.chunks[(bid.containerID, bid.localID, chunk.chunkName)]
        found[index] = (data, block)
    return found


def group_bytes(cluster: ECCluster, loc: om.KeyLocation, exact: bool = True) -> bytes:
    """The group's bytes put together from its data indexes, checking every index against the layout
    and every stored parity cell against the codec. `exact`: each index holds exactly the group's cells
    (a group ended by a failure may hold more on the indexes that took later stripes)."""
    ec, length = cluster.ec, loc.length
    layout, codec = StripeLayout.of(ec), codec_for(ec)
    lid = loc.blockID.containerBlockID.localID
    stored = index_bytes(cluster, loc)
    for index, (data, block) in stored.items():
        want = layout.index_length(length, index)
        assert len(data) == want and block.size >= want
        if exact:
            assert block.size == want
            assert {kv.key: kv.value for kv in block.metadata} == {BLOCK_GROUP_LEN: str(length)}
            assert [c.chunkName for c in block.chunks] == [
                f"{lid}_chunk_{n}" for n in range(1, len(block.chunks) + 1)
            ]
    for stripe in range(layout.stripes(length)):
        lengths = layout.stripe_cell_lengths(length, stripe)
        at = stripe * layout.cell
        cells = [stored[i + 1][0][at : at + n] + bytes(lengths[0] - n) for i, n in enumerate(lengths)]
        parity = [bytes(p) for p in codec.encode(cells)]
        parity_indexes = range(layout.data + 1, layout.nodes + 1)
        assert parity == [stored[i][0][at : at + lengths[0]] for i in parity_indexes]
    out = bytearray()
    for cell in layout.cells(0, length):
        out += stored[cell.index][0][cell.index_offset : cell.index_offset + cell.length]
    return bytes(out)


def key_bytes(cluster: ECCluster, exact: bool = True) -> bytes:
    commit = cluster.om.commits[-1]
    assert [loc.offset for loc in commit.locations] == [
        sum(x.length for x in commit.locations[:i]) for i in range(len(commit.locations))
    ]
    return b"".join(group_bytes(cluster, loc, exact) for loc in commit.locations)


def stripe(cluster: ECCluster) -> int:
    return StripeLayout.of(cluster.ec).stripe_bytes


@pytest.mark.parametrize(
    "size",
    [
        pytest.param(lambda s: 0, id="0B"),
        pytest.param(lambda s: KB, id="1KB"),
        pytest.param(lambda s: s - 1, id="stripe-1"),
        pytest.param(lambda s: s, id="stripe"),
        pytest.param(lambda s: 7 * s + 100, id="stripes"),
        pytest.param(lambda s: 2 * (BLOCK * (s // KB)) + 5 * s + 17, id="groups"),
    ],
)
def test_sizes_are_striped_over_the_indexes(ec_client: OzoneClient, ec_cluster: ECCluster, size) -> None:  # type: ignore[no-untyped-def]
    n = size(stripe(ec_cluster))
    data = os.urandom(n)
    info = ec_client.put_key("vol", "bucket", "k", data)
    assert info.data_size == n and info.write_path == "EC"
    capacity = ec_cluster.ec.ec_data * BLOCK
    commit = ec_cluster.om.commits[-1]
    assert [loc.length for loc in commit.locations] == [min(capacity, n - i) for i in range(0, n, capacity)]
    assert key_bytes(ec_cluster) == data
    assert all(pb.WatchForCommit not in dn.requests for dn in ec_cluster.datanodes)


def put_every(cluster: ECCluster) -> int:
    """Stripes per putBlock: a flush.size of them (FLUSH: 2 stripes of rs-3-2, 4 of xor-2-1)."""
    return max(1, FLUSH // stripe(cluster))


def test_putblocks_every_flush_size_and_at_the_end(ec_client: OzoneClient, ec_cluster: ECCluster) -> None:
    """Three full stripes and one of a byte: each index gets its cells and a putBlock per flush.size of
    stripes, the last one (eof) with the last stripe."""
    s = stripe(ec_cluster)
    data = os.urandom(3 * s + 1)
    with ec_client.create_key("vol", "bucket", "k", size_hint=len(data)) as writer:
        writer.write(data)
    (loc,) = ec_cluster.om.commits[-1].locations
    nodes = ec_cluster.pipeline_of(loc.blockID.containerBlockID.containerID).members
    puts = -(-4 // put_every(ec_cluster))
    for index, dn in enumerate(nodes, start=1):
        # the 1 byte stripe: index 1 and the parity indexes get a fourth cell
        cells = 4 if index == 1 or index > ec_cluster.ec.ec_data else 3
        assert (dn.requests.count(pb.WriteChunk), dn.requests.count(pb.PutBlock)) == (cells, puts)
    assert key_bytes(ec_cluster) == data


def test_small_writes_equal_one(ec_client: OzoneClient, ec_cluster: ECCluster) -> None:
    data = os.urandom(5 * stripe(ec_cluster) + 333)
    mutable = bytearray(500)
    with ec_client.create_key("vol", "bucket", "k") as writer:
        for i in range(0, len(data), 500):
            mutable[: len(data[i : i + 500])] = data[i : i + 500]
            writer.write(memoryview(mutable)[: len(data[i : i + 500])])  # refilled: copied when written
    assert key_bytes(ec_cluster) == data


def test_a_datanode_dying_mid_write_ends_the_group_and_rewrites_the_rest(
    ec_client: OzoneClient, ec_cluster: ECCluster
) -> None:
    s = stripe(ec_cluster)
    first, second = list(ec_cluster.pipelines.values())
    data = os.urandom(12 * s + 5)
    victim = first.members[1]
    victim.crash_at = 5  # its cell of the fifth stripe
    with ec_client.create_key("vol", "bucket", "k", size_hint=len(data)) as writer:
        for i in range(0, len(data), 1000):
            writer.write(data[i : i + 1000])
    locations = ec_cluster.om.commits[-1].locations
    assert [loc.length for loc in locations] == [4 * s, len(data) - 4 * s]
    assert ec_cluster.pipeline_of(locations[1].blockID.containerBlockID.containerID) is second
    assert key_bytes(ec_cluster, exact=False) == data
    excluded = ec_cluster.om.allocations[-1]
    assert victim.uuid in excluded.datanodes and first.id in [p.id for p in excluded.pipelineIds]


def test_a_refused_stripe_is_rewritten_elsewhere(ec_client: OzoneClient, ec_cluster: ECCluster) -> None:
    """A parity index refuses its third cell: the group keeps the stripes every index acknowledged before
    (putBlocks carry that length), the container is excluded and the rest goes to a new group."""
    s = stripe(ec_cluster)
    first = next(iter(ec_cluster.pipelines.values()))
    first.members[-1].fail_next(pb.WriteChunk, pb.IO_EXCEPTION, after=2)
    data = os.urandom(6 * s)
    with ec_client.create_key("vol", "bucket", "k", size_hint=len(data)) as writer:
        for i in range(0, len(data), s):
            writer.write(data[i : i + s])
    kept = 2 // put_every(ec_cluster) * put_every(ec_cluster) * s  # the batches of stripes before the third
    locations = ec_cluster.om.commits[-1].locations
    assert [loc.length for loc in locations] == [n for n in (kept, len(data) - kept) if n]
    assert key_bytes(ec_cluster, exact=False) == data
    (refused,) = ec_cluster.om.allocations[-1].containerIds
    assert ec_cluster.pipeline_of(refused) is first
    assert ec_cluster.pipeline_of(locations[-1].blockID.containerBlockID.containerID) is not first


def test_gives_up_after_the_ec_stripe_retries(ec_cluster: ECCluster) -> None:
    conf = small_conf(ec_cluster.om.address, {"ozone.client.max.ec.stripe.write.retries": "1"})
    with OzoneClient(conf) as c:
        c.create_volume("vol")
        c.create_bucket("vol", "bucket")
        for pipeline in ec_cluster.pipelines.values():
            pipeline.members[0].fail_next(pb.WriteChunk, pb.IO_EXCEPTION, times=5)
        with pytest.raises(BlockWriteError, match=r"ozone\.client\.max\.ec\.stripe\.write\.retries 1"):
            c.put_key("vol", "bucket", "k", os.urandom(3 * stripe(ec_cluster)))
    assert not ec_cluster.om.commits
