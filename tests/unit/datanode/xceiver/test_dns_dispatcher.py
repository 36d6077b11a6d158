"""The Dispatcher on its own: every request type, its checks and its failure answers (no gRPC)."""

from __future__ import annotations

import threading

import pytest

from pyozone.datanode.storage import ChecksumType, ContainerError
from pyozone.datanode.storage.errors import Result
from pyozone.datanode.xceiver import Dispatcher
from pyozone.hdds.states import ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.unit.datanode.dns_helpers import (
    PIPELINE,
    Node,
    block_id,
    block_writes,
    chunk,
    close,
    create,
    flip_byte,
    get,
    payload,
    put,
    read,
    request,
    results,
    write,
)


@pytest.fixture
def dispatcher(node_a: Node) -> Dispatcher:
    return Dispatcher(node_a.containers, node_a.uuid, node_a.full.append)


def run(
    dispatcher: Dispatcher, *requests: pb.ContainerCommandRequestProto
) -> list[pb.ContainerCommandResponseProto]:
    return [dispatcher.dispatch(r) for r in requests]


def test_first_write_creates_the_container_and_data_reads_back(dispatcher: Dispatcher, node_a: Node) -> None:
    data = payload(1, 10_000)
    writes, chunks = block_writes(7, 1, data, 4096)
    assert results(run(dispatcher, *writes)) == ["SUCCESS"] * 4
    container = node_a.containers.require(7)
    assert (container.data.origin_node_id, container.data.origin_pipeline_id) == (node_a.uuid, PIPELINE)
    assert container.state is ReplicaState.OPEN and container.bcsid == 1

    [got] = run(dispatcher, get(7, 1))
    block = got.getBlock.blockData
    assert got.result == pb.SUCCESS and block.size == len(data) and block.blockID.blockCommitSequenceId == 1
    assert list(block.chunks) == chunks
    back = b"".join(dispatcher.dispatch(read(7, 1, c)).readChunk.data for c in block.chunks)
    assert back == data

    [length] = run(
        dispatcher,
        request(
            pb.GetCommittedBlockLength,
            7,
            getCommittedBlockLength=pb.GetCommittedBlockLengthRequestProto(blockID=block_id(7, 1)),
        ),
    )
    assert length.getCommittedBlockLength.blockLength == len(data)

    [info] = run(dispatcher, request(pb.ReadContainer, 7, readContainer=pb.ReadContainerRequestProto()))
    c = info.readContainer.containerData
    assert (c.containerID, c.state, c.blockCount, c.bytesUsed, c.blockCommitSequenceId) == (
        7, pb.ContainerDataProto.OPEN, 1, len(data), 1,
    )  # fmt: skip
    assert c.originNodeId == node_a.uuid


def test_bcsid_is_assigned_never_taken_from_the_request(dispatcher: Dispatcher, node_a: Node) -> None:
    """Issue 28 defect 1: a client's blockCommitSequenceId is ignored; a putBlock outside a log commits
    at the container's next BCSID, one in a log at the entry's index."""
    run(dispatcher, create(1))
    for lid in (1, 2):
        writes, _ = block_writes(1, lid, payload(lid, 100), 100)
        run(dispatcher, *writes)
    assert node_a.containers.require(1).bcsid == 2
    writes, _ = block_writes(1, 3, payload(3, 100), 100, bcsid=1 << 62)  # a client's claim
    answers = run(dispatcher, *writes)
    assert answers[-1].putBlock.committedBlockLength.blockID.blockCommitSequenceId == 3
    assert node_a.containers.require(1).bcsid == 3
    writes, _ = block_writes(1, 4, payload(4, 100), 100, bcsid=1 << 62)
    answers = [dispatcher.dispatch(r, 40 + i) for i, r in enumerate(writes)]  # entries 40, 41 of a log
    assert answers[-1].putBlock.committedBlockLength.blockID.blockCommitSequenceId == 41
    assert node_a.containers.require(1).bcsid == 41
    checks = run(dispatcher, get(1, 4, bcsid=41), get(1, 4, bcsid=42), get(1, 1, bcsid=2))
    assert results(checks) == ["SUCCESS", "UNKNOWN_BCSID", "BCSID_MISMATCH"]


def test_another_pipelines_log_neither_writes_nor_closes_a_ratis_replica(
    dispatcher: Dispatcher, node_a: Node
) -> None:
    """Issue 28 defect 1: an entry of another pipeline's log (its index is no BCSID of this container)
    is refused at the leader's check and again at apply, on a replica that has the container."""
    writes, _ = block_writes(1, 1, payload(1, 100), 100)
    run(dispatcher, *writes)
    container = node_a.containers.require(1)
    assert (container.bcsid, container.data.origin_pipeline_id) == (1, PIPELINE)
    other = []
    for entry in [*block_writes(1, 2, payload(2, 100), 100)[0], close(1)]:
        entry.pipelineID = "pipeline-2"
        other.append(entry)
        with pytest.raises(ContainerError) as refused:
            dispatcher.check_writable(entry)
        assert refused.value.result is Result.CONTAINER_NOT_FOUND
    answers = [dispatcher.dispatch(entry, 50 + i) for i, entry in enumerate(other)]
    assert results(answers) == ["CONTAINER_NOT_FOUND"] * 3
    assert "not 0 of pipeline-2" in answers[0].message
    assert (container.bcsid, container.state) == (1, ReplicaState.OPEN)
    writes, _ = block_writes(1, 3, payload(3, 100), 100)
    assert results(dispatcher.dispatch(r, 2 + i) for i, r in enumerate(writes)) == ["SUCCESS"] * 2
    assert container.bcsid == 3


def test_concurrent_put_blocks_get_distinct_bcsids(dispatcher: Dispatcher, node_a: Node) -> None:
    run(dispatcher, create(1))
    for lid in range(1, 41):
        run(dispatcher, block_writes(1, lid, payload(lid, 64), 64)[0][0])

    def put_range(lids: range) -> None:
        for lid in lids:
            chunks = [chunk(f"{lid}_chunk_0", 0, payload(lid, 64))]
            assert dispatcher.dispatch(put(1, lid, chunks)).result == pb.SUCCESS

    threads = [threading.Thread(target=put_range, args=(range(s, 41, 4),)) for s in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    container = node_a.containers.require(1)
    assert container.bcsid == 40 and container.key_count == 40
    bcsids = [
        dispatcher.dispatch(get(1, lid)).getBlock.blockData.blockID.blockCommitSequenceId
        for lid in range(1, 41)
    ]
    assert sorted(bcsids) == list(range(1, 41))


def test_writes_need_an_open_replica(dispatcher: Dispatcher, node_a: Node) -> None:
    writes, chunks = block_writes(1, 1, payload(1, 100), 100)
    run(dispatcher, *writes)
    container = node_a.containers.require(1)
    container.mark_closing()
    again = write(1, 2, chunks[0], payload(1, 100))
    assert results(run(dispatcher, again, put(1, 2, chunks))) == ["CLOSED_CONTAINER_IO"] * 2
    [closed] = run(dispatcher, close(1))
    assert closed.result == pb.SUCCESS and closed.closeContainer.containerID == 1
    assert container.state is ReplicaState.CLOSED
    assert results(run(dispatcher, again, close(1))) == [
        "CLOSED_CONTAINER_IO",
        "SUCCESS",
    ]  # close is idempotent
    assert dispatcher.dispatch(read(1, 1, chunks[0])).readChunk.data == payload(1, 100)  # reads go on

    run(dispatcher, create(2))
    unhealthy = node_a.containers.require(2)
    unhealthy.mark_unhealthy("test")
    assert results(run(dispatcher, write(2, 1, chunks[0], payload(1, 100)), close(2))) == [
        "CONTAINER_UNHEALTHY", "CONTAINER_UNHEALTHY",
    ]  # fmt: skip


def test_a_container_lost_with_its_volume_is_not_created_again_by_a_write(
    dispatcher: Dispatcher, node_a: Node
) -> None:
    """Re-created empty, the replica would miss every earlier block yet go on reporting the pipeline's
    BCSID; Ozone refuses with CONTAINER_MISSING until the container is imported back."""
    writes, _ = block_writes(4, 1, payload(1, 100), 100)
    run(dispatcher, *writes)
    node_a.containers.require(4).volume.mark_failed("disk pulled")
    assert node_a.containers.remove_failed_volume_containers() == [4]
    more, _ = block_writes(4, 2, payload(2, 100), 100)
    assert results(run(dispatcher, *more)) == ["CONTAINER_MISSING"] * len(more)
    assert 4 not in node_a.containers
    with pytest.raises(ContainerError) as refused:
        dispatcher.check_writable(more[0])  # what a pipeline leader asks before ordering the write
    assert refused.value.result is Result.CONTAINER_MISSING
    fresh, _ = block_writes(5, 1, payload(3, 100), 100)  # other containers are created as before
    assert results(run(dispatcher, *fresh)) == ["SUCCESS"] * len(fresh)


def test_close_request_does_not_close_a_quasi_closed_replica(dispatcher: Dispatcher, node_a: Node) -> None:
    run(dispatcher, create(1))
    container = node_a.containers.require(1)
    container.mark_closing()
    container.quasi_close()
    [answer] = run(dispatcher, close(1))
    assert answer.result == pb.CONTAINER_INTERNAL_ERROR and "QUASI_CLOSED" in answer.message
    assert container.state is ReplicaState.QUASI_CLOSED


def test_corrupt_chunk_answers_checksum_mismatch_and_marks_unhealthy(
    dispatcher: Dispatcher, node_a: Node
) -> None:
    writes, chunks = block_writes(1, 1, payload(1, 8192), 4096)
    run(dispatcher, *writes)
    container = node_a.containers.require(1)
    flip_byte(container.chunks_dir / "1.block", 5000)
    first = dispatcher.dispatch(read(1, 1, chunks[0]))
    assert first.result == pb.SUCCESS  # the other chunk is intact
    [bad] = run(dispatcher, read(1, 1, chunks[1]))
    assert bad.result == pb.CHECKSUM_MISMATCH and "1_chunk_1" in bad.message
    assert container.state is ReplicaState.UNHEALTHY
    assert node_a.reports[-1].state is ReplicaState.UNHEALTHY


def test_reads_verify_against_committed_checksums_not_the_requests(
    dispatcher: Dispatcher, node_a: Node
) -> None:
    data = payload(2, 4096)
    writes, chunks = block_writes(1, 1, data, 4096)
    run(dispatcher, *writes)
    lying = pb.ChunkInfo()
    lying.CopyFrom(chunks[0])
    lying.checksumData.checksums[0] = b"\0\0\0\0"
    assert dispatcher.dispatch(read(1, 1, lying)).readChunk.data == data
    ranged = pb.ChunkInfo(chunkName="1_chunk_0", offset=1024, len=2048)  # partial: whole pieces only
    assert dispatcher.dispatch(read(1, 1, ranged)).readChunk.data == data[1024:3072]
    tail = pb.ChunkInfo(chunkName="1_chunk_0", offset=3072, len=1024)
    assert dispatcher.dispatch(read(1, 1, tail, pb.V1)).readChunk.dataBuffers.buffers == [data[3072:]]
    misaligned = pb.ChunkInfo(chunkName="1_chunk_0", offset=100, len=200)
    assert dispatcher.dispatch(read(1, 1, misaligned)).result == pb.MALFORMED_REQUEST
    assert node_a.containers.require(1).state is ReplicaState.OPEN

    # an uncommitted chunk is checked against the request's checksums, and damage there marks nothing
    extra = chunk("2_chunk_0", 0, payload(3, 100))
    run(dispatcher, write(1, 2, extra, payload(3, 100)))
    assert dispatcher.dispatch(read(1, 2, extra)).readChunk.data == payload(3, 100)
    extra.checksumData.checksums[0] = b"\0\0\0\0"
    assert dispatcher.dispatch(read(1, 2, extra)).result == pb.CHECKSUM_MISMATCH
    assert node_a.containers.require(1).state is ReplicaState.OPEN


def test_malformed_and_unsupported_requests(dispatcher: Dispatcher, node_a: Node) -> None:
    data = payload(1, 2048)
    good = chunk("1_chunk_0", 0, data)
    short_sums = pb.ChunkInfo()
    short_sums.CopyFrom(good)
    del short_sums.checksumData.checksums[1]
    wrong_size = chunk("1_chunk_0", 0, data, ChecksumType.SHA256)
    wrong_size.checksumData.checksums[0] = b"short"
    other_container = write(1, 1, good, data)
    other_container.writeChunk.blockID.containerID = 2
    cases = {
        "no body": request(pb.WriteChunk, 1),
        "wrong body": request(pb.WriteChunk, 1, readChunk=pb.ReadChunkRequestProto()),
        "no cmdType": pb.ContainerCommandRequestProto(
            containerID=1, createContainer=pb.CreateContainerRequestProto()
        ),
        "no container id": create(0),
        "no block id": request(
            pb.WriteChunk, 1, writeChunk=pb.WriteChunkRequestProto(chunkData=good, data=data)
        ),
        "checksum count": write(1, 1, short_sums, data),
        "checksum size": write(1, 1, wrong_size, data),
        "block id of another container": other_container,
        "data length": write(1, 1, good, data[:-1]),
        "list count": request(pb.ListBlock, 1, listBlock=pb.ListBlockRequestProto()),
    }
    run(dispatcher, create(1))
    answers = {name: dispatcher.dispatch(r) for name, r in cases.items()}
    assert {name: pb.Result.Name(a.result) for name, a in answers.items()} == dict.fromkeys(
        cases, "MALFORMED_REQUEST"
    )
    assert all(a.message for a in answers.values())
    assert node_a.containers.require(1).used_bytes == 0 and 2 not in node_a.containers

    unsupported = request(pb.DeleteBlock, 1, trace="t9", deleteBlock=pb.DeleteBlockRequestProto())
    answer = dispatcher.dispatch(unsupported)
    assert (answer.result, answer.cmdType, answer.traceID) == (pb.UNSUPPORTED_REQUEST, pb.DeleteBlock, "t9")
    assert (
        dispatcher.dispatch(pb.ContainerCommandRequestProto(cmdType=999, containerID=1)).result
        == pb.UNSUPPORTED_REQUEST
    )
    assert results(run(dispatcher, get(5, 1), create(1))) == ["CONTAINER_NOT_FOUND", "CONTAINER_EXISTS"]


def test_dispatch_never_raises(dispatcher: Dispatcher, node_a: Node, monkeypatch: pytest.MonkeyPatch) -> None:
    run(dispatcher, create(1))
    container = node_a.containers.require(1)

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(container, "write_chunk", explode)
    [answer] = run(dispatcher, write(1, 1, chunk("c", 0, b"x"), b"x"))
    assert answer.result == pb.CONTAINER_INTERNAL_ERROR and "boom" in answer.message


def test_container_full_is_reported_once_at_the_threshold(node_a: Node) -> None:
    dispatcher = Dispatcher(node_a.containers, node_a.uuid, node_a.full.append, close_threshold=0.5)
    run(dispatcher, create(1))
    max_size = node_a.containers.require(1).data.max_size
    step = max_size // 8
    for n in range(3):  # 3/8 of the container: not yet
        dispatcher.dispatch(write(1, n + 1, chunk("c", 0, payload(n, step)), payload(n, step)))
    assert node_a.full == []
    for n in range(3, 6):
        answer = dispatcher.dispatch(write(1, n + 1, chunk("c", 0, payload(n, step)), payload(n, step)))
        assert answer.result == pb.SUCCESS
    assert node_a.full == [1]
    with pytest.raises(ValueError):
        Dispatcher(node_a.containers, node_a.uuid, node_a.full.append, close_threshold=0)


def test_list_blocks_delete_and_small_files(dispatcher: Dispatcher, node_a: Node) -> None:
    for lid in (3, 5, 9):
        small = payload(lid, 300)
        body = pb.PutSmallFileRequestProto(
            block=pb.PutBlockRequestProto(blockData=pb.BlockData(blockID=block_id(1, lid))),
            chunkInfo=chunk(f"{lid}_chunk_0", 0, small),
            data=small,
        )
        answer = dispatcher.dispatch(request(pb.PutSmallFile, 1, putSmallFile=body))
        assert answer.putSmallFile.committedBlockLength.blockLength == 300
    listed = dispatcher.dispatch(
        request(pb.ListBlock, 1, listBlock=pb.ListBlockRequestProto(startLocalID=4, count=10))
    )
    assert [b.blockID.localID for b in listed.listBlock.blockData] == [5, 9]
    small = dispatcher.dispatch(
        request(
            pb.GetSmallFile,
            1,
            getSmallFile=pb.GetSmallFileRequestProto(block=pb.GetBlockRequestProto(blockID=block_id(1, 5))),
        )
    )
    assert small.getSmallFile.data.data == payload(5, 300)

    combined = write(1, 11, chunk("11_chunk_0", 0, payload(11, 50)), payload(11, 50))
    combined.writeChunk.block.blockData.CopyFrom(
        pb.BlockData(blockID=block_id(1, 11), chunks=[combined.writeChunk.chunkData])
    )
    answer = dispatcher.dispatch(combined)
    assert answer.writeChunk.committedBlockLength.blockLength == 50
    assert dispatcher.dispatch(get(1, 11)).getBlock.blockData.size == 50

    echo = dispatcher.dispatch(
        request(pb.Echo, 0, echo=pb.EchoRequestProto(payload=b"hi", payloadSizeResp=5))
    )
    assert echo.echo.payload == bytes(5)

    delete = request(pb.DeleteContainer, 1, deleteContainer=pb.DeleteContainerRequestProto())
    assert dispatcher.dispatch(delete).result == pb.DELETE_ON_OPEN_CONTAINER
    delete.deleteContainer.forceDelete = True
    assert dispatcher.dispatch(delete).result == pb.SUCCESS
    assert 1 not in node_a.containers and node_a.reports[-1].state is ReplicaState.DELETED
