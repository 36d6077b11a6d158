"""KeyValueContainer: the data path of one replica (chunks, blocks, BCSID) and its creation and removal.

Durability (fsync policy): chunk writes are not fsynced. putBlock fsyncs the block file (and, for a
new block, its directory) and then commits the block metadata, BCSID and counters in one synced RocksDB
batch, so committed metadata never points at data that a power cut could lose. State changes rewrite
the .container file (see container_state). Mutations hold the container's lock; reads don't.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from pyozone.common.fsutil import fsync_dir
from pyozone.datanode.storage import chunk_io
from pyozone.datanode.storage.container_data import BlockData, ChunkInfo, ContainerData, ContainerFileError
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
from pyozone.hdds.checksum import ChecksumMismatch, verify
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


class KeyValueContainer(ContainerReplica):
    """A replica with FILE_PER_BLOCK chunk files and its block metadata in the volume DB."""

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
        self, block_id: BlockID, chunk: ChunkInfo, data: bytes | memoryview, verified: bool = True
    ) -> bool:
        """Writes one chunk at its offset in the block file; True once the container is full. The data
        is checked against its checksums unless `verified` is False (a datastream member that is not the
        chain's last: the last one checks the very bytes it forwarded)."""
        self._check_block_id(block_id)
        if len(data) != chunk.length or chunk.offset < 0:
            raise ContainerError(
                Result.MALFORMED_REQUEST, f"chunk {chunk.name}: {len(data)} bytes for len {chunk.length}"
            )
        try:
            chunk.checksum_data.check_shape(chunk.length)
            if verified:
                verify(data, chunk.checksum_data)
        except ChecksumMismatch as e:
            raise ContainerError(Result.CHECKSUM_MISMATCH, f"chunk {chunk.name} of {block_id}: {e}") from None
        except ValueError as e:
            raise ContainerError(Result.MALFORMED_REQUEST, f"chunk {chunk.name}: {e}") from None
        with self._lock:
            self._check_writable()
            path = chunk_io.block_file(self.chunks_dir, block_id.local_id)
            growth = max(0, chunk.offset + chunk.length - chunk_io.file_size(path))
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
            return self.used_bytes >= self.data.max_size

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

    def put_block(self, block: BlockData, bcsid: int) -> None:
        """Commits a block's metadata at `bcsid`; a replayed putBlock (bcsid <= current) is a no-op.

        bcsid 0 (a write outside the pipeline) overwrites the block and leaves the BCSID alone (Ozone).
        """
        self._check_block_id(block.block_id)
        lid = block.block_id.local_id
        with self._lock:
            self._check_writable()
            if bcsid != 0 and bcsid <= self.bcsid:
                return
            is_new = self.db.block(lid) is None
            path = chunk_io.block_file(self.chunks_dir, lid)
            if chunk_io.file_size(path) < block.file_length:
                raise ContainerError(
                    Result.UNABLE_TO_FIND_CHUNK, f"{block.block_id}: chunks were not written"
                )
            new_bcsid, key_count = bcsid or self.bcsid, self.key_count + is_new
            try:
                if block.chunks:
                    chunk_io.sync_file(path)
                    if is_new:
                        fsync_dir(self.chunks_dir)
                self.db.commit(
                    put_blocks=[(lid, block.with_bcsid(bcsid).to_json())],
                    counters={BCSID: new_bcsid, BLOCK_COUNT: key_count, BYTES_USED: self.used_bytes},
                )
            except (OSError, DBError) as e:
                raise io_error(self.volume, f"put block {block.block_id}", e) from None
            self.bcsid, self.key_count = new_bcsid, key_count

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
            return freed

    def discard_orphans(self) -> int:
        """At start-up, before the volume counts this replica: removes the block files of an OPEN or CLOSING
        replica that no committed block owns (a datastream or writeChunk cut off by a crash: no writer
        comes back for them after a restart) and takes its used bytes from the files that remain.
        Returns the bytes freed."""
        if self.state not in _STILL_WRITTEN or not self.chunks_dir.is_dir():
            return 0
        freed, kept = 0, 0
        for path in self.chunks_dir.glob("*.block"):
            size = chunk_io.file_size(path)
            stem = path.name.removesuffix(".block")
            if stem.isdigit() and self.db.block(int(stem)) is None:
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


def _check_block_bcsid(block_id: BlockID, block_bcsid: int, wanted: int | None) -> None:
    if wanted is not None and block_bcsid < wanted:
        raise ContainerError(Result.BCSID_MISMATCH, f"{block_id} is at BCSID {block_bcsid}, not {wanted}")
