"""Acceptance of issue 15's mutual TLS (items 2 and 5) on a cluster made by `pyozone cluster up --secure`:
at every port of every daemon a plaintext client, a self-signed certificate and a certificate from another
CA are refused during the handshake, while the administrator's certificate is served; keys written and read
through `pyozone sh` travel over TLS end to end (V1 pipelines, the V2 datastream chain); the tools
(`cluster status`, `admin`) speak TLS; a client without a certificate is told how to configure one. SCM's
internal protocols take their own callers only: the block protocol OM's certificate, the datanode protocol
each datanode's certificate for that datanode alone.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.cluster.layout import HOST
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.config.site import load_configuration
from pyozone.framework.scm_block import BLOCK_SERVICE
from pyozone.hdds.security import x509 as X
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb
from pyozone.proto import ScmBlockLocationProtocol_pb2 as block_pb
from pyozone.proto import ScmServerDatanodeHeartbeatProtocol_pb2 as dn_pb
from pyozone.proto import hdds_pb2
from pyozone.protocol.datastream import READ_REPLY, SUCCESS, ReadHeader, decode_read_reply, encode_header
from tests.e2e.cluster.cluster_helpers import MiB, all_running, file_sha256, random_file
from tests.e2e.security.secure_cluster import SecureCluster, Strangers, secure_cluster
from tests.rpc_probe import rpc_status

VOL, BUCKET = "mtls", "bucket"
DATANODE_SERVICE = rpc.service(dn_pb, "StorageContainerDatanodeProtocolService")


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SecureCluster]:
    with secure_cluster(request, tmp_path_factory, "mtls") as c:
        yield c


@pytest.fixture(scope="module")
def strangers(cluster: SecureCluster, tmp_path_factory: pytest.TempPathFactory) -> Strangers:
    return cluster.strangers(tmp_path_factory.mktemp("strangers"))


def rpc_ports(cluster: SecureCluster) -> dict[str, int]:
    """Every RPC port (pyozone.rpc): SCM's client (9860), datanode (9861), block (9863) and security (9961)
    ports, OM's RPC port, and each datanode's xceiver, pipeline (ratis) and replication ports."""
    state = cluster.state
    scm = state.daemon("scm").ports
    ports = {f"scm {kind}": scm[kind] for kind in ("client", "datanode", "block", "security")}
    ports["om rpc"] = state.daemon("om").ports["rpc"]
    for dn in state.datanodes():
        ports |= {f"{dn.name} {kind}": dn.ports[kind] for kind in ("ipc", "ratis", "replication")}
    return ports


def http_ports(cluster: SecureCluster) -> dict[str, int]:
    """Every web endpoint: SCM's, OM's, the S3 gateway's S3 and admin ports, each datanode's."""
    state = cluster.state
    ports = {
        "scm http": state.daemon("scm").ports["http"],
        "om http": state.daemon("om").ports["http"],
        "s3g s3": state.daemon("s3g").ports["http"],
        "s3g admin": state.daemon("s3g").ports["admin"],
    }
    return ports | {f"{dn.name} http": dn.ports["http"] for dn in state.datanodes()}


def datastream_ports(cluster: SecureCluster) -> dict[str, int]:
    return {f"{dn.name} datastream": dn.ports["datastream"] for dn in cluster.state.datanodes()}


# ------------------------------------------------------------------ probes
def port_status(port: int, tls: TlsStore | None) -> tuple[rpc.StatusCode, str]:
    """rpc_status of a port of the cluster: UNIMPLEMENTED means the call got through the handshake to the
    server; UNAVAILABLE that the connection was refused."""
    return rpc_status(f"{HOST}:{port}", tls)


HTTP_GET = b"GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def plaintext_answer(port: int, probe: bytes) -> bytes:
    """What a TLS port sends a client that speaks plaintext: nothing (it closes) or a TLS alert record."""
    with socket.create_connection((HOST, port), timeout=10) as sock:
        sock.sendall(probe)
        return _read_all(sock)


def tls_answer(port: int, tls: TlsStore, probe: bytes, wait_s: float = 10) -> bytes:
    """The handshake with `tls`'s certificate (trusting the cluster's CA), then `probe`, then all the
    server sends until it closes or `wait_s` passes. ssl.SSLError when the server refuses the certificate
    (TLS 1.3 clients read the server's alert after their side of the handshake)."""
    context = tls.client_context()
    with (
        socket.create_connection((HOST, port), timeout=wait_s) as raw,
        context.wrap_socket(raw, server_hostname=HOST) as sock,
    ):
        sock.sendall(probe)
        return _read_all(sock)


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    with contextlib.suppress(ConnectionResetError, TimeoutError, ssl.SSLZeroReturnError):
        while chunk := sock.recv(65536):
            data += chunk
    return data


def refused(answer: bytes) -> bool:
    """A close without a byte, or a TLS alert record (content type 21): nothing of the protocol."""
    return answer == b"" or answer[:1] == b"\x15"


def assert_handshake_refused(port: int, tls: TlsStore, probe: bytes) -> None:
    """The server ends the connection at the handshake: an alert naming the certificate, or a close (a
    TLS 1.3 client may finish its side of the handshake first and see the close on its next write)."""
    try:
        answer = tls_answer(port, tls, probe)
    except ssl.SSLEOFError:
        return
    except ssl.SSLError as e:
        assert "ALERT" in str(e).upper() or "CERTIFICATE" in str(e).upper(), e
        return
    except (ConnectionResetError, BrokenPipeError):
        return
    assert refused(answer), answer[:200]


# ------------------------------------------------------------------ every RPC port
def test_every_rpc_port_serves_the_administrators_certificate(cluster: SecureCluster) -> None:
    admin = cluster.admin_tls
    answers = {name: port_status(port, admin)[0] for name, port in rpc_ports(cluster).items()}
    assert set(answers.values()) == {rpc.StatusCode.UNIMPLEMENTED}, answers


def test_every_rpc_port_refuses_a_plaintext_client(cluster: SecureCluster) -> None:
    answers = {name: port_status(port, None) for name, port in rpc_ports(cluster).items()}
    assert {code for code, _ in answers.values()} == {rpc.StatusCode.UNAVAILABLE}, answers
    preface = b"\x00\x00\x00\x10\x01\x00\x00\x00\x00\x00\x00\x01"
    for name, port in rpc_ports(cluster).items():
        assert refused(plaintext_answer(port, preface)), name


@pytest.mark.parametrize("stranger", ["self_signed", "other_ca"])
def test_every_rpc_port_refuses_a_certificate_of_no_cluster_ca(
    cluster: SecureCluster, strangers: Strangers, stranger: str
) -> None:
    tls = getattr(strangers, stranger)
    answers = {name: port_status(port, tls) for name, port in rpc_ports(cluster).items()}
    assert {code for code, _ in answers.values()} == {rpc.StatusCode.UNAVAILABLE}, answers
    for name, port in rpc_ports(cluster).items():  # refused in the handshake, not by a later check
        assert_handshake_refused(port, tls, b"\x00\x00\x00\x10\x01\x00\x00\x00\x00\x00\x00\x01"), name


# ------------------------------------------------------------------ every web endpoint and datastream port
def test_every_web_endpoint_is_https_with_client_certificates(
    cluster: SecureCluster, strangers: Strangers
) -> None:
    for name, port in http_ports(cluster).items():
        assert tls_answer(port, cluster.admin_tls, HTTP_GET).startswith(b"HTTP/1.1 "), name
        assert refused(plaintext_answer(port, HTTP_GET)), name
        assert_handshake_refused(port, strangers.self_signed, HTTP_GET)
        assert_handshake_refused(port, strangers.other_ca, HTTP_GET)


def test_every_datastream_port_is_mutual_tls(cluster: SecureCluster, strangers: Strangers) -> None:
    probe = encode_header(ReadHeader(container_id=1 << 40, local_id=1, bcsid=0, offset=0, length=1))
    for name, port in datastream_ports(cluster).items():
        served = tls_answer(port, cluster.admin_tls, probe, wait_s=2)  # a read reply: no such block
        result, _, _ = decode_read_reply(served[: READ_REPLY.size])
        assert result != SUCCESS and len(served) > READ_REPLY.size, (name, served)
        assert refused(plaintext_answer(port, probe)), name
        assert_handshake_refused(port, strangers.self_signed, probe)
        assert_handshake_refused(port, strangers.other_ca, probe)


# ------------------------------------------------------------------ the data path and the tools
def test_keys_put_and_get_through_pyozone_sh_over_tls(cluster: SecureCluster, tmp_path: Path) -> None:
    for args in (("volume", "create", f"/{VOL}"), ("bucket", "create", f"/{VOL}/{BUCKET}")):
        result = cluster.sh(*args)
        assert result.code == 0, (result, cluster.logs())
    for name, size, replication in (("small", 300_000, "RATIS/THREE"), ("large", 9 * MiB, "RATIS/THREE")):
        source, back = tmp_path / f"{name}.in", tmp_path / f"{name}.out"
        digest = random_file(source, size)
        put = cluster.sh("key", "put", "-r", replication, f"/{VOL}/{BUCKET}/{name}", str(source))
        assert put.code == 0, (put, cluster.logs())
        got = cluster.sh("key", "get", f"/{VOL}/{BUCKET}/{name}", str(back))
        assert got.code == 0, (got, cluster.logs())
        assert file_sha256(back) == digest
    all_running(cluster)  # `cluster status` probes the cluster over TLS


def test_admin_commands_present_the_administrators_certificate(cluster: SecureCluster) -> None:
    nodes = cluster.admin_json("datanode", "list")
    assert len(nodes) == 3 and {n["healthState"] for n in nodes} == {"HEALTHY"}


def test_a_client_without_a_certificate_is_told_how_to_configure_one(
    cluster: SecureCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OZONE_CLIENT_CERT", "OZONE_CLIENT_KEY", "OZONE_CA_CERT"):
        monkeypatch.delenv(name, raising=False)  # they would name a certificate
    result = cluster.sh_as(cluster.conf_without_certificate(), "volume", "list")
    assert result.code == 1
    assert "set ozone.client.tls.* or OZONE_CLIENT_CERT/OZONE_CLIENT_KEY/OZONE_CA_CERT" in result.err


# ------------------------------------------------------------------ acting as another user
def test_a_users_certificate_makes_commands_act_as_that_user(cluster: SecureCluster) -> None:
    bob = cluster.user_conf("bob")  # `pyozone admin cert issue-user bob`, run by the administrator
    refused_to_bob = cluster.sh_as(bob, "volume", "create", "/bobs")
    assert refused_to_bob.code == 1 and "PERMISSION_DENIED" in refused_to_bob.err, refused_to_bob
    assert "bob" in refused_to_bob.err
    assert cluster.sh("volume", "create", "/admins").code == 0  # the site file's certificate: the admin


def test_the_printed_environment_lines_act_as_another_user(
    cluster: SecureCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    certs = cluster.user_conf("bob").parent / "certs"
    monkeypatch.setenv("OZONE_CLIENT_CERT", str(certs / "certificate.crt"))
    monkeypatch.setenv("OZONE_CLIENT_KEY", str(certs / "private.pem"))
    monkeypatch.setenv("OZONE_CA_CERT", str(certs / "ca.crt"))
    as_bob = cluster.sh("volume", "create", "/bobs2")  # with the cluster's configuration
    assert as_bob.code == 1 and "PERMISSION_DENIED" in as_bob.err, as_bob


# ------------------------------------------------------------------ who may call SCM's internal protocols
def daemon_tls(cluster: SecureCluster, metadata_dir: str) -> TlsStore:
    """A daemon's own certificate, where it keeps it (e.g. "om", "dn1/meta")."""
    return TlsStore(TlsPaths.under(cluster.data_dir / metadata_dir, load_configuration(cluster.conf_dir, {})))


def scm_call(cluster: SecureCluster, port: str, tls: TlsStore, call) -> tuple[rpc.StatusCode, str]:
    target = f"{HOST}:{cluster.state.daemon('scm').ports[port]}"
    with rpc.SyncChannel(target, rpc.ChannelSettings(MiB), tls) as channel:
        try:
            call(channel)
        except rpc.RpcError as e:
            return e.code(), e.details()
    return rpc.StatusCode.OK, ""


def test_only_om_calls_scms_block_protocol(cluster: SecureCluster) -> None:
    """A user's certificate cannot delete (or allocate) blocks behind OM's back."""
    block = block_pb.BlockID(containerBlockID=block_pb.ContainerBlockID(containerID=1, localID=1))
    calls = {
        "delete": lambda ch: rpc.Stub(ch, BLOCK_SERVICE).deleteScmKeyBlocks(
            block_pb.DeleteScmKeyBlocksRequestProto(
                keyBlocks=[block_pb.KeyBlocks(key="/v/b/k", blocks=[block])]
            ),
            timeout=10,
        ),
        "allocate": lambda ch: rpc.Stub(ch, BLOCK_SERVICE).allocateScmBlock(
            block_pb.AllocateScmBlockRequestProto(
                size=1, numBlocks=1, type=hdds_pb2.RATIS, factor=hdds_pb2.ONE
            ),
            timeout=10,
        ),
        "info": lambda ch: rpc.Stub(ch, BLOCK_SERVICE).getScmInfo(
            admin_pb.GetScmInfoRequestProto(), timeout=10
        ),
    }
    for caller, tls in (("the administrator", cluster.admin_tls), ("dn1", daemon_tls(cluster, "dn1/meta"))):
        for name, call in calls.items():
            code, details = scm_call(cluster, "block", tls, call)
            assert code is rpc.StatusCode.PERMISSION_DENIED, (caller, name, code, details)
            assert "may not call SCM's block protocol" in details
    assert scm_call(cluster, "block", daemon_tls(cluster, "om"), calls["info"])[0] is rpc.StatusCode.OK


def test_a_datanode_certificate_speaks_for_its_own_datanode_alone(cluster: SecureCluster) -> None:
    names = [d.name for d in cluster.state.datanodes()]
    uuids = {
        n: X.datanode_id(X.cert_from_pem(daemon_tls(cluster, f"{n}/meta").paths.cert.read_bytes()))
        for n in names
    }
    registered = {n["uuid"] for n in cluster.admin_json("datanode", "list")}
    assert set(uuids.values()) == registered and len(registered) == len(names), (uuids, registered)
    first, second = names[:2]
    heartbeat = dn_pb.SCMHeartbeatRequestProto(
        datanodeDetails=hdds_pb2.DatanodeDetailsProto(uuid=uuids[second], ipAddress=HOST, hostName=second)
    )
    code, details = scm_call(
        cluster,
        "datanode",
        daemon_tls(cluster, f"{first}/meta"),
        lambda ch: rpc.Stub(ch, DATANODE_SERVICE).sendHeartbeat(heartbeat, timeout=10),
    )
    assert code is rpc.StatusCode.PERMISSION_DENIED, (code, details)
    assert f"names datanode {uuids[first]}, not {uuids[second]}" in details
    code, details = scm_call(
        cluster,
        "datanode",
        cluster.admin_tls,
        lambda ch: rpc.Stub(ch, DATANODE_SERVICE).getVersion(dn_pb.SCMVersionRequestProto(), timeout=10),
    )
    assert code is rpc.StatusCode.PERMISSION_DENIED and "may not call SCM's datanode protocol" in details


# ------------------------------------------------------------------ last: the cluster stops
def test_cluster_down_stops_a_secure_cluster(cluster: SecureCluster) -> None:
    down = cluster.cluster("down", timeout_s=90)
    assert down.code == 0, down
    assert not any(cluster.running().values()), cluster.running()
