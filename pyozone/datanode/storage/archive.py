"""Export of a closed replica as a tar stream, for push replication to another datanode.

The stream holds, in order: metadata/<id>.container (the descriptor, with the live BCSID),
metadata/<id>.blocks.json (the container's block metadata from the volume DB) and chunks/<localID>.block
for every committed block. Only blocks with committed metadata travel: chunks written without a
putBlock are garbage and stay behind. It is produced in pieces (1 MiB by default), so a replica of any
size streams in bounded memory, and the SHA-256 of the whole stream is known when it ends.
"""

from __future__ import annotations

import hashlib
import json
import re
import tarfile
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from pyozone.datanode.storage import chunk_io
from pyozone.datanode.storage.container import KeyValueContainer
from pyozone.datanode.storage.errors import ContainerError, Result
from pyozone.datanode.storage.volume_db import DELETE_TXID
from pyozone.hdds.states import ReplicaState

PIECE_SIZE = 1 << 20
BLOCK = tarfile.BLOCKSIZE
EXPORTABLE = (ReplicaState.CLOSED, ReplicaState.QUASI_CLOSED)

# The only member names an archive may have; importers build paths from the captured ids, never
# from the raw name, so no name can reach outside the staging directory.
MEMBER_NAME = re.compile(r"metadata/(\d{1,19})\.(container|blocks\.json)|chunks/(\d{1,19})\.block", re.ASCII)


def container_file_name(container_id: int) -> str:
    return f"metadata/{container_id}.container"


def blocks_file_name(container_id: int) -> str:
    return f"metadata/{container_id}.blocks.json"


def _header(name: str, size: int, mtime: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = size, 0o644, mtime
    return info.tobuf(format=tarfile.USTAR_FORMAT, encoding="utf-8", errors="strict")


def _padding(size: int) -> bytes:
    return bytes(-size % BLOCK)


class ExportStream:
    """Iterate once for the pieces; `sha256` (hex) is set when the iteration has finished."""

    def __init__(self, container: KeyValueContainer, piece_size: int = PIECE_SIZE) -> None:
        if container.state not in EXPORTABLE:
            raise ContainerError(
                Result.INVALID_CONTAINER_STATE,
                f"only CLOSED or QUASI_CLOSED containers are exported; {container.container_id} is "
                f"{container.state.name}",
            )
        self.container = container
        self.piece_size = piece_size
        self.sha256: str | None = None
        # every member carries the descriptor's time, not the clock's: exports of one closed replica are
        # the same bytes, with the same SHA-256
        try:
            self._mtime = int(container.container_file.stat().st_mtime)
        except OSError:
            self._mtime = 0

    def _descriptor(self) -> bytes:
        c = self.container
        return replace(c.data, bcsid=c.bcsid).to_file_bytes()

    def _members(self) -> Iterator[bytes]:
        c, total = self.container, 0
        cid = c.container_id
        raws = list(c.db.blocks())
        blocks = (
            b'{"containerID":%d,"bcsid":%d,"deleteTxId":%d,"blocks":['
            % (cid, c.bcsid, c.db.counter(DELETE_TXID))
            + b",".join(raw for _, raw in raws)
            + b"]}"
        )
        for name, body in ((container_file_name(cid), self._descriptor()), (blocks_file_name(cid), blocks)):
            part = _header(name, len(body), self._mtime) + body + _padding(len(body))
            total += len(part)
            yield part
        for local_id, _ in raws:
            path = chunk_io.block_file(c.chunks_dir, local_id)
            if not path.is_file():
                continue  # an empty block has no file; a lost one fails the importer's verification
            with open(path, "rb") as f:
                size = path.stat().st_size
                yield _header(f"chunks/{path.name}", size, self._mtime)
                left = size
                while left:
                    piece = f.read(min(left, self.piece_size))
                    if not piece:
                        raise ContainerError(Result.IO_EXCEPTION, f"{path} shrank while being exported")
                    left -= len(piece)
                    yield piece
            yield _padding(size)
            total += BLOCK + size + len(_padding(size))
        end = bytes(2 * BLOCK)
        yield end + bytes(-(total + len(end)) % tarfile.RECORDSIZE)

    def __iter__(self) -> Iterator[bytes]:
        digest, buffer = hashlib.sha256(), bytearray()
        for part in self._members():
            digest.update(part)
            buffer += part
            while len(buffer) >= self.piece_size:
                yield bytes(buffer[: self.piece_size])
                del buffer[: self.piece_size]
        if buffer:
            yield bytes(buffer)
        self.sha256 = digest.hexdigest()


def parse_blocks_file(raw: bytes, container_id: int) -> tuple[list[dict[str, Any]], int, int]:
    """The block dicts, BCSID and last delete tx id of a blocks.json; ValueError if malformed."""
    doc = json.loads(raw)
    if (
        not isinstance(doc, dict)
        or doc.get("containerID") != container_id
        or not isinstance(doc.get("blocks"), list)
    ):
        raise ValueError(f"block metadata is not that of container {container_id}")
    return doc["blocks"], int(doc["bcsid"]), int(doc["deleteTxId"])
