"""What a key's blocks hold on the datanodes, checked before a commit is charged to a space quota (issue 28,
defect 2).

Ozone's OM charges a bucket and its volume with the lengths the client commits: a client that stored 8 MiB
and declared 1 byte was charged 1 byte. OM bounds each block by what it allocated (its block token's
maxLength, which datanodes enforce; core.written_blocks refuses more), and where a space quota is in force
on the key's bucket or volume it asks a datanode holding each replicated block for its committed length
(the container protocol's GetCommittedBlockLength, with a READ block token OM signs for itself) and
refuses a commit whose declared length is not what is stored (INVALID_BLOCK_LIST); the open key is then
abandoned and its blocks go to deletion. That costs one datanode round trip per block, so OM pays it only
where a quota makes the lengths matter (docs/differences.md).

The client commits only once every replica acknowledged a block (KeyOutputStream), so any replica that
answers holds the committed length: one holding less (it lags, or lost the container) is passed over for the
next, one holding more refuses the commit. A datanode that cannot be reached is passed over too; when none
answers, the commit is refused as DATANODE_UNAVAILABLE and the open key kept, so the client may retry it.

EC block groups are not checked: after a failure an index may rightly hold stripes past the group's
committed length (client/ec_output.py), so no replica's length tells what the group holds.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import grpc

from pyozone.common.grpc_client import GrpcClient
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import BlockID
from pyozone.hdds.limits import MAX_DATA_MESSAGE_BYTES
from pyozone.hdds.security.users import login_user
from pyozone.hdds.security.x509 import CertRole
from pyozone.hdds.states import ReplicationType
from pyozone.om.block_tokens import READ, BlockTokenIssuer
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import key_key
from pyozone.om.records import KeyBlock
from pyozone.om.scm import scm_call
from pyozone.proto import DatanodeClientProtocol_pb2 as data_pb2
from pyozone.proto import DatanodeClientProtocol_pb2_grpc as data_grpc
from pyozone.protocol.data import committed_length_from_proto, committed_length_request

DATA_PORT = "STANDALONE"
"""The port of a datanode's xceiver service, as the datanode registers it."""
TIMEOUT_S = 10.0
"""How long OM waits for one datanode's answer before asking the next replica."""


class NoAnswer(Exception):
    """One datanode did not answer with the block's length (unreachable, or it refused)."""


class DatanodeLengthClient(GrpcClient):
    """GetCommittedBlockLength on one datanode: a send() stream of one request."""

    PEER = CertRole.DATANODE

    def __init__(self, address: HostPort, tls: TlsStore | None) -> None:
        super().__init__(
            address, data_grpc.XceiverClientProtocolServiceStub, MAX_DATA_MESSAGE_BYTES, TIMEOUT_S, tls
        )

    def committed_length(self, request: data_pb2.ContainerCommandRequestProto) -> int:
        return self._call(self._one, request, committed_length_from_proto)

    def _one(self, request: data_pb2.ContainerCommandRequestProto, **options: object) -> object:
        """The first answer on a stream of one request (none: an empty answer, which names no length)."""
        call = self._stub.send(iter([request]), **options)
        try:
            return next(call, data_pb2.ContainerCommandResponseProto())
        finally:
            call.cancel()

    def _error(self, e: grpc.RpcError) -> Exception:
        return NoAnswer(f"{self.address}: {e.code().name}: {e.details()}")  # type: ignore[attr-defined]

    def _malformed(self, e: ProtocolError) -> Exception:
        return NoAnswer(f"{self.address}: {e}")


class StoredLengths:
    def __init__(
        self, om: OzoneManager, tls: TlsStore | None, tokens: BlockTokenIssuer | None, owner: str = ""
    ) -> None:
        """`tokens`: READ tokens for OM's own requests (hdds.block.token.enabled), else None; `owner`: the
        name they carry (default: the login user)."""
        self.om = om
        self.tls = tls
        self.tokens = tokens
        self.owner = owner or login_user()
        self._clients: dict[str, DatanodeLengthClient] = {}
        self._lock = threading.Lock()

    def needed(self, volume: str, bucket: str) -> bool:
        """Whether a space quota is in force on the bucket or its volume (a missing one: the commit says)."""
        try:
            return bool(
                self.om.info_bucket(volume, bucket).quota_bytes or self.om.info_volume(volume).quota_bytes
            )
        except OMException:
            return False

    def verify(self, volume: str, bucket: str, key: str, client_id: int, blocks: Sequence[KeyBlock]) -> None:
        """Before the commit of an open key (a key or a multipart part) that `needed` a check: each
        replicated block allocated to it must hold on the datanodes what `blocks` declare (blocking: run it
        off the event loop). A block not allocated to it is left to the commit, which refuses it; so is a
        repeated commit of a session that committed (answered as the first was)."""
        if self.om.committed_session(volume, bucket, key, client_id) is not None:
            return
        opened = self.om.open_key_record(volume, bucket, key, client_id)
        if opened.replication.type is ReplicationType.EC:
            return
        allocated = {b.block_id for b in opened.blocks}
        for i, block in enumerate(blocks):
            if block.length == 0 or block.block_id not in allocated:
                continue
            try:
                self._check(block, f"locations[{i}]")
            except OMException as e:
                if e.code is OMResultCode.INVALID_BLOCK_LIST:
                    self._abandon(volume, bucket, key, client_id, e.message)
                raise

    def _abandon(self, volume: str, bucket: str, key: str, client_id: int, why: str) -> None:
        name = key_key(volume, bucket, key)
        with self.om.locks.key(name):
            try:
                opened = self.om.open_key_record(volume, bucket, key, client_id)
            except OMException:
                return  # committed or abandoned meanwhile
            self.om.abandon(opened, client_id, f"commit of {name} refused: {why}")

    def _check(self, block: KeyBlock, field: str) -> None:
        cid = block.block_id.container_id
        with scm_call(f"locating container {cid}", OMResultCode.SCM_UNAVAILABLE):
            location = self.om.locations.get(cid)
        datanodes = [r.datanode for r in location.replicas] or list(location.members.values())
        shorter: list[str] = []
        unanswered: list[str] = []
        for datanode in datanodes:
            try:
                stored = self._ask(datanode, block.block_id)
            except NoAnswer as e:
                unanswered.append(str(e))
                continue
            if stored == block.length:
                return
            if stored > block.length:
                raise OMException(
                    OMResultCode.INVALID_BLOCK_LIST,
                    f"{field}: block {block.block_id} holds {stored} bytes on datanode {datanode.uuid}, "
                    f"not the {block.length} the commit declares",
                )
            shorter.append(f"{datanode.uuid} holds {stored}")
        if shorter:
            raise OMException(
                OMResultCode.INVALID_BLOCK_LIST,
                f"{field}: no datanode holds the {block.length} bytes the commit declares of block "
                f"{block.block_id} ({'; '.join(shorter)})",
            )
        raise OMException(
            OMResultCode.DATANODE_UNAVAILABLE,
            f"{field}: no datanode answered for block {block.block_id} "
            f"({'; '.join(unanswered) or 'SCM knows none'})",
        )

    def _ask(self, datanode: DatanodeDetails, block: BlockID) -> int:
        port = datanode.port(DATA_PORT)
        if not port:
            raise NoAnswer(f"{datanode.uuid}: no {DATA_PORT} port")
        token = self.tokens.block_token(block, self.owner, READ) if self.tokens is not None else ""
        request = committed_length_request(block, str(datanode.uuid), token)
        return self._client(HostPort(datanode.ip_address or datanode.hostname, port)).committed_length(
            request
        )

    def _client(self, address: HostPort) -> DatanodeLengthClient:
        with self._lock:
            client = self._clients.get(str(address))
            if client is None:
                client = self._clients[str(address)] = DatanodeLengthClient(address, self.tls)
            return client

    def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()
