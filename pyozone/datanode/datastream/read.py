"""Block reads on the datastream port: the range goes from the block file to the socket with sendfile.

The datanode checks that the block is committed (at the BCSID the reader names) and that the range lies
within its committed length, answers a reply frame, then sends exactly the range's bytes from the page
cache: no read into Python, no copy. The reader verifies the checksums it got with the block's metadata
(GetBlock); a mismatch sends it to another replica, and the container scanner finds the damage here.
A refused read (no such block, a range past its end, a block token that does not allow it) is answered
and the connection takes the next one.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

from pyozone.datanode.datastream.sockets import PeerClosed, recv_exact
from pyozone.datanode.storage import ContainerError, ContainerSet, Result, chunk_io
from pyozone.datanode.xceiver.dispatcher import Refused
from pyozone.hdds.ids import BlockID
from pyozone.hdds.security.block_token import AccessMode
from pyozone.protocol import datastream as ds

CheckToken = Callable[[str, BlockID, AccessMode], None]
"""Raises Refused (BLOCK_TOKEN_VERIFICATION_FAILED) unless the token allows the access."""


def serve_reads(
    conn: socket.socket, first: ds.ReadHeader, containers: ContainerSet, check_token: CheckToken | None = None
) -> None:
    """Answers `first` and every READ after it on the connection, until the reader closes it.
    `check_token`: the dispatcher's check of a block token (Dispatcher.check_block_token)."""
    header = first
    while True:
        _serve_one(conn, header, containers, check_token)
        try:
            op, length = ds.decode_preamble(recv_exact(conn, ds.PREAMBLE.size, at_frame_start=True))
        except PeerClosed as e:
            if e.clean:
                return
            raise
        if op is not ds.Op.READ:
            raise ds.StreamProtocolError("a read connection carries only READs")
        decoded = ds.decode_header(op, recv_exact(conn, length))
        assert isinstance(decoded, ds.ReadHeader)
        header = decoded


def _serve_one(
    conn: socket.socket, header: ds.ReadHeader, containers: ContainerSet, check_token: CheckToken | None
) -> None:
    block_id = BlockID(header.container_id, header.local_id)
    try:
        if check_token is not None:
            check_token(header.token, block_id, AccessMode.READ)
        container = containers.require(header.container_id)
        size = container.committed_size(block_id, header.bcsid or None)
        if header.offset + header.length > size:
            raise ContainerError(
                Result.MALFORMED_REQUEST,
                f"bytes {header.offset}..{header.offset + header.length} are past the end of {block_id} "
                f"({size} bytes committed)",
            )
        path = chunk_io.block_file(container.chunks_dir, header.local_id)
        file = open(path, "rb")  # noqa: SIM115 (closed below, after sendfile)
    except Refused as e:
        conn.sendall(ds.encode_read_reply(e.result, 0, str(e)))
        return
    except ContainerError as e:
        conn.sendall(ds.encode_read_reply(ds.result_number(e.result.value), 0, str(e)))
        return
    except FileNotFoundError:
        conn.sendall(ds.encode_read_reply(ds.UNABLE_TO_FIND_CHUNK, 0, f"no block file for {block_id}"))
        return
    with file:
        conn.sendall(ds.encode_read_reply(ds.SUCCESS, header.length))
        if header.length:
            sent = chunk_io.send_at(conn, file, header.offset, header.length, container.volume.io_stats)
            if sent != header.length:  # the file is shorter than its committed length: cut the reader off
                raise OSError(f"{block_id}: the block file ended {header.length - sent} bytes early")
