"""The read path: ranged and streaming reads, and failing over to another replica."""

from __future__ import annotations

import os

import pytest

from pyozone.client import BlockReadError, OzoneClient
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.polling import wait_for
from tests.unit.client.fakes import BLOCK, BPC, BUFFER, FakeCluster


@pytest.fixture
def stored(client: OzoneClient, cluster: FakeCluster) -> tuple[bytes, tuple[int, int]]:
    data = os.urandom(2 * BLOCK + 3 * BUFFER + 17)
    client.put_key("vol", "bucket", "k", data)
    first = cluster.om.commits[-1].locations[0].blockID.containerBlockID
    return data, (first.containerID, first.localID)


def test_ranged_reads(client: OzoneClient, stored) -> None:  # type: ignore[no-untyped-def]
    data, _ = stored
    with client.read_key("vol", "bucket", "k") as reader:
        for offset, n in [
            (0, 1),
            (BPC - 1, 2),
            (BUFFER - 3, 10),
            (BLOCK - 5, 10),
            (len(data) - 4, 100),
            (77, 3 * BLOCK),
        ]:
            reader.seek(offset)
            assert reader.read(n) == data[offset : offset + n]
            assert reader.tell() == min(len(data), offset + n)
        reader.seek(-10, os.SEEK_END)
        assert reader.read() == data[-10:]
        assert reader.read(5) == b""


def test_streaming_iteration_in_buffer_sized_pieces(client: OzoneClient, stored) -> None:  # type: ignore[no-untyped-def]
    data, _ = stored
    with client.read_key("vol", "bucket", "k") as reader:
        pieces = list(reader)
    assert b"".join(pieces) == data
    assert max(len(p) for p in pieces) <= BUFFER


def replicas(cluster: FakeCluster, block: tuple[int, int]):  # type: ignore[no-untyped-def]
    return cluster.pipeline_of(block[0]).members


@pytest.mark.parametrize("mode", ["bytes", "checksum"])
def test_corrupt_leader_fails_over(client: OzoneClient, cluster: FakeCluster, stored, mode: str) -> None:  # type: ignore[no-untyped-def]
    data, block = stored
    leader, *followers = replicas(cluster, block)
    leader.corrupt(*block, mode=mode)
    assert client.read_key("vol", "bucket", "k").readall() == data
    assert sum(r == pb.ReadChunk for r in followers[0].requests) > 0


def test_unreachable_leader_fails_over(client: OzoneClient, cluster: FakeCluster, stored) -> None:  # type: ignore[no-untyped-def]
    data, block = stored
    replicas(cluster, block)[0].stop()
    assert client.read_key("vol", "bucket", "k").readall() == data


def test_every_replica_bad_names_the_block(make_client, cluster: FakeCluster, stored) -> None:  # type: ignore[no-untyped-def]
    _, block = stored
    for member in replicas(cluster, block):
        member.corrupt(*block, mode="bytes")
    client = make_client({"ozone.client.read.max.retries": "1"})
    with client.read_key("vol", "bucket", "k") as reader, pytest.raises(BlockReadError) as e:
        reader.read(10)
    message = str(e.value)
    assert f"conID: {block[0]} locID: {block[1]}" in message
    assert "2 rounds" in message
    assert message.count("mismatch") == 6  # three replicas, two rounds
    # the second round's locations come from SCM, not OM's cache (Ozone's forceUpdateContainerCache)
    assert cluster.om.lookups_forced == [False, True]


def test_verify_checksum_off_returns_what_the_datanode_sent(
    make_client, cluster: FakeCluster, stored
) -> None:  # type: ignore[no-untyped-def]
    data, block = stored
    replicas(cluster, block)[0].corrupt(*block, mode="bytes")
    client = make_client({"ozone.client.verify.checksum": "false"})
    assert client.read_key("vol", "bucket", "k").read(4) != data[:4]


def test_empty_key(client: OzoneClient) -> None:
    client.put_key("vol", "bucket", "empty", b"")
    with client.read_key("vol", "bucket", "empty") as reader:
        assert reader.size == 0
        assert reader.readall() == b""
        assert list(reader) == []


def test_the_next_chunk_is_read_ahead(client: OzoneClient, cluster: FakeCluster, stored) -> None:  # type: ignore[no-untyped-def]
    data, _ = stored

    def read_chunks() -> int:
        return sum(dn.requests.count(pb.ReadChunk) for dn in cluster.datanodes)

    before = read_chunks()
    with client.read_key("vol", "bucket", "k") as reader:
        assert reader.read(10) == data[:10]  # only the first chunk was asked for
        wait_for(lambda: read_chunks() >= before + 2, 5, "the second chunk read ahead", interval_s=0.01)
        assert read_chunks() == before + 2  # the second chunk is on its way already
        assert reader.read(BUFFER) == data[10 : BUFFER + 10]


@pytest.mark.parametrize("mode", ["bytes", "checksum"])
def test_a_small_key_is_read_by_one_get_small_file_and_fails_over(
    client: OzoneClient, cluster: FakeCluster, mode: str
) -> None:
    """A key of one chunk comes back in one GetSmallFile (no GetBlock, no ReadChunk), verified against its
    chunk's checksums: a damaged replica's answer sends the read to the next one."""
    data = os.urandom(BUFFER - 5)
    client.put_key("vol", "bucket", "small", data)
    block = cluster.om.commits[-1].locations[0].blockID.containerBlockID
    members = replicas(cluster, (block.containerID, block.localID))
    assert client.read_key("vol", "bucket", "small").readall() == data
    asked = [r for m in members for r in m.requests if r not in (pb.PutSmallFile, pb.WatchForCommit)]
    assert asked == [pb.GetSmallFile]
    members[0].corrupt(block.containerID, block.localID, mode=mode)
    assert client.read_key("vol", "bucket", "small").readall() == data
    assert members[1].requests.count(pb.GetSmallFile) == 1
