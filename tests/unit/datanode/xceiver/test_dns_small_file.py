"""PutSmallFile and GetSmallFile on the Dispatcher (Ozone's KeyValueHandler.handlePutSmallFile and
handleGetSmallFile): a whole block's one chunk written and committed in one request, and read back in one;
every check a writeChunk and putBlock get (checksums, container state, the pipeline's log) applies to it.
Token maxLength: test_dns_tokens; through a pipeline's log: tests/unit/datanode/test_dnd_small_file.py."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pyozone.datanode.xceiver import Dispatcher
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.unit.datanode.dns_helpers import (
    Node,
    block_writes,
    chunk,
    close,
    create,
    get,
    get_small_file,
    payload,
    results,
    small_file,
)


@pytest.fixture
def dispatcher(node_a: Node) -> Dispatcher:
    return Dispatcher(node_a.containers, node_a.uuid, node_a.full.append)


def test_one_request_writes_and_commits_the_block_and_one_reads_it_back(
    dispatcher: Dispatcher, node_a: Node
) -> None:
    data = payload(1, 3000)
    answer = dispatcher.dispatch(small_file(7, 1, data))
    assert answer.result == pb.SUCCESS, answer.message
    length = answer.putSmallFile.committedBlockLength
    assert (length.blockLength, length.blockID.localID, length.blockID.blockCommitSequenceId) == (3000, 1, 1)
    block = dispatcher.dispatch(get(7, 1)).getBlock.blockData
    assert [(c.offset, c.len) for c in block.chunks] == [(0, 3000)] and block.size == 3000
    back = dispatcher.dispatch(get_small_file(7, 1, 1))
    assert back.result == pb.SUCCESS and back.getSmallFile.data.data == data
    assert back.getSmallFile.data.chunkData == block.chunks[0]
    container = node_a.containers.require(7)
    assert (container.bcsid, container.used_bytes) == (1, 3000)
    assert dispatcher.ops.counts() == {"PutSmallFile": 1, "GetBlock": 1, "GetSmallFile": 1}


def test_data_that_does_not_match_its_checksums_is_refused_and_nothing_is_committed(
    dispatcher: Dispatcher, node_a: Node
) -> None:
    data = payload(2, 2048)
    damaged = small_file(7, 1, data)
    damaged.putSmallFile.data = bytes([data[0] ^ 1]) + data[1:]
    answer = dispatcher.dispatch(damaged)
    assert pb.Result.Name(answer.result) == "CHECKSUM_MISMATCH", answer.message
    assert results([dispatcher.dispatch(get(7, 1))]) == ["NO_SUCH_BLOCK"]
    assert node_a.containers.require(7).bcsid == 0


def test_a_closed_container_takes_no_small_file(dispatcher: Dispatcher) -> None:
    assert results([dispatcher.dispatch(create(7)), dispatcher.dispatch(close(7))]) == ["SUCCESS"] * 2
    answer = dispatcher.dispatch(small_file(7, 1, payload(3, 100)))
    assert pb.Result.Name(answer.result) == "CLOSED_CONTAINER_IO", answer.message


def _without(request: pb.ContainerCommandRequestProto, field: str) -> pb.ContainerCommandRequestProto:
    request.putSmallFile.ClearField(field)
    return request


def _sent_to(cid: int, request: pb.ContainerCommandRequestProto) -> pb.ContainerCommandRequestProto:
    request.containerID = cid
    return request


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (lambda: _without(small_file(7, 1, b"x" * 10), "chunkInfo"), "putSmallFile.chunkInfo"),
        (lambda: _without(small_file(7, 1, b"x" * 10), "block"), "putSmallFile.block"),
        (
            lambda: small_file(7, 1, b"x" * 10, chunk("1_chunk", 5, b"x" * 10)),
            "putSmallFile.chunkInfo.offset",
        ),
        (lambda: small_file(7, 1, b"x" * 10, chunk("1_chunk", 0, b"x" * 11)), "chunk 1_chunk: 10 bytes"),
        (
            lambda: _sent_to(7, small_file(8, 1, b"x" * 10)),
            "putSmallFile.block.blockData.blockID.containerID",
        ),
    ],
    ids=["no chunkInfo", "no block", "offset not 0", "length not the data's", "another container's block"],
)
def test_bad_input_is_refused_before_anything_is_written(
    dispatcher: Dispatcher, node_a: Node, bad: Callable[[], pb.ContainerCommandRequestProto], field: str
) -> None:
    answer = dispatcher.dispatch(bad())
    assert pb.Result.Name(answer.result) == "MALFORMED_REQUEST" and field in answer.message, answer.message
    container = node_a.containers.get(7)
    assert container is None or (container.used_bytes, container.bcsid) == (0, 0)


def test_a_block_committed_with_other_chunks_is_not_replaced(dispatcher: Dispatcher, node_a: Node) -> None:
    """Ozone replaces the block's chunk list with the small file's one chunk; a block committed already
    would then hide its other bytes. A replay of the same small file is fine."""
    data = payload(4, 2048)
    writes, _ = block_writes(7, 1, data, 1024)
    assert results(dispatcher.dispatch(r) for r in writes) == ["SUCCESS"] * 3
    again = dispatcher.dispatch(small_file(7, 1, data[:1024], chunk("1_chunk_0", 0, data[:1024])))
    assert pb.Result.Name(again.result) == "PUT_SMALL_FILE_ERROR", again.message
    assert dispatcher.dispatch(get(7, 1)).getBlock.blockData.size == 2048
    first = small_file(7, 2, data)
    assert results([dispatcher.dispatch(first), dispatcher.dispatch(first)]) == ["SUCCESS"] * 2
    assert dispatcher.dispatch(get_small_file(7, 2)).getSmallFile.data.data == data


def test_a_ratis_container_takes_a_small_file_only_through_its_pipelines_log(dispatcher: Dispatcher) -> None:
    assert (
        dispatcher.dispatch(small_file(7, 1, payload(5, 100))).result == pb.SUCCESS
    )  # creates it, on PIPELINE
    direct = small_file(7, 2, payload(6, 100))
    direct.ClearField("pipelineID")
    answer = dispatcher.dispatch(direct)
    assert pb.Result.Name(answer.result) == "UNSUPPORTED_REQUEST" and "pipeline's log" in answer.message
    assert results([dispatcher.dispatch(get(7, 2))]) == ["NO_SUCH_BLOCK"]
