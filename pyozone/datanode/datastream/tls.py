"""Mutual TLS on the datastream port (hdds.grpc.tls.enabled): connections one thread reads while another
writes.

OpenSSL forbids using one TLS connection from two threads at once (an SSL object is not thread-safe, not
even for one SSL_read beside one SSL_write), yet a chain member receives from its upstream while its relay
thread sends acks up the same connection, and sends to the next member while the relay reads that
member's acks. `DuplexTlsSocket` makes every TLS call under a lock and waits for the socket outside it:
the socket itself stays non-blocking, so a call that would block releases the lock and polls, and a
reader waiting for data never holds up a writer.

The data path under TLS, and the copies TLS forces (everything else is as on the plaintext port):
- sendmsg cannot encrypt: a packet's frame, checksums and data go one buffer after another
  (sockets.send_all), none joined first; OpenSSL encrypts each straight from the caller's buffer.
- sendfile cannot encrypt: a read's range is read from the block file into a buffer allocated once per
  connection and encrypted from there. That copy (page cache to the buffer) is the one the plaintext
  port avoids.
- receiving: OpenSSL decrypts each record (16 KB at most) in its own buffer and copies it into the
  caller's (recv_into takes every record already here in one call): one copy more than the plaintext
  port's, where the kernel writes into the caller's buffer.
"""

from __future__ import annotations

import errno
import os
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any, BinaryIO, TypeVar

from pyozone.common.tls import TlsStore
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole

T = TypeVar("T")

HANDSHAKE_TIMEOUT_S = 10.0
"""A peer's whole TLS handshake must end within this (a silent or trickling peer holds no thread longer)."""

FILE_BUFFER_BYTES = 1 << 20
"""What one read of a block file takes under TLS, before it is encrypted and sent."""


class DuplexTlsSocket(ssl.SSLSocket):
    """A TLS connection that one thread may receive on while another sends. The timeout (settimeout)
    applies to each call, as on a plain socket; the socket underneath is non-blocking."""

    _timeout_s: float | None = None
    _lock: threading.Lock
    _file_buffer: memoryview | None = None

    def settimeout(self, value: float | None) -> None:
        self._timeout_s = value
        super().settimeout(0.0)  # waits happen in _wait, outside the lock

    def gettimeout(self) -> float | None:
        return self._timeout_s

    def handshake(self, deadline_s: float) -> None:
        """The whole handshake, within `deadline_s` (TimeoutError after it; ssl.SSLError for a refused
        certificate)."""
        self._call(lambda tls: tls.do_handshake(), time.monotonic() + deadline_s)

    def read(self, len: int = 1024, buffer: Any = None) -> Any:
        """What recv and recv_into call."""

        def read(tls: Any) -> Any:
            try:
                return tls.read(len, buffer) if buffer is not None else tls.read(len)
            except ssl.SSLEOFError:  # closed without TLS's close_notify: an end, as SSLSocket reads it
                if not self.suppress_ragged_eofs:
                    raise
                return 0 if buffer is not None else b""

        return self._call(read)

    def recv_into(self, buffer: Any, nbytes: int | None = None, flags: int = 0) -> int:
        """Waits for the first record, then decrypts every record already here (TLS hands over one
        record, at most 16 KB, per call): one call takes what a plain socket's recv_into takes in one
        system call, and a 1 MB packet costs a few calls rather than 64."""
        if flags:
            raise ValueError("a TLS socket takes no receive flags")
        view = memoryview(buffer).cast("B")
        size = len(view) if not nbytes else min(nbytes, len(view))
        got = self.read(size, view)
        while 0 < got < size and (tls := self._sslobj) is not None:
            with self._lock:
                try:
                    more = tls.read(size - got, view[got:])
                except (ssl.SSLWantReadError, ssl.SSLWantWriteError, ssl.SSLEOFError):
                    break  # nothing more here yet (or the end, which the next call returns)
            if not more:
                break
            got += more
        return got

    def send(self, data: Any, flags: int = 0) -> int:
        """Every byte of `data`, or an error: a TLS write retried after it would block completes the
        same records (sendall calls this)."""
        if flags:
            raise ValueError("a TLS socket takes no send flags")
        return self._call(lambda tls: tls.write(data))

    def sendfile(self, file: BinaryIO, offset: int = 0, count: int | None = None) -> int:
        """Sends `count` bytes of `file` from `offset` through this connection's file buffer (see the
        module's docstring); returns how many were sent (fewer when the file ends first)."""
        if self._file_buffer is None:
            self._file_buffer = memoryview(bytearray(FILE_BUFFER_BYTES))
        buffer, fd, sent = self._file_buffer, file.fileno(), 0
        remaining = os.fstat(fd).st_size - offset if count is None else count
        while remaining > 0:
            got = os.preadv(fd, [buffer[: min(remaining, len(buffer))]], offset + sent)
            if got == 0:
                break
            self.sendall(buffer[:got])
            sent += got
            remaining -= got
        file.seek(offset + sent)
        return sent

    def shutdown(self, how: int) -> None:
        """Shuts the socket down and keeps the TLS state (SSLSocket.shutdown drops it, and a thread
        inside a receive would then read ciphertext as data): the other thread sees the end."""
        socket.socket.shutdown(self, how)

    def _call(self, op: Callable[[Any], T], deadline: float | None = None) -> T:
        """Runs a TLS call under the lock, again after each wait for the socket. The TLS object is taken
        first: one closed meanwhile (close() drops it) stays valid for the call, which then fails."""
        while True:
            tls = self._sslobj
            if tls is None:
                raise OSError(errno.EBADF, "the TLS connection is closed")
            with self._lock:
                try:
                    return op(tls)
                except ssl.SSLWantReadError:
                    events = select.POLLIN
                except ssl.SSLWantWriteError:
                    events = select.POLLOUT
            if deadline is None and self._timeout_s is not None:
                deadline = time.monotonic() + self._timeout_s
            self._wait(events, deadline)

    def _wait(self, events: int, deadline: float | None) -> None:
        fd = self.fileno()
        if fd < 0:
            raise OSError(errno.EBADF, "the TLS connection is closed")
        poll = select.poll()
        poll.register(fd, events)
        wait_ms = None if deadline is None else max(0.0, deadline - time.monotonic()) * 1000
        if not poll.poll(wait_ms):
            raise TimeoutError("timed out")


class DatastreamTls:
    """The port's two contexts, made once from the datanode's TlsStore (which reloads them on renewal):
    the server's for accepted connections, the client's for the next member of a chain."""

    def __init__(self, store: TlsStore, handshake_timeout_s: float = HANDSHAKE_TIMEOUT_S) -> None:
        self.handshake_timeout_s = handshake_timeout_s
        self._server = store.server_context()
        self._client = store.client_context()
        for context in (self._server, self._client):
            context.sslsocket_class = DuplexTlsSocket

    def wrap_accepted(self, conn: socket.socket) -> DuplexTlsSocket:
        """Takes over `conn` (its descriptor moves to the result); the caller runs handshake()."""
        return self._wrap(self._server, conn, server_side=True)

    def connect(self, conn: socket.socket, host: str) -> DuplexTlsSocket:
        """Takes over a connection to `host` and completes the handshake, checking that the peer's
        certificate is a datanode's naming `host` (X.role_host_name); the connection is closed if it
        fails."""
        tls = self._wrap(
            self._client, conn, server_side=False, server_hostname=X.role_host_name(CertRole.DATANODE, host)
        )
        try:
            tls.handshake(self.handshake_timeout_s)
        except BaseException:
            tls.close()
            raise
        return tls

    @staticmethod
    def _wrap(
        context: ssl.SSLContext, conn: socket.socket, server_side: bool, server_hostname: str | None = None
    ) -> DuplexTlsSocket:
        tls = context.wrap_socket(
            conn, server_side=server_side, server_hostname=server_hostname, do_handshake_on_connect=False
        )
        assert isinstance(tls, DuplexTlsSocket)
        tls._lock = threading.Lock()
        return tls
