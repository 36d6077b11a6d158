"""Replica archives: export -> import between datanodes, and refusal of anything damaged or hostile."""

from __future__ import annotations

import hashlib
import io
import tarfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from pyozone.datanode.storage import (
    BlockData,
    ContainerError,
    ContainerImporter,
    ContainerScanner,
    ExportStream,
    KeyValueContainer,
    Result,
    import_container,
)
from pyozone.datanode.storage.archive import _header, _padding
from pyozone.hdds.ids import BlockID
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import ReplicaState
from tests.unit.datanode.storage.dn_helpers import (
    Node,
    chunk_for,
    open_node,
    payload,
    raises,
    read_block,
    write_block,
)


@pytest.fixture
def target(tmp_path: Path) -> Iterator[Node]:
    n = open_node(tmp_path / "dn2", dn_uuid="99999999-2222-3333-4444-555555555555")
    yield n
    n.close()


@pytest.fixture
def source(node: Node) -> KeyValueContainer:
    c = node.containers.create(42, "origin-dn", "pipeline-1", replica_index=0)
    for lid in range(1, 6):
        write_block(c, lid, (700_000 if lid == 3 else 5000, 1234), bcsid=lid * 2)
    c.put_block(BlockData(BlockID(42, 6)), 11)  # an empty block has no block file
    orphan = payload(5, 100)
    c.write_chunk(BlockID(42, 99), chunk_for(orphan, "99_chunk_0"), orphan)  # never committed
    c.mark_closing()
    c.close()
    return c


def export(c: KeyValueContainer, piece: int = 1 << 20) -> tuple[list[bytes], str]:
    stream = ExportStream(c, piece)
    pieces = list(stream)
    assert stream.sha256 is not None
    return pieces, stream.sha256


def leftovers(n: Node) -> list[Path]:
    return [p for v in n.volumes.data_volumes for p in v.tmp_dir.iterdir()]


def assert_nothing_imported(n: Node, cid: int = 42) -> None:
    assert cid not in n.containers and leftovers(n) == []
    for v in n.volumes.data_volumes:
        assert not v.container_dir(cid).exists()
        assert list(v.db.scan("block_data", cid)) == [] and v.db.get_int(cid, "#BCSID") == 0


def test_round_trip_between_datanodes(node: Node, target: Node, source: KeyValueContainer) -> None:
    pieces, sha = export(source, 64 << 10)
    assert (
        all(len(p) == 64 << 10 for p in pieces[:-1]) and hashlib.sha256(b"".join(pieces)).hexdigest() == sha
    )
    with tarfile.open(fileobj=io.BytesIO(b"".join(pieces))) as tar:  # a standard tar
        names = tar.getnames()
    assert names[:2] == ["metadata/42.container", "metadata/42.blocks.json"] and "chunks/3.block" in names
    assert "chunks/99.block" not in names and "chunks/6.block" not in names
    reports: list[ContainerReplicaReport] = []
    target.containers.on_change(reports.append)

    copy = import_container(target.containers, iter(pieces), sha, container_id=42)
    assert copy.state is ReplicaState.CLOSED and copy.bcsid == source.bcsid == 11
    # The uncommitted orphan chunk (100 bytes) stays behind; everything else is the same.
    assert copy.replica_report() == replace(source.replica_report(), used_bytes=source.used_bytes - 100)
    assert reports == [copy.replica_report()] and copy.data.origin_node_id == "origin-dn"
    assert copy.data.chunks_path == str(copy.chunks_dir) and copy.volume.used == copy.used_bytes
    for block in source.list_blocks():
        assert copy.get_block(block.block_id) == block
        assert read_block(copy, block) == read_block(source, block)
    assert [r.healthy for r in ContainerScanner(target.containers).scan_all()] == [True]
    assert leftovers(target) == []
    target.close()
    reopened = open_node(target.root, dn_uuid="99999999-2222-3333-4444-555555555555")
    assert reopened.containers.require(42).replica_report() == copy.replica_report()
    reopened.close()


def test_exports_of_one_closed_replica_are_the_same_bytes(
    source: KeyValueContainer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whenever it is exported (here: a second later by the clock), the same archive and SHA-256."""
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.0)
    first = export(source)
    monkeypatch.setattr(time, "time", lambda: 1_700_000_001.0)
    assert export(source) == first


def test_quasi_closed_export_keeps_its_state(node: Node, target: Node) -> None:
    c = node.containers.create(8, "origin", "p")
    write_block(c, 1, (100,), bcsid=1)
    c.mark_closing()
    c.quasi_close()
    pieces, sha = export(c)
    assert import_container(target.containers, pieces, sha).state is ReplicaState.QUASI_CLOSED


@pytest.mark.parametrize("size", [1, 509, 4097])
def test_import_accepts_any_piece_boundaries(node: Node, target: Node, size: int) -> None:
    c = node.containers.create(3, "origin", "p")
    write_block(c, 1, (3000, 100), bcsid=1)
    write_block(c, 2, (700,), bcsid=2)
    c.mark_closing()
    c.close()
    pieces, sha = export(c)
    blob = b"".join(pieces)
    copy = import_container(target.containers, (blob[i : i + size] for i in range(0, len(blob), size)), sha)
    assert copy.replica_report() == c.replica_report()
    assert [read_block(copy, b) for b in copy.list_blocks()] == [read_block(c, b) for b in c.list_blocks()]


def test_block_file_without_metadata_is_refused(target: Node, source: KeyValueContainer) -> None:
    pieces, _ = export(source)
    blob = b"".join(pieces)
    end = blob.rindex(b"\0" * 1024, 0, len(blob) - 1)
    while blob[end - 1] == 0:  # back to the end of the last member's data (it is random, so nonzero)
        end -= 1
    end += -end % 512
    crafted = blob[:end] + member("chunks/77.block", b"stray") + bytes(1024)
    with raises(Result.MALFORMED_REQUEST) as e:
        import_container(target.containers, [crafted], hashlib.sha256(crafted).hexdigest())
    assert "without block metadata: [77]" in str(e.value)
    assert_nothing_imported(target)


def test_open_container_is_not_exported(container: KeyValueContainer) -> None:
    with raises(Result.INVALID_CONTAINER_STATE):
        ExportStream(container)


@pytest.mark.parametrize("where", [100, 2000, 50_000, -3000])
def test_corrupted_stream_is_refused_and_leaves_nothing(
    target: Node, source: KeyValueContainer, where: int
) -> None:
    pieces, sha = export(source)
    blob = bytearray(b"".join(pieces))
    blob[where] ^= 0x01
    with pytest.raises(ContainerError) as e:  # a damaged header fails before the SHA-256 is checked
        import_container(target.containers, [bytes(blob)], sha)
    assert e.value.result in (Result.CHECKSUM_MISMATCH, Result.MALFORMED_REQUEST)
    assert_nothing_imported(target)


def test_wrong_sha_or_truncated_stream(target: Node, source: KeyValueContainer) -> None:
    pieces, sha = export(source)
    with raises(Result.CHECKSUM_MISMATCH):
        import_container(target.containers, pieces, "0" * 64)
    assert_nothing_imported(target)
    blob = b"".join(pieces)
    with raises(Result.MALFORMED_REQUEST):
        import_container(target.containers, [blob[: len(blob) // 2]], sha)
    assert_nothing_imported(target)


def test_damaged_source_data_is_caught_by_chunk_checksums(target: Node, source: KeyValueContainer) -> None:
    path = source.chunks_dir / "2.block"
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF
    path.write_bytes(bytes(data))
    pieces, sha = export(source)  # the stream's own SHA-256 is right: the data was bad before it
    with raises(Result.CHECKSUM_MISMATCH) as e:
        import_container(target.containers, pieces, sha)
    assert "2_chunk_0" in str(e.value)
    assert_nothing_imported(target)


def test_failing_source_stream_leaves_nothing(target: Node, source: KeyValueContainer) -> None:
    pieces, sha = export(source, 4096)

    def dropped() -> Iterator[bytes]:
        yield from pieces[:5]
        raise ConnectionError("peer went away")

    with raises(Result.IO_EXCEPTION):
        import_container(target.containers, dropped(), sha)
    assert_nothing_imported(target)


def test_import_over_existing_container_is_refused(
    node: Node, target: Node, source: KeyValueContainer
) -> None:
    pieces, sha = export(source)
    with raises(Result.CONTAINER_EXISTS):
        import_container(node.containers, pieces, sha)
    import_container(target.containers, pieces, sha)
    with raises(Result.CONTAINER_EXISTS):
        import_container(target.containers, pieces, sha, container_id=42)
    importer = ContainerImporter(target.containers)  # id learnt from the stream, then refused at install
    for p in pieces:
        importer.feed(p)
    with raises(Result.CONTAINER_EXISTS):
        importer.finish(sha)
    assert leftovers(target) == []


def member(name: str, body: bytes, kind: bytes = tarfile.REGTYPE) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.type = (len(body) if kind == tarfile.REGTYPE else 0), kind
    if kind == tarfile.SYMTYPE:
        info.linkname = "/etc/passwd"
    data = body if kind == tarfile.REGTYPE else b""
    return info.tobuf(format=tarfile.USTAR_FORMAT) + data + _padding(len(data))


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        (member("../../../../evil.block", b"x"), "unexpected member"),
        (member("chunks/../../1.block", b"x"), "unexpected member"),
        (member("/etc/1.block", b"x"), "unexpected member"),
        (member("chunks/5.block", b"", tarfile.SYMTYPE), "unexpected member"),
        (member("chunks/5.block", b"", tarfile.DIRTYPE), "unexpected member"),
        (member("metadata/43.container", b"{}"), "not of container 42"),
        (member("metadata/42.container", b"{}"), "duplicate member"),
    ],
)
def test_hostile_members_are_refused(target: Node, source: KeyValueContainer, bad: bytes, words: str) -> None:
    pieces, _ = export(source)
    blob = b"".join(pieces)
    first = 512 + -(-len(source.container_file.read_bytes()) // 512) * 512
    crafted = blob[:first] + bad + blob[first:]  # inserted right after the descriptor
    crafted_sha = hashlib.sha256(crafted).hexdigest()
    with raises(Result.MALFORMED_REQUEST) as e:
        import_container(target.containers, [crafted], crafted_sha)
    assert words in str(e.value)
    assert_nothing_imported(target)
    assert not (target.root.parent / "evil.block").exists()


def test_oversized_member_and_stream_are_refused(target: Node, source: KeyValueContainer) -> None:
    pieces, _ = export(source)
    importer = ContainerImporter(target.containers, max_member_bytes=100_000)
    with raises(Result.MALFORMED_REQUEST) as e:
        for p in pieces:
            importer.feed(p)
    assert "chunks/3.block" in str(e.value) and "limit is 100000" in str(e.value)
    importer = ContainerImporter(target.containers, max_bytes=300_000)
    with raises(Result.MALFORMED_REQUEST):
        for p in pieces:
            importer.feed(p)
    assert_nothing_imported(target)
    header = _header("chunks/1.block", 1 << 32, 0)  # a header claiming 4 GiB
    with raises(Result.MALFORMED_REQUEST):
        ContainerImporter(target.containers).feed(header)
    assert_nothing_imported(target)
