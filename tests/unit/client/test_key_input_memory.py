"""KeyInputStream over many blocks: a block lets go of its buffers once the reads move to another one, so the
bytes held do not grow with the key's size (replicated blocks, EC groups read normally and degraded), and a
seek back to a released block reads it again; an EC key's block without an EC pipeline is refused.

Blocks live on the in-process fake datanodes of test_ec_input.py (GetBlock and ReadChunk, checksums
verified by the client); a replicated block is a fake node holding index 0, its chunks as the cells.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace

import pytest

from pyozone.client import key_input
from pyozone.client.block_input import BlockInputStream
from pyozone.client.ec_input import ECBlockInputStream
from pyozone.client.errors import BlockReadError
from pyozone.client.key_input import KeyInputStream
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.locations import KeyLocation, PipelineRef
from pyozone.hdds.om_views import KeyInfo
from tests.unit.client.test_ec_input import CONFIG, RS, FakeIndexNode, FakeStreams, Group

GROUP = 4 * RS.ec_data * RS.ec_chunk_size  # four stripes
CHUNK = 2048  # a replicated block's chunk: each read fetches one and reads the next one ahead


def replicated(blocks: int) -> tuple[KeyInfo, list[FakeIndexNode], bytes]:
    nodes, locations = [], []
    for i in range(blocks):
        data = os.urandom(5 * CHUNK)
        node = FakeIndexNode(f"dn-{i}", 0, [data[at : at + CHUNK] for at in range(0, len(data), CHUNK)], 0)
        pipeline = PipelineRef(f"p{i}", (node.ref,), "", (), None)
        locations.append(KeyLocation(1, 100 + i, 0, i * len(data), len(data), pipeline, "CLOSED"))
        nodes.append(node)
    data = b"".join(b"".join(n.cells) for n in nodes)
    return KeyInfo("vol", "bucket", "k", len(data), 0, 0, RATIS_THREE, 1, tuple(locations)), nodes, data


def ec(blocks: int, down: int | None) -> tuple[KeyInfo, list[FakeIndexNode], bytes]:
    groups = [Group(RS, os.urandom(GROUP), i * GROUP, local_id=100 + i) for i in range(blocks)]
    for group in groups:
        if down is not None:
            group.nodes[down].state = "down"
    info = KeyInfo("vol", "bucket", "k", blocks * GROUP, 0, 0, RS, 1, tuple(g.location for g in groups))
    return info, [n for g in groups for n in g.nodes.values()], b"".join(g.data for g in groups)


def held(block: BlockInputStream | ECBlockInputStream) -> int:
    """The bytes a block's stream keeps: fetched ranges, a spare buffer, reads done ahead, stripes."""
    if isinstance(block, ECBlockInputStream):
        total = sum(held(index) for index in block._indexes.values())
        if block._stripe is not None:
            total += sum(len(cell) for cell in block._stripe[1])
        if block._ahead is not None and block._ahead[1].done() and not block._ahead[1].exception():
            total += sum(len(cell) for cell in block._ahead[1].result())
        return total
    total = len(block._cache) + len(block._spare or b"")
    if block._ahead is not None and block._ahead[1].done() and not block._ahead[1].cancelled():
        total += len(block._ahead[1].result()[1])
    return total


def reading(blocks: int) -> list[BlockInputStream | ECBlockInputStream]:
    """Every block's stream, and its own index streams (an EC group's)."""
    found: list[BlockInputStream | ECBlockInputStream] = []
    for block in blocks:
        found.append(block)
        if isinstance(block, ECBlockInputStream):
            found.extend(block._indexes.values())
    return found


def open_key(info: KeyInfo, nodes: list[FakeIndexNode], monkeypatch: pytest.MonkeyPatch) -> KeyInputStream:
    streams = FakeStreams(nodes)
    monkeypatch.setattr(key_input, "StreamCache", lambda pool, timeout: streams)
    return KeyInputStream(None, None, CONFIG, info, "")  # type: ignore[arg-type]


KEYS = {
    "replicated": lambda n: replicated(n),
    "ec": lambda n: ec(n, None),
    "ec-degraded": lambda n: ec(n, 2),
}


@pytest.mark.parametrize("kind", KEYS)
def test_the_bytes_held_do_not_grow_with_the_blocks_read(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def held_after(blocks: int) -> tuple[int, int]:
        info, nodes, data = KEYS[kind](blocks)
        stream = open_key(info, nodes, monkeypatch)

        async def read() -> tuple[int, int]:
            got = []
            while piece := await stream.read(1 << 20):
                got.append(piece)
            assert b"".join(got) == data
            await asyncio.sleep(0.05)  # any read still ahead lands
            finished = stream._blocks[:-1]
            assert not any(b._ahead for b in reading(finished)), "a finished block still reads ahead"
            result = sum(held(b) for b in finished), sum(held(b) for b in stream._blocks)
            await stream.close()
            return result

        return asyncio.run(read())

    few, many = held_after(2), held_after(8)
    assert few[0] == many[0] == 0  # the finished blocks hold nothing
    assert few[1] == many[1] > 0  # only the last block's buffers, whatever the key's size


@pytest.mark.parametrize("kind", KEYS)
def test_a_seek_back_to_a_released_block_reads_it_again(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    info, nodes, data = KEYS[kind](3)
    stream = open_key(info, nodes, monkeypatch)
    block = len(data) // 3

    async def check() -> None:
        assert await stream.read() == data
        down = [n.requests for n in nodes if n.state == "down"]
        for offset, n in [(100, 2 * block), (0, block + 7), (block - 3, 10), (2 * block + 5, block)]:
            stream.seek(offset)
            assert await stream.read(n) == data[offset : offset + n], (offset, n)
        assert [n.requests for n in nodes if n.state == "down"] == down  # a missing index stays missing
        await stream.close()

    asyncio.run(check())


def test_an_ec_key_whose_block_has_no_ec_pipeline_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read as a replica, the group's nearest member (here parity index 5) would pass every check and
    hand back its parity cell as the key's data."""
    group = Group(RS, os.urandom(500))
    order = (5, 1, 2, 3, 4)
    members = tuple(group.nodes[i].ref for i in order)
    pipeline = PipelineRef("p", members, "", order, None)  # its EC config lost
    info = KeyInfo("vol", "bucket", "k", 500, 0, 0, RS, 1, (replace(group.location, pipeline=pipeline),))
    with pytest.raises(BlockReadError, match="EC/RS-3-2-1k but the pipeline of its block conID: 1 locID: 7 "):
        open_key(info, list(group.nodes.values()), monkeypatch)
