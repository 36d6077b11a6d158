"""DatastreamReader: ranges of committed blocks read over a datanode's datastream port.

The datanode sends each range from its block file with sendfile; here it lands in a buffer allocated
once for the range (the kernel writes into it: no copy in Python), and BlockInputStream verifies it
against the block's checksums. One connection per datanode carries one read at a time; a read that fails
or is cancelled halfway leaves the connection mid-frame, so it is closed and the next read reconnects.
`fill` is the same receive for the writer's non-blocking socket.

With ClientConfig.tls the connection is mutual TLS: the datanode encrypts each range from a buffer (it
cannot sendfile), and here OpenSSL decrypts it a record (16 KB) at a time and copies each into the range's
buffer (a TLS socket takes no MSG_WAITALL).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import weakref

from pyozone.common.tls import TlsStore
from pyozone.framework.datanode import DatanodeCallError
from pyozone.hdds.locations import DatanodeRef
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol import datastream as ds
from pyozone.protocol.data import result_name

_contexts: weakref.WeakKeyDictionary[TlsStore, ssl.SSLContext] = weakref.WeakKeyDictionary()


def client_context(tls: TlsStore) -> ssl.SSLContext:
    """One context per client certificate, shared by every datastream connection: the store reloads each
    context it made on renewal, so making one per connection would keep them all."""
    context = _contexts.get(tls)
    if context is None:
        context = _contexts.setdefault(tls, tls.client_context())
    return context


def datanode_server_name(host: str) -> str:
    """The name a datastream client checks a datanode's certificate for: its role-qualified name for
    `host` (x509.role_host_name), which only the CA adds, and only to a datanode's certificate, so an OM's
    or gateway's certificate for the same host cannot serve as a datanode."""
    return X.role_host_name(CertRole.DATANODE, host)


class DatastreamReader:
    def __init__(self, datanode: DatanodeRef, timeout_s: float, tls: TlsStore | None = None) -> None:
        """`tls`: the client's certificate (ClientConfig.tls); the datanode's must name its address."""
        self.datanode = datanode
        self.timeout_s = timeout_s
        self._tls = tls
        self._sock: socket.socket | None = None
        self._lock = asyncio.Lock()

    async def read(
        self,
        container_id: int,
        local_id: int,
        bcsid: int,
        offset: int,
        length: int,
        into: bytearray | None = None,
        token: str = "",
    ) -> memoryview:
        """The range's bytes, received into `into` when it is large enough (else a new buffer);
        DatanodeCallError (unreachable for a broken connection) otherwise.

        The exchange runs on a worker thread with a blocking socket: MSG_WAITALL receives a whole range
        in one system call, where the event loop would wake for every socket buffer's worth."""
        header = ds.encode_header(ds.ReadHeader(container_id, local_id, bcsid, offset, length, token))
        async with self._lock:
            sock = self._sock
            try:
                if sock is None:
                    sock = self._sock = await asyncio.to_thread(self._connect)
                return await asyncio.to_thread(self._exchange, sock, header, length, into)
            except DatanodeCallError as e:
                if e.unreachable or e.result == "MALFORMED_REQUEST":  # a refused header ends the connection
                    self._discard(sock)
                raise
            except (OSError, ds.StreamProtocolError) as e:
                self._discard(sock)
                why = f"no answer in {self.timeout_s:g}s" if isinstance(e, TimeoutError) else str(e)
                raise DatanodeCallError(
                    self.datanode, "UNAVAILABLE", f"datastream read: {why}", unreachable=True
                ) from None
            except BaseException:  # cancelled: the thread may still be inside the exchange
                self._discard(sock)
                raise

    def _connect(self) -> socket.socket:
        if self.datanode.datastream_port is None:
            raise DatanodeCallError(
                self.datanode, "NO_DATASTREAM_PORT", "no datastream port", unreachable=True
            )
        address = (self.datanode.ip or self.datanode.host, self.datanode.datastream_port)
        sock = socket.create_connection(address, timeout=self.timeout_s)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._tls is None:
            return sock
        try:  # the handshake: within the timeout of each of its receives
            return client_context(self._tls).wrap_socket(
                sock, server_hostname=datanode_server_name(address[0])
            )
        except BaseException:
            sock.close()
            raise

    def _exchange(
        self, sock: socket.socket, header: bytes, length: int, into: bytearray | None
    ) -> memoryview:
        sock.sendall(header)
        frame = _receive(sock, ds.READ_REPLY.size)
        result, size, message_length = ds.decode_read_reply(frame)
        message = _receive(sock, message_length).tobytes()
        if result != ds.SUCCESS:
            raise DatanodeCallError(self.datanode, result_name(result), message.decode("utf-8", "replace"))
        if size != length:
            raise ds.StreamProtocolError(f"the datanode answers {size} bytes for a {length}-byte read")
        return _receive(sock, length, into)

    def _discard(self, sock: socket.socket | None) -> None:
        """Drops the connection; shutdown wakes a thread still blocked on it. (socket's shutdown, not
        SSLSocket's, which drops the TLS state under that thread's feet.)"""
        if sock is None:
            return
        if self._sock is sock:
            self._sock = None
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        sock.close()

    def close(self) -> None:
        self._discard(self._sock)


def _receive(sock: socket.socket, n: int, into: bytearray | None = None) -> memoryview:
    """Exactly `n` bytes, into `into` when it is large enough, else into a buffer of their own."""
    buf = into if into is not None and len(into) >= n else bytearray(n)
    view, done = memoryview(buf)[:n], 0
    flags = 0 if isinstance(sock, ssl.SSLSocket) else socket.MSG_WAITALL
    while done < n:
        got = sock.recv_into(view[done:], n - done, flags)
        if got == 0:
            raise ConnectionResetError("the datanode closed the connection")
        done += got
    return view


async def fill(loop: asyncio.AbstractEventLoop, sock: socket.socket, view: memoryview) -> None:
    """Receives exactly len(view) bytes into `view` on a non-blocking socket."""
    done = 0
    while done < len(view):
        n = await loop.sock_recv_into(sock, view[done:])
        if n == 0:
            raise ConnectionResetError("the datanode closed the connection")
        done += n
