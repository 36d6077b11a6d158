"""Acceptance of issue 15's block tokens (item 3) on a cluster made by `pyozone cluster up --secure`
(hdds.block.token.enabled, mutual TLS): a datanode refuses a read and a write that carry no token, a forged
token, an expired token or a token for another block, each with BLOCK_TOKEN_VERIFICATION_FAILED naming why,
over gRPC (xceiver) and over the datastream port; a token signed with SCM's real secret key (fetched as OM
fetches it) for the block is taken; and the client, carrying OM's tokens, writes and reads V1, V2 and EC
keys. Container operations (close, delete, list, read a container) need a container token, which only
datanodes sign: a user's certificate with no token, or with a block token, is refused them.
"""

from __future__ import annotations

import secrets
import socket
import time
from collections.abc import Iterator

import pytest

from pyozone import rpc
from pyozone.client import OzoneClient
from pyozone.common.net import scm_security_address
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.config.site import load_configuration
from pyozone.framework.scm_security import SCMSecurityClient
from pyozone.hdds.checksum import ChecksumType, compute
from pyozone.hdds.ids import BlockID
from pyozone.hdds.limits import MAX_DATA_MESSAGE_BYTES
from pyozone.hdds.locations import DatanodeRef, KeyLocation
from pyozone.hdds.om_views import KeyInfo
from pyozone.hdds.security.block_token import AccessMode, BlockTokenIdentifier
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import datastream as ds
from pyozone.protocol.tokens import encode_token, issue_block_token
from tests.e2e.security.secure_cluster import SecureCluster, secure_cluster

VOL, BUCKET, EC_BUCKET = "tokens", "bucket", "ecbucket"
KiB, MiB = 1024, 1024 * 1024
REASONS = ("missing", "bad signature", "expired", "for another block")
ALL = frozenset({AccessMode.READ, AccessMode.WRITE})
OVERRIDES: dict[str, str] = {}


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SecureCluster]:
    with secure_cluster(request, tmp_path_factory, "tokens", overrides=OVERRIDES) as c:
        yield c


@pytest.fixture(scope="module")
def tls(cluster: SecureCluster) -> TlsStore | None:
    """The administrator's certificate when the cluster's ports are mutual TLS, else None (plaintext)."""
    conf = load_configuration(cluster.conf_dir, {})
    return cluster.admin_tls if conf.get("hdds.grpc.tls.enabled") else None


@pytest.fixture(scope="module")
def client(cluster: SecureCluster) -> Iterator[OzoneClient]:
    with cluster.ozone_client() as c:
        c.create_volume(VOL)
        c.create_bucket(VOL, BUCKET)
        c.create_bucket(VOL, EC_BUCKET, "EC/XOR-2-1-512k")
        yield c


@pytest.fixture(scope="module")
def secret_key(cluster: SecureCluster) -> ManagedSecretKey:
    """SCM's current secret key, asked for as OM asks (with OM's certificate)."""
    conf = load_configuration(cluster.conf_dir, {})
    om_certificate = TlsStore(TlsPaths.under(cluster.data_dir / "om", conf))
    with SCMSecurityClient(scm_security_address(conf), om_certificate) as scm:
        return scm.get_current_secret_key()


@pytest.fixture(scope="module")
def block(client: OzoneClient) -> tuple[KeyLocation, bytes]:
    """A committed V1 block of an open container, as lookupKey gives it (with OM's READ token)."""
    data = secrets.token_bytes(100 * KiB)
    client.put_key(VOL, BUCKET, "one", data, datastream=False)
    [location] = client.key_info(VOL, BUCKET, "one").locations
    assert location.token, "OM gave no block token: hdds.block.token.enabled is off?"
    return location, data


@pytest.fixture(scope="module")
def other(client: OzoneClient) -> KeyLocation:
    client.put_key(VOL, BUCKET, "two", b"other bytes", datastream=False)
    [location] = client.key_info(VOL, BUCKET, "two").locations
    return location


def sign(
    key: ManagedSecretKey,
    block: BlockID,
    expiry_ms: int,
    modes: frozenset[AccessMode] = ALL,
    max_length: int = 4 * MiB,
) -> str:
    return encode_token(
        issue_block_token(BlockTokenIdentifier("mallory", block, expiry_ms, modes, max_length, key.id), key)
    )


def bad_tokens(key: ManagedSecretKey, target: BlockID, another: str) -> dict[str, str]:
    """The token each refusal is for: none; one signed with a key SCM never made that names SCM's key;
    one SCM's key signed that expired; a genuine one for another block."""
    now = int(time.time() * 1000)
    impostor = ManagedSecretKey(
        key.id, key.creation_ms, key.expiry_ms, key.algorithm, secrets.token_bytes(32)
    )
    return {
        "missing": "",
        "bad signature": sign(impostor, target, now + 3_600_000),
        "expired": sign(key, target, now - 1000),
        "for another block": another,
    }


def block_id(location: KeyLocation) -> BlockID:
    return BlockID(location.container_id, location.local_id)


# ------------------------------------------------------------------ the STANDALONE port (xceiver)
def xceiver(tls: TlsStore | None, datanode: DatanodeRef, request: pb.ContainerCommandRequestProto):
    with rpc.SyncChannel(datanode.address, rpc.ChannelSettings(MAX_DATA_MESSAGE_BYTES), tls) as channel:
        stub = rpc.Stub(channel, rpc.service(pb, "XceiverClientProtocolService"))
        [answer] = list(stub.send(iter([request]), timeout=30))
    return answer


def get_block(location: KeyLocation, token: str) -> pb.ContainerCommandRequestProto:
    proto = pb.DatanodeBlockID(containerID=location.container_id, localID=location.local_id)
    return pb.ContainerCommandRequestProto(
        cmdType=pb.GetBlock, containerID=location.container_id, pipelineID=location.pipeline.id,
        encodedToken=token, getBlock=pb.GetBlockRequestProto(blockID=proto),
    )  # fmt: skip


def write_chunk(location: KeyLocation, target: BlockID, token: str) -> pb.ContainerCommandRequestProto:
    data = b"written with a hand-made token"
    sums = compute(data, ChecksumType.CRC32, 16 * KiB)
    sums_proto = pb.ChecksumData(type=pb.CRC32, bytesPerChecksum=16 * KiB, checksums=list(sums.checksums))
    name = f"{target.local_id}_chunk_1"
    chunk = pb.ChunkInfo(chunkName=name, offset=0, len=len(data), checksumData=sums_proto)
    proto = pb.DatanodeBlockID(containerID=target.container_id, localID=target.local_id)
    return pb.ContainerCommandRequestProto(
        cmdType=pb.WriteChunk, containerID=target.container_id, pipelineID=location.pipeline.id,
        encodedToken=token, writeChunk=pb.WriteChunkRequestProto(blockID=proto, chunkData=chunk, data=data),
    )  # fmt: skip


def refused(answer: pb.ContainerCommandResponseProto | tuple[int, str]) -> str:
    result, message = answer if isinstance(answer, tuple) else (answer.result, answer.message)
    assert pb.Result.Name(result) == "BLOCK_TOKEN_VERIFICATION_FAILED", (pb.Result.Name(result), message)
    return message


def test_grpc_reads_need_a_token_for_the_block(
    tls: TlsStore | None, block: tuple[KeyLocation, bytes], other: KeyLocation, secret_key: ManagedSecretKey
) -> None:
    location, _ = block
    for datanode in location.pipeline.members:  # every replica checks for itself
        for reason, token in bad_tokens(secret_key, block_id(location), other.token).items():
            assert refused(xceiver(tls, datanode, get_block(location, token))).startswith(reason + ":")
        assert xceiver(tls, datanode, get_block(location, location.token)).result == pb.SUCCESS


def test_grpc_writes_need_a_write_token_for_the_block(
    tls: TlsStore | None, block: tuple[KeyLocation, bytes], secret_key: ManagedSecretKey
) -> None:
    location, _ = block
    leader = location.pipeline.leader()
    assert leader is not None
    target = BlockID(location.container_id, location.local_id + 1_000_000)
    later = int(time.time() * 1000) + 3_600_000
    for reason, token in bad_tokens(secret_key, target, sign(secret_key, block_id(location), later)).items():
        assert refused(xceiver(tls, leader, write_chunk(location, target, token))).startswith(reason + ":")
    assert refused(xceiver(tls, leader, write_chunk(location, target, location.token))).startswith(
        "for another block:"
    )
    read_only = sign(secret_key, target, later, frozenset({AccessMode.READ}))
    assert refused(xceiver(tls, leader, write_chunk(location, target, read_only))).startswith(
        "mode not granted"
    )
    answer = xceiver(tls, leader, write_chunk(location, target, sign(secret_key, target, later)))
    assert answer.result == pb.SUCCESS, answer.message  # SCM's key, the block, WRITE: taken


# ------------------------------------------------------------------ container operations
CONTAINER_BODIES = {
    pb.CloseContainer: {"closeContainer": pb.CloseContainerRequestProto()},
    pb.DeleteContainer: {"deleteContainer": pb.DeleteContainerRequestProto(forceDelete=True)},
    pb.ListBlock: {"listBlock": pb.ListBlockRequestProto(count=10)},
    pb.ReadContainer: {"readContainer": pb.ReadContainerRequestProto()},
}


def test_a_user_may_not_close_delete_or_list_a_container(
    tls: TlsStore | None, block: tuple[KeyLocation, bytes]
) -> None:
    """`cluster up --secure` sets hdds.container.token.enabled: the administrator's certificate (a user's)
    reaches every datanode's xceiver port, but no container operation runs without a container token."""
    location, _ = block
    for datanode in location.pipeline.members:
        for kind, body in CONTAINER_BODIES.items():
            for token, reason in (("", "missing:"), (location.token, "wrong kind:")):
                request = pb.ContainerCommandRequestProto(
                    cmdType=kind, containerID=location.container_id, encodedToken=token, **body
                )
                assert refused(xceiver(tls, datanode, request)).startswith(reason), pb.Type.Name(kind)
        assert xceiver(tls, datanode, get_block(location, location.token)).result == pb.SUCCESS


# ------------------------------------------------------------------ the datastream port
def datastream(tls: TlsStore | None, datanode: DatanodeRef) -> socket.socket:
    assert datanode.datastream_port is not None, "the datanode serves no datastream port"
    host = datanode.ip or datanode.host
    raw = socket.create_connection((host, datanode.datastream_port), timeout=30)
    return tls.client_context().wrap_socket(raw, server_hostname=host) if tls is not None else raw


def receive(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        got = sock.recv(n - len(out))
        if not got:
            raise ConnectionError(f"closed after {len(out)} of {n} bytes")
        out += got
    return out


def stream_read(
    tls: TlsStore | None, datanode: DatanodeRef, location: KeyLocation, token: str
) -> tuple[int, str]:
    header = ds.ReadHeader(
        location.container_id, location.local_id, location.bcsid, 0, location.length, token
    )
    with datastream(tls, datanode) as sock:
        sock.sendall(ds.encode_header(header))
        result, length, message = ds.decode_read_reply(receive(sock, ds.READ_REPLY.size))
        text = receive(sock, message).decode() if message else ""
        if result == ds.SUCCESS:
            assert len(receive(sock, length)) == location.length
    return result, text


def stream_write(
    tls: TlsStore | None, datanode: DatanodeRef, location: KeyLocation, target: BlockID, token: str
) -> tuple[int, str]:
    header = ds.WriteHeader(
        target.container_id, target.local_id, location.pipeline.id, ChecksumType.NONE, 16 * KiB, (), 0, token
    )
    with datastream(tls, datanode) as sock:
        sock.sendall(ds.encode_header(header))
        ack, length = ds.decode_ack_frame(receive(sock, ds.ACK.size))
        return ack.result, receive(sock, length).decode() if length else ""


def test_datastream_reads_need_a_token_for_the_block(
    tls: TlsStore | None, block: tuple[KeyLocation, bytes], other: KeyLocation, secret_key: ManagedSecretKey
) -> None:
    location, _ = block
    for datanode in location.pipeline.members:
        for reason, token in bad_tokens(secret_key, block_id(location), other.token).items():
            assert refused(stream_read(tls, datanode, location, token)).startswith(reason + ":")
        assert stream_read(tls, datanode, location, location.token)[0] == ds.SUCCESS


def test_datastream_writes_need_a_write_token_for_the_block(
    tls: TlsStore | None, block: tuple[KeyLocation, bytes], secret_key: ManagedSecretKey
) -> None:
    location, _ = block
    target = BlockID(location.container_id, location.local_id + 2_000_000)
    later = int(time.time() * 1000) + 3_600_000
    for datanode in location.pipeline.members:  # no leader vouches for a stream: each member checks
        for reason, token in bad_tokens(
            secret_key, target, sign(secret_key, block_id(location), later)
        ).items():
            assert refused(stream_write(tls, datanode, location, target, token)).startswith(reason + ":")
        read_only = stream_write(tls, datanode, location, target, location.token)
        assert refused(read_only).startswith("for another block:")


# ------------------------------------------------------------------ the client, with OM's tokens
@pytest.mark.parametrize(
    ("bucket", "size", "datastream", "path"),
    [(BUCKET, 300 * KiB, False, "V1"), (BUCKET, 6 * MiB, True, "V2"), (EC_BUCKET, 2 * MiB + 7, None, "")],
    ids=["V1", "V2", "EC"],
)
def test_the_client_writes_and_reads_with_oms_tokens(
    client: OzoneClient, bucket: str, size: int, datastream: bool | None, path: str
) -> None:
    data = secrets.token_bytes(size)
    name = f"valid-{bucket}-{size}"
    written: KeyInfo = client.put_key(VOL, bucket, name, data, datastream=datastream)
    if path:
        assert written.write_path == path
    with client.read_key(VOL, bucket, name) as reader:
        assert reader.readall() == data
    locations = client.key_info(VOL, bucket, name).locations
    assert locations and all(loc.token for loc in locations)


# ------------------------------------------------------------------ issue 28: what a token does not allow
@pytest.fixture(scope="module")
def mallory(cluster: SecureCluster, tls: TlsStore | None) -> TlsStore | None:
    """Another user's certificate (issued by the administrator) when the ports are mutual TLS."""
    if tls is None:
        return None
    certs = cluster.user_conf("mallory").parent / "certs"
    return TlsStore(TlsPaths(certs / "private.pem", certs / "certificate.crt", certs / "ca.crt"))


def put_block(
    location: KeyLocation, target: BlockID, token: str, bcsid: int
) -> pb.ContainerCommandRequestProto:
    """A direct putBlock (no pipelineID) of `target` claiming BCSID `bcsid`."""
    proto = pb.DatanodeBlockID(
        containerID=target.container_id, localID=target.local_id, blockCommitSequenceId=bcsid
    )
    return pb.ContainerCommandRequestProto(
        cmdType=pb.PutBlock, containerID=target.container_id, encodedToken=token,
        putBlock=pb.PutBlockRequestProto(blockData=pb.BlockData(blockID=proto), eof=True),
    )  # fmt: skip


def test_a_write_token_does_not_let_a_user_set_a_containers_bcsid(
    mallory: TlsStore | None,
    block: tuple[KeyLocation, bytes],
    secret_key: ManagedSecretKey,
    client: OzoneClient,
) -> None:
    """Issue 28 defect 1: with a write token for a block of her own in container C, a user's direct
    putBlock claiming BCSID 2^62 to each member of C's pipeline is refused; another user's key written
    through the pipeline afterwards reads back."""
    location, _ = block
    target = BlockID(location.container_id, location.local_id + 3_000_000)
    token = sign(secret_key, target, int(time.time() * 1000) + 3_600_000)
    for datanode in location.pipeline.members:
        answer = xceiver(mallory, datanode, put_block(location, target, token, 1 << 62))
        assert pb.Result.Name(answer.result) == "UNSUPPORTED_REQUEST", answer.message
    data = secrets.token_bytes(300 * KiB)
    client.put_key(VOL, BUCKET, "after-the-attack", data, datastream=False)
    with client.read_key(VOL, BUCKET, "after-the-attack") as reader:
        assert reader.readall() == data


def test_a_write_beyond_the_tokens_max_length_is_refused(
    mallory: TlsStore | None, block: tuple[KeyLocation, bytes], secret_key: ManagedSecretKey
) -> None:
    """Issue 28 defect 2 (the datanode's half): a token for 16 KiB of a block does not let a user store
    more, through the pipeline's leader or over the datastream port."""
    location, _ = block
    leader = location.pipeline.leader()
    assert leader is not None
    target = BlockID(location.container_id, location.local_id + 4_000_000)
    small = sign(secret_key, target, int(time.time() * 1000) + 3_600_000, max_length=16)
    message = refused(xceiver(mallory, leader, write_chunk(location, target, small)))
    assert (
        message.startswith("beyond maxLength: WriteChunk reaches byte 30 of ")
        and "allows 16 bytes" in message
    )
    others = tuple(  # a user's stream names every other member (the client's chain)
        ds.Hop(m.uuid, m.ip or m.host, m.datastream_port or 0)
        for m in location.pipeline.members
        if m != leader
    )
    header = ds.WriteHeader(
        target.container_id,
        target.local_id,
        location.pipeline.id,
        ChecksumType.NONE,
        16 * KiB,
        others,
        0,
        small,
    )
    with datastream(mallory, leader) as sock:
        sock.sendall(ds.encode_header(header) + ds.encode_packet(ds.PacketKind.DATA, 0, 32, 0) + bytes(32))
        ack, length = ds.decode_ack_frame(receive(sock, ds.ACK.size))
        text = receive(sock, length).decode() if length else ""
    assert refused((ack.result, text)).startswith("beyond maxLength: a datastream packet reaches byte 32")


def test_a_datastream_chain_reaches_only_the_pipelines_members(
    mallory: TlsStore | None, block: tuple[KeyLocation, bytes], secret_key: ManagedSecretKey
) -> None:
    """Issue 28 defect 5: a chain naming a socket outside the pipeline is refused before any connection,
    with nothing said about what it named."""
    location, _ = block
    first = location.pipeline.members[0]
    with socket.create_server(("127.0.0.1", 0)) as trap:
        trap.setblocking(False)
        hop = ds.Hop(location.pipeline.members[1].uuid, "127.0.0.1", trap.getsockname()[1])
        target = BlockID(location.container_id, location.local_id + 5_000_000)
        token = sign(secret_key, target, int(time.time() * 1000) + 3_600_000)
        header = ds.WriteHeader(
            target.container_id,
            target.local_id,
            location.pipeline.id,
            ChecksumType.NONE,
            16 * KiB,
            (hop,),
            0,
            token,
        )
        with datastream(mallory, first) as sock:
            sock.sendall(ds.encode_header(header))
            ack, length = ds.decode_ack_frame(receive(sock, ds.ACK.size))
            text = receive(sock, length).decode() if length else ""
        assert pb.Result.Name(ack.result) == "GROUP_MISMATCH" and "nothing was forwarded" in text, text
        assert str(hop.port) not in text
        with pytest.raises(BlockingIOError):
            trap.accept()
