"""What the pipeline's Raft log reads and answers of the container protocol: a request as a log entry's
payload (without its chunk data, which travels beside it as state machine data), the refusals every member
reaches alike, and the answers the log itself gives a client (a refusal, NOT_LEADER, a committed entry's
logIndex and commitInfos, a watchForCommit).

Hot path (every V1 write and putSmallFile): an entry's chunk data is never copied into the payload
(metadata_only). The container-request helpers (LOGGED, commits, answer_with, ...) belong with the container
protocol and live here until it has a module of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from pyozone.hdds.errors import ProtocolError
from pyozone.proto import DatanodeClientProtocol_pb2 as pb

Request = pb.ContainerCommandRequestProto
Response = pb.ContainerCommandResponseProto


# ------------------------------------------------------------------ container requests, as the log sees them

LOGGED = frozenset({pb.WriteChunk, pb.PutBlock, pb.PutSmallFile, pb.FinalizeBlock, pb.CloseContainer})
"""The request types a pipeline's log orders (the rest a datanode runs alone)."""

DETERMINISTIC = frozenset(
    {
        pb.MALFORMED_REQUEST,
        pb.CHECKSUM_MISMATCH,
        pb.CLOSED_CONTAINER_IO,
        pb.CONTAINER_UNHEALTHY,
        pb.INVALID_CONTAINER_STATE,
        pb.CONTAINER_NOT_FOUND,
        pb.CONTAINER_EXISTS,
        pb.NO_SUCH_BLOCK,
        pb.OVERWRITE_FLAG_REQUIRED,
        pb.UNABLE_TO_FIND_CHUNK,
        pb.INVALID_WRITE_SIZE,
        pb.UNSUPPORTED_REQUEST,
        pb.BLOCK_ALREADY_FINALIZED,
        pb.PUT_SMALL_FILE_ERROR,
    }
)
"""Refusals every member may reach alike for the same entry (the entry is then a no-op everywhere): not a
failure of the member (pyozone.datanode.ratis.state_machine)."""


class LogResult(StrEnum):
    """The container protocol's Results the pipeline log answers with itself (Ozone's names)."""

    GROUP_MISMATCH = "GROUP_MISMATCH"
    NOT_LEADER = "NOT_LEADER"
    MALFORMED_REQUEST = "MALFORMED_REQUEST"
    RAFT_RETRY_FAILURE = "RAFT_RETRY_FAILURE"
    IO_EXCEPTION = "IO_EXCEPTION"


def succeeded(result: int) -> bool:
    return result == pb.SUCCESS


def refused_alike(result: int) -> bool:
    """A refusal every member reaches alike for the same entry (DETERMINISTIC)."""
    return result in DETERMINISTIC


def unhealthy(result: int) -> bool:
    """CONTAINER_UNHEALTHY: the member's replica went unhealthy (SCM replaces it from the healthy ones)."""
    return result == pb.CONTAINER_UNHEALTHY


def routed(request: Request) -> bool:
    """A request that names a pipeline and that its log orders or its leader answers (WatchForCommit)."""
    return bool(request.pipelineID) and (request.cmdType in LOGGED or request.cmdType == pb.WatchForCommit)


def is_watch(request: Request) -> bool:
    return request.cmdType == pb.WatchForCommit


def is_put_small_file(request: Request) -> bool:
    return request.cmdType == pb.PutSmallFile


def commits(request: Request) -> bool:
    """An entry after which the log is fsynced: it commits a block (its BCSID is the entry's index),
    finalizes one or closes a container."""
    kind = request.cmdType
    return kind in (pb.PutBlock, pb.PutSmallFile, pb.FinalizeBlock, pb.CloseContainer) or (
        kind == pb.WriteChunk and request.writeChunk.HasField("block")
    )


def answer_with(request: Request, result: int, message: str) -> Response:
    """The answer to `request` with this Result number (a refusal: nothing else is set)."""
    return Response(cmdType=request.cmdType, traceID=request.traceID, result=result, message=message)


def refusal(request: Request, result: str, message: str) -> Response:
    """The answer to `request` refused with the Result of this name (a LogResult, a storage Result)."""
    return answer_with(request, pb.Result.Value(result), message)


def not_leader(request: Request, pipeline_id: str, me: str, leader: str | None) -> Response:
    """NOT_LEADER from member `me` of the pipeline, naming its leader when known in `suggestedLeader`
    (Ratis's NotLeaderException with its suggested leader)."""
    hint = f"; the leader is {leader}" if leader else "; no leader is known yet"
    response = refusal(
        request, LogResult.NOT_LEADER, f"pipeline {pipeline_id}: datanode {me} is not the leader{hint}"
    )
    response.suggestedLeader = leader or ""
    return response


def commit_infos(members: Sequence[str], applied: Mapping[str, int]) -> list[pb.CommitInfoProto]:
    return [pb.CommitInfoProto(datanodeUuid=m, commitIndex=applied[m]) for m in members]


def committed_answer(
    response: Response, index: int, members: Sequence[str], applied: Mapping[str, int]
) -> Response:
    """The answer to entry `index`: its log index (a putBlock's BCSID) and what every member applied."""
    response.logIndex = index
    response.commitInfos.extend(commit_infos(members, applied))
    return response


@dataclass(frozen=True, slots=True)
class Watch:
    """A watchForCommit: wait until entry `index` is applied by a majority, or by every member."""

    index: int
    majority: bool


def watch_from_proto(request: Request) -> Watch:
    if request.WhichOneof("request") != "watchForCommit":
        raise ProtocolError("watchForCommit", "is missing")
    body = request.watchForCommit
    return Watch(body.index, body.replication == pb.MAJORITY_COMMITTED)


def watch_answer(
    request: Request, index: int, members: Sequence[str], applied: Mapping[str, int], behind: str | None
) -> Response:
    """SUCCESS once entry `index` is applied as asked; `behind`: why it is not (NOT_REPLICATED)."""
    reply = Response(cmdType=request.cmdType, traceID=request.traceID)
    reply.commitInfos.extend(commit_infos(members, applied))
    if behind is None:
        reply.result = pb.SUCCESS
        reply.watchForCommit.index = index
    else:
        reply.result = pb.NOT_REPLICATED
        reply.message = behind
    return reply


# ------------------------------------------------------------------ log entries


def metadata_only(entry: Request) -> Request:
    """The entry as the log keeps it: a writeChunk's or putSmallFile's data is not part of it."""
    kind = entry.WhichOneof("request")
    if kind not in ("writeChunk", "putSmallFile"):
        return entry
    stripped = Request()
    for field, value in entry.ListFields():  # field by field: copying the whole entry would copy the data
        if field.name != kind:
            _copy_field(stripped, field.name, field, value)
    body = getattr(entry, kind)
    target = getattr(stripped, kind)
    target.SetInParent()
    for field in body.DESCRIPTOR.fields:  # not ListFields: it would read (and so copy) the data too
        if field.name == "data":
            continue
        if field.is_repeated:
            getattr(target, field.name).extend(getattr(body, field.name))
        elif body.HasField(field.name):
            _copy_field(target, field.name, field, getattr(body, field.name))
    return stripped


def entry_payload(request: Request) -> bytes:
    """A request as a Raft log entry's payload (Ozone's startTransaction `setLogData`): without a writeChunk's
    or putSmallFile's data, which travels beside it as state machine data (`entry_data`)."""
    return metadata_only(request).SerializeToString()


def entry_data(request: Request) -> bytes:
    """The state machine data of a request: a writeChunk's or putSmallFile's chunk bytes (b"" for others)."""
    kind = request.WhichOneof("request")
    return getattr(request, kind).data if kind in ("writeChunk", "putSmallFile") else b""


def held_chunks(request: Request) -> bytes:
    """The state machine data of a putBlock over bytes written outside the log (a V2 datastream: each
    member holds its own copy): the chunks it names, offsets, lengths and checksums, which its leader
    checked against its own bytes before logging it, as a PutBlockRequestProto of their block. Every
    member checks its own bytes against them at append (`held_from_data`)."""
    block = request.putBlock.blockData
    held = pb.BlockData(blockID=block.blockID, chunks=block.chunks)
    return pb.PutBlockRequestProto(blockData=held).SerializeToString()


def held_from_data(data: bytes | memoryview) -> pb.PutBlockRequestProto:
    """What `held_chunks` wrote; ProtocolError when it does not parse."""
    try:
        return pb.PutBlockRequestProto.FromString(bytes(data))
    except Exception as e:
        raise ProtocolError("entry data", f"is not the chunks a leader holds: {e}") from None


def entry_request(payload: bytes) -> Request:
    """The request a log entry's payload carries (`entry_payload`); ProtocolError when it does not parse
    (every member reads the same payload alike)."""
    request = Request()
    try:
        request.ParseFromString(payload)
    except Exception as e:
        raise ProtocolError("entry", f"is not a ContainerCommandRequestProto: {e}") from None
    return request


def kept_refusal_bytes(response: Response, data: bytes | memoryview) -> bytes:
    """A data stage's refusal of a log entry and the entry's data, as a pipeline member keeps them: the
    answer's length (4 bytes, big-endian), the answer, the data."""
    answer = response.SerializeToString()
    return len(answer).to_bytes(4, "big") + answer + bytes(data)


def kept_refusal(raw: bytes) -> tuple[Response, bytes]:
    """What `kept_refusal_bytes` wrote: the refusal and the entry's data."""
    size = int.from_bytes(raw[:4], "big")
    return Response.FromString(raw[4 : 4 + size]), raw[4 + size :]


def _copy_field(target: Any, name: str, field: FieldDescriptor, value: Any) -> None:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        getattr(target, name).CopyFrom(value)
    else:
        setattr(target, name, value)
