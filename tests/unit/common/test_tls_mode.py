"""Which TLS a process speaks: hdds.grpc.tls.enabled needs ozone.security.enabled, and a TLS client
without a (readable) certificate is refused with the keys that would give it one."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from pyozone.common.tls_mode import client_tls, mtls_enabled, service_hosts
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.hdds.security import x509 as X
from tests.tls_certs import CertAuthority

SECURE = {"ozone.security.enabled": "true", "hdds.grpc.tls.enabled": "true"}


@pytest.fixture(autouse=True)
def no_client_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OZONE_CLIENT_CERT", "OZONE_CLIENT_KEY", "OZONE_CA_CERT"):
        monkeypatch.delenv(name, raising=False)


def test_tls_without_security_is_refused() -> None:
    assert mtls_enabled(OzoneConfiguration()) is False
    assert client_tls(OzoneConfiguration()) is None
    with pytest.raises(ConfigError, match=r"ozone\.security\.enabled is false"):
        mtls_enabled(OzoneConfiguration({"hdds.grpc.tls.enabled": "true"}))
    assert mtls_enabled(OzoneConfiguration(SECURE)) is True


def test_a_tls_client_needs_a_certificate() -> None:
    with pytest.raises(ConfigError, match=r"set ozone\.client\.tls\.\* or OZONE_CLIENT_CERT"):
        client_tls(OzoneConfiguration(SECURE))
    half = OzoneConfiguration({**SECURE, "ozone.client.tls.cert.file": "/c.crt"})
    with pytest.raises(ConfigError, match="missing: private key, CA certificate"):
        client_tls(half)


def test_the_client_certificate_is_read_from_the_keys_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = CertAuthority(tmp_path).issue("alice", X.Identity(X.CertRole.USER, "alice"))
    keys = {
        "ozone.client.tls.cert.file": str(paths.cert),
        "ozone.client.tls.key.file": str(paths.key),
        "ozone.client.tls.ca.file": str(paths.ca),
    }
    assert client_tls(OzoneConfiguration({**SECURE, **keys})).paths == paths
    monkeypatch.setenv("OZONE_CLIENT_CERT", str(paths.cert))
    monkeypatch.setenv("OZONE_CLIENT_KEY", str(paths.key))
    monkeypatch.setenv("OZONE_CA_CERT", str(tmp_path / "gone.crt"))
    with pytest.raises(ConfigError, match=r"cannot be read: TLS file missing: .*gone\.crt"):
        client_tls(OzoneConfiguration(SECURE))


def test_a_junk_or_mismatched_client_certificate_is_named_before_dialling(tmp_path: Path) -> None:
    """Else gRPC retries a failing handshake for a minute and blames OM ("failed to create security
    handshaker")."""
    ca = CertAuthority(tmp_path)
    alice = ca.issue("alice", X.Identity(X.CertRole.USER, "alice"))
    bob = ca.issue("bob", X.Identity(X.CertRole.USER, "bob"))
    junk = tmp_path / "junk.pem"
    junk.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    cases = {
        (junk, alice.key, alice.ca): rf"unusable: {junk}: not a PEM certificate",
        (alice.cert, junk, alice.ca): rf"unusable: {junk}: not an unencrypted PEM private key",
        (alice.cert, alice.key, junk): rf"unusable: {junk}: not a PEM certificate",
        (alice.cert, bob.key, alice.ca): rf"unusable: {alice.cert} is not the certificate of the private "
        rf"key {bob.key}",
    }
    for (cert, key, trusted), message in cases.items():
        keys = {
            "ozone.client.tls.cert.file": str(cert),
            "ozone.client.tls.key.file": str(key),
            "ozone.client.tls.ca.file": str(trusted),
        }
        with pytest.raises(ConfigError, match=message):
            client_tls(OzoneConfiguration({**SECURE, **keys}))


def test_a_service_certificate_names_every_host_a_peer_may_dial() -> None:
    hosts = service_hosts("10.1.2.3", "0.0.0.0", "127.0.0.1")
    assert hosts[:3] == ("10.1.2.3", "127.0.0.1", "localhost")
    assert socket.gethostname() in hosts and "0.0.0.0" not in hosts
    assert len(set(hosts)) == len(hosts)
