"""EC block group reads (ECBlockInputStream): normal reads of data indexes only, degraded reads that rebuild
missing or corrupt cells from any `data` healthy indexes, and the clear error when too many are gone.

Each replica index lives on a fake datanode answering GetBlock and ReadChunk in process (the client's own
BlockInputStream verifies the checksums), holding what the striped writer stores: its cells as chunks,
parity cells as long as their stripe's first cell.
"""

from __future__ import annotations

import asyncio
import io
import os
import threading
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyozone.client import key_input
from pyozone.client.config import ClientConfig
from pyozone.client.ec_input import ECBlockInputStream
from pyozone.client.errors import BlockReadError
from pyozone.client.key_input import KeyInputStream
from pyozone.client.key_reader import KeyReader
from pyozone.config import OzoneConfiguration
from pyozone.framework.datanode import DatanodeCallError
from pyozone.hdds.checksum import ChecksumType, compute
from pyozone.hdds.ec.codec import codec_for
from pyozone.hdds.ec.layout import StripeLayout
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.locations import DatanodeRef, KeyLocation, PipelineRef
from pyozone.hdds.om_views import KeyInfo
from pyozone.proto import DatanodeClientProtocol_pb2 as pb

BPC = 256
RS = ReplicationConfig.parse("rs-3-2-1k")
XOR = ReplicationConfig.parse("xor-2-1-1k")
CONFIG = ClientConfig.from_conf(
    OzoneConfiguration({"ozone.client.bytes.per.checksum": str(BPC), "ozone.client.checksum.type": "CRC32"}),
    "127.0.0.1:9862",
)


class FakeIndexNode:
    """A datanode holding one replica index of block group (1, 7): GetBlock, ReadChunk and GetSmallFile, or
    failures."""

    def __init__(self, name: str, index: int, cells: list[bytes], group_length: int, bpc: int = BPC) -> None:
        self.ref = DatanodeRef(name, name, "127.0.0.1", 1000 + index)
        self.index = index
        self.cells = cells
        self.group_length = group_length
        self.state = "ok"  # "down" (unreachable), "refuse" (an error result), "no_block"
        self.corrupt: set[int] = set()  # cells (chunks) whose bytes come back flipped
        self.requests = 0
        self.bpc = bpc
        self._block: pb.BlockData | None = None

    def block(self) -> pb.BlockData:
        if self._block is None:
            self._block = self._block_data()
        return self._block

    def _block_data(self) -> pb.BlockData:
        data = pb.BlockData(blockID=pb.DatanodeBlockID(containerID=1, localID=7, replicaIndex=self.index))
        data.metadata.add(key="blockGroupLen", value=str(self.group_length))
        offset = 0
        for n, cell in enumerate(self.cells):
            sums = compute(cell, ChecksumType.CRC32, self.bpc)
            checksum = pb.ChecksumData(type=pb.CRC32, bytesPerChecksum=self.bpc, checksums=sums.checksums)
            data.chunks.add(chunkName=f"7_chunk_{n}", offset=offset, len=len(cell), checksumData=checksum)
            offset += len(cell)
        return data

    async def call(self, request: pb.ContainerCommandRequestProto) -> pb.ContainerCommandResponseProto:
        self.requests += 1
        if self.state == "down":
            raise DatanodeCallError(self.ref, "UNAVAILABLE", "connection refused", unreachable=True)
        if self.state == "refuse":
            raise DatanodeCallError(self.ref, "CONTAINER_UNHEALTHY", "refused")
        if self.state == "no_block":
            raise DatanodeCallError(self.ref, "NO_SUCH_BLOCK", "7")
        if request.cmdType == pb.GetBlock:
            return pb.ContainerCommandResponseProto(getBlock=pb.GetBlockResponseProto(blockData=self.block()))
        if request.cmdType == pb.GetSmallFile:  # the whole block, with its last chunk (Ozone's answer)
            cells = [bytes(b ^ 0xFF for b in c) if n in self.corrupt else c for n, c in enumerate(self.cells)]
            whole = pb.ReadChunkResponseProto(chunkData=self.block().chunks[-1], data=b"".join(cells))
            return pb.ContainerCommandResponseProto(getSmallFile=pb.GetSmallFileResponseProto(data=whole))
        wanted = request.readChunk.chunkData
        n = int(wanted.chunkName.rsplit("_", 1)[1])
        start = wanted.offset - sum(len(c) for c in self.cells[:n])
        piece = self.cells[n][start : start + wanted.len]
        if n in self.corrupt:
            piece = bytes(b ^ 0xFF for b in piece)
        answer = pb.ReadChunkResponseProto(chunkData=wanted, data=piece)
        return pb.ContainerCommandResponseProto(readChunk=answer)


class FakeStreams:
    """Stands in for StreamCache: a datanode's stream is the fake node itself."""

    def __init__(self, nodes: list[FakeIndexNode]) -> None:
        self.nodes = {n.ref.uuid: n for n in nodes}

    def get(self, datanode: DatanodeRef) -> FakeIndexNode:
        return self.nodes[datanode.uuid]

    async def drop(self, datanode: DatanodeRef) -> None:
        pass

    async def close(self) -> None:
        pass


def stripe_cells(config: ReplicationConfig, data: bytes) -> dict[int, list[bytes]]:
    """What the striped writer stores on each index: data cells round-robin, one parity cell per stripe."""
    layout, codec = StripeLayout.of(config), codec_for(config)
    stored: dict[int, list[bytes]] = {i: [] for i in range(1, layout.nodes + 1)}
    for s in range(layout.stripes(len(data))):
        lengths = layout.stripe_cell_lengths(len(data), s)
        base = s * layout.stripe_bytes
        cells = [data[base + i * layout.cell : base + i * layout.cell + n] for i, n in enumerate(lengths)]
        for i, cell in enumerate(cells, 1):
            if cell:
                stored[i].append(cell)
        padded = [c + bytes(lengths[0] - len(c)) for c in cells]
        for j, parity in enumerate(codec.encode(padded), layout.data + 1):
            stored[j].append(bytes(parity))
    return stored


class Group:
    """A block group on fake datanodes (node "dn<i>" holds index i) and a stream reading it."""

    def __init__(
        self, config: ReplicationConfig, data: bytes, offset: int = 0, local_id: int = 7, bpc: int = BPC
    ) -> None:
        self.config, self.data = config, data
        self.nodes = {
            i: FakeIndexNode(f"dn{i}-{local_id}", i, cells, len(data), bpc)
            for i, cells in stripe_cells(config, data).items()
        }
        self.spare: dict[int, FakeIndexNode] = {}  # nodes a refresh from OM adds
        self.refreshes = 0
        self.location = self.locate(offset, local_id)

    def locate(self, offset: int = 0, local_id: int = 7) -> KeyLocation:
        nodes = [*self.nodes.values(), *self.spare.values()]
        pipeline = PipelineRef(
            "ec-pipeline", tuple(n.ref for n in nodes), "", tuple(n.index for n in nodes), self.config
        )
        return KeyLocation(1, local_id, 0, offset, len(self.data), pipeline, "CLOSED")

    async def refresh(self, old: KeyLocation) -> KeyLocation:
        self.refreshes += 1
        return self.locate(old.offset, old.local_id)

    def streams(self) -> FakeStreams:
        return FakeStreams([*self.nodes.values(), *self.spare.values()])

    def stream(self) -> ECBlockInputStream:
        return ECBlockInputStream(self.location, CONFIG, self.streams(), self.refresh)  # type: ignore[arg-type]


async def read_range(stream: ECBlockInputStream, offset: int, n: int) -> bytes:
    parts = []
    while n > 0:
        part = await stream.read(offset, n)
        if not part:
            break
        parts.append(part)
        offset, n = offset + len(part), n - len(part)
    return b"".join(parts)


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def sizes(config: ReplicationConfig) -> list[int]:
    stripe = StripeLayout.of(config).stripe_bytes
    return [0, 1, 1000, stripe - 1, stripe, stripe + 1, 4 * stripe + 700]


# ------------------------------------------------------------------ normal reads
@pytest.mark.parametrize("config", [RS, XOR], ids=["rs-3-2", "xor-2-1"])
def test_normal_reads_of_every_size_ask_only_data_indexes(config: ReplicationConfig) -> None:
    for size in sizes(config):
        group = Group(config, os.urandom(size))
        stream = group.stream()
        assert run(read_range(stream, 0, size + 10)) == group.data, size
        parity = [n.requests for i, n in group.nodes.items() if i > config.ec_data]
        assert parity == [0] * config.ec_parity, size
        assert stream.missing == frozenset()


def test_a_read_ends_at_the_stripe_and_starts_anywhere_in_a_cell() -> None:
    group = Group(RS, os.urandom(5 * 3072 + 10))
    stream = group.stream()

    async def check() -> None:
        assert await stream.read(100, 10_000) == group.data[100:3072]  # never past the stripe's end
        for offset, n in [(1023, 2), (1024, 1024), (3000, 200), (15_000, 1000), (15_359, 50), (15_370, 9)]:
            assert await read_range(stream, offset, n) == group.data[offset : offset + n], (offset, n)
        assert await stream.read(len(group.data), 5) == b""

    run(check())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    config=st.sampled_from([RS, XOR]),
    size=st.integers(0, 9000),
    ranges=st.lists(st.tuples(st.integers(0, 9100), st.integers(1, 4000)), min_size=1, max_size=6),
    down=st.integers(0, 2),
    seed=st.integers(0, 2**32 - 1),
)
def test_range_reads_match_the_original_bytes(
    config: ReplicationConfig, size: int, ranges: list[tuple[int, int]], down: int, seed: int
) -> None:
    """Any ranges, with up to `parity` indexes down (data or parity ones): the bytes written."""
    import random

    rng = random.Random(seed)
    data = rng.randbytes(size)
    group = Group(config, data)
    for index in rng.sample(sorted(group.nodes), min(down, config.ec_parity)):
        group.nodes[index].state = "down"
    stream = group.stream()

    async def check() -> None:
        for offset, n in ranges:
            assert await read_range(stream, offset, n) == data[offset : offset + n], (offset, n)

    run(check())


# ------------------------------------------------------------------ degraded reads
@pytest.mark.parametrize("config", [RS, XOR], ids=["rs-3-2", "xor-2-1"])
@pytest.mark.parametrize("failure", ["down", "refuse", "no_block", "corrupt"])
def test_missing_indexes_up_to_parity_are_rebuilt(config: ReplicationConfig, failure: str) -> None:
    for size in sizes(config):
        for missing in range(1, config.ec_parity + 1):
            for lost in _combinations(config.ec_data + config.ec_parity, missing):
                group = Group(config, os.urandom(size))
                for index in lost:
                    node = group.nodes[index]
                    if failure == "corrupt":
                        node.corrupt = set(range(len(node.cells)))
                    else:
                        node.state = failure
                stream = group.stream()
                assert run(read_range(stream, 0, size)) == group.data, (size, lost)
                assert group.refreshes == 0


def _combinations(nodes: int, k: int) -> Iterator[tuple[int, ...]]:
    from itertools import combinations

    return combinations(range(1, nodes + 1), k)


def test_one_corrupt_cell_makes_its_index_missing_and_the_stripe_is_rebuilt() -> None:
    group = Group(RS, os.urandom(4 * 3072))
    group.nodes[2].corrupt = {2}  # the third cell of index 2 (stripe 2)
    stream = group.stream()
    assert run(read_range(stream, 0, len(group.data))) == group.data
    assert stream.missing == {2}
    assert group.nodes[4].requests > 0  # parity read for the rebuilt stripes


def test_a_datanode_holding_another_index_than_om_says_counts_as_missing() -> None:
    group = Group(RS, os.urandom(2 * 3072))
    group.nodes[2].index = 4  # its GetBlock answers replica index 4: OM's locations are out of date
    stream = group.stream()
    assert run(read_range(stream, 0, len(group.data))) == group.data
    assert stream.missing == {2}


def test_a_dead_index_is_asked_once_per_block_group() -> None:
    group = Group(RS, os.urandom(6 * 3072))
    group.nodes[1].state = "down"
    stream = group.stream()
    assert run(read_range(stream, 0, len(group.data))) == group.data
    assert group.nodes[1].requests == 1  # marked missing, not retried per cell


def test_small_sequential_reads_decode_each_stripe_once(monkeypatch: pytest.MonkeyPatch) -> None:
    group = Group(RS, os.urandom(3 * 3072))
    group.nodes[3].state = "down"
    stream = group.stream()
    codec = codec_for(RS)
    decodes = []
    real = codec.decode
    monkeypatch.setattr(codec, "decode", lambda cells, missing: decodes.append(1) or real(cells, missing))
    assert run(read_range(stream, 0, len(group.data))) == group.data  # whole reads, then 100-byte ones
    decodes.clear()

    async def small() -> bytes:
        return b"".join([await read_range(stream, at, 100) for at in range(0, len(group.data), 100)])

    assert run(small()) == group.data
    assert len(decodes) == 3


def test_a_degraded_group_rebuilds_the_next_stripe_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    group = Group(RS, os.urandom(4 * 3072))
    group.nodes[1].state = "down"
    stream = group.stream()
    codec = codec_for(RS)
    decoded: list[int] = []
    real = codec.decode
    monkeypatch.setattr(codec, "decode", lambda cells, missing: decoded.append(1) or real(cells, missing))

    async def decodes(n: int) -> None:
        for _ in range(500):  # bounded: 5 s
            if len(decoded) >= n:
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"{len(decoded)} decodes, not {n}")

    async def check() -> None:
        assert await stream.read(0, 100) == group.data[:100]
        await decodes(2)  # stripe 1 rebuilt while nobody asked for it yet
        assert await stream.read(3072, 3072) == group.data[3072:6144]
        assert len(decoded) == 2  # stripe 1 came from the rebuild ahead
        await decodes(3)  # and stripe 2 is on its way
        assert await stream.read(9216, 50) == group.data[9216:9266]  # a jump: stripe 2 is dropped
        assert await stream.read(0, 3072) == group.data[:3072]
        stream.cancel()

    run(check())


def test_too_many_missing_refreshes_once_then_names_the_block_group() -> None:
    group = Group(RS, os.urandom(2 * 3072))
    for index in (1, 2, 5):
        group.nodes[index].state = "down"
    stream = group.stream()
    with pytest.raises(BlockReadError) as e:
        run(read_range(stream, 0, len(group.data)))
    message = str(e.value)
    assert "EC block group conID: 1 locID: 7 (rs-3-2-1k)" in message
    assert "3 of 5 replica indexes are unavailable" in message
    assert "index 1:" in message and "index 5:" in message
    assert group.refreshes == 1


def test_a_refresh_from_om_brings_a_reconstructed_index() -> None:
    group = Group(XOR, os.urandom(5000))
    group.nodes[1].state = "down"
    group.nodes[2].state = "down"
    spare = FakeIndexNode("dn-new", 2, group.nodes[2].cells, len(group.data))
    group.spare[2] = spare  # index 2 rebuilt on another datanode: OM's next answer names it
    stream = group.stream()
    assert run(read_range(stream, 0, len(group.data))) == group.data
    assert group.refreshes == 1 and spare.requests > 0


@pytest.mark.slow  # a timing: run it on a quiet machine
def test_degraded_read_is_not_slower_than_half_a_normal_read() -> None:
    """Cells of 1 MiB as in rs-3-2-1024k: rebuilding a lost data index costs little next to the reads."""
    import time

    config = ReplicationConfig.parse("rs-3-2-1024k")
    data = os.urandom(12 << 20)

    def timed(down: int | None) -> float:
        group = Group(config, data, bpc=16 << 10)
        if down:
            group.nodes[down].state = "down"
        stream = group.stream()
        start = time.perf_counter()
        assert run(read_range(stream, 0, len(data))) == data
        return time.perf_counter() - start

    normal = min(timed(None) for _ in range(2))
    degraded = min(timed(1) for _ in range(2))
    print(f"normal {len(data) / normal / 1e6:.0f} MB/s, degraded {len(data) / degraded / 1e6:.0f} MB/s")
    assert degraded <= 2 * normal


# ------------------------------------------------------------------ the key's streams
def key_of(groups: list[Group]) -> KeyInfo:
    size = sum(len(g.data) for g in groups)
    return KeyInfo("vol", "bucket", "k", size, 0, 0, RS, 1, tuple(g.location for g in groups))


def test_key_input_and_key_reader_read_ec_keys_as_any_other(monkeypatch: pytest.MonkeyPatch) -> None:
    first = Group(RS, os.urandom(7000), 0, local_id=7)
    second = Group(RS, os.urandom(5000), 7000, local_id=8)
    second.nodes[2].state = "down"  # the second group reads degraded
    data = first.data + second.data
    streams = FakeStreams([*first.nodes.values(), *second.nodes.values()])
    monkeypatch.setattr(key_input, "StreamCache", lambda pool, timeout: streams)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        info = key_of([first, second])

        async def open_key() -> KeyInputStream:
            return KeyInputStream(None, None, CONFIG, info, "")  # type: ignore[arg-type]

        stream = asyncio.run_coroutine_threadsafe(open_key(), loop).result()
        with io.BufferedReader(KeyReader(loop, stream), 1000) as reader:
            assert reader.read() == data
            reader.seek(6900)
            assert reader.read(300) == data[6900:7200]  # across the two groups
            reader.seek(-10, os.SEEK_END)
            assert reader.read() == data[-10:]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
