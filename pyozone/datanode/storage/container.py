"""KeyValueContainer: the data path of one replica (chunks, blocks, BCSID) and its creation and removal.

A putBlock commits only checksums that describe the bytes its chunks stored (`_check_chunks`, issue 28),
and a writeChunk never changes committed bytes (`_check_overwrite`): reads and the scanner take a
committed checksum's mismatch for damage to the replica and mark it UNHEALTHY, so a lying chunk list
would let one writer ruin the container for everyone. A finalized block (`finalize_block`, Ozone's
FinalizeBlock, sent by OM at its key's commit under a space quota) takes no more writeChunk or putBlock
(BLOCK_ALREADY_FINALIZED): what OM charged is what the block holds. A writeChunk's verified checksums are
kept (per block, by offset, `_Kept`) until its putBlock, which commits them when it names the same; any
other new chunk in a putBlock is read back and verified against the checksums it names. So the outcome
depends only on the bytes stored, and every replica of a pipeline reaches it alike. What is kept is bounded
(VERIFIED_MAX_BYTES per replica; beyond it the putBlock reads back) and dropped once a putBlock commits
the range, the block is deleted or the replica can take no more writes. Ozone's BlockManagerImpl
commits the chunk list as sent.

Durability (fsync policy): chunk writes are not fsynced. putBlock fsyncs the block file (and, for a
new block, its directory) and then commits the block metadata, BCSID and counters in one synced RocksDB
batch, so committed metadata never points at data that a power cut could lose. State changes rewrite
the .container file (see container_state). Mutations hold the container's lock; reads don't.
"""

from __future__ import annotations

import logging
from bisect import bisect_left, insort
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pyozone.common.fsutil import fsync_dir
from pyozone.datanode.storage import chunk_io
from pyozone.datanode.storage.container_data import ContainerData, ContainerFileError
from pyozone.datanode.storage.container_files import (
    build_container_dir,
    io_error,
    read_descriptor,
    remove_container_dir,
)
from pyozone.datanode.storage.container_state import ContainerReplica
from pyozone.datanode.storage.errors import ContainerError, Result
from pyozone.datanode.storage.volume import HddsVolume
from pyozone.datanode.storage.volume_db import (
    BCSID,
    BLOCK_COUNT,
    BYTES_USED,
    DELETE_TXID,
    DBError,
)
from pyozone.hdds.block_data import FINALIZED, BlockData, ChunkInfo
from pyozone.hdds.checksum import ChecksumData, ChecksumMismatch, verify
from pyozone.hdds.ids import BlockID
from pyozone.hdds.states import ReplicaState

log = logging.getLogger(__name__)

# CLOSING: a follower applies what preceded the close
_STILL_WRITTEN = (ReplicaState.OPEN, ReplicaState.CLOSING)
_WRITABLE = (*_STILL_WRITTEN, ReplicaState.RECOVERING)  # RECOVERING: an EC reconstruction writes it
_NOT_WRITABLE = {
    ReplicaState.QUASI_CLOSED: Result.CLOSED_CONTAINER_IO,
    ReplicaState.CLOSED: Result.CLOSED_CONTAINER_IO,
    ReplicaState.UNHEALTHY: Result.CONTAINER_UNHEALTHY,
    ReplicaState.INVALID: Result.INVALID_CONTAINER_STATE,
}
VERIFIED_MAX_BYTES = 4 * 1024 * 1024
"""The memory one replica spends at most on checksums kept from verified writeChunks (estimated with
_KEPT_ENTRY_BYTES and _KEPT_CHECKSUM_BYTES): a writer that never sends its putBlock, or a tiny
bytesPerChecksum (any is valid on the wire; Ozone's client raises ozone.client.bytes.per.checksum to
16 KB at least), must not exhaust the datanode's memory. A chunk beyond it is read back at its putBlock
instead. With 16 KB CRC32 pieces it covers about 1.3 GB written and not yet committed."""
_KEPT_ENTRY_BYTES = 256
_KEPT_CHECKSUM_BYTES = 48


def _cost(sums: ChecksumData) -> int:
    return _KEPT_ENTRY_BYTES + _KEPT_CHECKSUM_BYTES * len(sums.checksums)


@dataclass(slots=True)
class _Kept:
    """One block's kept extents, never overlapping, by offset: a write finds the ones it replaces by
    bisection, so a block of n chunks costs O(log n) per write, not O(n)."""

    starts: list[int] = field(default_factory=list)
    extents: dict[int, tuple[int, ChecksumData]] = field(default_factory=dict)

    def drop(self, start: int, end: int) -> int:
        """Forgets every extent overlapping [start, end); returns their cost."""
        high = bisect_left(self.starts, end)
        low = high
        while low and self.starts[low - 1] + self.extents[self.starts[low - 1]][0] > start:
            low -= 1
        freed = sum(_cost(self.extents.pop(s)[1]) for s in self.starts[low:high])
        del self.starts[low:high]
        return freed

    def add(self, offset: int, length: int, sums: ChecksumData) -> None:
        """After drop(offset, offset + length): nothing kept overlaps it."""
        insort(self.starts, offset)
        self.extents[offset] = (length, sums)


class KeyValueContainer(ContainerReplica):
    """A replica with FILE_PER_BLOCK chunk files and its block metadata in the volume DB."""

    def __init__(
        self, data: ContainerData, volume: HddsVolume, directory: Path, trusted: bool = True
    ) -> None:
        super().__init__(data, volume, directory, trusted)
        self._verified: dict[int, _Kept] = {}
        """local id -> the checksums writeChunks were verified with, until a putBlock commits them (in
        memory: after a restart a putBlock reads its chunks back instead)."""
        self._kept_bytes = 0
        """The estimated memory of `_verified`, at most VERIFIED_MAX_BYTES."""
        self._outside_log: set[int] = set()
        """The local ids of the blocks that took bytes outside a pipeline log's data stage (a V2
        datastream), until they are finalized or forgotten (in memory, as `_verified`)."""
        self._finalized: set[int] | None = None
        """The local ids of the finalized blocks (their records say so), read on the first write after
        a load: Ozone's KeyValueContainerData finalizedBlockSet."""

    @classmethod
    def create(
        cls,
        volume: HddsVolume,
        container_id: int,
        max_size: int,
        origin_node_id: str,
        origin_pipeline_id: str,
        replica_index: int = 0,
        state: ReplicaState = ReplicaState.OPEN,
    ) -> KeyValueContainer:
        """A new replica, OPEN (a write pipeline's) or RECOVERING (an EC reconstruction's target)."""
        if state not in (ReplicaState.OPEN, ReplicaState.RECOVERING):
            raise ContainerError(
                Result.MALFORMED_REQUEST, f"a container is created OPEN or RECOVERING, not {state.name}"
            )
        final = volume.container_dir(container_id)
        data = ContainerData(
            container_id, state, max_size, origin_node_id, origin_pipeline_id,
            str(final / "chunks"), str(final / "metadata"), replica_index,
        )  # fmt: skip
        build_container_dir(volume, data)
        log.info("created container %d (%s) on %s", container_id, state.name, volume.root)
        return cls(data, volume, final)

    @classmethod
    def load(cls, volume: HddsVolume, container_id: int, directory: Path) -> KeyValueContainer:
        """Loads a container from disk; a descriptor that cannot be trusted gives an UNHEALTHY replica."""
        try:
            return cls(read_descriptor(directory, container_id), volume, directory)
        except ContainerFileError as e:
            log.error("container %d loaded UNHEALTHY: %s", container_id, e)
            stub = ContainerData(
                container_id, ReplicaState.UNHEALTHY, 0, "", "", str(directory / "chunks"),
                str(directory / "metadata"),
            )  # fmt: skip
            container = cls(stub, volume, directory, trusted=False)
            container.unhealthy_reason = str(e)
            return container

    # --- data path

    def write_chunk(
        self,
        block_id: BlockID,
        chunk: ChunkInfo,
        data: bytes | memoryview,
        *,
        keep_written: bool = False,
        streamed: bool = False,
    ) -> bool:
        """Writes one chunk at its offset in the block file, once its data matches its checksums (on
        every member of a datastream chain too: a member never writes bytes it did not verify, so a bad
        packet is refused before any replica holds it); True once the container is full. `keep_written`:
        no byte already in the block file may change, committed or not (OVERWRITE_FLAG_REQUIRED), as a
        pipeline's data stage needs (see `_check_unchanged`). `streamed`: a V2 datastream's packet, held
        to the same rule (R16 D3): a second stream of the block must not change bytes a putBlock in the
        pipeline log may be committing, which each member applies at its own time."""
        self._check_block_id(block_id)
        if len(data) != chunk.length or chunk.offset < 0:
            raise ContainerError(
                Result.MALFORMED_REQUEST, f"chunk {chunk.name}: {len(data)} bytes for len {chunk.length}"
            )
        try:
            chunk.checksum_data.check_shape(chunk.length)
            verify(data, chunk.checksum_data)
        except ChecksumMismatch as e:
            raise ContainerError(Result.CHECKSUM_MISMATCH, f"chunk {chunk.name} of {block_id}: {e}") from None
        except ValueError as e:
            raise ContainerError(Result.MALFORMED_REQUEST, f"chunk {chunk.name}: {e}") from None
        with self._lock:
            self._check_writable()
            self._check_not_finalized(block_id)
            path = chunk_io.block_file(self.chunks_dir, block_id.local_id)
            size = chunk_io.file_size(path)
            if chunk.offset < size and (keep_written or streamed):  # appending touches nothing written
                self._check_unchanged(block_id, chunk, data, path, size)
            elif chunk.offset < size:  # appending touches nothing committed
                self._check_overwrite(block_id, chunk, data, path)
            growth = max(0, chunk.offset + chunk.length - size)
            if growth and growth > self.volume.writable():
                raise ContainerError(
                    Result.DISK_OUT_OF_SPACE,
                    f"volume {self.volume.root} is full: {growth} B would cross its free-space floor "
                    f"({self.volume.free_space_to_spare} B, hdds.datanode.volume.min.free.space)",
                )
            try:
                chunk_io.write_at(path, chunk.offset, data, self.volume.io_stats)
            except OSError as e:
                raise io_error(self.volume, f"write chunk {chunk.name}", e) from None
            self.used_bytes += growth
            self.volume.add_used(growth)
            self._sync_committed()
            self._remember(block_id.local_id, chunk)
            if not keep_written:
                self._outside_log.add(block_id.local_id)
            return self.used_bytes >= self.data.max_size

    def _check_overwrite(
        self, block_id: BlockID, chunk: ChunkInfo, data: bytes | memoryview, path: Path
    ) -> None:
        """Raises OVERWRITE_FLAG_REQUIRED (Ozone's result for a chunk overwrite it was not asked for) for a
        write that changes a byte of a committed chunk: changed bytes under committed checksums would read
        as damage to the replica, and checksums that merely verify (NONE, a CRC collision) prove nothing.
        The same bytes again (a retried write) are fine. Under the lock."""
        stored = self.db.block(block_id.local_id)
        if stored is None:
            return
        start, end = chunk.offset, chunk.offset + chunk.length
        for done in BlockData.from_json(stored).chunks:
            low, high = max(start, done.offset), min(end, done.offset + done.length)
            if low >= high:
                continue
            try:
                now = chunk_io.read_at(path, low, high - low, self.volume.io_stats)
            except OSError as e:
                raise io_error(self.volume, f"read committed chunk {done.name}", e) from None
            if now != data[low - start : high - start]:
                raise ContainerError(
                    Result.OVERWRITE_FLAG_REQUIRED,
                    f"chunk {chunk.name} ({chunk.length} bytes at {start}) changes committed chunk "
                    f"{done.name} of {block_id}",
                )

    def _check_unchanged(
        self, block_id: BlockID, chunk: ChunkInfo, data: bytes | memoryview, path: Path, size: int
    ) -> None:
        """Raises OVERWRITE_FLAG_REQUIRED for a write that changes a byte already in the block file. A
        pipeline's data stage runs at append, before the entries ahead of it are applied: one that changed
        bytes an earlier entry's putBlock is still to commit would make that putBlock's outcome depend on
        when each member applies it. The bytes in the file are those of the block's earlier data stages,
        which every member runs in log order, so every member decides alike (bytes of an entry a new leader
        truncated aside: a client resends the same ones). The same bytes again (a resent write) are fine.
        Under the lock."""
        start = chunk.offset
        end = min(size, start + chunk.length)
        try:
            now = chunk_io.read_at(path, start, end - start, self.volume.io_stats)
        except OSError as e:
            raise io_error(self.volume, f"read written bytes under chunk {chunk.name}", e) from None
        if now != data[: end - start]:
            raise ContainerError(
                Result.OVERWRITE_FLAG_REQUIRED,
                f"chunk {chunk.name} ({chunk.length} bytes at {start}) changes bytes written to {block_id}",
            )

    def _remember(self, local_id: int, chunk: ChunkInfo) -> None:
        """Keeps a written chunk's verified checksums while VERIFIED_MAX_BYTES allows; forgets any other
        chunk of the block whose bytes this write replaced. Under the lock."""
        kept = self._verified.get(local_id)
        if kept is not None:
            self._kept_bytes -= kept.drop(chunk.offset, chunk.offset + chunk.length)
        cost = _cost(chunk.checksum_data)
        if chunk.length and self._kept_bytes + cost <= VERIFIED_MAX_BYTES:
            kept = self._verified.setdefault(local_id, _Kept())
            kept.add(chunk.offset, chunk.length, chunk.checksum_data)
            self._kept_bytes += cost
        elif kept is not None and not kept.starts:
            del self._verified[local_id]

    def read_chunk(
        self, block_id: BlockID, chunk: ChunkInfo, offset_in_chunk: int = 0, length: int | None = None
    ) -> bytes:
        """Reads (part of) a chunk and verifies it; raises ChecksumMismatch on damaged data.

        A partial read must start on a checksum boundary (see checksum.verify).
        """
        self._check_block_id(block_id)
        length = chunk.length - offset_in_chunk if length is None else length
        if offset_in_chunk < 0 or length < 0 or offset_in_chunk + length > chunk.length:
            raise ContainerError(
                Result.MALFORMED_REQUEST, f"range {offset_in_chunk}+{length} outside {chunk.name}"
            )
        path = chunk_io.block_file(self.chunks_dir, block_id.local_id)
        try:
            data = chunk_io.read_at(path, chunk.offset + offset_in_chunk, length, self.volume.io_stats)
        except FileNotFoundError:
            raise ContainerError(Result.UNABLE_TO_FIND_CHUNK, f"no block file for {block_id}") from None
        except OSError as e:
            raise io_error(self.volume, f"read chunk {chunk.name}", e) from None
        if len(data) < length:
            raise ContainerError(
                Result.UNABLE_TO_FIND_CHUNK, f"block file of {block_id} ends inside {chunk.name}"
            )
        try:
            verify(data, chunk.checksum_data, offset_in_chunk)
        except ValueError as e:
            raise ContainerError(Result.MALFORMED_REQUEST, f"chunk {chunk.name}: {e}") from None
        return data

    def written_outside_log(self, local_id: int) -> bool:
        """Whether the block took bytes outside a pipeline log's data stage (a V2 datastream) since this
        replica was loaded, and is not finalized: a putBlock of it commits bytes no log entry carried."""
        return local_id in self._outside_log

    def check_written(self, block: BlockData) -> None:
        """The byte checks of `put_block` without its commit: raises UNABLE_TO_FIND_CHUNK when the block
        file is shorter than the chunks `block` names, CHECKSUM_MISMATCH unless each chunk is committed
        as it is, kept verified with those checksums, or read back and verified against them."""
        self._check_block_id(block.block_id)
        lid = block.block_id.local_id
        with self._lock:
            path = chunk_io.block_file(self.chunks_dir, lid)
            size = chunk_io.file_size(path)
            if size < block.file_length:
                raise ContainerError(
                    Result.UNABLE_TO_FIND_CHUNK,
                    f"{block.block_id}: its block file holds {size} of its {block.file_length} bytes",
                )
            stored = self.db.block(lid)
            committed = () if stored is None else BlockData.from_json(stored).chunks
            for chunk in self._check_chunks(block, committed, path):
                self._remember(lid, chunk)  # its putBlock, applied next, need not read it again

    def put_block(self, block: BlockData, bcsid: int) -> None:
        """Commits a block's metadata at `bcsid`; a replayed putBlock (bcsid <= current) is a no-op.

        bcsid 0 (a write outside the pipeline) overwrites the block and leaves the BCSID alone (Ozone).
        """
        self._check_block_id(block.block_id)
        refused = self.put_blocks([(block, bcsid)])[0]
        if refused is not None:
            raise refused

    def put_blocks(self, blocks: Sequence[tuple[BlockData, int]]) -> list[ContainerError | None]:
        """Commits distinct blocks in order, each as `put_block` would, with one fsync of the chunks
        directory and one synced DB batch for them all (a group commit, as Ratis' log worker flushes the
        entries appended meanwhile at once): the applies of one pipeline's small files that were queued
        together. Returns each block's refusal (None: committed, or a replay); a refusal of the container
        as a whole, or an I/O error, raises for all of them and commits none. The block files (and the
        directory) are synced before the lock is taken, so that the data stages writing the next entries'
        chunks do not wait for the disk; a block then refused had its file synced for nothing. A block whose
        committed length passes what its file held when it was synced (a chunk written meanwhile, outside a
        pipeline's log) is synced again under the lock, so no record names bytes no fsync covered."""
        synced = self._sync_files([block for block, _ in blocks])
        with self._lock:
            self._check_writable()
            refusals: list[ContainerError | None] = []
            records: list[tuple[int, bytes]] = []
            grown: list[tuple[int, int]] = []
            bcsid, key_count = self.bcsid, self.key_count
            for block, block_bcsid in blocks:
                try:
                    is_new = self._check_put(block, block_bcsid, bcsid)
                except ContainerError as e:
                    refusals.append(e)
                    continue
                refusals.append(None)
                if is_new is None:  # a replay
                    continue
                lid = block.block_id.local_id
                if block.file_length > synced.get(lid, 0):
                    self._sync_file_again(block)
                records.append((lid, block.with_bcsid(block_bcsid).to_json()))
                grown.append((lid, block.file_length))
                bcsid, key_count = block_bcsid or bcsid, key_count + is_new
            if not records:
                return refusals
            try:
                self.db.commit(
                    put_blocks=records,
                    counters={BCSID: bcsid, BLOCK_COUNT: key_count, BYTES_USED: self.used_bytes},
                )
            except (OSError, DBError) as e:
                raise io_error(self.volume, f"put {_named(blocks)}", e) from None
            self.bcsid, self.key_count = bcsid, key_count
            for lid, length in grown:
                self._forget(lid, length)
            return refusals

    def _sync_files(self, blocks: Sequence[BlockData]) -> dict[int, int]:
        """Syncs the files of the blocks that name chunks, then the chunks directory if any of them has no
        record yet or one of no chunks (its file is new); a file not there is skipped (refused after). Returns
        each synced file's size before its fsync: the bytes that fsync covers."""
        new_file, synced = False, {}
        try:
            for block in blocks:
                if not block.chunks:
                    continue
                lid = block.block_id.local_id
                path = chunk_io.block_file(self.chunks_dir, lid)
                size = chunk_io.file_size(path)
                try:
                    chunk_io.sync_file(path)
                except FileNotFoundError:
                    continue
                synced[lid] = size
                stored = self.db.block(lid)  # a record of no chunks was committed before the file existed
                new_file = new_file or stored is None or not BlockData.json_names_chunks(stored)
            if new_file:
                fsync_dir(self.chunks_dir)
        except (OSError, DBError) as e:
            raise io_error(self.volume, f"sync {_named([(b, 0) for b in blocks])}", e) from None
        return synced

    def _sync_file_again(self, block: BlockData) -> None:
        """Syncs a block's file under the lock: it grew after `_sync_files` synced it."""
        try:
            chunk_io.sync_file(chunk_io.block_file(self.chunks_dir, block.block_id.local_id))
        except OSError as e:
            raise io_error(self.volume, f"sync {_named([(block, 0)])}", e) from None

    def _check_put(self, block: BlockData, bcsid: int, current: int) -> bool | None:
        """`put_blocks`' checks of one block against the container's BCSID `current`, under the lock:
        whether the block is new (None: a replay)."""
        self._check_block_id(block.block_id)
        if bcsid != 0 and bcsid <= current:
            return None
        self._check_not_finalized(block.block_id)
        lid = block.block_id.local_id
        stored = self.db.block(lid)
        path = chunk_io.block_file(self.chunks_dir, lid)
        if chunk_io.file_size(path) < block.file_length:
            raise ContainerError(Result.UNABLE_TO_FIND_CHUNK, f"{block.block_id}: chunks were not written")
        committed = () if stored is None else BlockData.from_json(stored).chunks
        self._check_chunks(block, committed, path)
        return stored is None

    def finalize_block(self, block_id: BlockID) -> BlockData:
        """Marks a committed block finalized, persisted with its record (Ozone's BlockManager
        finalizeBlock); from then on it takes no writeChunk or putBlock. Idempotent: a finalized block is
        answered as it is. Returns the block (its committed length is final)."""
        self._check_block_id(block_id)
        lid = block_id.local_id
        with self._lock:
            self._check_writable()
            stored = self.db.block(lid)
            if stored is None:
                raise ContainerError(Result.NO_SUCH_BLOCK, f"no block {block_id} to finalize")
            block = BlockData.from_json(stored)
            if not block.finalized:
                block = replace(block, finalized=True)
                try:
                    self.db.commit(put_blocks=[(lid, block.to_json())])
                except (OSError, DBError) as e:
                    raise io_error(self.volume, f"finalize block {block_id}", e) from None
                self._finalized_blocks().add(lid)
            self._forget(lid)
            return block

    def _finalized_blocks(self) -> set[int]:
        """Under the lock."""
        if self._finalized is None:
            self._finalized = {
                lid
                for lid, raw in self.db.blocks()
                if FINALIZED.encode() in raw and BlockData.from_json(raw).finalized
            }
        return self._finalized

    def refuse_if_finalized(self, block_id: BlockID) -> None:
        """Raises BLOCK_ALREADY_FINALIZED for a finalized block: a pipeline's commit stage re-decides, in log
        order, what a writeChunk's data stage decided at append (before earlier entries were applied)."""
        with self._lock:
            self._check_not_finalized(block_id)

    def _check_not_finalized(self, block_id: BlockID) -> None:
        """Under the lock."""
        if block_id.local_id in self._finalized_blocks():
            raise ContainerError(
                Result.BLOCK_ALREADY_FINALIZED,
                f"{block_id} was finalized at its key's commit: it takes no more writes",
            )

    def _check_chunks(self, block: BlockData, committed: Iterable[ChunkInfo], path: Path) -> list[ChunkInfo]:
        """Raises CHECKSUM_MISMATCH unless every chunk `block` names describes the bytes written: one
        committed before, or one a writeChunk was verified with, as it is; any other read back and
        verified (checksums not kept, past VERIFIED_MAX_BYTES, or a restart since the write): those are
        returned. Under the lock."""
        known = {_extent(c) for c in committed}
        kept = self._verified.get(block.block_id.local_id, _Kept())
        read_back = []
        for chunk in block.chunks:
            if _extent(chunk) in known:
                continue
            if kept.extents.get(chunk.offset) == (chunk.length, chunk.checksum_data):
                continue
            try:
                data = chunk_io.read_at(path, chunk.offset, chunk.length, self.volume.io_stats)
            except OSError as e:
                raise io_error(self.volume, f"read back chunk {chunk.name}", e) from None
            try:
                chunk.checksum_data.check_shape(chunk.length)
                verify(data, chunk.checksum_data)
            except ChecksumMismatch as e:
                raise ContainerError(
                    Result.CHECKSUM_MISMATCH,
                    f"putBlock of {block.block_id}: chunk {chunk.name} ({chunk.length} bytes at "
                    f"{chunk.offset}) names checksums that are not those of the bytes written: {e}",
                ) from None
            except ValueError as e:
                raise ContainerError(Result.MALFORMED_REQUEST, f"chunk {chunk.name}: {e}") from None
            read_back.append(chunk)
        return read_back

    def _forget(self, local_id: int, below: int | None = None) -> None:
        """Drops the kept checksums of a block's bytes below `below` (all of them, and its mark of bytes
        written outside a log, if None): committed, replaced or gone. Under the lock."""
        kept = self._verified.get(local_id)
        if below is None:
            self._outside_log.discard(local_id)
        if kept is None:
            return
        if below is None:
            self._kept_bytes -= sum(_cost(sums) for _, sums in kept.extents.values())
            del self._verified[local_id]
            return
        self._kept_bytes -= kept.drop(0, below)
        if not kept.starts:
            del self._verified[local_id]

    def _set_state(self, state: ReplicaState) -> None:
        """A replica that takes no more writes (CLOSED, QUASI_CLOSED, UNHEALTHY, DELETED) forgets every
        kept checksum: no putBlock can commit them any more. (CLOSING still applies the putBlocks of
        earlier writes.)"""
        super()._set_state(state)
        if state not in _WRITABLE:
            self._forget_all()

    def _forget_all(self) -> None:
        self._verified.clear()
        self._outside_log.clear()
        self._kept_bytes = 0

    def get_block(self, block_id: BlockID, bcsid: int | None = None) -> BlockData:
        block = BlockData.from_json(self._stored_block(block_id, bcsid))
        _check_block_bcsid(block_id, block.bcsid, bcsid)
        return block

    def committed_size(self, block_id: BlockID, bcsid: int | None = None) -> int:
        """The committed length of a block, with get_block's refusals, without decoding its checksums
        (the datastream's reads)."""
        block_bcsid, size = BlockData.extent_of_json(self._stored_block(block_id, bcsid))
        _check_block_bcsid(block_id, block_bcsid, bcsid)
        return size

    def _stored_block(self, block_id: BlockID, bcsid: int | None) -> bytes:
        """The block's stored record; refused when the container is behind `bcsid` or has no such block."""
        self._check_block_id(block_id)
        if bcsid is not None and bcsid > self.bcsid:
            raise ContainerError(
                Result.UNKNOWN_BCSID, f"container {self.container_id} is at BCSID {self.bcsid}, not {bcsid}"
            )
        raw = self.db.block(block_id.local_id)
        if raw is None:
            raise ContainerError(Result.NO_SUCH_BLOCK, f"no block {block_id}")
        return raw

    def list_blocks(self, start_local_id: int = 0, count: int = 1000) -> list[BlockData]:
        """Up to `count` blocks with local id >= start_local_id, in local-id order."""
        if count <= 0 or start_local_id < 0:
            raise ContainerError(
                Result.MALFORMED_REQUEST, f"list blocks from {start_local_id}, count {count}"
            )
        blocks = []
        for _, raw in self.db.blocks(start_local_id):
            blocks.append(BlockData.from_json(raw))
            if len(blocks) == count:
                break
        return blocks

    def delete_blocks(self, tx_id: int, local_ids: Iterable[int]) -> bool:
        """Applies one delete transaction from SCM; False if it was applied before (a retried command).

        A block's file goes even when the block was never committed: a writer that failed or vanished
        before its putBlock leaves chunk data with no record, and the key's deletion is how it is freed."""
        with self._lock:
            if self.db.has_txn(tx_id):
                return False
            wanted = sorted(set(local_ids))
            gone = [lid for lid in wanted if self.db.block(lid) is not None]
            files = [chunk_io.block_file(self.chunks_dir, lid) for lid in wanted]
            freed = sum(chunk_io.file_size(f) for f in files)
            key_count, used = self.key_count - len(gone), max(0, self.used_bytes - freed)
            counters = {
                BLOCK_COUNT: key_count,
                BYTES_USED: used,
                DELETE_TXID: max(tx_id, self.db.counter(DELETE_TXID)),
            }
            try:
                self.db.commit(delete_blocks=gone, counters=counters, txn=tx_id)
            except DBError as e:
                raise io_error(self.volume, f"delete blocks of tx {tx_id}", e) from None
            self.key_count, self.used_bytes = key_count, used
            self.volume.add_used(-freed)
            self._sync_committed()
            for f in files:
                f.unlink(missing_ok=True)
            for lid in wanted:
                self._forget(lid)
            return True

    def discard_uncommitted(self, local_id: int) -> int:
        """Removes the block file of a block that was never committed (an aborted datastream); returns
        the bytes freed. A committed block keeps its file: reads stop at its committed length."""
        with self._lock:
            if self.db.block(local_id) is not None:
                return 0
            path = chunk_io.block_file(self.chunks_dir, local_id)
            freed = chunk_io.file_size(path)
            if not freed and not path.exists():
                return 0
            used = max(0, self.used_bytes - freed)
            try:  # the stored count too: it may include these bytes from an earlier commit
                self.db.commit(counters={BYTES_USED: used})
            except DBError as e:
                raise io_error(self.volume, f"discard block {local_id}", e) from None
            path.unlink(missing_ok=True)
            self.used_bytes = used
            self.volume.add_used(-freed)
            self._sync_committed()
            self._forget(local_id)
            return freed

    def discard_orphans(self, logged: Callable[[BlockID], bool] = lambda _block: False) -> int:
        """At start-up, before the volume counts this replica: removes the block files of an OPEN or CLOSING
        replica that no committed block owns and no entry of a pipeline's log names (`logged`: a
        datastream cut off by a crash, no writer comes back for it after a restart) and takes its used
        bytes from the files that remain. A block a log names keeps its bytes: the member acknowledged
        them and its replay (or the block's putBlock to come) commits them; Ozone's ContainerReader
        removes no chunk file at start. Returns the bytes freed."""
        if self.state not in _STILL_WRITTEN or not self.chunks_dir.is_dir():
            return 0
        freed, kept = 0, 0
        for path in self.chunks_dir.glob("*.block"):
            size = chunk_io.file_size(path)
            stem = path.name.removesuffix(".block")
            if (
                stem.isdigit()
                and self.db.block(int(stem)) is None
                and not logged(BlockID(self.container_id, int(stem)))
            ):
                path.unlink(missing_ok=True)
                freed += size
            else:
                kept += size
        if freed:
            log.info("container %d: removed %d bytes of uncommitted block files", self.container_id, freed)
        if kept != self.used_bytes:
            self.db.commit(counters={BYTES_USED: kept})
        self.used_bytes = kept
        self._sync_committed()
        return freed

    def delete(self, force: bool = False, only_if: ReplicaState | None = None) -> bool:
        """Removes the replica: directory out of the way first (one rename), then its DB keys. False if
        it was gone already or is no longer in state `only_if` (checked under the lock that state changes
        take, so a scrubber never deletes a replica its writer has just closed)."""
        with self._lock:
            if self.state is ReplicaState.DELETED or (only_if is not None and self.state is not only_if):
                return False
            if not force and self.state is ReplicaState.OPEN:
                raise ContainerError(Result.DELETE_ON_OPEN_CONTAINER, f"cannot delete {self._describe()}")
            if not force and self.key_count > 0:
                raise ContainerError(
                    Result.DELETE_ON_NON_EMPTY_CONTAINER,
                    f"container {self.container_id} has {self.key_count} blocks",
                )
            remove_container_dir(self.volume, self.container_id, self.directory)
            self.volume.add_used(-self.used_bytes)
            self.data = replace(self.data, state=ReplicaState.DELETED)
            self._forget_all()
            self._sync_committed()
            log.info("deleted container %d (force=%s)", self.container_id, force)
            return True

    # --- helpers

    def _check_block_id(self, block_id: BlockID) -> None:
        if block_id.container_id != self.container_id:
            raise ContainerError(
                Result.MALFORMED_REQUEST, f"{block_id} is not in container {self.container_id}"
            )

    def _check_writable(self) -> None:
        if self.state not in _WRITABLE:
            result = _NOT_WRITABLE.get(self.state, Result.CONTAINER_INTERNAL_ERROR)
            raise ContainerError(result, f"cannot write to {self._describe()}")


def _extent(chunk: ChunkInfo) -> tuple[int, int, ChecksumData]:
    """What makes two chunks the same: where they are and their checksums (not their names)."""
    return chunk.offset, chunk.length, chunk.checksum_data


def _check_block_bcsid(block_id: BlockID, block_bcsid: int, wanted: int | None) -> None:
    if wanted is not None and block_bcsid < wanted:
        raise ContainerError(Result.BCSID_MISMATCH, f"{block_id} is at BCSID {block_bcsid}, not {wanted}")


def _named(blocks: Sequence[tuple[BlockData, int]]) -> str:
    return f"block {blocks[0][0].block_id}" if len(blocks) == 1 else f"{len(blocks)} blocks"
