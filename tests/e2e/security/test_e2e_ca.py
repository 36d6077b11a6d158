"""SCM's certificate authority as a real process: `scm --init` makes the CA (its key owner-only), a daemon
bootstraps through a JOIN credential of its own (one certificate, once: issue 28 defect 4), certificates
renew before they expire and expired ones leave `admin cert list`, and port 9961 refuses a self-made
certificate, another CA's and a plaintext channel.

One SCM for the module. It is initialised with the default lifetimes (so the administrator's and SCM's own
certificates last a year) and started with short ones (hdds.x509.default.duration=PT20S,
renew.grace=PT15S, checks every second), which every certificate it issues afterwards gets.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import socket
import ssl
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509

import pyozone
from pyozone import rpc
from pyozone.cluster.layout import free_ports
from pyozone.common.fsutil import write_file
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.config import OzoneConfiguration
from pyozone.config.site import SITE_FILE, write_site_xml
from pyozone.framework.scm_admin import ADMIN_SERVICE
from pyozone.framework.scm_security import SCMSecurityClient
from pyozone.hdds.limits import MiB
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.users import login_user
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb
from pyozone.proto import ScmSecurityProtocol_pb2 as pb
from pyozone.protocol.security import MAX_SECURITY_MESSAGE_BYTES
from pyozone.security.cert_client import CertRenewer, certificate_hosts, daemon_tls
from pyozone.security.join import JoinCredential
from tests.cli_support import Result
from tests.polling import wait_for
from tests.tls_certs import CertAuthority, self_signed

HOST = "127.0.0.1"
HOSTS = (HOST, "localhost")
SHORT = {
    "hdds.x509.default.duration": "PT20S",
    "hdds.x509.renew.grace.duration": "PT15S",
    "hdds.x509.ca.rotation.check.interval": "PT1S",
    "hdds.x509.expired.certificate.check.interval": "PT1S",
}


@dataclass
class SecureScm:
    root: Path
    conf_dir: Path
    metadata: Path
    security: HostPort
    client_port: int
    http_port: int
    admin: TlsStore
    init_output: str = ""
    process: subprocess.Popen[bytes] | None = None

    @property
    def log(self) -> str:
        return (self.root / "scm.log").read_text(errors="replace")

    def conf(self, **extra: str) -> OzoneConfiguration:
        """A daemon's view: the cluster's site keys plus SCM's short lifetimes."""
        from pyozone.config.site import load_configuration

        return load_configuration(self.conf_dir, {**SHORT, **extra})

    def join_token(self, role: str, out: Path, *name: str) -> Path:
        """An administrator mints a JOIN credential for one `role` daemon (`admin cert join-token`)."""
        minted = self.pyozone("admin", "cert", "join-token", "--role", role, "--out", str(out), *name)
        assert minted.code == 0, minted
        return out

    def joining(self, role: str, out: Path) -> OzoneConfiguration:
        """A new daemon's view: the configuration naming a fresh JOIN credential of its own."""
        return self.conf(**{"ozone.security.join.credentials.file": str(self.join_token(role, out))})

    def client(self, tls: TlsStore) -> SCMSecurityClient:
        return SCMSecurityClient(self.security, tls, timeout_s=5)

    def pyozone(self, *args: str, env: dict[str, str] | None = None) -> Result:
        full = {k: v for k, v in os.environ.items() if k != "OZONE_CONF_DIR"} | (env or {})
        full["PYTHONPATH"] = str(Path(pyozone.__file__).parents[1])
        done = subprocess.run(
            [sys.executable, "-m", "pyozone", *args, "--conf", str(self.conf_dir)],
            env=full,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return Result(done.returncode, done.stdout, done.stderr)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex((HOST, port)) == 0


@pytest.fixture(scope="module")
def scm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureScm]:
    root = tmp_path_factory.mktemp("ca")
    metadata, conf_dir = root / "scm", root / "conf"
    conf_dir.mkdir()
    client, datanode, block, http, security = free_ports(5)
    admin_dir = metadata / "ca" / "users" / login_user()
    write_site_xml(
        conf_dir / SITE_FILE,
        {
            "ozone.metadata.dirs": str(metadata),
            "ozone.scm.names": HOST,
            "ozone.scm.client.address": f"{HOST}:{client}",
            "ozone.scm.datanode.address": f"{HOST}:{datanode}",
            "ozone.scm.block.client.address": f"{HOST}:{block}",
            "ozone.scm.http-address": f"{HOST}:{http}",
            "ozone.scm.security.service.address": f"{HOST}:{security}",
            "ozone.security.enabled": "true",
            "hdds.grpc.tls.enabled": "true",
            "ozone.client.tls.cert.file": str(admin_dir / "certificate.crt"),
            "ozone.client.tls.key.file": str(admin_dir / "private.pem"),
            "ozone.client.tls.ca.file": str(admin_dir / "ca.crt"),
        },
    )
    admin = TlsStore(TlsPaths(admin_dir / "private.pem", admin_dir / "certificate.crt", admin_dir / "ca.crt"))
    c = SecureScm(root, conf_dir, metadata, HostPort(HOST, security), client, http, admin)
    init = c.pyozone("scm", "--init")
    assert init.code == 0, init
    c.init_output = init.out
    short = [a for k, v in SHORT.items() for a in ("-D", f"{k}={v}")]
    with open(root / "scm.log", "wb") as log:
        env = {**os.environ, "PYTHONPATH": str(Path(pyozone.__file__).parents[1])}
        env.pop("OZONE_CONF_DIR", None)
        c.process = subprocess.Popen(
            [sys.executable, "-m", "pyozone", "scm", "--conf", str(conf_dir), *short],
            stdout=log,
            stderr=log,
            env=env,
        )
    try:
        wait_for(lambda: listening(security) or c.process.poll() is not None, 30, lambda: c.log)
        assert c.process.poll() is None, c.log
        yield c
    finally:
        c.stop()


def security_error(call: Callable[[], object]) -> SecurityError:
    with pytest.raises(SecurityError) as e:
        call()
    return e.value


# ---------------------------------------------------------------------- scm --init
def test_init_makes_the_ca_with_an_owner_only_private_key(scm: SecureScm) -> None:
    ca_key = scm.metadata / "ca" / "keys" / "private.pem"
    assert stat.S_IMODE(ca_key.stat().st_mode) == 0o600
    assert "pyozone admin cert join-token" in scm.init_output  # no JOIN credential for every daemon
    assert not (scm.metadata / "ca" / "join.pem").exists()
    assert stat.S_IMODE(scm.admin.paths.key.stat().st_mode) == 0o600
    assert f"private key {ca_key} (mode 0600)" in scm.init_output
    again = scm.pyozone("scm", "--init")  # beside the running SCM: reuses, touches nothing
    assert again.code == 0 and "Reusing the root CA certificate" in again.out, again


# ---------------------------------------------------------------------- a daemon's certificate
def test_a_daemon_bootstraps_through_join_with_a_ca_signed_certificate(
    scm: SecureScm, tmp_path: Path
) -> None:
    store = daemon_tls(scm.joining("om", tmp_path / "join.pem"), CertRole.OM, tmp_path / "om", HOSTS)
    cert = X.cert_from_pem(store.paths.cert.read_bytes())
    ca = X.cert_from_pem((scm.metadata / "ca" / "certs" / "certificate.crt").read_bytes())
    assert X.identity_of(cert) == Identity(CertRole.OM, "om", HOST) and not X.is_signed_by(cert, ca)
    # Issued by SCM's sub-CA, which the certificate file holds after the leaf (issue 31).
    sub_ca = X.cert_from_pem((scm.metadata / "certs" / "certificate.crt").read_bytes())
    assert X.certs_from_pem(store.paths.cert.read_bytes())[1:] == [sub_ca]
    assert X.chain_verifies(
        store.paths.cert.read_bytes(), ca
    ) and store.paths.ca.read_bytes() == X.cert_to_pem(ca)
    assert store.paths.ca.read_bytes() == X.cert_to_pem(ca)
    assert stat.S_IMODE(store.paths.key.stat().st_mode) == 0o600
    with scm.client(store) as om:  # the new certificate is a working identity
        assert om.get_current_secret_key().id == om.get_all_secret_keys()[-1].id
    listed = scm.pyozone("admin", "cert", "list", "--role", "om", "--json")
    assert listed.code == 0, listed
    assert str(cert.serial_number) in listed.out and f"CN=om@{HOST}" in listed.out


def test_renewal_gives_a_new_serial_before_expiry_and_the_expired_one_is_cleaned_up(
    scm: SecureScm, tmp_path: Path
) -> None:
    conf, uuid = scm.joining("dn", tmp_path / "join.pem"), "00000000-0000-4000-8000-000000000042"
    store = daemon_tls(conf, CertRole.DATANODE, tmp_path / "dn", HOSTS, datanode=uuid)
    first = X.cert_from_pem(store.paths.cert.read_bytes())
    renewer = CertRenewer(conf, store, CertRole.DATANODE, HOSTS, datanode=uuid)
    stop = asyncio.Event()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_until_complete, args=(renewer.run(stop),), daemon=True)
    thread.start()

    def renewed_certificate() -> X.Certificate | None:
        cert = X.cert_from_pem(store.paths.cert.read_bytes())
        return cert if cert.serial_number != first.serial_number else None

    try:
        renewed = wait_for(renewed_certificate, 20, "a renewed certificate")
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)
    seen_at = time.time()
    assert seen_at < first.not_valid_after_utc.timestamp(), "renewed only after the old one expired"
    assert renewed.not_valid_after_utc > first.not_valid_after_utc
    assert X.identity_of(renewed) == X.identity_of(first)
    assert X.datanode_id(renewed) == X.datanode_id(first) == uuid
    with scm.client(store) as dn:  # the renewed certificate is the one presented now
        dn.get_current_secret_key()

    def listed_serials() -> set[int]:
        out = scm.pyozone("admin", "cert", "list", "--role", "dn", "-c", "1000", "--json")
        assert out.code == 0, out
        return {c["serialNumber"] for c in json.loads(out.out)}

    assert first.serial_number in listed_serials()
    wait_for(
        lambda: first.serial_number not in listed_serials(),
        35,
        "the expired certificate gone from `admin cert list`",
        interval_s=1,
    )


def test_scm_renews_its_own_certificate_inside_the_grace_period(scm: SecureScm) -> None:
    """SCM's certificate from init lasts a year; swapped for one expiring in 20 s (signed with the CA's
    key on disk, same key pair), SCM's own check renews it within the 15 s grace."""
    own = TlsPaths.under(scm.metadata, OzoneConfiguration())
    ca_key = X.key_from_pem((scm.metadata / "ca" / "keys" / "private.pem").read_bytes())
    ca = X.cert_from_pem((scm.metadata / "ca" / "certs" / "certificate.crt").read_bytes())
    current = X.cert_from_pem(own.cert.read_bytes())
    key = X.key_from_pem(own.key.read_bytes())
    csr = X.build_csr(key, X.identity_of(current), tuple(certificate_hosts(current)))
    short = X.sign_csr(csr, ca_key, ca, "CID-test", "SCM-test", dt.timedelta(seconds=20), serial=1 << 62)
    write_file(own.cert, X.cert_to_pem(short))

    def renewed() -> X.Certificate | None:
        cert = X.cert_from_pem(own.cert.read_bytes())
        return cert if cert.serial_number != short.serial_number else None

    cert = wait_for(renewed, 15, lambda: f"SCM renewing its certificate\n{scm.log}")
    assert "Renewed SCM's certificate" in scm.log
    assert X.identity_of(cert) == X.identity_of(current) and X.is_signed_by(cert, ca)
    with scm.client(scm.admin) as admin:  # and serves with it
        assert X.cert_from_pem(admin.get_ca_certificate()) == ca


# ---------------------------------------------------------------------- who may do what
def join_store(scm: SecureScm, root: Path, role: str = "dn") -> TlsStore:
    join = JoinCredential.read(scm.join_token(role, root / "join.pem"))
    paths = TlsPaths(root / "join.key", root / "join.crt", root / "ca.crt")
    write_file(paths.key, join.key_pem, private=True)
    write_file(paths.cert, join.cert_pem)
    write_file(paths.ca, join.ca_pem)
    return TlsStore(paths)


@pytest.mark.parametrize(
    "identity", [Identity(CertRole.USER, "mallory"), Identity(CertRole.SCM, "scm", HOST)], ids=["user", "scm"]
)
def test_join_may_not_obtain_a_user_or_scm_certificate(
    scm: SecureScm, tmp_path: Path, identity: Identity
) -> None:
    csr = X.csr_to_pem(X.build_csr(X.generate_private_key(), identity, ()))
    with scm.client(join_store(scm, tmp_path)) as join:
        error = security_error(lambda: join.sign_csr(csr))
        assert error.code == SecurityResult.PERMISSION_DENIED, error
        assert security_error(join.get_current_secret_key).code == SecurityResult.PERMISSION_DENIED
        assert security_error(lambda: join.list_certificates()).code == SecurityResult.PERMISSION_DENIED


def test_a_join_credential_is_no_master_key(scm: SecureScm, tmp_path: Path) -> None:
    """Issue 28 defect 4, the probe's steps on port 9961: with a JOIN credential, `s3g@evil` is refused, a
    datanode certificate for a datanode that already has one is refused, and a used credential is refused
    a second certificate."""
    dn = Identity(CertRole.DATANODE, "dn", HOST)
    existing = "00000000-0000-4000-8000-0000000000e1"

    def csr(identity: Identity, datanode: str | None = None) -> bytes:
        return X.csr_to_pem(X.build_csr(X.generate_private_key(), identity, (identity.host,), datanode))

    with scm.client(join_store(scm, tmp_path / "first")) as first:
        first.sign_csr(csr(dn, existing))
        error = security_error(lambda: first.sign_csr(csr(dn, "00000000-0000-4000-8000-0000000000e2")))
        assert error.code == SecurityResult.PERMISSION_DENIED and "was already used" in error.message, error
    with scm.client(join_store(scm, tmp_path / "second")) as second:
        error = security_error(lambda: second.sign_csr(csr(dn, existing)))
        assert error.code == SecurityResult.PERMISSION_DENIED, error
        assert f"datanode {existing} already had a certificate" in error.message
    with scm.client(join_store(scm, tmp_path / "s3g", "s3g")) as s3g:
        error = security_error(lambda: s3g.sign_csr(csr(Identity(CertRole.S3G, "s3g", "evil"))))
        assert error.code == SecurityResult.PERMISSION_DENIED and "names no S3G on 'evil'" in error.message
    refused = scm.pyozone(
        "admin", "cert", "join-token", "--role", "dn", "--out", str(tmp_path / "mallory.pem"),
        *("-D", f"ozone.client.tls.cert.file={tmp_path / 'first' / 'join.crt'}"),
        *("-D", f"ozone.client.tls.key.file={tmp_path / 'first' / 'join.key'}"),
    )  # fmt: skip
    assert refused.code == 1 and "administrators only" in refused.err, refused


def test_secret_keys_go_to_om_and_datanodes_only(scm: SecureScm) -> None:
    with scm.client(scm.admin) as admin:
        error = security_error(admin.get_current_secret_key)
    assert error.code == SecurityResult.PERMISSION_DENIED and "OM and datanodes only" in error.message


def test_issue_user_writes_a_working_certificate_that_lists_nothing(scm: SecureScm, tmp_path: Path) -> None:
    out = tmp_path / "carol"
    issued = scm.pyozone("admin", "cert", "issue-user", "carol", "--out", str(out))
    assert issued.code == 0, issued
    assert f"export OZONE_CLIENT_CERT={out / 'certificate.crt'}" in issued.out
    assert stat.S_IMODE((out / "private.pem").stat().st_mode) == 0o600
    carol = TlsStore(TlsPaths(out / "private.pem", out / "certificate.crt", out / "ca.crt"))
    with scm.client(carol) as client:
        assert client.get_ca_certificate() == (out / "ca.crt").read_bytes()
        assert security_error(lambda: client.list_certificates()).code == SecurityResult.PERMISSION_DENIED
        # carol renews her own name, but cannot have it name a host: a TLS client would take her for a daemon
        key, identity = X.key_from_pem((out / "private.pem").read_bytes()), Identity(CertRole.USER, "carol")
        hosted = X.csr_to_pem(X.build_csr(key, identity, (HOST, "localhost")))
        error = security_error(lambda: client.sign_csr(hosted))
        assert error.code == SecurityResult.INVALID_CSR and "names no host" in error.message, error
        renewed, _ = client.sign_csr(X.csr_to_pem(X.build_csr(key, identity)))
    usage = X.cert_from_pem(renewed).extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]
    as_carol = [
        *("-D", f"ozone.client.tls.cert.file={out / 'certificate.crt'}"),
        *("-D", f"ozone.client.tls.key.file={out / 'private.pem'}"),
    ]
    refused = scm.pyozone("admin", "cert", "issue-user", "dave", "--out", str(tmp_path / "dave"), *as_carol)
    assert (
        refused.code == 1 and "PERMISSION_DENIED: carol may not obtain a certificate for dave" in refused.err
    )
    assert not (tmp_path / "dave").exists()


# ---------------------------------------------------------------------- refusals in the handshake
@pytest.fixture(scope="module")
def strangers(scm: SecureScm, tmp_path_factory: pytest.TempPathFactory) -> dict[str, TlsStore]:
    root = tmp_path_factory.mktemp("strangers")
    trust = X.cert_from_pem(scm.admin.paths.ca.read_bytes())
    admin = Identity(CertRole.USER, login_user())
    return {
        "self-signed": self_signed(root, "self", admin, trust),
        "other CA": CertAuthority(root / "other").store("other", admin, trust=trust),
    }


@pytest.mark.parametrize("who", ["self-signed", "other CA"])
def test_a_certificate_scms_ca_never_issued_is_refused_on_9961(
    scm: SecureScm, strangers: dict[str, TlsStore], who: str
) -> None:
    with scm.client(strangers[who]) as client:
        assert security_error(client.get_ca_certificate).code == SecurityResult.UNAVAILABLE
    with scm.client(scm.admin) as client:  # the same address answers the administrator
        assert X.cert_from_pem(client.get_ca_certificate())


def test_a_plaintext_channel_is_refused_on_9961(scm: SecureScm) -> None:
    with rpc.SyncChannel(scm.security, rpc.ChannelSettings(MAX_SECURITY_MESSAGE_BYTES)) as channel:
        stub = rpc.Stub(channel, rpc.service(pb, "SCMSecurityProtocolService"))
        with pytest.raises(rpc.RpcError) as e:
            stub.getCACertificate(pb.SCMGetCACertificateRequestProto(), timeout=5)
    assert e.value.code() == rpc.StatusCode.UNAVAILABLE


def test_with_grpc_tls_scms_other_ports_want_a_certificate_too(
    scm: SecureScm, strangers: dict[str, TlsStore]
) -> None:
    target = f"{HOST}:{scm.client_port}"
    with rpc.SyncChannel(target, rpc.ChannelSettings(MiB), scm.admin) as channel:
        info = rpc.Stub(channel, ADMIN_SERVICE).getScmInfo(admin_pb.GetScmInfoRequestProto(), timeout=5)
        assert info.clusterId.startswith("CID-")
    for tls in (None, strangers["other CA"]):
        with rpc.SyncChannel(target, rpc.ChannelSettings(MiB), tls) as channel:
            with pytest.raises(rpc.RpcError) as e:
                rpc.Stub(channel, ADMIN_SERVICE).getScmInfo(admin_pb.GetScmInfoRequestProto(), timeout=5)
            assert e.value.code() == rpc.StatusCode.UNAVAILABLE
    assert http_ready(scm.http_port, scm.admin.client_context()).startswith(b"HTTP/1.1 200")
    no_certificate = ssl.create_default_context(cafile=str(scm.admin.paths.ca))
    with pytest.raises((ssl.SSLError, ConnectionError)):
        http_ready(scm.http_port, no_certificate)


def http_ready(port: int, context: ssl.SSLContext) -> bytes:
    """The first bytes of SCM's answer to GET /ready over TLS; a server that closes without one raises."""
    with (
        socket.create_connection((HOST, port), 5) as raw,
        context.wrap_socket(raw, server_hostname=HOST) as s,
    ):
        s.sendall(b"GET /ready HTTP/1.1\r\nHost: scm\r\nConnection: close\r\n\r\n")
        answer = s.recv(64)
    if not answer:
        raise ConnectionResetError("closed without an answer")
    return answer
