"""One replica index of an EC block group, written straight to its datanode (Ozone's ECBlockOutputStream).

An index is an ordinary block whose chunks are cells: the writer of a replicated block with a one-member
"pipeline" (the index's datanode) that keeps the EC pipeline's id, so the datanode can ask SCM about the
allocation. Cells go over the datastream port when the key takes datastream (ClientConfig.uses_datastream:
its size known and at least the auto threshold, as a replicated key) and the datanode has a port
(BlockDataStreamOutput, the header naming the replica index), else as RPC writeChunks (BlockOutputStream),
which a paused writer cannot outwait (a datastream is closed after its idle timeout). The commit logic
is theirs: a putBlock acknowledges the cells before it. There is no pipeline log: the datanode applies the
putBlock itself, so its answer alone is the acknowledgement (no watch). Every putBlock names the replica
index and carries the block group's length as BlockData metadata BLOCK_GROUP_LEN (Ozone's key).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace

from pyozone.client.block_output import BlockOutputStream
from pyozone.client.config import ClientConfig
from pyozone.client.datastream import BlockDataStreamOutput
from pyozone.framework.datanode import ChannelPool
from pyozone.hdds.checksum import ChecksumData
from pyozone.hdds.ec.layout import BLOCK_GROUP_LEN
from pyozone.hdds.locations import DatanodeRef, KeyLocation, PipelineRef


class ECIndexOutput(BlockOutputStream):
    """What an EC index changes in a block writer: cells in, one putBlock per stripe, no watch. Alone it
    sends cells as RPC writeChunks (a datanode without a datastream port)."""

    SMALL_FILE = False  # one putBlock per stripe, on every index alike

    def write_cell(self, cell: memoryview, sums: ChecksumData) -> None:
        """Sends one cell (with its checksums) as the index's next chunk, kept until a putBlock
        acknowledges it."""
        self._raise_failure()
        self._write_chunk(cell, sums=sums)

    def put(self, group_length: int, eof: bool) -> asyncio.Task[None]:
        """putBlock of every cell so far, recording the group's length; the task ends when it is acked."""
        self._raise_failure()
        while self._flushes and self._flushes[0].task.done():  # acknowledged: the stripe keeps its own task
            self._flushes.popleft()
        self.block_metadata = {BLOCK_GROUP_LEN: str(group_length)}
        self._flush(eof)
        return self._flushes[-1].task

    def _replicated(self, applied: Mapping[str, int], index: int) -> bool:
        return True  # no pipeline log: the datanode's answer is the acknowledgement


class _StreamIndex(ECIndexOutput, BlockDataStreamOutput):
    """Cells as datastream packets: the cell's memoryview goes to the socket as it is."""


def index_output(
    group: KeyLocation,
    index: int,
    member: DatanodeRef,
    config: ClientConfig,
    pool: ChannelPool,
    datastream: bool,
) -> ECIndexOutput:
    """The writer of replica `index` of the block group at `group`, on datanode `member`; `datastream`:
    whether the key takes the datastream port (where the datanode has one)."""
    pipeline = PipelineRef(group.pipeline.id, (member,), member.uuid, (index,), group.pipeline.ec)
    location = replace(group, pipeline=pipeline)
    if not datastream or member.datastream_port is None:
        return ECIndexOutput(location, config, pool, replica_index=index)
    return _StreamIndex(location, config, pool, (member,), replica_index=index)
