"""The block groups to rebuild: what every source lists, with the length they agree on (Ozone's
getBlockDataMap and calcEffectiveBlockGroupLen).

A block that some source does not hold is an orphan (a stripe the client abandoned before every index
acknowledged its putBlock) and is not rebuilt. Sources that record different group lengths have garbage
past the shortest: the safe length is the minimum. A group of length 0 holds nothing to rebuild.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyozone.datanode.ec.peers import Peer, call
from pyozone.hdds.ec import BLOCK_GROUP_LEN
from pyozone.protocol import ec as wire

if TYPE_CHECKING:
    from pyozone.proto.DatanodeClientProtocol_pb2 import BlockData

log = logging.getLogger(__name__)

LIST_PAGE = 1000
"""Blocks asked for per ListBlock (the datanode answers fewer when the answer would grow too large)."""


class BlockGroupError(Exception):
    """A source's block metadata that cannot be used (a malformed group length)."""


@dataclass(frozen=True, slots=True)
class BlockGroup:
    local_id: int
    length: int
    replicas: Mapping[int, BlockData]
    """Each source's block, by replica index: its chunks are the cells it holds."""


def group_length(block: BlockData) -> int:
    """The blockGroupLen a putBlock recorded (0 when absent, as Ozone reads it)."""
    for kv in block.metadata:
        if kv.key == BLOCK_GROUP_LEN:
            try:
                value = int(kv.value)
            except ValueError:
                value = -1
            if value < 0:
                raise BlockGroupError(
                    f"block {block.blockID.localID}: {BLOCK_GROUP_LEN} {kv.value!r} is not a length"
                )
            return value
    return 0


async def list_blocks(peer: Peer, container_id: int, datanode_uuid: str) -> list[BlockData]:
    """Every block of the container on one datanode, page by page."""
    blocks: list[BlockData] = []
    start = 0
    while True:
        answer = await call(peer, wire.list_blocks(container_id, start, LIST_PAGE, datanode_uuid))
        page = answer.listBlock.blockData
        if not page:
            return blocks
        blocks.extend(page)
        start = page[-1].blockID.localID + 1


async def block_groups(
    sources: Mapping[int, Peer], container_id: int, datanode_uuid: str
) -> list[BlockGroup]:
    """The groups every source holds, in local id order, with their safe lengths; empty ones left out."""
    indexes = sorted(sources)
    listed = await asyncio.gather(*(list_blocks(sources[i], container_id, datanode_uuid) for i in indexes))
    by_block: dict[int, dict[int, BlockData]] = {}
    for index, blocks in zip(indexes, listed, strict=True):
        for block in blocks:
            by_block.setdefault(block.blockID.localID, {})[index] = block
    groups: list[BlockGroup] = []
    for local_id in sorted(by_block):
        replicas = by_block[local_id]
        if len(replicas) != len(indexes):
            absent = sorted(set(indexes) - set(replicas))
            log.warning(
                "container %d block %d: no putBlock on source indexes %s; an orphan stripe, not rebuilt",
                container_id, local_id, absent,
            )  # fmt: skip
            continue
        length = min(group_length(b) for b in replicas.values())
        if length > 0:
            groups.append(BlockGroup(local_id, length, replicas))
    return groups
