"""DatastreamServer: the datastream port (hdds.container.ratis.datastream.port), a thread per connection.

Blocking sockets on threads, not asyncio: every step of the data path (recv_into, sendall to the next
member, the checksum check, pwrite, sendfile) releases the GIL, so the chain's members, the client and the
event loop's control traffic run in parallel, with no per-packet event-loop round trips. A connection
opens with a preamble and a header (pyozone/protocol/datastream.py); a malformed one is answered with
MALFORMED_REQUEST and closed, and the server goes on serving.

With `tls` (hdds.grpc.tls.enabled) every connection is mutual TLS (tls.py): the handshake runs on the
connection's thread within its deadline, a peer without a certificate from the cluster's CA is refused
there, and a chain member connects to the next one with the datanode's own certificate.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Callable

from pyozone.common.tls import TlsStore
from pyozone.datanode.datastream.read import serve_reads
from pyozone.datanode.datastream.sockets import PeerClosed, recv_exact
from pyozone.datanode.datastream.tls import HANDSHAKE_TIMEOUT_S, DatastreamTls
from pyozone.datanode.datastream.write import ChainWriter
from pyozone.datanode.xceiver.dispatcher import Dispatcher
from pyozone.protocol import datastream as ds

log = logging.getLogger(__name__)


class DatastreamServer:
    def __init__(
        self,
        dispatcher: Dispatcher,
        host: str,
        port: int,
        timeout_s: float,
        tls: TlsStore | None = None,
        handshake_timeout_s: float = HANDSHAKE_TIMEOUT_S,
    ) -> None:
        """`timeout_s`: a peer that sends or takes nothing this long has failed (its connection is cut).
        `tls`: the datanode's certificate; every connection is then mutual TLS."""
        self.dispatcher = dispatcher
        self.timeout_s = timeout_s
        self._tls = DatastreamTls(tls, min(handshake_timeout_s, timeout_s)) if tls is not None else None
        self._address = (host, port)
        self._listener: socket.socket | None = None
        self._accepting: threading.Thread | None = None
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopped = False

    def start(self) -> int:
        """Binds and listens; returns the port bound (port 0 picks a free one)."""
        listener = socket.create_server(self._address, backlog=128, reuse_port=False)
        self._listener = listener
        self._accepting = threading.Thread(target=self._accept, name="datastream-accept", daemon=True)
        self._accepting.start()
        return int(listener.getsockname()[1])

    def stop(self) -> None:
        """Stops accepting and cuts every connection (a writer's upstream sees the chain break)."""
        self._stopped = True
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes accept()
            self._listener.close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            _cut(conn)
        if self._accepting is not None:
            self._accepting.join(5)

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._stopped:
            try:
                conn, peer = self._listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.settimeout(self.timeout_s)
            with self._lock:
                self._connections.add(conn)
            threading.Thread(
                target=self._serve, args=(conn, f"{peer[0]}:{peer[1]}"), name="datastream", daemon=True
            ).start()

    def track(self, conn: socket.socket) -> Callable[[], None]:
        """Cuts `conn` too when the server stops (a member's connection to the next); returns the untrack."""
        with self._lock:
            self._connections.add(conn)
        return lambda: self._untrack(conn)

    def _untrack(self, conn: socket.socket) -> None:
        with self._lock:
            self._connections.discard(conn)

    def _retrack(self, plain: socket.socket, tls: socket.socket) -> None:
        """Tracks a connection's TLS socket in place of the plain one it took over."""
        with self._lock:
            self._connections.discard(plain)
            self._connections.add(tls)

    def _serve(self, conn: socket.socket, peer: str) -> None:
        op: ds.Op | None = None  # a reader is answered in read replies, anyone else in acks

        def refuse(result: int, message: str) -> None:
            if op is ds.Op.READ:
                _answer(conn, ds.encode_read_reply(result, 0, message))
            else:
                _answer(conn, ds.encode_ack(result, 0, 0, message))

        try:
            if self._tls is not None:
                plain, conn = conn, self._tls.wrap_accepted(conn)  # the descriptor moves to the TLS socket
                self._retrack(plain, conn)
                try:
                    conn.handshake(self._tls.handshake_timeout_s)
                except OSError as e:
                    log.info("datastream from %s: TLS handshake refused: %s", peer, e)
                    return
            op, length = ds.decode_preamble(recv_exact(conn, ds.PREAMBLE.size, at_frame_start=True))
            header = ds.decode_header(op, recv_exact(conn, length))
            if isinstance(header, ds.WriteHeader):
                ChainWriter(conn, header, self.dispatcher, self.timeout_s, self.track, self._tls).run()
            else:
                serve_reads(conn, header, self.dispatcher.containers, self.dispatcher.check_block_token)
        except ds.StreamProtocolError as e:
            log.warning("datastream from %s refused: %s", peer, e)
            refuse(ds.MALFORMED_REQUEST, str(e))
        except PeerClosed as e:
            if not e.clean:  # a writer that only half-closed still hears why
                log.warning("datastream from %s: %s", peer, e)
                refuse(ds.MALFORMED_REQUEST, "the header is truncated")
        except OSError as e:
            log.info("datastream from %s ended: %s", peer, e)
        except Exception:
            log.exception("datastream from %s failed", peer)
            refuse(ds.CONTAINER_INTERNAL_ERROR, "internal error; see its log")
        finally:
            self._untrack(conn)
            conn.close()


def _answer(conn: socket.socket, frame: bytes) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(frame)


def _cut(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)
