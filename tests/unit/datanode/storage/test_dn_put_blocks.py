"""KeyValueContainer.put_blocks: the group commit of the small files a pipeline applies together."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pyozone.datanode.storage import BlockData, KeyValueContainer, Result, chunk_io
from pyozone.datanode.storage import container as container_module
from pyozone.datanode.storage.volume_db import VolumeDB
from pyozone.hdds.ids import BlockID
from tests.unit.datanode.storage.dn_helpers import chunk_for, payload, raises, read_block


def _written(container: KeyValueContainer, lid: int, size: int = 100) -> BlockData:
    """A block of one chunk whose bytes are written, not committed."""
    data = payload(lid, size)
    block_id = BlockID(container.container_id, lid)
    chunk = chunk_for(data, f"{lid}_chunk")
    container.write_chunk(block_id, chunk, data)
    return BlockData(block_id, (chunk,))


def test_put_blocks_commits_with_one_directory_fsync_and_one_synced_batch(
    container: KeyValueContainer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three new blocks: each refusal is its own (one whose bytes were never written is refused
    UNABLE_TO_FIND_CHUNK, the others commit), the BCSID is the last committed block's, and the chunks
    directory is fsynced once and the DB written once for all of them."""
    blocks = [_written(container, 1), BlockData(BlockID(1, 2), (chunk_for(b"x", "2_chunk"),))]
    blocks.append(_written(container, 3))
    calls = {"fsync_dir": 0, "write": 0}
    fsync_dir, write = container_module.fsync_dir, VolumeDB.write

    def counted_fsync_dir(path: Path) -> None:
        calls["fsync_dir"] += 1
        fsync_dir(path)

    def counted_write(db: VolumeDB, batch: object) -> None:
        calls["write"] += 1
        write(db, batch)  # type: ignore[arg-type]

    monkeypatch.setattr(container_module, "fsync_dir", counted_fsync_dir)
    monkeypatch.setattr(VolumeDB, "write", counted_write)
    refusals = container.put_blocks([(blocks[0], 5), (blocks[1], 6), (blocks[2], 7)])
    assert [r.result if r is not None else None for r in refusals] == [
        None,
        Result.UNABLE_TO_FIND_CHUNK,
        None,
    ]
    assert calls == {"fsync_dir": 1, "write": 1}
    assert (container.bcsid, container.key_count) == (7, 2)
    assert [container.get_block(b.block_id).bcsid for b in (blocks[0], blocks[2])] == [5, 7]
    assert read_block(container, blocks[2]) == payload(3, 100)


def test_a_block_first_committed_without_chunks_gets_its_directory_synced_with_its_first_chunk(
    container: KeyValueContainer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A putBlock of no chunks commits a record and creates no file; the block's file comes with its first
    chunk, so the putBlock naming it must make the file's directory entry durable too."""
    block_id = BlockID(container.container_id, 7)
    container.put_block(BlockData(block_id, ()), 1)
    synced: list[Path] = []
    fsync_dir = container_module.fsync_dir

    def counted_fsync_dir(path: Path) -> None:
        synced.append(path)
        fsync_dir(path)

    monkeypatch.setattr(container_module, "fsync_dir", counted_fsync_dir)
    container.put_block(_written(container, 7), 2)
    assert synced == [container.chunks_dir]
    assert container.get_block(block_id).bcsid == 2


def test_put_blocks_replays_are_no_ops_and_put_block_raises_its_refusal(container: KeyValueContainer) -> None:
    """A block at or below the BCSID is a replay (no refusal, nothing changes); `put_block` of one block
    raises what `put_blocks` returns for it."""
    first = _written(container, 1)
    assert container.put_blocks([(first, 4)]) == [None]
    again = _written(container, 2)
    assert container.put_blocks([(again, 3)]) == [None]  # below the BCSID: a replay
    assert (container.bcsid, container.key_count) == (4, 1)
    with raises(Result.UNABLE_TO_FIND_CHUNK):
        container.put_block(BlockData(BlockID(1, 9), (chunk_for(b"x", "9_chunk"),)), 5)
    assert container.bcsid == 4


def test_block_files_are_synced_outside_the_container_lock(
    container: KeyValueContainer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a put's block file is being synced, another block's chunk is written (a data stage does not
    wait for the disk behind the container's lock); the put then commits."""
    block = _written(container, 1)
    syncing, release = threading.Event(), threading.Event()
    sync_file = chunk_io.sync_file

    def held(path: Path) -> None:
        syncing.set()
        assert release.wait(10)
        sync_file(path)

    monkeypatch.setattr(chunk_io, "sync_file", held)
    with ThreadPoolExecutor(1) as pool:
        put = pool.submit(container.put_blocks, [(block, 1)])
        assert syncing.wait(10)
        other = _written(container, 2)  # under the lock, which the put does not hold
        release.set()
        assert put.result(10) == [None]
    assert container.bcsid == 1 and read_block(container, other) == payload(2, 100)


def test_a_chunk_written_after_its_file_was_synced_is_synced_before_its_record(
    container: KeyValueContainer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A block's last chunk written (outside a pipeline's log: another stream) after put_blocks synced its
    file and before it took the lock: the record commits the whole block only after a second fsync that
    covers the chunk, never naming bytes no fsync covered (R4's D2)."""
    first, second = payload(1, 100), payload(2, 100)
    block_id = BlockID(container.container_id, 1)
    head, tail = chunk_for(first, "1_chunk_0"), chunk_for(second, "1_chunk_1", offset=100)
    container.write_chunk(block_id, head, first)
    syncing, release = threading.Event(), threading.Event()
    synced_sizes: list[int] = []
    sync_file = chunk_io.sync_file

    def held(path: Path) -> None:
        sync_file(path)
        synced_sizes.append(chunk_io.file_size(path))
        if len(synced_sizes) == 1:
            syncing.set()
            assert release.wait(10)

    monkeypatch.setattr(chunk_io, "sync_file", held)
    with ThreadPoolExecutor(1) as pool:
        put = pool.submit(container.put_blocks, [(BlockData(block_id, (head, tail)), 5)])
        assert syncing.wait(10)
        container.write_chunk(block_id, tail, second)
        release.set()
        assert put.result(10) == [None]
    assert synced_sizes == [100, 200]  # the second fsync, under the lock, covers the committed 200 bytes
    assert read_block(container, BlockData(block_id, (head, tail))) == first + second
