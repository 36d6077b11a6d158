"""The hdds Pipeline message of an EC pipeline: ecReplicationConfig and memberReplicaIndexes, parallel to
members (SCM's rule: member i holds index i + 1; a read pipeline names its own)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.block import AllocatedBlock
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import RATIS_THREE, BlockID, ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import PipelineState
from pyozone.proto import hdds_pb2
from pyozone.protocol import admin_records as p
from pyozone.protocol.block import allocated_block_from_proto, allocated_block_to_proto
from pyozone.protocol.common import ec_config_from_proto

RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")
NODES = tuple(f"dn-{i}" for i in range(5))


def ec_pipeline(nodes: tuple[str, ...] = NODES, config: ReplicationConfig = RS_3_2) -> Pipeline:
    return Pipeline("p-ec", config, PipelineState.OPEN, nodes, 1, 1)


def wire(message: hdds_pb2.Pipeline) -> hdds_pb2.Pipeline:
    return hdds_pb2.Pipeline.FromString(message.SerializeToString())


def test_scm_ec_pipeline_carries_indexes_one_to_n_and_its_config() -> None:
    message = wire(p.pipeline_to_proto(ec_pipeline()))
    assert list(message.memberReplicaIndexes) == [1, 2, 3, 4, 5]
    assert [m.uuid for m in message.members] == list(NODES)
    assert message.type == hdds_pb2.EC
    assert ec_config_from_proto(message.ecReplicationConfig, "ec") == RS_3_2
    assert message.ecReplicationConfig.data == 3 and message.ecReplicationConfig.parity == 2
    assert message.ecReplicationConfig.codec.upper() == "RS"
    assert message.ecReplicationConfig.ecChunkSize == 1 << 20
    assert p.pipeline_from_proto(message) == ec_pipeline()
    assert p.pipeline_replica_indexes(message) == (1, 2, 3, 4, 5)


def test_read_pipeline_names_its_own_indexes_even_twice() -> None:
    nodes = ("a", "b", "c", "d")
    message = wire(p.pipeline_to_proto(ec_pipeline(nodes), replica_indexes=(4, 1, 1, 5)))
    assert p.pipeline_replica_indexes(message) == (4, 1, 1, 5)


def test_replicated_pipeline_has_no_indexes() -> None:
    ratis = Pipeline("p-r", RATIS_THREE, PipelineState.OPEN, NODES[:3], 1, 1)
    message = wire(p.pipeline_to_proto(ratis))
    assert list(message.memberReplicaIndexes) == [] and not message.HasField("ecReplicationConfig")
    assert p.pipeline_replica_indexes(message) == ()
    with pytest.raises(ProtocolError, match="replica_indexes"):
        p.pipeline_to_proto(ratis, replica_indexes=(1, 2, 3))


def test_indexes_must_match_the_members() -> None:
    with pytest.raises(ProtocolError, match="replica_indexes: has 2 indexes for 5 members"):
        p.pipeline_to_proto(ec_pipeline(), replica_indexes=(1, 2))
    with pytest.raises(ProtocolError, match=r"replica_indexes\[0\]: must be at most 5"):
        p.pipeline_to_proto(ec_pipeline(), replica_indexes=(6, 2, 3, 4, 5))


@pytest.mark.parametrize(
    ("indexes", "error"),
    [
        ([], r"pipeline\.memberReplicaIndexes: has 0 indexes for 5 members"),
        ([1, 2, 3, 4, 0], r"pipeline\.memberReplicaIndexes\[4\]: must be at least 1"),
        ([1, 2, 3, 4, 9], r"pipeline\.memberReplicaIndexes\[4\]: must be at most 5"),
    ],
)
def test_received_indexes_are_checked(indexes: list[int], error: str) -> None:
    message = p.pipeline_to_proto(ec_pipeline())
    del message.memberReplicaIndexes[:]
    message.memberReplicaIndexes.extend(indexes)
    with pytest.raises(ProtocolError, match=error):
        p.pipeline_from_proto(wire(message))


def test_allocated_ec_block_carries_the_pipeline_indexes() -> None:
    block = AllocatedBlock(BlockID(7, 42), ec_pipeline(), 7)
    location = allocated_block_from_proto(allocated_block_to_proto(block))
    assert location.block_id == BlockID(7, 42)
    assert location.pipeline == ec_pipeline()
    assert location.replica_indexes == (1, 2, 3, 4, 5)


@given(st.integers(1, 10), st.integers(1, 4), st.data())
def test_read_pipelines_round_trip(data_count: int, parity: int, data) -> None:
    config = ReplicationConfig.parse(f"rs-{data_count}-{parity}-1024k")
    n = config.required_nodes
    indexes = tuple(data.draw(st.lists(st.integers(1, n), max_size=2 * n)))
    nodes = tuple(f"dn-{i}" for i in range(len(indexes)))
    message = wire(p.pipeline_to_proto(ec_pipeline(nodes, config), replica_indexes=indexes))
    assert p.pipeline_from_proto(message) == ec_pipeline(nodes, config)
    assert p.pipeline_replica_indexes(message) == indexes
