"""DatastreamReader: ranges of committed blocks read over a datanode's datastream port.

The datanode sends each range from its block file with sendfile; here it lands in a buffer allocated
once for the range (the kernel writes into it: no copy in Python), and BlockInputStream verifies it
against the block's checksums. One connection per datanode carries one read at a time; a read that fails
or is cancelled halfway leaves the connection mid-frame, so it is closed and the next read reconnects.
"""

from __future__ import annotations

import asyncio
import socket

from pyozone.client.models import DatanodeRef
from pyozone.client.xceiver import DatanodeCallError
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import datastream as ds


class DatastreamReader:
    def __init__(self, datanode: DatanodeRef, timeout_s: float) -> None:
        self.datanode = datanode
        self.timeout_s = timeout_s
        self._sock: socket.socket | None = None
        self._lock = asyncio.Lock()

    async def read(self, container_id: int, local_id: int, bcsid: int, offset: int, length: int) -> bytearray:
        """The range's bytes; DatanodeCallError (unreachable for a broken connection) otherwise."""
        header = ds.encode_header(ds.ReadHeader(container_id, local_id, bcsid, offset, length))
        async with self._lock:
            try:
                return await asyncio.wait_for(self._read(header, length), self.timeout_s)
            except DatanodeCallError:
                raise
            except (OSError, TimeoutError, ds.StreamProtocolError) as e:
                self.close()
                why = f"no answer in {self.timeout_s:g}s" if isinstance(e, TimeoutError) else str(e)
                raise DatanodeCallError(
                    self.datanode, "UNAVAILABLE", f"datastream read: {why}", unreachable=True
                ) from None
            except BaseException:
                self.close()
                raise

    async def _read(self, header: bytes, length: int) -> bytearray:
        loop = asyncio.get_running_loop()
        sock = await self._connect()
        await loop.sock_sendall(sock, header)
        frame = bytearray(ds.READ_REPLY.size)
        await fill(loop, sock, memoryview(frame))
        result, size, message_length = ds.decode_read_reply(frame)
        message = bytearray(message_length)
        await fill(loop, sock, memoryview(message))
        if result != ds.SUCCESS:
            try:
                name = pb.Result.Name(result)
            except ValueError:
                name = f"RESULT_{result}"
            if result == pb.MALFORMED_REQUEST:
                self.close()  # a refused header ends the connection
            raise DatanodeCallError(self.datanode, name, message.decode("utf-8", "replace"))
        if size != length:
            raise ds.StreamProtocolError(f"the datanode answers {size} bytes for a {length}-byte read")
        data = bytearray(length)
        await fill(loop, sock, memoryview(data))
        return data

    async def _connect(self) -> socket.socket:
        if self._sock is not None:
            return self._sock
        if self.datanode.datastream_port is None:
            raise DatanodeCallError(
                self.datanode, "NO_DATASTREAM_PORT", "no datastream port", unreachable=True
            )
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            address = (self.datanode.ip or self.datanode.host, self.datanode.datastream_port)
            await asyncio.get_running_loop().sock_connect(sock, address)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        return sock

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


async def fill(loop: asyncio.AbstractEventLoop, sock: socket.socket, view: memoryview) -> None:
    """Receives exactly len(view) bytes into `view`."""
    done = 0
    while done < len(view):
        n = await loop.sock_recv_into(sock, view[done:])
        if n == 0:
            raise ConnectionResetError("the datanode closed the connection")
        done += n
