"""Which putBlocks a pipeline's leader vouches for before it logs them, and with what (R16 D4, R20): a
putBlock over bytes no log entry carried on this leader (a V2 datastream, a stream from before its restart,
or one that went to other members only) carries the leader's own chunks as its entry's data, checked here
first, so every member judges its bytes against the leader's at append; a writeChunk committing its block
over such chunks is refused. The routing that calls it: `datanode/ratis/groups.py`; what the log carried:
`ContainerStateMachine.uncarried`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from pyozone.datanode.storage import ContainerError, ContainerSet, Result
from pyozone.datanode.xceiver.dispatcher import Refusal, Refused
from pyozone.hdds.ids import BlockID
from pyozone.protocol import container as wire
from pyozone.protocol.container import CommandType
from pyozone.protocol.ratis import held_chunks

if TYPE_CHECKING:
    from pyozone.proto.DatanodeClientProtocol_pb2 import ContainerCommandRequestProto as Request


def held_by_stream(
    containers: ContainerSet, request: Request, uncarried: Callable[[Request], set[tuple[int, int]]]
) -> Callable[[], bytes] | None:
    """For a putBlock over bytes no log entry carried here, what its leader checks before it logs it:
    its own bytes of the chunks the log did not carry (ContainerError UNABLE_TO_FIND_CHUNK or
    CHECKSUM_MISMATCH when they differ; ProtocolError for a malformed one); it returns what the entry
    then carries as its data (`held_chunks`: every chunk it names), which every member checks its own
    bytes against at append, after its block's earlier data stages. Such a putBlock is one of a block
    that took bytes outside the log since this replica was loaded (a V2 datastream), or one naming a
    chunk in `uncarried` (the pipeline's `ContainerStateMachine.uncarried`): the stream came before
    this leader restarted, or went to other members only (R16 D4). Unvouched, it would be logged
    without data, and each member would judge its own bytes alone at apply: a member without them
    refusing alike while the others commit. Only the uncarried chunks are checked here (R20 D1): the
    others' bytes are the log's, which every member's data stages wrote alike (and which a V1
    client's putBlock, sent without waiting, may name before they are applied), and a chunk
    committed as it is counts as carried (`check_written`). The check refuses
    BLOCK_ALREADY_FINALIZED for a finalized block (for good: its commit would refuse it alike), and
    CONTAINER_NOT_FOUND when the container is not here (this leader holds none of the bytes). None
    for any other request (its bytes, if any, went through the log). The check blocks (a read back
    of chunks not kept verified, the block's record): run it off the event loop, after the request's
    other checks (SCM's answer for a container not here comes first). A writeChunk committing its
    block with it (Ozone's putBlock piggybacking) names chunks too, but its data are its own bytes,
    with nowhere for the leader's chunks: it is refused unless every other chunk it names was carried
    by the log or is committed as it is (R20 D2, `_piggybacked_over_log`); the check returns no data
    then."""
    if request.cmdType == CommandType.WriteChunk and request.writeChunk.HasField("block"):
        others = uncarried(request)
        return partial(_piggybacked_over_log, containers, request, others) if others else None
    if request.cmdType != CommandType.PutBlock:
        return None
    container = containers.get(request.containerID)
    local_id = request.putBlock.blockData.blockID.localID
    streamed = container is not None and container.written_outside_log(local_id)
    missing = uncarried(request)
    if not streamed and not missing:
        return None

    def check() -> bytes:
        block = wire.put_block_from_proto(request.putBlock, request.containerID, "putBlock")
        here = containers.get(request.containerID)
        if here is None:
            raise ContainerError(
                Result.CONTAINER_NOT_FOUND,
                f"container {request.containerID} is not on this leader: it holds none of the bytes "
                f"the putBlock of block {local_id} commits, which no log entry carried",
            )
        here.refuse_if_finalized(block.block_id)  # for good: the commit would refuse it alike
        chunks = tuple(c for c in block.chunks if (c.offset, c.length) in missing)
        here.check_written(replace(block, chunks=chunks))
        return held_chunks(request)

    return check


def _piggybacked_over_log(
    containers: ContainerSet, request: Request, uncarried: set[tuple[int, int]]
) -> bytes:
    """A writeChunk committing its block, whose `uncarried` chunks its leader's log did not carry: each
    must be committed here as it is (so on every member: the log committed it), else the request is
    refused UNSUPPORTED_REQUEST, nothing logged. Unvouched, each member would judge its own bytes
    (streamed, or gone) alone at apply, and the members would commit the block differently. Blocks
    (the block's record): run it off the event loop."""
    lid = request.writeChunk.blockID.localID
    container = containers.get(request.containerID)
    committed: set[tuple[int, int]] = set()
    if container is not None:
        container.refuse_if_finalized(BlockID(request.containerID, lid))  # the commit's answer
        try:
            block = container.get_block(BlockID(request.containerID, lid))
        except ContainerError:
            block = None
        if block is not None:
            committed = {(c.offset, c.length) for c in block.chunks}
    if not uncarried <= committed:
        offset, length = min(uncarried - committed)
        raise Refused(
            Refusal.UNSUPPORTED_REQUEST,
            f"a writeChunk of conID: {request.containerID} locID: {lid} commits its block with chunks "
            f"this pipeline's log did not carry ({length} bytes at {offset}, written outside it or "
            "not at all): send its putBlock apart",
        )
    return b""
