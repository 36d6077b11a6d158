"""Converters for the block protocol (ScmBlockLocationProtocol): allocate blocks, delete the blocks of
deleted keys.

An allocated block travels with its pipeline, whose members are named in full (addresses and ports): the
client connects to them without asking SCM again. Reading one back gives a BlockLocation.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum

from google.protobuf.descriptor import ServiceDescriptor

from pyozone.hdds.block import AllocatedBlock, ExcludeList
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID, DatanodeID, ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.proto import ScmBlockLocationProtocol_pb2 as block_pb2
from pyozone.proto import hdds_pb2
from pyozone.protocol.admin_records import (
    pipeline_from_proto,
    pipeline_members,
    pipeline_replica_indexes,
    pipeline_to_proto,
)
from pyozone.protocol.common import (
    Resolver,
    container_id,
    enum_from_proto,
    guarded,
    integer,
    optional_message,
    pipeline_id_to_proto,
    replication_from_proto,
    replication_to_proto,
    sub_message,
    text,
    uint32,
    uint64,
)

BLOCK_SERVICE: ServiceDescriptor = block_pb2.DESCRIPTOR.services_by_name["ScmBlockLocationProtocolService"]
"""What pyozone.rpc serves on ozone.scm.block.client.address and what ScmBlockClient calls."""

MAX_BLOCK_MESSAGE_BYTES = 16 << 20
"""ScmBlockLocationProtocolService's message limit: a deleteScmKeyBlocks request carries ~30 bytes per
block, so 16 MiB holds the blocks of some 500,000 keys of one block."""

MAX_BLOCKS_PER_REQUEST = 1000
"""numBlocks above this is refused: one answer must stay far below the message size limit."""

WRITE_PIPELINES_KEPT = 256
"""Distinct pipeline messages (a pipeline with its leader and members' addresses) kept read: more than a
cluster keeps open at once."""


class DeleteResult(IntEnum):
    """Ozone's DeleteScmBlockResult.Result, with its numbers."""

    success = 1
    safeMode = 2
    errorNotFound = 3
    unknownFailure = 4


@dataclass(frozen=True, slots=True)
class AllocateRequest:
    size: int
    num_blocks: int
    replication_config: ReplicationConfig
    owner: str
    excluded: ExcludeList = field(default_factory=ExcludeList)
    client: str = ""


@dataclass(frozen=True, slots=True)
class BlockLocation:
    """An allocated block as the client sees it: where to write it and the members' addresses; for an
    EC block group, the replica index each member holds (parallel to pipeline.nodes, else empty)."""

    block_id: BlockID
    pipeline: Pipeline
    members: dict[DatanodeID, DatanodeDetails] = field(default_factory=dict)
    replica_indexes: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class KeyBlocks:
    """The blocks of one deleted key."""

    key: str
    blocks: tuple[BlockID, ...]


@dataclass(frozen=True, slots=True)
class KeyBlocksResult:
    key: str
    results: tuple[tuple[BlockID, DeleteResult], ...]

    @property
    def ok(self) -> bool:
        return all(result is DeleteResult.success for _, result in self.results)


# ------------------------------------------------------------------ block ids
@guarded("ContainerBlockID")
def container_block_id_to_proto(block: BlockID, field: str = "block_id") -> block_pb2.ContainerBlockID:
    return block_pb2.ContainerBlockID(
        containerID=container_id(block.container_id, f"{field}.container_id"),
        localID=integer(block.local_id, f"{field}.local_id", 1),
    )


def container_block_id_from_proto(proto: block_pb2.ContainerBlockID, field: str) -> BlockID:
    return BlockID(
        container_id(proto.containerID, f"{field}.containerID"),
        integer(proto.localID, f"{field}.localID", 1),
    )


def block_id_to_proto(block: BlockID, field: str = "block_id") -> block_pb2.BlockID:
    return block_pb2.BlockID(containerBlockID=container_block_id_to_proto(block, field))


def block_id_from_proto(proto: block_pb2.BlockID, field: str) -> BlockID:
    uint64(proto.blockCommitSequenceId, f"{field}.blockCommitSequenceId")
    return container_block_id_from_proto(
        sub_message(proto, "containerBlockID", field), f"{field}.containerBlockID"
    )


# ------------------------------------------------------------------ allocate
@guarded("ExcludeList")
def exclude_list_to_proto(excluded: ExcludeList) -> block_pb2.ExcludeListProto:
    return block_pb2.ExcludeListProto(
        datanodes=sorted(text(d, "excluded.datanodes") for d in excluded.datanodes),
        containerIds=sorted(container_id(c, "excluded.containers") for c in excluded.containers),
        pipelineIds=[pipeline_id_to_proto(p, "excluded.pipelines") for p in sorted(excluded.pipelines)],
    )


def exclude_list_from_proto(proto: block_pb2.ExcludeListProto, field: str = "excludeList") -> ExcludeList:
    return ExcludeList(
        datanodes=frozenset(text(d, f"{field}.datanodes[{i}]") for i, d in enumerate(proto.datanodes)),
        pipelines=frozenset(
            text(p.id, f"{field}.pipelineIds[{i}].id") for i, p in enumerate(proto.pipelineIds)
        ),
        containers=frozenset(
            container_id(c, f"{field}.containerIds[{i}]") for i, c in enumerate(proto.containerIds)
        ),
    )


@guarded("AllocateRequest")
def allocate_request_to_proto(request: AllocateRequest) -> block_pb2.AllocateScmBlockRequestProto:
    rtype, factor, ec = replication_to_proto(request.replication_config, "replication_config")
    proto = block_pb2.AllocateScmBlockRequestProto(
        size=uint64(request.size, "size"),
        numBlocks=uint32(request.num_blocks, "num_blocks"),
        type=rtype,
        factor=factor,
        owner=text(request.owner, "owner", required=False),
        client=text(request.client, "client", required=False),
    )
    if ec is not None:
        proto.ecReplicationConfig.CopyFrom(ec)
    if not request.excluded.is_empty():
        proto.excludeList.CopyFrom(exclude_list_to_proto(request.excluded))
    return proto


def allocate_request_from_proto(proto: block_pb2.AllocateScmBlockRequestProto) -> AllocateRequest:
    """size and numBlocks must be positive (a zero is a field not sent); numBlocks at most
    MAX_BLOCKS_PER_REQUEST."""
    size = uint64(proto.size, "size")
    if size == 0:
        raise ProtocolError("size", "is missing")
    count = integer(proto.numBlocks, "numBlocks", 0, MAX_BLOCKS_PER_REQUEST)
    if count == 0:
        raise ProtocolError("numBlocks", "is missing")
    excluded = proto.excludeList
    return AllocateRequest(
        size=size,
        num_blocks=count,
        replication_config=replication_from_proto(
            proto.type, proto.factor, optional_message(proto, "ecReplicationConfig")
        ),
        owner=proto.owner,
        excluded=exclude_list_from_proto(excluded) if proto.HasField("excludeList") else ExcludeList(),
        client=proto.client,
    )


@guarded("AllocatedBlock")
def allocated_block_to_proto(
    block: AllocatedBlock, resolve: Resolver | None = None
) -> block_pb2.AllocateBlockResponse:
    """`resolve` names the pipeline's members in full; a client needs their addresses to write. An EC
    block's pipeline carries ecReplicationConfig and memberReplicaIndexes (member i: index i + 1)."""
    return block_pb2.AllocateBlockResponse(
        containerBlockID=container_block_id_to_proto(block.block_id),
        pipeline=pipeline_to_proto(block.pipeline, resolve),
    )


def allocated_block_from_proto(proto: block_pb2.AllocateBlockResponse, field: str = "block") -> BlockLocation:
    block_id = container_block_id_from_proto(
        sub_message(proto, "containerBlockID", field), f"{field}.containerBlockID"
    )
    pipeline_proto = sub_message(proto, "pipeline", field)
    try:
        pipeline, members, indexes = _write_pipeline(pipeline_proto.SerializeToString())
    except ProtocolError:  # read again for the error, with this block's field names
        pipeline, members, indexes = _write_pipeline_from_proto(pipeline_proto, f"{field}.pipeline")
    return BlockLocation(block_id, pipeline, dict(members), indexes)


def allocate_response_to_proto(
    blocks: Iterable[AllocatedBlock], resolve: Resolver | None = None
) -> block_pb2.AllocateScmBlockResponseProto:
    return block_pb2.AllocateScmBlockResponseProto(
        blocks=[allocated_block_to_proto(block, resolve) for block in blocks]
    )


def allocate_response_from_proto(proto: block_pb2.AllocateScmBlockResponseProto) -> list[BlockLocation]:
    return [allocated_block_from_proto(b, f"blocks[{i}]") for i, b in enumerate(proto.blocks)]


def write_pipeline_to_proto(location: BlockLocation) -> bytes:
    """The serialized pipeline of an allocated block with its members' addresses, as OM hands it to the
    writer: built once per distinct pipeline (the inverse of what allocated_block_from_proto reads)."""
    return _write_pipeline_wire(location.pipeline, tuple(location.members.items()))


@functools.lru_cache(maxsize=WRITE_PIPELINES_KEPT)
def _write_pipeline_wire(
    pipeline: Pipeline, members: tuple[tuple[DatanodeID, DatanodeDetails], ...]
) -> bytes:
    return pipeline_to_proto(pipeline, dict(members).get).SerializeToString()


_PipelineParts = tuple[Pipeline, dict[DatanodeID, DatanodeDetails], tuple[int, ...]]


def _write_pipeline_from_proto(proto: hdds_pb2.Pipeline, field: str) -> _PipelineParts:
    pipeline = pipeline_from_proto(proto, field)
    indexes = pipeline_replica_indexes(proto, field, pipeline.replication_config)
    return pipeline, pipeline_members(proto, field), indexes


@functools.lru_cache(maxsize=WRITE_PIPELINES_KEPT)
def _write_pipeline(serialized: bytes) -> _PipelineParts:
    """A block's pipeline, read once per distinct message: SCM hands out the blocks of a few open pipelines,
    and each allocation answer repeats its pipeline in full (issue 29: reading it was a tenth of OM's
    openKey). Its members dict is shared: callers copy it."""
    return _write_pipeline_from_proto(hdds_pb2.Pipeline.FromString(serialized), "pipeline")


# ------------------------------------------------------------------ delete
@guarded("KeyBlocks")
def key_blocks_to_proto(key_blocks: KeyBlocks) -> block_pb2.KeyBlocks:
    return block_pb2.KeyBlocks(
        key=text(key_blocks.key, "key"),
        blocks=[block_id_to_proto(b, f"blocks[{i}]") for i, b in enumerate(key_blocks.blocks)],
    )


def key_blocks_from_proto(proto: block_pb2.KeyBlocks, field: str = "keyBlocks") -> KeyBlocks:
    return KeyBlocks(
        text(proto.key, f"{field}.key"),
        tuple(block_id_from_proto(b, f"{field}.blocks[{i}]") for i, b in enumerate(proto.blocks)),
    )


@guarded("KeyBlocksResult")
def key_blocks_result_to_proto(result: KeyBlocksResult) -> block_pb2.DeleteKeyBlocksResultProto:
    proto = block_pb2.DeleteKeyBlocksResultProto(objectKey=text(result.key, "key"))
    for i, (block, outcome) in enumerate(result.results):
        proto.blockResults.add(
            result=DeleteResult(outcome).value, blockID=block_id_to_proto(block, f"results[{i}]")
        )
    return proto


def key_blocks_result_from_proto(
    proto: block_pb2.DeleteKeyBlocksResultProto, field: str = "results"
) -> KeyBlocksResult:
    return KeyBlocksResult(
        text(proto.objectKey, f"{field}.objectKey"),
        tuple(
            (
                block_id_from_proto(
                    sub_message(r, "blockID", f"{field}.blockResults[{i}]"),
                    f"{field}.blockResults[{i}].blockID",
                ),
                enum_from_proto(DeleteResult, r.result, f"{field}.blockResults[{i}].result"),
            )
            for i, r in enumerate(proto.blockResults)
        ),
    )


def delete_request_to_proto(keys: Iterable[KeyBlocks]) -> block_pb2.DeleteScmKeyBlocksRequestProto:
    return block_pb2.DeleteScmKeyBlocksRequestProto(keyBlocks=[key_blocks_to_proto(k) for k in keys])


def delete_request_from_proto(proto: block_pb2.DeleteScmKeyBlocksRequestProto) -> list[KeyBlocks]:
    return [key_blocks_from_proto(k, f"keyBlocks[{i}]") for i, k in enumerate(proto.keyBlocks)]


def delete_response_to_proto(results: Iterable[KeyBlocksResult]) -> block_pb2.DeleteScmKeyBlocksResponseProto:
    return block_pb2.DeleteScmKeyBlocksResponseProto(results=[key_blocks_result_to_proto(r) for r in results])


def delete_response_from_proto(proto: block_pb2.DeleteScmKeyBlocksResponseProto) -> list[KeyBlocksResult]:
    return [key_blocks_result_from_proto(x, f"results[{i}]") for i, x in enumerate(proto.results)]
