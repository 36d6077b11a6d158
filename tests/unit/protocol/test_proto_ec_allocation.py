"""An EC block group as SCM's allocateScmBlock answers it: the real core's allocation over the wire."""

from __future__ import annotations

from pyozone.hdds.block import ExcludeList
from pyozone.protocol.block import (
    AllocateRequest,
    allocate_request_from_proto,
    allocate_request_to_proto,
    allocated_block_from_proto,
    allocated_block_to_proto,
)
from tests.unit.protocol.proto_strategies import wire
from tests.unit.scm.block.ec_harness import BLOCK, RS_3_2, EcScm


def test_allocated_ec_block_names_every_member_with_its_index_and_address() -> None:
    h = EcScm(8)
    request = AllocateRequest(BLOCK, 1, RS_3_2, "om", ExcludeList(datanodes=frozenset({h.dns[0]})))
    received = allocate_request_from_proto(wire(allocate_request_to_proto(request)))
    assert received == request
    block = h.scm.blocks.allocate_block(
        received.size, received.replication_config, received.owner, received.excluded
    )
    message = wire(allocated_block_to_proto(block, h.details.get))
    assert list(message.pipeline.memberReplicaIndexes) == [1, 2, 3, 4, 5]
    assert message.pipeline.ecReplicationConfig.data == 3
    location = allocated_block_from_proto(message)
    assert location.pipeline == block.pipeline
    assert location.replica_indexes == (1, 2, 3, 4, 5)
    assert h.dns[0] not in location.pipeline.nodes
    assert {dn: d.ip_address for dn, d in location.members.items()} == {
        dn: h.details[dn].ip_address for dn in block.pipeline.nodes
    }
