"""`pyozone scm --init` with security: the root CA, SCM's certificate, the JOIN credential and the
administrator's client certificate, their modes, their reuse; the secret key file; SCM's own renewal."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import socket
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyozone.cli.main import main
from pyozone.common.fsutil import write_file
from pyozone.common.tls import TlsPaths, TlsStore, ssl_peer_identity
from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.hdds.security.x509 import CertRole
from pyozone.scm.security.authority import CertificateAuthority
from pyozone.scm.security.certificates import CertificateStore
from pyozone.scm.server import ScmDaemon, ServerStartError
from pyozone.scm.server.ca_files import (
    JoinRequest,
    ScmSecurityFiles,
    SecretKeyFile,
    SecuritySetupError,
    configured_om_nodes,
    configured_service_hosts,
    load_ca,
    renew_scm_certificate,
    scm_hosts,
)
from pyozone.scm.store.scm_db import open_scm_db
from pyozone.scm.store.version import init_scm, open_scm_store, read_scm_storage
from pyozone.security.config import SecurityConfig, admin_user
from pyozone.security.join import JoinCredential
from tests.tls_certs import CertAuthority, without_role_names

Cli = Callable[..., Any]

SECURE = (
    "-D",
    "ozone.security.enabled=true",
    "-D",
    "ozone.scm.names=127.0.0.1",
    "-D",
    "ozone.administrators=ada",
)


def conf_of(metadata: Path, **extra: str) -> OzoneConfiguration:
    return OzoneConfiguration(
        {
            "ozone.metadata.dirs": str(metadata),
            "ozone.security.enabled": "true",
            "ozone.scm.names": "127.0.0.1",
            "ozone.administrators": "ada",
            **extra,
        }
    )


def files_of(conf: OzoneConfiguration) -> ScmSecurityFiles:
    return ScmSecurityFiles.from_conf(conf, SecurityConfig.from_conf(conf))


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def serials(metadata: Path) -> list[int]:
    store = open_scm_db(metadata, read_only=True)
    try:
        return [serial for serial, _ in store.valid_certs.items()]
    finally:
        store.close()


@pytest.fixture(scope="module")
def initialised(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One secure init (four RSA keys) shared by the tests that only read what it made: (dir, output)."""
    metadata = tmp_path_factory.mktemp("scm")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        join = f"--join-token=dn={metadata / 'join-dn.pem'}"
        assert main(["scm", "--init", "-D", f"ozone.metadata.dirs={metadata}", *SECURE, join]) == 0
    return metadata, out.getvalue()


def test_init_makes_the_ca_and_the_first_certificates(initialised: tuple[Path, str]) -> None:
    metadata, out = initialised
    files = files_of(conf_of(metadata))
    ca = load_ca(files)
    assert files.ca.key == metadata / "ca" / "keys" / "private.pem"
    assert files.ca.cert == metadata / "ca" / "certs" / "certificate.crt"
    root = ca.trust_anchor
    assert X.common_name(root) == "scm@root-ca" and root.serial_number == 1
    storage = read_scm_storage(metadata)
    assert root.subject.rfc4514_string().startswith(f"O={storage.cluster_id},OU={storage.scm_uuid}")
    scm = X.cert_from_pem(files.scm.cert.read_bytes())
    assert X.common_name(scm) == "scm@127.0.0.1" and X.is_signed_by(scm, root) and X.is_ca(scm)
    assert ca.cert == scm and ca.root_key is not None  # SCM's sub-CA issues, the root signs it
    join = JoinCredential.read(metadata / "join-dn.pem")
    assert X.common_name(X.cert_from_pem(join.cert_pem)) == "join@dn"
    assert X.certs_from_pem(join.cert_pem)[1:] == [scm]
    ada = files.user("ada")
    assert ada.key == metadata / "ca" / "users" / "ada" / "private.pem"
    assert [X.common_name(c) for c in X.certs_from_pem(ada.cert.read_bytes())] == ["ada", "scm@127.0.0.1"]
    assert ada.ca.read_bytes() == X.cert_to_pem(root) == files.scm.ca.read_bytes()
    assert serials(metadata) == [1, 2, 3, 4]
    assert f"Root CA certificate created: {files.ca.cert} (serial 1), private key {files.ca.key}" in out
    assert f"SCM certificate created: {files.scm.cert} (serial 2)" in out
    assert f"JOIN credential 4 for one DATANODE: {metadata / 'join-dn.pem'} (mode 0600)" in out
    assert f"OZONE_CLIENT_CERT={ada.cert} OZONE_CLIENT_KEY={ada.key} OZONE_CA_CERT={ada.ca}" in out


def test_openssl_accepts_scms_certificate_from_the_administrators_side(initialised: tuple[Path, str]) -> None:
    """SCM's subject differs from its issuer's, so OpenSSL does not take it for a self-signed one."""
    metadata, _ = initialised
    files = files_of(conf_of(metadata))
    server, client = TlsStore(files.scm).server_context(), TlsStore(files.user("ada")).client_context()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        accepted: list[str] = []

        def serve() -> None:
            conn, _ = listener.accept()
            with server.wrap_socket(conn, server_side=True) as tls:
                accepted.append(ssl_peer_identity(tls).common_name)
                tls.sendall(b"ok")

        thread = threading.Thread(target=serve)
        thread.start()
        with (
            socket.create_connection(("127.0.0.1", port), 5) as raw,
            client.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
        ):
            assert tls.recv(2) == b"ok" and ssl_peer_identity(tls).common_name == "scm@127.0.0.1"
        thread.join(5)
    assert accepted == ["ada"]


def test_private_keys_and_the_join_credential_are_owner_only(initialised: tuple[Path, str]) -> None:
    metadata, _ = initialised
    files = files_of(conf_of(metadata))
    for private in (files.ca.key, files.scm.key, metadata / "join-dn.pem", files.user("ada").key):
        assert mode(private) == 0o600, private
    assert mode(files.ca.cert) == 0o644


def test_a_second_init_reuses_everything_and_opens_no_database(cli: Cli, tmp_path: Path) -> None:
    assert cli("scm", "--init", "-D", f"ozone.metadata.dirs={tmp_path}", *SECURE).code == 0
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and "scm.db" not in p.parts}
    store = open_scm_db(tmp_path)  # held open, as a running SCM holds it: a second init must not need it
    try:
        again = cli("scm", "--init", "-D", f"ozone.metadata.dirs={tmp_path}", *SECURE)
    finally:
        store.close()
    assert again.code == 0, again.err
    assert "Reusing the root CA certificate" in again.out and "Reusing the SCM certificate" in again.out
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and "scm.db" not in p.parts}
    assert after == before


def test_init_mints_an_ha_om_join_credential_for_its_node(cli: Cli, tmp_path: Path) -> None:
    """R12 D3: `scm --init --join-token om=FILE` (what `cluster up --om-ha --secure` ran) minted a
    credential any OM of the service could spend on any node; `om:SERVICE/NODE=FILE` binds it."""
    join = tmp_path / "om1.pem"
    done = cli(
        "scm", "--init", "-D", f"ozone.metadata.dirs={tmp_path}", *SECURE, f"--join-token=om:svc/om1={join}"
    )
    assert done.code == 0, done.err
    assert f"for one OM (node svc/om1): {join} (mode 0600)" in done.out
    store = open_scm_db(tmp_path, read_only=True)
    try:
        assert [token["om_node"] for _, token in store.join_tokens.items()] == ["svc/om1"]
    finally:
        store.close()


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("om=/f", (CertRole.OM, "", "")),
        ("om:h1=/f", (CertRole.OM, "h1", "")),
        ("om:svc/om1=/f", (CertRole.OM, "", "svc/om1")),
        ("om:h1:svc/om1=/f", (CertRole.OM, "h1", "svc/om1")),
        ("om:::1:svc/om1=/f", (CertRole.OM, "::1", "svc/om1")),
    ],
)
def test_a_join_token_argument_names_a_role_a_host_and_an_om_node(
    text: str, parsed: tuple[CertRole, str, str]
) -> None:
    request = JoinRequest.parse(text)
    assert (request.role, request.name, request.om_node) == parsed and request.path == Path("/f")


def test_only_an_om_join_token_argument_names_an_om_node() -> None:
    with pytest.raises(ValueError, match="only an OM's JOIN credential names an OM node"):
        JoinRequest.parse("dn:svc/om1=/f")


def test_an_scm_join_token_argument_names_another_scm_node_of_the_service(cli: Cli, tmp_path: Path) -> None:
    request = JoinRequest.parse("scm:scm2=/f")
    assert (request.role, request.scm_node, request.name, request.path) == (
        CertRole.SCM,
        "scm2",
        "",
        Path("/f"),
    )
    for text in ("scm=/f", "scm:h:scm2=/f"):
        with pytest.raises(ValueError, match="an SCM's is scm:NODE=FILE"):
            JoinRequest.parse(text)
    lone = cli(
        "scm", "--init", "-D", f"ozone.metadata.dirs={tmp_path}", *SECURE, "--join-token", "scm:scm2=/f"
    )
    assert lone.code != 0 and "the SCM service names no other SCM scm2" in lone.err
    assert not files_of(conf_of(tmp_path)).ca.cert.exists()  # refused before the CA is made


def test_a_missing_admin_certificate_is_issued_again_alone(cli: Cli, tmp_path: Path) -> None:
    assert cli("scm", "--init", "-D", f"ozone.metadata.dirs={tmp_path}", *SECURE).code == 0
    files = files_of(conf_of(tmp_path))
    files.user("ada").cert.unlink()
    scm_before = files.scm.cert.read_bytes()
    again = cli("scm", "--init", "-D", f"ozone.metadata.dirs={tmp_path}", *SECURE)
    assert "Client certificate of administrator ada created" in again.out
    assert files.scm.cert.read_bytes() == scm_before and serials(tmp_path) == [1, 2, 3, 4]


def test_a_directory_made_before_the_sub_ca_is_refused_until_init_makes_it(cli: Cli, tmp_path: Path) -> None:
    """Issue 31: SCM's certificate was a leaf the root signed (and so were the others). SCM refuses to start
    and names the fix; `scm --init` again makes SCM's sub-CA, keeps the root, and the root-signed
    certificates issued before stay valid (the root is still every holder's ca.crt)."""
    assert cli("scm", "--init", "-D", f"ozone.metadata.dirs={tmp_path}", *SECURE).code == 0
    files = files_of(conf_of(tmp_path))
    root = load_ca(files).trust_anchor
    root_key = X.key_from_pem(files.ca.key.read_bytes())
    scm_key = X.key_from_pem(files.scm.key.read_bytes())
    csr = X.build_csr(scm_key, X.Identity(CertRole.SCM, "scm", "127.0.0.1"), ("127.0.0.1",))
    storage = read_scm_storage(tmp_path)
    old = X.sign_csr(csr, root_key, root, storage.cluster_id, storage.scm_uuid, dt.timedelta(days=1), 99)
    files.scm.cert.write_bytes(X.cert_to_pem(old))  # the layout before: SCM's certificate a leaf
    with pytest.raises(SecuritySetupError, match=r"not a sub-CA.*Run `pyozone scm --init` again"):
        load_ca(files)
    with pytest.raises(ServerStartError, match="not a sub-CA"):
        ScmDaemon(conf_of(tmp_path), *open_scm_store(conf_of(tmp_path)))
    admin_before = files.user("ada").cert.read_bytes()
    again = cli("scm", "--init", "-D", f"ozone.metadata.dirs={tmp_path}", *SECURE)
    assert again.code == 0, again.err
    assert "Reusing the root CA certificate" in again.out and "a sub-CA of the root CA" in again.out
    material = load_ca(files)
    assert X.is_ca(material.cert) and material.trust_anchor == root
    assert files.user("ada").cert.read_bytes() == admin_before  # still valid: reused


def test_insecure_init_makes_no_security_files(cli: Cli, tmp_path: Path) -> None:
    result = cli("scm", "--init", "-D", f"ozone.metadata.dirs={tmp_path}")
    assert result.code == 0 and "certificate" not in result.out.lower()
    assert not (tmp_path / "ca").exists() and not (tmp_path / "keys").exists()


def test_grpc_tls_without_security_is_refused_before_anything_is_written(cli: Cli, tmp_path: Path) -> None:
    result = cli("scm", "--init", "-D", f"ozone.metadata.dirs={tmp_path}", "-D", "hdds.grpc.tls.enabled=true")
    assert result.code == 1 and "hdds.grpc.tls.enabled=true needs ozone.security.enabled=true" in result.err
    assert not tmp_path.exists() or list(tmp_path.iterdir()) == []


def test_an_external_root_ca_signs_instead(cli: Cli, tmp_path: Path) -> None:
    external = CertAuthority(tmp_path / "external")
    write_file(tmp_path / "root.key", X.key_to_pem(external.key), private=True)
    write_file(tmp_path / "root.crt", X.cert_to_pem(external.cert))
    metadata = tmp_path / "scm"
    result = cli(
        "scm", "--init", "-D", f"ozone.metadata.dirs={metadata}", *SECURE,
        "-D", f"hdds.x509.rootca.certificate.file={tmp_path / 'root.crt'}",
        "-D", f"hdds.x509.rootca.private.key.file={tmp_path / 'root.key'}",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert f"Reusing the root CA certificate {tmp_path / 'root.crt'}" in result.out
    assert not (metadata / "ca" / "keys").exists()
    scm = X.cert_from_pem((metadata / "certs" / "certificate.crt").read_bytes())
    assert X.is_signed_by(scm, external.cert)


def test_a_secure_scm_without_a_ca_does_not_start(tmp_path: Path) -> None:
    conf = conf_of(tmp_path)
    init_scm(conf)  # initialised insecure, started secure
    with pytest.raises(
        ServerStartError, match=r"SCM has no certificate authority .* run `pyozone scm --init`"
    ):
        ScmDaemon(conf, *open_scm_store(conf))


def test_scm_hosts_name_the_configured_host_first_and_always_loopback() -> None:
    hosts = scm_hosts(OzoneConfiguration({"ozone.scm.names": "scm1.example:9861,scm2"}))
    assert hosts[0] == "scm1.example" and {"scm2", "127.0.0.1", "localhost"} <= set(hosts)
    assert "0.0.0.0" not in hosts


def test_the_admin_is_the_first_named_administrator_else_the_login_user(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert admin_user(OzoneConfiguration({"ozone.administrators": "*, bo ,cy"})) == "bo"
    monkeypatch.setenv("HADOOP_USER_NAME", "hal")
    assert admin_user(OzoneConfiguration()) == "hal"
    assert admin_user(OzoneConfiguration({"ozone.administrators": "*"})) == "hal"


def test_secret_key_file_round_trip_is_private(tmp_path: Path) -> None:
    keys = (ManagedSecretKey.generate(0, 10), ManagedSecretKey.generate(5, 10))
    file = SecretKeyFile(tmp_path / "keys" / "secret_keys.json")
    assert file.load() == []
    file.save(keys)
    assert mode(file.path) == 0o600 and tuple(file.load()) == keys
    assert json.loads(file.path.read_text())[0]["id"] == str(keys[0].id)


@pytest.mark.parametrize("content", ["{", "{}", '[{"id": "x"}]'])
def test_a_damaged_secret_key_file_is_named(tmp_path: Path, content: str) -> None:
    (tmp_path / "s.json").write_text(content)
    with pytest.raises(SecuritySetupError, match=f"the secret key file {tmp_path / 's.json'} is unusable"):
        SecretKeyFile(tmp_path / "s.json").load()


def test_scm_renews_its_own_certificate_inside_the_grace_period(initialised: tuple[Path, str]) -> None:
    metadata, _ = initialised
    files = files_of(conf_of(metadata))
    own = TlsPaths(files.scm.key, files.scm.cert, files.scm.ca)
    current = X.cert_from_pem(own.cert.read_bytes())
    expiry_ms = int(current.not_valid_after_utc.timestamp() * 1000)
    grace_ms = 10 * 86_400_000
    clock = ManualClock(epoch_ms=expiry_ms - grace_ms - 1)
    store = open_scm_db(metadata)
    try:
        storage = read_scm_storage(metadata)
        ca = CertificateAuthority(
            load_ca(files),
            CertificateStore(store),
            clock,
            storage.cluster_id,
            storage.scm_uuid,
            365 * 86_400_000,
        )
        key_before = own.key.read_bytes()
        assert renew_scm_certificate(ca, own, ("127.0.0.1",), grace_ms, 1865 * 86_400_000) is None
        clock.advance(1)
        renewed = renew_scm_certificate(ca, own, ("127.0.0.1", "localhost"), grace_ms, 1865 * 86_400_000)
    finally:
        store.close()
    assert renewed is not None and renewed.serial_number > current.serial_number
    assert own.cert.read_bytes() == X.cert_to_pem(renewed) and own.key.read_bytes() == key_before
    # hdds.x509.max.duration, never past the root (the sub-CA made at init already ends with it)
    assert renewed.not_valid_after_utc == ca.material.trust_anchor.not_valid_after_utc


def test_a_join_credential_may_name_only_the_configured_om_and_gateway_host() -> None:
    """Issue 28 defect 4: the host a JOIN credential may obtain `om@HOST` or `s3g@HOST` for."""
    named = configured_service_hosts(
        OzoneConfiguration({"ozone.om.address": "om.example:9862", "ozone.s3g.http-address": "s3.example"})
    )
    assert named == {CertRole.OM: {"om.example"}, CertRole.S3G: {"s3.example"}}
    wildcard = configured_service_hosts(OzoneConfiguration())  # 0.0.0.0: the daemon names itself 127.0.0.1
    assert wildcard == {CertRole.OM: {"127.0.0.1"}, CertRole.S3G: {"127.0.0.1"}}


def test_a_join_credential_may_name_each_configured_om_node_on_its_host() -> None:
    """Issue 30: the OMs of an HA service each obtain a certificate of their own ("SERVICE/NODE")."""
    conf = OzoneConfiguration(
        {
            "ozone.om.service.ids": "svc",
            "ozone.om.nodes.svc": "om1,om2",
            "ozone.om.address.svc.om1": "a.example:9862",
            "ozone.om.address.svc.om2": "0.0.0.0:9863",
        }
    )
    assert configured_om_nodes(conf) == {"svc/om1": "a.example", "svc/om2": "127.0.0.1"}
    assert configured_om_nodes(OzoneConfiguration()) == {}


def test_scm_renews_its_own_certificate_issued_before_the_role_names(initialised: tuple[Path, str]) -> None:
    """A cluster made before the CA added role-qualified names (x509.role_host_name): SCM renews its own
    certificate at start, so the daemons dialling SCM verify it."""
    metadata, _ = initialised
    files = files_of(conf_of(metadata))
    own = TlsPaths(files.scm.key, files.scm.cert, files.scm.ca)
    current = X.cert_from_pem(own.cert.read_bytes())
    material = load_ca(files)
    old = without_role_names(current, material.key)
    own.cert.write_bytes(X.cert_to_pem(old))
    store = open_scm_db(metadata)
    try:
        storage = read_scm_storage(metadata)
        clock = ManualClock(epoch_ms=int(current.not_valid_before_utc.timestamp() * 1000) + 60_000)
        ca = CertificateAuthority(
            material, CertificateStore(store), clock, storage.cluster_id, storage.scm_uuid, 365 * 86_400_000
        )
        renewed = renew_scm_certificate(ca, own, ("127.0.0.1",), 86_400_000, 1865 * 86_400_000)
    finally:
        store.close()
    assert renewed is not None and X.role_host_name(X.CertRole.SCM, "127.0.0.1") in X.dns_names(renewed)
