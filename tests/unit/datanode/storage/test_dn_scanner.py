"""Corruption on disk: reads detect it, the scanner marks the replica UNHEALTHY and reports it."""

from __future__ import annotations

import pytest

from pyozone.datanode.storage import ChecksumMismatch, ContainerScanner, KeyValueContainer, Result
from pyozone.datanode.storage.scanner import Throttle
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import ReplicaState
from tests.unit.datanode.storage.dn_helpers import Node, raises, write_block


def closed_with_blocks(container: KeyValueContainer, blocks: int = 3) -> None:
    for lid in range(1, blocks + 1):
        write_block(container, lid, (3000, 3000), bcsid=lid)
    container.mark_closing()
    container.close()


def flip_byte(container: KeyValueContainer, local_id: int, offset: int) -> None:
    path = container.chunks_dir / f"{local_id}.block"
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x40
    path.write_bytes(bytes(data))


def test_corrupt_byte_fails_the_read_and_the_scan(node: Node, container: KeyValueContainer) -> None:
    closed_with_blocks(container)
    reports: list[ContainerReplicaReport] = []
    node.containers.on_change(reports.append)
    scanner = ContainerScanner(node.containers)
    assert [r.healthy for r in scanner.scan_all()] == [True]

    flip_byte(container, 2, 3000 + 1500)  # second chunk, second 1 KiB piece
    block = container.get_block(container.list_blocks(2, 1)[0].block_id)
    container.read_chunk(block.block_id, block.chunks[0])  # the other chunk is intact
    with pytest.raises(ChecksumMismatch) as e:
        container.read_chunk(block.block_id, block.chunks[1])
    assert e.value.index == 1

    [result] = scanner.scan_all()
    assert not result.healthy and result.blocks_scanned == 3 and "2_chunk_1" in result.errors[0]
    assert result.bytes_scanned == 2 * 6000
    assert container.state is ReplicaState.UNHEALTHY and "scanner" in container.unhealthy_reason
    assert [(r.container_id, r.state) for r in reports] == [(1, ReplicaState.UNHEALTHY)]
    assert list(scanner.scan_all()) == []  # unhealthy replicas are not scanned again


def test_missing_or_truncated_block_files(node: Node) -> None:
    a = node.containers.create(1, "o", "p")
    b = node.containers.create(2, "o", "p")
    closed_with_blocks(a)
    closed_with_blocks(b)
    (a.chunks_dir / "3.block").unlink()
    with open(b.chunks_dir / "1.block", "r+b") as f:
        f.truncate(4000)
    results = {r.container_id: r for r in ContainerScanner(node.containers).scan_all()}
    assert "missing" in results[1].errors[0] and "4000 bytes" in results[2].errors[0]
    assert a.state is b.state is ReplicaState.UNHEALTHY
    block = b.list_blocks(1, 1)[0]
    with raises(Result.UNABLE_TO_FIND_CHUNK):
        b.read_chunk(block.block_id, block.chunks[1])


def test_quasi_closed_is_scanned_open_is_skipped(node: Node) -> None:
    open_c = node.containers.create(1, "o", "p")
    write_block(open_c, 1, (100,), bcsid=1)
    qc = node.containers.create(2, "o", "p")
    write_block(qc, 1, (100,), bcsid=1)
    qc.mark_closing()
    qc.quasi_close()
    scanner = ContainerScanner(node.containers)
    assert [r.container_id for r in scanner.scan_all()] == [2]
    skipped = scanner.scan_container(open_c)
    assert skipped.skipped and skipped.healthy and skipped.blocks_scanned == 0


def test_scan_is_throttled(node: Node, container: KeyValueContainer) -> None:
    closed_with_blocks(container, blocks=4)  # 24000 bytes
    now = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    scanner = ContainerScanner(node.containers, 6000, clock=lambda: now[0], sleep=sleep)
    [result] = scanner.scan_all()
    assert result.healthy and result.bytes_scanned == 24000
    assert now[0] == pytest.approx(4.0)  # 24000 bytes at 6000 B/s


def test_unthrottled_never_sleeps() -> None:
    throttle = Throttle(None, sleep=lambda _: pytest.fail("slept"))
    throttle.consume(1 << 30)
