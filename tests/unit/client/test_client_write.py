"""The write path against fake datanodes: sizes around every boundary, the committed block list, watches,
and that nothing is visible without close()."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from pyozone.client import OMException, OzoneClient, SafeModeException
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.unit.client.fakes import BLOCK, BUFFER, FLUSH, MAX, FakeCluster

SIZES = [0, 1, BUFFER - 1, BUFFER, BUFFER + 1, FLUSH, MAX + 1, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 5]


def committed_blocks(cluster: FakeCluster) -> list[tuple[int, int, int, int]]:
    """(containerID, localID, offset, length) of the last commitKey."""
    return [
        (
            loc.blockID.containerBlockID.containerID,
            loc.blockID.containerBlockID.localID,
            loc.offset,
            loc.length,
        )
        for loc in cluster.om.commits[-1].locations
    ]


@pytest.mark.parametrize("size", SIZES)
def test_sizes_round_trip(client: OzoneClient, cluster: FakeCluster, size: int) -> None:
    data = os.urandom(size)
    info = client.put_key("vol", "bucket", "k", data)
    assert info.data_size == size
    blocks = committed_blocks(cluster)
    assert [length for *_, length in blocks] == [min(BLOCK, size - i) for i in range(0, size, BLOCK)]
    assert [offset for _, _, offset, _ in blocks] == list(range(0, size, BLOCK))
    commit = cluster.om.commits[-1]
    assert commit.dataSize == size
    for loc in commit.locations:  # each BCSID is the block's last putBlock's log index
        pipeline = cluster.pipeline_of(loc.blockID.containerBlockID.containerID)
        stored = pipeline.leader.blocks[
            (loc.blockID.containerBlockID.containerID, loc.blockID.containerBlockID.localID)
        ]
        assert loc.blockID.blockCommitSequenceId == stored.blockID.blockCommitSequenceId > 0
        assert stored.size == loc.length
    with client.read_key("vol", "bucket", "k") as reader:
        assert reader.readall() == data


def test_chunks_putblocks_and_watches(client: OzoneClient, cluster: FakeCluster) -> None:
    """5 chunks in one block: a putBlock after chunks 2 and 4 and a last one (eof), each watched."""
    client.put_key("vol", "bucket", "k", os.urandom(5 * BUFFER))
    ((cid, lid, _, _),) = committed_blocks(cluster)
    leader = cluster.pipeline_of(cid).leader
    assert leader.requests.count(pb.WriteChunk) == 5
    assert leader.requests.count(pb.PutBlock) == 3
    assert leader.requests.count(pb.WatchForCommit) == 3
    block = leader.blocks[(cid, lid)]
    assert [c.chunkName for c in block.chunks] == [f"{lid}_chunk_{n}" for n in range(1, 6)]
    assert [c.offset for c in block.chunks] == [n * BUFFER for n in range(5)]
    assert all(len(c.checksumData.checksums) == BUFFER // 1024 for c in block.chunks)
    for member in cluster.pipeline_of(cid).members:  # every replica has every chunk
        assert b"".join(member.chunks[(cid, lid, c.chunkName)] for c in block.chunks) == b"".join(
            leader.chunks[(cid, lid, c.chunkName)] for c in block.chunks
        )


def test_a_one_chunk_block_is_written_and_put_in_one_put_small_file(
    client: OzoneClient, cluster: FakeCluster
) -> None:
    data = os.urandom(1000)
    client.put_key("vol", "bucket", "k", data)
    ((cid, lid, _, length),) = committed_blocks(cluster)
    leader = cluster.pipeline_of(cid).leader
    assert leader.requests.count(pb.PutSmallFile) == 1 and length == 1000
    assert (leader.requests.count(pb.WriteChunk), leader.requests.count(pb.PutBlock)) == (0, 0)
    assert leader.small_files == 1
    assert leader.blocks[(cid, lid)].blockID.blockCommitSequenceId > 0
    assert client.read_key("vol", "bucket", "k").readall() == data


def test_a_block_of_two_chunks_is_written_by_write_chunks_and_a_put_block(
    client: OzoneClient, cluster: FakeCluster
) -> None:
    data = os.urandom(BUFFER + 1)
    client.put_key("vol", "bucket", "k", data)
    ((cid, _, _, length),) = committed_blocks(cluster)
    leader = cluster.pipeline_of(cid).leader
    assert [leader.requests.count(k) for k in (pb.WriteChunk, pb.PutBlock, pb.PutSmallFile)] == [2, 1, 0]
    assert length == BUFFER + 1 and client.read_key("vol", "bucket", "k").readall() == data


def test_watch_skipped_when_commit_infos_show_all_applied(make_client) -> None:  # type: ignore[no-untyped-def]
    cluster = FakeCluster(block_size=BLOCK, instant_commit=True)
    try:
        from tests.unit.client.fakes import small_conf

        with OzoneClient(small_conf(cluster.om.address)) as client:
            client.create_volume("vol")
            client.create_bucket("vol", "bucket")
            client.put_key("vol", "bucket", "k", os.urandom(3 * BUFFER))
            assert all(pb.WatchForCommit not in dn.requests for dn in cluster.datanodes)
            assert client.read_key("vol", "bucket", "k").readall().__len__() == 3 * BUFFER
    finally:
        cluster.stop()


def test_a_key_written_past_its_announced_size_moves_to_a_new_block(
    client: OzoneClient, cluster: FakeCluster
) -> None:
    """OM allocated the announced size only (SCM counted no more): the rest goes to a block of its own."""
    data = os.urandom(3000)
    with client.create_key("vol", "bucket", "k", size_hint=1000) as writer:
        writer.write(data)
    assert [(loc.offset, loc.length) for loc in cluster.om.commits[-1].locations] == [(0, 1000), (1000, 2000)]
    assert client.read_key("vol", "bucket", "k").readall() == data


def test_many_small_writes_equal_one(client: OzoneClient, cluster: FakeCluster) -> None:
    data = os.urandom(2 * BLOCK + 777)
    with client.create_key("vol", "bucket", "k", size_hint=len(data)) as writer:
        for i in range(0, len(data), 333):
            writer.write(data[i : i + 333])
    assert client.read_key("vol", "bucket", "k").readall() == data
    assert [length for *_, length in committed_blocks(cluster)] == [BLOCK, BLOCK, 777]


def test_abandoned_writer_commits_nothing(client: OzoneClient, cluster: FakeCluster) -> None:
    writer = client.create_key("vol", "bucket", "k")
    writer.write(os.urandom(3 * BUFFER))
    del writer
    aborted = client.create_key("vol", "bucket", "k2")
    aborted.write(os.urandom(BUFFER + 1))
    aborted.abort()
    assert cluster.om.commits == []
    for name in ("k", "k2"):
        with pytest.raises(OMException) as e:
            client.key_info("vol", "bucket", name)
        assert e.value.result == "KEY_NOT_FOUND"
    assert client.list_keys("vol", "bucket") == []


def test_exception_inside_with_aborts(client: OzoneClient, cluster: FakeCluster) -> None:
    with pytest.raises(RuntimeError), client.create_key("vol", "bucket", "k") as writer:
        writer.write(b"x" * 100)
        raise RuntimeError("caller failed")
    assert cluster.om.commits == []


def test_overwrite_replaces_key(client: OzoneClient) -> None:
    client.put_key("vol", "bucket", "k", b"first")
    client.put_key("vol", "bucket", "k", b"second version")
    assert client.read_key("vol", "bucket", "k").readall() == b"second version"


def test_put_and_get_files(client: OzoneClient, tmp_path) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "in.bin"
    source.write_bytes(os.urandom(BLOCK + 5))
    seen: list[int] = []
    client.put_key("vol", "bucket", "dir/file", source, progress=seen.append)
    assert sum(seen) == BLOCK + 5
    got: list[int] = []
    client.get_key("vol", "bucket", "dir/file", tmp_path / "out.bin", progress=got.append)
    assert (tmp_path / "out.bin").read_bytes() == source.read_bytes()
    assert sum(got) == BLOCK + 5
    assert not list(tmp_path.glob(".*partial"))


def test_allocation_unavailable_is_retried(client: OzoneClient, cluster: FakeCluster) -> None:
    cluster.om.unavailable = 2  # "no OPEN pipeline yet", twice
    client.put_key("vol", "bucket", "k", b"abc")
    assert client.read_key("vol", "bucket", "k").readall() == b"abc"


def test_safe_mode_is_waited_out_like_an_unavailable_scm(client: OzoneClient, cluster: FakeCluster) -> None:
    """An SCM restarting spends a few seconds in safe mode; the chaos suite saw writes fail at once."""
    cluster.om.safe_mode_answers = 2
    client.put_key("vol", "bucket", "k", b"abc")
    assert client.read_key("vol", "bucket", "k").readall() == b"abc"


def test_safe_mode_surfaces_once_the_wait_is_over(client: OzoneClient, cluster: FakeCluster) -> None:
    cluster.om.safe_mode = True
    impatient = OzoneClient(config=replace(client.config, unavailable_budget_s=0.3))
    try:
        with pytest.raises(SafeModeException) as e:
            impatient.put_key("vol", "bucket", "k", b"abc")
    finally:
        impatient.close()
    assert e.value.result == "SCM_IN_SAFE_MODE"
    assert isinstance(e.value, OMException)


def test_async_api(cluster: FakeCluster) -> None:
    import asyncio

    from pyozone.client import AsyncOzoneClient
    from tests.unit.client.fakes import small_conf

    async def main() -> bytes:
        async with AsyncOzoneClient(small_conf(cluster.om.address)) as client:
            await client.create_volume("vol")
            await client.create_bucket("vol", "bucket")
            async with await client.create_key("vol", "bucket", "k") as out:
                await out.write(b"a" * (BUFFER + 3))
                await out.write(b"b" * 5)
            stream = await client.read_key("vol", "bucket", "k")
            async with stream:
                return b"".join([piece async for piece in stream])

    assert asyncio.run(main()) == b"a" * (BUFFER + 3) + b"b" * 5
