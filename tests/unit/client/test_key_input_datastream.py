"""KeyInputStream over a real datanode's datastream port (issue 35): reads hand out views of the received
ranges and copy each byte once, into the result or the caller's buffer (readinto), while the range
buffers are received into again (each block reads its next range ahead into the one it let go of); every
range still verified against the block's checksums; a read that fails leaves the position where it was.

The block is written through the dispatcher (storage on tmp_path); GetBlock is answered by the same
dispatcher in process, the ranges come from a DatastreamServer over loopback by sendfile."""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone.client import key_input
from pyozone.client.block_input import BlockInputStream
from pyozone.client.config import ClientConfig
from pyozone.client.datastream_read import DatastreamReader
from pyozone.client.errors import BlockReadError
from pyozone.client.key_input import KeyInputStream
from pyozone.config import OzoneConfiguration
from pyozone.datanode.datastream import DatastreamServer
from pyozone.datanode.storage import chunk_io
from pyozone.datanode.xceiver import Dispatcher
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.locations import DatanodeRef, KeyLocation, PipelineRef
from pyozone.hdds.om_views import KeyInfo
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.unit.datanode.dns_helpers import BPC, Node, chunk, open_node, put, write

CID = 7
CHUNK = 16 * BPC
CHUNKS = 7  # the last one short
SPAN = 2 * CHUNK  # a range of two chunks: a block of seven is four ranges
CONFIG = ClientConfig.from_conf(
    OzoneConfiguration({
        "ozone.client.bytes.per.checksum": str(BPC), "ozone.client.checksum.type": "CRC32",
        "ozone.client.read.max.retries": "0", "ozone.client.stream.buffer.size": str(CHUNK),
    }),
    "127.0.0.1:9862",
)  # fmt: skip


class Streams:
    """Stands in for StreamCache: GetBlock by the dispatcher in process, ranges by real DatastreamReaders."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        self.readers: list[DatastreamReader] = []
        self.get_blocks = 0

    def get(self, datanode: DatanodeRef) -> Streams:
        return self

    async def call(self, request: pb.ContainerCommandRequestProto) -> pb.ContainerCommandResponseProto:
        self.get_blocks += 1
        return self.dispatcher.dispatch(request)

    def reader(self, datanode: DatanodeRef) -> DatastreamReader:
        self.readers.append(DatastreamReader(datanode, 5.0))
        return self.readers[-1]

    async def drop(self, datanode: DatanodeRef) -> None:
        pass

    async def close(self) -> None:
        for reader in self.readers:
            reader.close()


@pytest.fixture
def node(tmp_path: Path) -> Iterator[Node]:
    node = open_node(tmp_path / "dn", "aaaaaaaa-0000-4000-8000-000000000001", container_size="16MB")
    yield node
    node.close()


@pytest.fixture
def stored(node: Node) -> Iterator[tuple[Dispatcher, int, bytes]]:
    """(dispatcher, datastream port, the block's bytes) of block CID/1, committed at BCSID 1."""
    dispatcher = Dispatcher(node.containers, node.uuid, node.full.append)
    data = os.urandom(CHUNKS * CHUNK - 300)
    chunks = []
    for n, offset in enumerate(range(0, len(data), CHUNK)):
        info = chunk(f"1_chunk_{n + 1}", offset, data[offset : offset + CHUNK])
        assert dispatcher.dispatch(write(CID, 1, info, data[offset : offset + CHUNK])).result == pb.SUCCESS
        chunks.append(info)
    assert dispatcher.dispatch(put(CID, 1, chunks), 1).result == pb.SUCCESS
    server = DatastreamServer(dispatcher, "127.0.0.1", 0, 5.0)
    port = server.start()
    yield dispatcher, port, data
    server.stop()


def open_key(
    stored: tuple[Dispatcher, int, bytes], monkeypatch: pytest.MonkeyPatch
) -> tuple[KeyInputStream, Streams]:
    dispatcher, port, data = stored
    streams = Streams(dispatcher)
    monkeypatch.setattr(key_input, "StreamCache", lambda pool, timeout: streams)
    monkeypatch.setattr(key_input, "BlockInputStream", functools.partial(BlockInputStream, span=SPAN))
    ref = DatanodeRef(dispatcher.datanode_uuid, "127.0.0.1", "127.0.0.1", 9859, port)
    location = KeyLocation(CID, 1, 1, 0, len(data), PipelineRef("p", (ref,), "", (), None), "CLOSED")
    info = KeyInfo("vol", "bucket", "k", len(data), 0, 0, RATIS_THREE, 1, (location,))
    return KeyInputStream(None, None, CONFIG, info, ""), streams  # type: ignore[arg-type]


def test_reads_across_ranges_received_into_again_return_the_keys_bytes(
    stored: tuple[Dispatcher, int, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    stream, streams = open_key(stored, monkeypatch)
    data = stored[2]

    async def check() -> None:
        pieces = []
        while piece := await stream.read(CHUNK - 5):  # within a range and across ranges
            assert isinstance(piece, bytes)
            pieces.append(piece)
        assert b"".join(pieces) == data
        for offset, n in [(0, -1), (3, 3 * SPAN), (SPAN - 1, 2), (len(data) - 10, 100), (5, SPAN)]:
            stream.seek(offset)
            assert await stream.read(n) == data[offset : offset + n if n >= 0 else None], (offset, n)
        kept = await stream.read(0), stream.seek(0), await stream.read(SPAN + 1)
        stream.seek(2 * SPAN)
        await stream.read(2 * SPAN)  # the buffers behind `kept` are received into again meanwhile
        assert kept[2] == data[: SPAN + 1]
        assert streams.get_blocks >= 1 and streams.readers  # the ranges came over the datastream port
        await stream.close()

    asyncio.run(check())


def test_readinto_fills_the_callers_buffer_across_ranges(
    stored: tuple[Dispatcher, int, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    stream, _ = open_key(stored, monkeypatch)
    data = stored[2]

    async def check() -> None:
        out = bytearray(len(data) + 10)
        view, at = memoryview(out), 0
        for size in [7, SPAN - 7, SPAN + 3, 3 * SPAN]:  # the last one past the key's end
            got = await stream.readinto(view[at : at + size])
            assert got == min(size, len(data) - at)
            at += got
        assert at == len(data) == stream.tell() and out[: len(data)] == data
        assert await stream.readinto(view[:5]) == 0 and stream.tell() == len(data)
        stream.seek(SPAN - 2)
        assert await stream.readinto(view[:4]) == 4 and out[:4] == data[SPAN - 2 : SPAN + 2]
        await stream.close()

    asyncio.run(check())


def test_a_damaged_range_fails_its_checksum_and_a_failed_read_leaves_the_position(
    node: Node, stored: tuple[Dispatcher, int, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    stream, _ = open_key(stored, monkeypatch)
    data = stored[2]
    path = chunk_io.block_file(node.containers.require(CID).chunks_dir, 1)
    with open(path, "r+b") as f:  # a bit flipped in the third range
        f.seek(2 * SPAN + 100)
        byte = f.read(1)
        f.seek(2 * SPAN + 100)
        f.write(bytes([byte[0] ^ 1]))

    async def check() -> None:
        assert await stream.read(SPAN) == data[:SPAN]
        with pytest.raises(BlockReadError, match="CRC32 mismatch in piece"):
            await stream.read(2 * SPAN)  # its second range is the damaged one
        assert stream.tell() == SPAN  # nothing of the failed read was handed out
        await stream.close()

    asyncio.run(check())


def test_a_second_read_while_one_runs_is_refused_and_the_first_is_whole(
    stored: tuple[Dispatcher, int, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two reads of one stream at once would share its blocks' buffers and move the position under each
    other (wrong bytes, a wrong count, no error): the second is refused; the first reads from where it
    began and leaves the position at its end."""
    stream, _ = open_key(stored, monkeypatch)
    data = stored[2]

    async def check() -> None:
        first, second = memoryview(bytearray(3 * SPAN)), memoryview(bytearray(SPAN))
        stream.seek(5)
        got = await asyncio.gather(stream.readinto(first), stream.readinto(second), return_exceptions=True)
        assert got[0] == 3 * SPAN and first == data[5 : 5 + 3 * SPAN]
        assert isinstance(got[1], RuntimeError) and "already in progress" in str(got[1])
        assert stream.tell() == 5 + 3 * SPAN
        stream.seek(1)
        reads = await asyncio.gather(stream.read(3 * SPAN), stream.read(2), return_exceptions=True)
        assert reads[0] == data[1 : 1 + 3 * SPAN] and isinstance(reads[1], RuntimeError)
        assert stream.tell() == 1 + 3 * SPAN
        await stream.close()

    asyncio.run(check())
