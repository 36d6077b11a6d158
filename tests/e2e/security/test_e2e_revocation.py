"""Issue 28 defect 6 on a cluster made by `pyozone cluster up --secure`: an administrator cuts a user off.
`pyozone admin cert revoke SERIAL` moves bob's certificate to SCM's revoked certificates; within the CRL
refresh interval (hdds.x509.crl.refresh.interval, short here) OM's port and a datanode's ports (gRPC and
datastream) refuse it (OM's, on pyozone.rpc, in the handshake as the datastream port), SCM's security port
refuses its renewal with a new key, and `admin cert list --type revoked` shows it. Only an administrator
revokes.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.cluster.layout import HOST
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.framework.scm_security import SCMSecurityClient
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.proto import DatanodeClientProtocol_pb2 as dn_pb
from pyozone.protocol.datastream import ReadHeader, encode_header
from tests.e2e.security.secure_cluster import SecureCluster, secure_cluster
from tests.polling import wait_for

REFRESH = {"hdds.x509.crl.refresh.interval": "PT1S"}
XCEIVER = rpc.service(dn_pb, "XceiverClientProtocolService")
MiB = 1 << 20


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SecureCluster]:
    with secure_cluster(request, tmp_path_factory, "revocation", overrides=REFRESH) as c:
        yield c


def user_tls(cluster: SecureCluster, name: str) -> TlsStore:
    certs = cluster.user_conf(name).parent / "certs"
    return TlsStore(TlsPaths(certs / "private.pem", certs / "certificate.crt", certs / "ca.crt"))


def om_refusal(cluster: SecureCluster, name: str) -> str | None:
    """Why OM refused `sh volume list` as user `name`, or None when it answered."""
    listed = cluster.sh_as(cluster.user_conf(name), "volume", "list", timeout_s=60)
    return None if listed.code == 0 else listed.err


def xceiver_status(port: int, tls: TlsStore) -> rpc.StatusCode | None:
    """A real call on a datanode's xceiver port: None when the datanode answered (whatever it said). The
    port is `ssl`'s (pyozone.rpc): a certificate the CRL lists fails the handshake (UNAVAILABLE) like the
    datastream port's; a connection opened before the revocation is refused per call (PERMISSION_DENIED)."""
    with rpc.SyncChannel(f"{HOST}:{port}", rpc.ChannelSettings(MiB), tls) as channel:
        try:
            list(rpc.Stub(channel, XCEIVER).send(iter([b""]), timeout=10))
        except rpc.RpcError as e:
            return (
                e.code()
                if e.code() in (rpc.StatusCode.PERMISSION_DENIED, rpc.StatusCode.UNAVAILABLE)
                else None
            )
    return None


def datastream_handshake(port: int, tls: TlsStore) -> str:
    """'served' when the datastream port took the certificate, else the TLS error."""
    import socket

    probe = encode_header(ReadHeader(container_id=1 << 40, local_id=1, bcsid=0, offset=0, length=1))
    try:
        with (
            socket.create_connection((HOST, port), timeout=10) as raw,
            tls.client_context().wrap_socket(raw, server_hostname=HOST) as sock,
        ):
            sock.sendall(probe)
            return "served" if sock.recv(1) else "closed"
    except (ssl.SSLError, ConnectionError) as e:
        return str(e)


def test_a_revoked_user_is_refused_by_om_and_datanodes_and_renews_nothing(
    cluster: SecureCluster, tmp_path: Path
) -> None:
    bob = user_tls(cluster, "bob")
    dn = cluster.state.datanodes()[0]
    assert om_refusal(cluster, "bob") is None
    assert xceiver_status(dn.ports["ipc"], bob) is None
    assert datastream_handshake(dn.ports["datastream"], bob) == "served"
    serial = X.cert_from_pem(bob.paths.cert.read_bytes()).serial_number

    # only an administrator revokes
    as_bob = cluster.pyozone("admin", "cert", "revoke", str(serial), "--conf", str(cluster.user_conf("bob")))
    assert as_bob.code == 1 and "revoking a certificate needs an administrator" in as_bob.err, as_bob
    revoked = cluster.admin("cert", "revoke", str(serial), "--reason", "keyCompromise")
    assert revoked.code == 0 and f"Revoked certificate(s) {serial} (bob)" in revoked.out, revoked

    why = wait_for(
        lambda: om_refusal(cluster, "bob"), 30, "OM refusing bob's revoked certificate", interval_s=1
    )
    assert "OM at" in why and "UNAVAILABLE" in why, why  # the handshake refused: the connection reset
    wait_for(
        lambda: xceiver_status(dn.ports["ipc"], bob) is rpc.StatusCode.UNAVAILABLE,
        30,
        "the datanode's xceiver port refusing bob in the handshake",
        interval_s=1,
    )
    assert datastream_handshake(dn.ports["datastream"], bob) != "served"  # OpenSSL: certificate revoked
    assert datastream_handshake(dn.ports["datastream"], cluster.admin_tls) == "served"
    # the administrator still gets through
    assert xceiver_status(dn.ports["ipc"], cluster.admin_tls) is None

    # bob may not renew, not even with a new key
    security = HostPort(HOST, cluster.state.daemon("scm").ports["security"])
    csr = X.csr_to_pem(X.build_csr(X.generate_private_key(), Identity(CertRole.USER, "bob")))
    with SCMSecurityClient(security, bob, timeout_s=10) as client, pytest.raises(SecurityError) as e:
        client.sign_csr(csr)
    assert e.value.code in (SecurityResult.PERMISSION_DENIED, SecurityResult.UNAVAILABLE), e.value

    listed = cluster.admin("cert", "list", "--type", "revoked", "--json")
    assert listed.code == 0 and "Type=REVOKED" in listed.err, listed
    assert [c["serialNumber"] for c in json.loads(listed.out)] == [serial]
    valid = cluster.admin("cert", "list", "--role", "user", "-c", "100", "--json")
    assert serial not in [c["serialNumber"] for c in json.loads(valid.out)]


def test_revoking_every_certificate_of_a_user_revokes_the_users_s3_secret_too(cluster: SecureCluster) -> None:
    """Issue 28 review: an S3 secret outlived its user's revocation. `admin cert revoke --name carol`
    revokes every valid certificate of carol (a spare she renewed too) and her S3 secret in OM."""
    cluster.user_conf("carol")  # the administrator issues carol a certificate
    carol = user_tls(cluster, "carol")
    security = HostPort(HOST, cluster.state.daemon("scm").ports["security"])
    csr = X.csr_to_pem(X.build_csr(X.generate_private_key(), Identity(CertRole.USER, "carol")))
    with SCMSecurityClient(security, carol, timeout_s=10) as client:
        spare = X.cert_from_pem(client.sign_csr(csr)[0]).serial_number
    first = cluster.pyozone("s3", "getsecret", "-u", "carol", "--conf", str(cluster.conf_dir))
    assert first.code == 0, first

    revoked = cluster.admin("cert", "revoke", "--name", "carol")
    assert revoked.code == 0 and "every certificate of carol" in revoked.out, revoked
    assert "S3 secret of carol revoked" in revoked.out, revoked
    listed = cluster.admin("cert", "list", "--type", "revoked", "--json")
    assert spare in [c["serialNumber"] for c in json.loads(listed.out)]
    again = cluster.pyozone("s3", "getsecret", "-u", "carol", "--conf", str(cluster.conf_dir))  # a new one
    assert again.code == 0 and again.out != first.out, (first, again)


def test_connections_opened_before_a_revocation_end_at_their_next_message(cluster: SecureCluster) -> None:
    """Issue 28 review: a datanode stream and an https keep-alive connection to the S3 gateway opened
    before dave's revocation kept working. The stream's next message is PERMISSION_DENIED, the
    connection's next request 403 (and it is closed)."""
    import http.client
    import queue

    from pyozone.proto import DatanodeClientProtocol_pb2 as dpb

    cluster.user_conf("dave")
    dave = user_tls(cluster, "dave")
    dn = cluster.state.datanodes()[0]
    requests: queue.Queue[dpb.ContainerCommandRequestProto | None] = queue.Queue()
    probe = dpb.ContainerCommandRequestProto(
        cmdType=dpb.ReadContainer,
        containerID=1 << 40,
        datanodeUuid="x",
        readContainer=dpb.ReadContainerRequestProto(),
    )
    with rpc.SyncChannel(
        f"{HOST}:{dn.ports['ipc']}", rpc.ChannelSettings(MiB), dave, CertRole.DATANODE
    ) as ch:
        responses = rpc.Stub(ch, XCEIVER).send(iter(requests.get, None), timeout=120)
        requests.put(probe)
        assert next(responses).cmdType == dpb.ReadContainer  # answered (whatever it said)
        s3g = http.client.HTTPSConnection(
            HOST, cluster.state.daemon("s3g").ports["http"], context=dave.client_context(), timeout=10
        )

        def s3g_answer() -> tuple[int, bytes]:
            s3g.request("GET", "/")
            answer = s3g.getresponse()
            return answer.status, answer.read()

        assert b"revoked" not in s3g_answer()[1]

        serial = X.cert_from_pem(dave.paths.cert.read_bytes()).serial_number
        assert cluster.admin("cert", "revoke", str(serial)).code == 0
        wait_for(
            lambda: xceiver_status(dn.ports["ipc"], dave) is rpc.StatusCode.UNAVAILABLE,
            30,
            "the datanode holding the CRL",
            interval_s=1,
        )
        requests.put(probe)
        with pytest.raises(rpc.RpcError) as ended:
            next(responses)
        assert ended.value.code() is rpc.StatusCode.PERMISSION_DENIED, ended.value

        def refused() -> tuple[int, bytes] | None:
            status, body = s3g_answer()
            return (status, body) if b"revoked" in body else None

        status, body = wait_for(refused, 30, "the gateway refusing dave", interval_s=1)
        assert status == 403 and f"certificate {serial} was revoked".encode() in body
        s3g.close()
        requests.put(None)
