"""The pipeline of an allocated block, read from SCM's answer and written into OM's openKey answer once per
distinct pipeline message (issue 29: reading and writing it again for every block was a tenth of OM's
openKey), with the same result and the same errors as reading it afresh."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pyozone.hdds.block import AllocatedBlock
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID
from pyozone.proto import hdds_pb2
from pyozone.protocol import admin_records, block
from pyozone.protocol.block import (
    BlockLocation,
    allocated_block_from_proto,
    allocated_block_to_proto,
    write_pipeline_to_proto,
)
from tests.unit.om.om_fakes import MEMBERS, PIPELINE, details
from tests.unit.protocol.proto_strategies import wire


def answer(local_id: int):
    return wire(allocated_block_to_proto(AllocatedBlock(BlockID(7, local_id), PIPELINE, 7), MEMBERS.get))


def test_a_pipeline_is_read_once_per_distinct_message(monkeypatch) -> None:
    reads = []
    real = admin_records.pipeline_from_proto

    def counted(proto, field="pipeline"):
        reads.append(field)
        return real(proto, field)

    monkeypatch.setattr(block, "pipeline_from_proto", counted)
    block._write_pipeline.cache_clear()
    first, second = (allocated_block_from_proto(answer(i), f"blocks[{i}]") for i in (1, 2))
    assert len(reads) == 1
    assert (first.block_id, second.block_id) == (BlockID(7, 1), BlockID(7, 2))
    assert first.pipeline == second.pipeline == PIPELINE and first.members == second.members == MEMBERS
    assert first.members is not second.members  # each location owns its dict
    readdressed = {**MEMBERS, PIPELINE.nodes[0]: replace(details(1), ip_address="10.0.0.99")}
    moved = wire(allocated_block_to_proto(AllocatedBlock(BlockID(7, 3), PIPELINE, 7), readdressed.get))
    assert allocated_block_from_proto(moved).members == readdressed and len(reads) == 2


def test_a_bad_pipeline_is_refused_with_its_blocks_field_name() -> None:
    bad = answer(1)
    bad.pipeline.state = 0
    with pytest.raises(ProtocolError, match=r"blocks\[4\]\.pipeline"):
        allocated_block_from_proto(bad, "blocks[4]")


def test_the_written_pipeline_is_the_one_pipeline_to_proto_writes() -> None:
    location = BlockLocation(BlockID(7, 1), PIPELINE, dict(MEMBERS))
    written = hdds_pb2.Pipeline.FromString(write_pipeline_to_proto(location))
    assert written == admin_records.pipeline_to_proto(PIPELINE, MEMBERS.get)
    assert write_pipeline_to_proto(BlockLocation(BlockID(7, 2), PIPELINE, dict(MEMBERS))) is (
        write_pipeline_to_proto(location)
    )
