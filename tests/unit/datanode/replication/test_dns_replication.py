"""Replication between two datanodes over pyozone.rpc: push_container to upload, download, bad streams."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.datanode.replication import ReplicationError, push_container
from pyozone.datanode.storage import ExportStream, import_container
from pyozone.datanode.xceiver import Dispatcher
from pyozone.hdds.states import ReplicaState
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.unit.datanode.dns_helpers import Node, block_writes, close, create, payload, results
from tests.unit.datanode.replication.replication_helpers import serve_replication

CID = 5


def make_closed(node: Node, cid: int = CID, blocks: int = 3, close_it: bool = True) -> dict[int, bytes]:
    """A container with `blocks` blocks written through the dispatcher; returns each block's bytes."""
    dispatcher = Dispatcher(node.containers, node.uuid, node.full.append)
    written = {}
    requests = [create(cid)]
    for lid in range(1, blocks + 1):
        written[lid] = payload(cid * 100 + lid, 20_000 + lid)
        requests.extend(block_writes(cid, lid, written[lid], 8192)[0])
    if close_it:
        requests.append(close(cid))
    assert results(dispatcher.dispatch(r) for r in requests) == ["SUCCESS"] * len(requests)
    return written


def blocks_of(node: Node, cid: int = CID) -> list[tuple[int, int, bytes]]:
    """(local id, BCSID, data) of every block of the replica."""
    container = node.containers.require(cid)
    return [
        (b.block_id.local_id, b.bcsid, b"".join(container.read_chunk(b.block_id, c) for c in b.chunks))
        for b in container.list_blocks()
    ]


def archive_of(node: Node, cid: int = CID) -> tuple[bytes, bytes]:
    stream = ExportStream(node.containers.require(cid))
    data = b"".join(stream)
    assert stream.sha256 is not None
    return data, bytes.fromhex(stream.sha256)


async def send_archive(
    stub: rpc.Stub,
    archive: bytes,
    sha256: bytes,
    piece: int = 16 * 1024,
    eof: bool = True,
    **overrides: int,
) -> pb.SendContainerResponse:
    """Uploads `archive` as a well-formed stream of pieces, except for the overridden fields."""

    async def requests() -> AsyncIterator[pb.SendContainerRequest]:
        for offset in range(0, len(archive), piece):
            data = archive[offset : offset + piece]
            last = eof and offset + piece >= len(archive)
            request = pb.SendContainerRequest(containerID=CID, offset=offset, data=data, eof=last)
            if last:
                request.archiveSize, request.archiveSha256 = len(archive), sha256
            for name, value in overrides.items():
                setattr(request, name, value)
            yield request

    return await stub.upload(requests())


def assert_nothing_imported(node: Node) -> None:
    assert CID not in node.containers
    assert node.import_leftovers() == []
    assert not any(v.container_dir(CID).exists() for v in node.volumes.data_volumes)
    assert node.reports == []


def test_push_copies_a_closed_container(node_a: Node, node_b: Node, executor: ThreadPoolExecutor) -> None:
    make_closed(node_a)
    archive, _ = archive_of(node_a)

    async def scenario() -> int:
        async with serve_replication(node_b, executor) as target:
            return await push_container(node_a.containers, CID, target.address, executor)

    sent = asyncio.run(scenario())
    assert sent == len(archive)
    source, copy = node_a.containers.require(CID), node_b.containers.require(CID)
    assert blocks_of(node_b) == blocks_of(node_a) and len(blocks_of(node_b)) == 3
    assert (copy.bcsid, copy.key_count, copy.used_bytes, copy.state) == (
        source.bcsid, source.key_count, source.used_bytes, ReplicaState.CLOSED,
    )  # fmt: skip
    assert copy.data.origin_node_id == node_a.uuid
    assert [(r.container_id, r.state, r.sequence_id) for r in node_b.reports] == [
        (CID, ReplicaState.CLOSED, 3)
    ]
    assert node_b.import_leftovers() == []


def test_push_to_a_target_that_has_the_container_fails(
    node_a: Node, node_b: Node, executor: ThreadPoolExecutor
) -> None:
    make_closed(node_a)
    make_closed(node_b, blocks=1)
    before = blocks_of(node_b)
    node_b.reports.clear()

    async def scenario() -> None:
        async with serve_replication(node_b, executor) as target:
            with pytest.raises(ReplicationError, match="ALREADY_EXISTS"):
                await push_container(node_a.containers, CID, target.address, executor)

    asyncio.run(scenario())
    assert blocks_of(node_b) == before and node_b.reports == [] and node_b.import_leftovers() == []


def test_push_needs_a_closed_replica_and_a_reachable_target(
    node_a: Node, node_b: Node, executor: ThreadPoolExecutor
) -> None:
    make_closed(node_a, cid=6, close_it=False)
    make_closed(node_a)

    async def scenario() -> None:
        with pytest.raises(ReplicationError, match="OPEN"):
            await push_container(node_a.containers, 6, HostPort("127.0.0.1", 1), executor)
        with pytest.raises(ReplicationError, match="no such container"):
            await push_container(node_a.containers, 99, HostPort("127.0.0.1", 1), executor)
        with pytest.raises(ReplicationError, match="UNAVAILABLE"):
            await push_container(node_a.containers, CID, HostPort("127.0.0.1", 1), executor, timeout_s=5)

    asyncio.run(scenario())


@pytest.mark.parametrize("resign", [False, True], ids=["sha256-mismatch", "chunk-checksum-mismatch"])
def test_a_corrupted_stream_is_refused_and_leaves_nothing(
    node_a: Node, node_b: Node, executor: ThreadPoolExecutor, resign: bool
) -> None:
    written = make_closed(node_a)
    archive, intact_sha256 = archive_of(node_a)
    at = archive.index(written[2][:64]) + 1000  # inside block 2's data
    damaged = archive[:at] + bytes([archive[at] ^ 0x01]) + archive[at + 1 :]
    sha256 = hashlib.sha256(damaged).digest() if resign else intact_sha256

    async def scenario() -> None:
        async with serve_replication(node_b, executor) as target:
            with pytest.raises(rpc.RpcError) as e:
                await send_archive(target.replication, damaged, sha256)
            assert e.value.code() is rpc.StatusCode.INVALID_ARGUMENT
            assert ("2_chunk_0" if resign else "SHA-256") in (e.value.details() or "")
            # the same archive intact then imports: the failed attempt left nothing in the way
            await send_archive(target.replication, archive, intact_sha256)
            assert blocks_of(node_b) == blocks_of(node_a)

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("truncated", rpc.StatusCode.INVALID_ARGUMENT),
        ("gap", rpc.StatusCode.INVALID_ARGUMENT),
        ("compressed", rpc.StatusCode.INVALID_ARGUMENT),
        ("size", rpc.StatusCode.INVALID_ARGUMENT),
        ("too large", rpc.StatusCode.RESOURCE_EXHAUSTED),
        ("replica index", rpc.StatusCode.INVALID_ARGUMENT),
        ("no container id", rpc.StatusCode.INVALID_ARGUMENT),
    ],
)
def test_bad_upload_streams(
    node_a: Node, node_b: Node, executor: ThreadPoolExecutor, case: str, code: rpc.StatusCode
) -> None:
    make_closed(node_a)
    archive, sha256 = archive_of(node_a)
    kwargs: dict[str, object] = {
        "truncated": {"eof": False},
        "gap": {"offset": 7},
        "compressed": {"compression": pb.GZIP},
        "size": {"archiveSize": 1},
        "replica index": {"replicaIndex": 2},
        "no container id": {"containerID": 0},
        "too large": {},
    }[case]

    async def scenario() -> None:
        max_bytes = len(archive) - 1 if case == "too large" else None
        async with serve_replication(node_b, executor, max_bytes=max_bytes) as target:
            with pytest.raises(rpc.RpcError) as e:
                await send_archive(target.replication, archive, sha256, **kwargs)  # type: ignore[arg-type]
            assert e.value.code() is code, e.value.details()

    asyncio.run(scenario())
    assert_nothing_imported(node_b)


def test_download_streams_a_closed_container(
    node_a: Node, node_b: Node, executor: ThreadPoolExecutor
) -> None:
    make_closed(node_a)
    make_closed(node_a, cid=6, close_it=False)
    archive, sha256 = archive_of(node_a)

    async def scenario() -> list[pb.CopyContainerResponseProto]:
        async with serve_replication(node_a, executor) as source:
            pieces = [
                p async for p in source.replication.download(pb.CopyContainerRequestProto(containerID=CID))
            ]
            for cid, code in ((6, rpc.StatusCode.FAILED_PRECONDITION), (99, rpc.StatusCode.NOT_FOUND)):
                with pytest.raises(rpc.RpcError) as e:
                    _ = [
                        p
                        async for p in source.replication.download(
                            pb.CopyContainerRequestProto(containerID=cid)
                        )
                    ]
                assert e.value.code() is code
            return pieces

    pieces = asyncio.run(scenario())
    assert b"".join(p.data for p in pieces) == archive
    assert [p.eof for p in pieces] == [False] * (len(pieces) - 1) + [True]
    assert [p.readOffset for p in pieces] == [
        sum(len(q.data) for q in pieces[:i]) for i in range(len(pieces))
    ]
    last = pieces[-1]
    assert (last.archiveSize, last.archiveSha256) == (len(archive), sha256)
    import_container(node_b.containers, (p.data for p in pieces), last.archiveSha256.hex())
    assert blocks_of(node_b) == blocks_of(node_a)


def test_concurrent_uploads_of_one_container(
    node_a: Node, node_b: Node, executor: ThreadPoolExecutor
) -> None:
    make_closed(node_a)

    async def scenario() -> list[object]:
        async with serve_replication(node_b, executor) as target:
            return await asyncio.gather(
                *(push_container(node_a.containers, CID, target.address, executor) for _ in range(3)),
                return_exceptions=True,
            )

    outcomes = asyncio.run(scenario())
    assert sum(isinstance(o, int) for o in outcomes) == 1
    assert all("ALREADY_EXISTS" in str(o) for o in outcomes if not isinstance(o, int))
    assert blocks_of(node_b) == blocks_of(node_a) and node_b.import_leftovers() == []


def test_a_source_read_failure_ends_the_push_and_the_target_keeps_nothing(
    node_a: Node, node_b: Node, executor: ThreadPoolExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_closed(node_a)

    def failing(self: ExportStream) -> Iterator[bytes]:
        yield bytes(4096)
        raise OSError("disk gone")

    monkeypatch.setattr(ExportStream, "__iter__", failing)

    async def scenario() -> None:
        async with serve_replication(node_b, executor) as target:
            with pytest.raises(ReplicationError, match="reading the replica failed: disk gone"):
                await push_container(node_a.containers, CID, target.address, executor)

    asyncio.run(scenario())
    assert_nothing_imported(node_b)
