"""ChainWriter: one block's datastream on one member of the chain (write pipeline V2).

Each packet is received into this connection's buffer, sent on to the next member from that same buffer,
then written into the block file from it: no copy in Python. Every member checks the packet against its
checksums before it writes it (HDFS checks at the last member only): a member that wrote unchecked bytes
would hold what another refused, and a putBlock would then commit on some replicas and not on others.
The check costs CPU per byte on every member (CRC32/CRC32C run in C, at GB/s), and lets every member keep
the checksums it verified, so the putBlock reads nothing back.

Acks flow back pipelined: a member acks a packet once it wrote the packet and the next member acked it
(a relay thread reads the next member's acks while the main thread goes on receiving). The last member
acks as it writes.

With block tokens required each member checks the header's token (WRITE on the block) before it opens
anything, and every packet against the token's maxLength before it takes it; the header goes on down the
chain with the client's token. A member forwards only to other
members of the header's pipeline, each once, at the datastream address SCM gave for it
(Dispatcher.check_chain): a chain naming anything else is refused (GROUP_MISMATCH) before any
connection, with an answer that says nothing about what it named. Over mutual TLS a member that receives
the stream from a client (a certificate that is no datanode's) also refuses a chain that leaves a member
out, so every member holds the bytes the putBlock commits. Writing opens the container as a
client's first write does (created if SCM allocated it on this pipeline,
refused unless OPEN): every member checks for itself, since no leader orders the data. The block's
putBlock is not part of the stream: the client sends it through the pipeline log once the END packet is
acked, so BCSIDs and container close keep V1's order. A stream that ends in any other way removes the
block file it wrote, unless a putBlock committed some of it.

An EC cell stream (header.replica_index > 0, an EC pipeline) opens that replica index of the container,
created as the dispatcher creates an EC replica (allocations.py), and is refused if it names a chain (each
index goes straight to its own datanode); its putBlock comes straight to this datanode over RPC, as EC
pipelines have no log.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
import threading
from collections.abc import Callable

from pyozone.common.tls import ssl_peer_identity
from pyozone.datanode.datastream.sockets import PeerClosed, recv_exact, recv_into_exact, send_all
from pyozone.datanode.datastream.tls import DatastreamTls
from pyozone.datanode.storage import ChecksumData, ChunkInfo, ContainerError, KeyValueContainer
from pyozone.datanode.traffic import TRAFFIC
from pyozone.datanode.xceiver.dispatcher import Dispatcher, Refused
from pyozone.hdds.checksum import checksum_size
from pyozone.hdds.ids import BlockID
from pyozone.hdds.security.block_token import AccessMode, BlockTokenError, BlockTokenIdentifier, check_length
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol import datastream as ds

log = logging.getLogger(__name__)


ACK_GRACE_S = 1.0
"""After a failed send to the next member, how long its refusal gets to arrive: a member that refuses a
packet (its container closed, its disk full) acks why and closes, which fails the sends after it."""


DISCARD_DELAY_S = 5.0
"""How long an aborted stream's block file waits before it is removed: a putBlock already in the pipeline
log reaches every member in milliseconds; one later than this fails the pipeline, never data."""


_CHECKSUM_MISMATCH = ds.result_number("CHECKSUM_MISMATCH")


class _ChainBroken(Exception):
    """The stream failed; `ack` is what goes back up the chain (None: the relay already sent it)."""

    def __init__(self, ack: bytes | None) -> None:
        super().__init__()
        self.ack = ack


class ChainWriter:
    def __init__(
        self,
        upstream: socket.socket,
        header: ds.WriteHeader,
        dispatcher: Dispatcher,
        timeout_s: float,
        track: Callable[[socket.socket], Callable[[], None]],
        tls: DatastreamTls | None = None,
    ) -> None:
        """`tls`: the port's TLS; the next member of the chain is then reached over mutual TLS."""
        self.upstream = upstream
        self.header = header
        self.dispatcher = dispatcher
        self.timeout_s = timeout_s
        self.block_id = BlockID(header.container_id, header.local_id)
        self._track = track
        self._tls = tls
        self._send_lock = threading.Lock()
        self._progress = threading.Condition()
        self._written = 0  # bytes of the block written here
        self._failed = False
        self._ended = False  # END was received and passed on
        self._forwarded = 0  # packets (END included) sent to the next member
        self._relay_done = threading.Event()
        self._buffer = bytearray()
        self._packets = 0
        self._token: BlockTokenIdentifier | None = None  # the header's, when tokens are required

    def run(self) -> None:
        container: KeyValueContainer | None = None
        downstream: socket.socket | None = None
        relay: threading.Thread | None = None
        ended = False
        try:
            container = self._open()
            downstream = self._connect()
            if downstream is not None:
                relay = threading.Thread(target=self._relay, args=(downstream,), name="datastream-acks")
                relay.daemon = True
                relay.start()
            ended = self._receive(container, downstream)
        except _ChainBroken as e:
            self._fail(e.ack)
        except PeerClosed as e:
            log.info("datastream of %s ended before its END packet: %s", self.block_id, e)
            if not e.clean:
                self._fail(ds.encode_ack(ds.MALFORMED_REQUEST, self._written, 0, "a packet is truncated"))
        except OSError as e:
            log.info("datastream of %s broke: %s", self.block_id, e)
            self._fail(None)
        finally:
            if downstream is not None:
                if not ended:
                    _cut(downstream)
                if relay is not None:
                    relay.join(self.timeout_s)
                downstream.close()
            if (not ended or self._failed) and container is not None:
                self._discard_later(container)

    def _discard_later(self, container: KeyValueContainer) -> None:
        """Removes the block file unless a putBlock commits it in the meantime: a putBlock of the data
        flushed so far may be in the pipeline log still, and a member that removed the file first would
        refuse it where the leader succeeded, and fail the pipeline."""

        def discard() -> None:
            try:
                freed = container.discard_uncommitted(self.block_id.local_id)
            except Exception:  # the datanode is stopping: the next start removes it (discard_orphans)
                log.debug("datastream of %s: removing its file failed", self.block_id, exc_info=True)
                return
            if freed:
                log.info("datastream of %s aborted: removed %d uncommitted bytes", self.block_id, freed)

        timer = threading.Timer(DISCARD_DELAY_S, discard)
        timer.daemon = True
        timer.start()

    # ------------------------------------------------------------------ setting up
    def _open(self) -> KeyValueContainer:
        header = self.header
        try:  # every member checks the client's token for itself: no leader vouches for the data
            self._token = self.dispatcher.check_block_token(header.token, self.block_id, AccessMode.WRITE)
        except Refused as e:
            raise _ChainBroken(ds.encode_ack(e.result, 0, 0, str(e))) from None
        if header.replica_index > 0 and header.chain:  # each index has its own datanode: nothing to relay
            why = f"an EC cell stream (replica index {header.replica_index}) names a chain"
            raise _ChainBroken(ds.encode_ack(ds.MALFORMED_REQUEST, 0, 0, why))
        from_client = header.replica_index == 0 and _from_client(self.upstream)
        try:  # before anything is opened or reached: the chain goes only to the pipeline's members
            self.dispatcher.check_chain(header.pipeline_id, header.chain, from_client)
        except Refused as e:
            raise _ChainBroken(ds.encode_ack(e.result, 0, 0, str(e))) from None
        try:
            return self.dispatcher.writable(header.container_id, header.pipeline_id, header.replica_index)
        except ContainerError as e:
            raise _ChainBroken(ds.encode_ack(ds.result_number(e.result.value), 0, 0, str(e))) from None
        except ValueError as e:  # an id out of range (ProtocolError)
            raise _ChainBroken(ds.encode_ack(ds.MALFORMED_REQUEST, 0, 0, str(e))) from None

    def _connect(self) -> socket.socket | None:
        if not self.header.chain:
            return None
        hop = self.header.chain[0]
        try:
            conn = socket.create_connection((hop.host, hop.port), timeout=self.timeout_s)
        except OSError as e:
            raise _ChainBroken(
                ds.encode_ack(ds.IO_EXCEPTION, 0, 1, f"cannot reach {hop.uuid} at {hop.address}: {e}")
            ) from None
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._tls is not None:
            try:
                conn = self._tls.connect(conn, hop.host)  # its certificate must name hop.host
            except OSError as e:
                raise _ChainBroken(
                    ds.encode_ack(ds.IO_EXCEPTION, 0, 1, f"TLS with {hop.uuid} at {hop.address}: {e}")
                ) from None
        untrack = self._track(conn)
        try:
            conn.sendall(ds.encode_header(self.header.forwarded()))
        except OSError as e:
            untrack()
            conn.close()
            raise _ChainBroken(
                ds.encode_ack(ds.IO_EXCEPTION, 0, 1, f"{hop.uuid} at {hop.address}: {e}")
            ) from None
        return conn

    # ------------------------------------------------------------------ the packets
    def _receive(self, container: KeyValueContainer, downstream: socket.socket | None) -> bool:
        """Receives, forwards and writes packets until END; True once END was passed on (and acked here,
        for the last member)."""
        header = self.header
        size = checksum_size(header.checksum_type)
        while True:
            try:
                frame = recv_exact(self.upstream, ds.PACKET.size, at_frame_start=True)
            except TimeoutError:  # the writer paused: not a member's failure, so no member is blamed
                idle = f"no packet for {self.timeout_s:g}s: the stream is closed; write the rest on a new one"
                raise _ChainBroken(
                    ds.encode_ack(ds.CONTAINER_INTERNAL_ERROR, self._written, 0, idle)
                ) from None
            try:
                packet = ds.decode_packet(frame, header, self._written)
            except ds.StreamProtocolError as e:
                raise _ChainBroken(ds.encode_ack(ds.MALFORMED_REQUEST, self._written, 0, str(e))) from None
            if self._token is not None:  # before the packet is received, forwarded or written
                try:
                    check_length(self._token, packet.offset + packet.length, "a datastream packet")
                except BlockTokenError as e:
                    code = ds.BLOCK_TOKEN_VERIFICATION_FAILED
                    raise _ChainBroken(ds.encode_ack(code, self._written, 0, str(e))) from None
            sums = recv_exact(self.upstream, packet.checksum_bytes) if packet.checksum_bytes else b""
            data = self._view(packet.length)
            recv_into_exact(self.upstream, data)
            if packet.kind is ds.PacketKind.END:
                self._ended = True  # before the next member can ack it and close
            if downstream is not None:
                self._forward(downstream, frame, sums, data)
            if packet.kind is ds.PacketKind.END:
                if downstream is None:
                    self._send(ds.encode_ack(ds.SUCCESS, self._written))
                return True
            self._packets += 1
            chunk = ChunkInfo(
                f"{header.local_id}_chunk_{self._packets}",
                packet.offset,
                packet.length,
                ChecksumData(
                    header.checksum_type,
                    header.bytes_per_checksum,
                    tuple(sums[i : i + size] for i in range(0, len(sums), size)) if size else (),
                ),
            )
            try:
                self.dispatcher.write(container, self.block_id, chunk, data, streamed=True)
            except ContainerError as e:
                code = ds.result_number(e.result.value)
                raise _ChainBroken(ds.encode_ack(code, self._written, 0, str(e))) from None
            with self._progress:
                self._written += packet.length
                self._progress.notify_all()
            if downstream is None:
                self._send(ds.encode_ack(ds.SUCCESS, self._written))

    def _view(self, length: int) -> memoryview:
        """This connection's receive buffer, grown to the largest packet so far."""
        if len(self._buffer) < length:
            self._buffer = bytearray(length)
        return memoryview(self._buffer)[:length]

    def _forward(self, downstream: socket.socket, frame: bytes, sums: bytes, data: memoryview) -> None:
        try:
            send_all(downstream, frame, sums, data)
            TRAFFIC.sent(self.header.chain[0].uuid, "V2", len(frame) + len(sums) + len(data))
            self._forwarded += 1
        except OSError as e:
            if self._relay_done.wait(ACK_GRACE_S) and self._failed:
                raise _ChainBroken(None) from None  # the next member's refusal went up: that is why
            hop = self.header.chain[0]
            raise _ChainBroken(
                ds.encode_ack(ds.IO_EXCEPTION, self._written, 1, f"{hop.uuid} at {hop.address}: {e}")
            ) from None

    # ------------------------------------------------------------------ acks
    def _relay(self, downstream: socket.socket) -> None:
        try:
            self._relay_acks(downstream)
        finally:
            self._relay_done.set()

    def _relay_acks(self, downstream: socket.socket) -> None:
        """Passes the next member's acks up once this member wrote as far; a failure goes up as it is,
        with its member count one further from the sender. The next member closing before it acked every
        packet it was sent (END included) has failed."""
        hop, acks = self.header.chain[0], 0
        try:
            while True:
                ack, length = ds.decode_ack_frame(recv_exact(downstream, ds.ACK.size, at_frame_start=True))
                message = recv_exact(downstream, length).decode("utf-8", "replace") if length else ""
                if not ack.ok:
                    if ack.result == _CHECKSUM_MISMATCH and self._own_verdict(ack.acked):
                        return  # the packet's fault, refused here too: this member's refusal went up
                    self._fail(ds.encode_ack(ack.result, ack.acked, ack.member + 1, message))
                    return
                acked = ack.acked
                with self._progress:
                    self._progress.wait_for(lambda a=acked: self._written >= a or self._failed)
                    if self._failed:
                        return
                self._send(ds.encode_ack(ds.SUCCESS, ack.acked))
                acks += 1
        except PeerClosed as e:
            if e.clean and self._ended and acks >= self._forwarded:
                return  # it acked END and closed: the stream is done
            why = "closed its stream" if e.clean else str(e)
        except (OSError, ds.StreamProtocolError) as e:
            why = str(e)
        if not self._failed:
            self._fail(
                ds.encode_ack(ds.IO_EXCEPTION, self._written, 1, f"{hop.uuid} at {hop.address}: {why}")
            )

    def _own_verdict(self, offset: int) -> bool:
        """The next member refused the packet at `offset` for its checksums. This member forwarded that
        packet before verifying it and verifies it now: waits for that verdict, True when it refused the
        packet too (its own refusal, naming the sender's bytes and no member, went up), so a bad packet
        never gets a healthy member excluded."""
        with self._progress:
            self._progress.wait_for(lambda: self._failed or self._written > offset, self.timeout_s)
            return self._failed

    def _send(self, frame: bytes) -> None:
        with self._send_lock:
            self.upstream.sendall(frame)

    def _fail(self, ack: bytes | None) -> None:
        """Sends the failure up once (later ones are its consequences) and stops the stream."""
        with self._progress:
            if self._failed:
                return
            self._failed = True
            self._progress.notify_all()
        if ack is not None:
            with contextlib.suppress(OSError):
                self._send(ack)
        _cut(self.upstream)


def _from_client(upstream: socket.socket) -> bool:
    """True when the stream's sender is known to be no datanode: over mutual TLS, its certificate is not
    a datanode's. On the plaintext port nothing tells a client from a member forwarding the stream."""
    if not isinstance(upstream, ssl.SSLSocket):
        return False
    return ssl_peer_identity(upstream).role is not CertRole.DATANODE


def _cut(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)
