"""Import of an exported replica: stream in, verify everything, then appear atomically or not at all.

The tar stream is parsed as it arrives (push: feed() per network message, then finish() with the
sender's SHA-256), so nothing is written twice. Only the member names the exporter produces are
accepted and paths are built from their numeric ids, which rules out path traversal; sizes are capped
per member and per stream. The replica becomes visible by one rename after the stream's SHA-256 and
every chunk checksum verified; any failure removes the staging directory.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import hmac
import os
import shutil
import tarfile
import uuid
from collections.abc import Iterable
from dataclasses import replace
from typing import BinaryIO

from pyozone.common.fsutil import atomic_write, fsync_dir
from pyozone.datanode.storage.archive import BLOCK, EXPORTABLE, MEMBER_NAME, parse_blocks_file
from pyozone.datanode.storage.container import KeyValueContainer
from pyozone.datanode.storage.container_data import ContainerData, ContainerFileError
from pyozone.datanode.storage.container_files import clear_db, descriptor_path
from pyozone.datanode.storage.container_set import ContainerSet
from pyozone.datanode.storage.errors import ContainerError, Result
from pyozone.datanode.storage.scanner import verify_blocks
from pyozone.datanode.storage.volume_db import (
    BCSID,
    BLOCK_COUNT,
    BYTES_USED,
    DELETE_TXID,
    ContainerDB,
    DBError,
)
from pyozone.hdds.block_data import BlockData
from pyozone.hdds.datanode import required_replication_space

# A descriptor is < 1 KiB; the block metadata of a full 5 GB container is far below this.
METADATA_LIMIT = 256 << 20


def _malformed(message: str) -> ContainerError:
    return ContainerError(Result.MALFORMED_REQUEST, f"container archive: {message}")


class ContainerImporter:
    def __init__(
        self,
        containers: ContainerSet,
        container_id: int | None = None,
        max_bytes: int | None = None,
        max_member_bytes: int | None = None,
    ) -> None:
        """`container_id`, when known (a replicate command names it), must be the archive's container.

        The import holds twice the container size on its volume's committed bytes until it ends (Ozone's
        ContainerImporter: HddsVolume.incCommittedBytes of the replication space), so concurrent imports
        (hdds.datanode.replication.streams.limit) and new containers cannot together cross the free-space
        floor; DISK_OUT_OF_SPACE when no volume has that room."""
        size = containers.volume_set.container_size
        if container_id is not None and container_id in containers:
            raise ContainerError(Result.CONTAINER_EXISTS, f"container {container_id} exists")
        self.containers = containers
        self.container_id = container_id
        self.max_bytes = max_bytes or 2 * size + METADATA_LIMIT
        self.max_member_bytes = max_member_bytes or size
        self.reserved = required_replication_space(size)
        self.volume = containers.volume_set.choose_volume(self.reserved, reserve=True)
        self.staging = self.volume.tmp_dir / f"import-{uuid.uuid4().hex}"
        self._dir = self.staging / "container"
        self._digest = hashlib.sha256()
        self._header = bytearray()  # a header split across pieces
        self._received = self._left = self._pad = 0
        self._file: BinaryIO | None = None
        self._names: set[str] = set()
        self._ended = self._closed = False
        try:
            (self._dir / "chunks").mkdir(parents=True)
            (self._dir / "metadata").mkdir()
        except OSError as e:
            self.abort()
            raise ContainerError(
                Result.IO_EXCEPTION, f"cannot stage an import on {self.volume.root}: {e}"
            ) from None

    def feed(self, piece: bytes) -> None:
        try:
            self._feed(piece)
        except ContainerError:
            self.abort()
            raise
        except OSError as e:
            self.abort()
            result = Result.DISK_OUT_OF_SPACE if e.errno == errno.ENOSPC else Result.IO_EXCEPTION
            raise ContainerError(result, f"container archive: {e}") from None

    def _feed(self, piece: bytes) -> None:
        if self._closed:
            raise _malformed("the import was aborted")
        self._received += len(piece)
        if self._received > self.max_bytes:
            raise _malformed(f"stream exceeds {self.max_bytes} bytes")
        self._digest.update(piece)
        if self._ended:
            if any(piece):
                raise _malformed("data after the end-of-archive marker")
            return
        self._consume(memoryview(piece).cast("B"))

    def _consume(self, data: memoryview) -> None:
        """Advances the tar parser over `data`: member bytes go straight to their staging file."""
        pos = 0
        while pos < len(data):
            if self._left:
                take = min(self._left, len(data) - pos)
                assert self._file is not None
                self._file.write(data[pos : pos + take])
                pos, self._left = pos + take, self._left - take
                if not self._left:
                    self._close_member()
            elif self._pad:
                take = min(self._pad, len(data) - pos)
                pos, self._pad = pos + take, self._pad - take
            else:
                need = BLOCK - len(self._header)
                self._header += data[pos : pos + need]
                pos += need
                if len(self._header) < BLOCK:
                    return
                header = bytes(self._header)
                self._header.clear()
                if not any(header):
                    self._ended = True
                    if any(data[pos:]):
                        raise _malformed("data after the end-of-archive marker")
                    return
                self._start_member(header)

    def _start_member(self, header: bytes) -> None:
        try:
            info = tarfile.TarInfo.frombuf(header, "utf-8", "strict")
        except (tarfile.HeaderError, UnicodeDecodeError) as e:
            raise _malformed(f"bad tar header: {e}") from None
        match = MEMBER_NAME.fullmatch(info.name)
        if info.type not in (tarfile.REGTYPE, tarfile.AREGTYPE) or match is None:
            raise _malformed(f"unexpected member {info.name!r} (type {info.type!r})")
        if info.name in self._names:
            raise _malformed(f"duplicate member {info.name!r}")
        self._names.add(info.name)
        if match.group(1):
            cid, limit = int(match.group(1)), METADATA_LIMIT
            if self.container_id is None:
                self.container_id = cid
            if cid != self.container_id:
                raise _malformed(f"member {info.name!r} is not of container {self.container_id}")
            path = (
                self._dir / "metadata" / f"{cid}.container"
                if match.group(2) == "container"
                else self.staging / "blocks.json"
            )
        else:
            limit, path = self.max_member_bytes, self._dir / "chunks" / f"{int(match.group(3))}.block"
        if info.size > limit:
            raise _malformed(f"member {info.name!r} is {info.size} bytes; the limit is {limit}")
        self._file = open(path, "xb")  # noqa: SIM115 - closed in _close_member or abort
        self._left, self._pad = info.size, -info.size % BLOCK
        if not info.size:
            self._close_member()

    def _close_member(self) -> None:
        assert self._file is not None
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self._file = None

    def finish(self, expected_sha256: str, replica_index: int | None = None) -> KeyValueContainer:
        """Verifies and installs the replica (of `replica_index`, when given); raises ContainerError (and
        cleans up) on any problem."""
        try:
            return self._finish(expected_sha256, replica_index)
        except (OSError, DBError) as e:
            raise ContainerError(Result.IO_EXCEPTION, f"container archive: {e}") from None
        finally:
            self.abort()

    def _finish(self, expected_sha256: str, replica_index: int | None) -> KeyValueContainer:
        if self._closed:
            raise _malformed("the import was aborted")
        if not self._ended or self._left or self._pad:
            raise _malformed("the stream is truncated")
        if not hmac.compare_digest(self._digest.hexdigest(), expected_sha256.lower()):
            raise ContainerError(
                Result.CHECKSUM_MISMATCH, "container archive: SHA-256 of the stream mismatches"
            )
        cid = self.container_id
        blocks_path = self.staging / "blocks.json"
        if cid is None or not descriptor_path(self._dir, cid).is_file() or not blocks_path.is_file():
            raise _malformed("descriptor or block metadata missing")
        try:
            data = ContainerData.from_file_bytes(descriptor_path(self._dir, cid).read_bytes())
            dicts, bcsid, delete_tx = parse_blocks_file(blocks_path.read_bytes(), cid)
            blocks = [BlockData.from_dict(d) for d in dicts]
        except (ContainerFileError, ValueError, KeyError, TypeError) as e:
            raise _malformed(f"metadata of container {cid}: {e}") from None
        if data.container_id != cid or data.state not in EXPORTABLE:
            raise _malformed(f"descriptor is of container {data.container_id} in state {data.state.name}")
        if replica_index is not None and data.replica_index != replica_index:
            raise _malformed(
                f"container {cid}'s archive has replica index {data.replica_index}, not {replica_index}"
            )
        if any(b.block_id.container_id != cid for b in blocks):
            raise _malformed(f"block metadata names another container than {cid}")
        chunks_dir = self._dir / "chunks"
        files = {int(p.stem): p.stat().st_size for p in chunks_dir.iterdir()}
        if extra := set(files) - {b.block_id.local_id for b in blocks}:
            raise _malformed(f"block files without block metadata: {sorted(extra)[:5]}")
        if errors := verify_blocks(chunks_dir, blocks):
            raise ContainerError(Result.CHECKSUM_MISMATCH, f"container archive: {errors[0]}")
        descriptor = replace(data, bcsid=max(bcsid, data.bcsid))
        counters = {
            BCSID: descriptor.bcsid,
            BLOCK_COUNT: len(blocks),
            BYTES_USED: sum(files.values()),
            DELETE_TXID: delete_tx,
        }
        build = functools.partial(self._install, descriptor, blocks, counters)
        return self.containers.install(cid, build, restores=True)

    def _install(
        self, descriptor: ContainerData, blocks: list[BlockData], counters: dict[str, int]
    ) -> KeyValueContainer:
        """Block metadata into the volume DB first, then the rename: a crash in between leaves only DB keys
        of a container that is not there, which the next create or import of the id clears."""
        cid, volume = descriptor.container_id, self.volume
        final = volume.container_dir(cid)
        if final.exists():
            raise ContainerError(Result.CONTAINER_EXISTS, f"container {cid} exists at {final}")
        descriptor = replace(
            descriptor, chunks_path=str(final / "chunks"), metadata_path=str(final / "metadata")
        )
        atomic_write(descriptor_path(self._dir, cid), descriptor.to_file_bytes())
        records = [(b.block_id.local_id, b.to_json()) for b in blocks]
        ContainerDB(volume.db, cid).commit(put_blocks=records, counters=counters, clear=True)
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            os.rename(self._dir, final)
            fsync_dir(final.parent)
        except OSError:
            clear_db(volume, cid)
            raise
        container = KeyValueContainer.load(volume, cid, final)
        volume.add_used(container.used_bytes)
        return container

    def abort(self) -> None:
        """Removes everything staged and gives back the reserved space; safe to call more than once."""
        self._closed = True
        self.volume.add_committed(-self.reserved)
        self.reserved = 0
        if self._file is not None:
            self._file.close()
            self._file = None
        shutil.rmtree(self.staging, ignore_errors=True)


def import_container(
    containers: ContainerSet, pieces: Iterable[bytes], expected_sha256: str, container_id: int | None = None
) -> KeyValueContainer:
    """Imports a whole stream; a failing source (e.g. a dropped connection) also leaves nothing behind."""
    importer = ContainerImporter(containers, container_id)
    try:
        for piece in pieces:
            importer.feed(piece)
        return importer.finish(expected_sha256)
    except ContainerError:
        raise
    except Exception as e:
        raise ContainerError(Result.IO_EXCEPTION, f"container archive stream failed: {e}") from e
    finally:
        importer.abort()
