"""Issue 31, review R15 D3: an external root CA (hdds.x509.rootca.certificate.file) that cannot sign SCM's
sub-CA (path length 0, no keyCertSign, not a CA) is refused at `scm --init` and at load, naming the keys to
change; and `X.verifies_to` enforces path length and keyCertSign as OpenSSL does. Before, `scm --init`
made a sub-CA under a pathlen:0 root and exited 0, pyozone's chain checks called every file valid, and every
handshake failed ("path length constraint exceeded")."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes

from pyozone.common.fsutil import write_file
from pyozone.config import OzoneConfiguration
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.server.ca_files import ScmSecurityFiles, SecuritySetupError, load_root
from pyozone.security.config import SecurityConfig
from tests.unit.common.test_tls_revocation import handshake
from tests.unit.scm.security.test_sub_ca import SCM_HOSTS, store_of

Cli = Callable[..., Any]  # returns conftest.Result: code, out, err
SECURE = (
    "-D",
    "ozone.security.enabled=true",
    "-D",
    "ozone.scm.names=127.0.0.1",
    "-D",
    "ozone.administrators=ada",
)
CERT_SIGN = x509.KeyUsage(False, False, False, False, False, True, True, False, False)
NO_CERT_SIGN = x509.KeyUsage(True, False, False, False, False, False, True, False, False)


def external_root(
    path_length: int | None = 0, usage: x509.KeyUsage | None = CERT_SIGN, ca: bool = True
) -> tuple[X.PrivateKey, X.Certificate]:
    key = X.generate_private_key()
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "Corp Ozone Root")])
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1000)
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=path_length if ca else None), critical=True)
    )
    if usage is not None:
        builder = builder.add_extension(usage, critical=True)
    return key, builder.sign(key, hashes.SHA256())


def _write(tmp_path: Path, key: X.PrivateKey, cert: X.Certificate) -> tuple[str, ...]:
    write_file(tmp_path / "root.key", X.key_to_pem(key), private=True)
    write_file(tmp_path / "root.crt", X.cert_to_pem(cert))
    return (
        "-D", f"hdds.x509.rootca.certificate.file={tmp_path / 'root.crt'}",
        "-D", f"hdds.x509.rootca.private.key.file={tmp_path / 'root.key'}",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("root", "why"),
    [
        ({"path_length": 0}, "path length 0 allows 0 CA certificate(s) below it, not 1"),
        ({"path_length": None, "usage": NO_CERT_SIGN}, "lacks keyCertSign"),
        ({"ca": False}, "not a CA certificate"),
    ],
)
def test_init_refuses_an_external_root_that_cannot_sign_the_sub_ca(
    cli: Cli, tmp_path: Path, root: dict[str, Any], why: str
) -> None:
    metadata = tmp_path / "scm"
    result = cli(
        "scm",
        "--init",
        "-D",
        f"ozone.metadata.dirs={metadata}",
        *SECURE,
        *_write(tmp_path, *external_root(**root)),
    )
    assert result.code == 1
    assert f"the root CA certificate {tmp_path / 'root.crt'} cannot sign SCM's sub-CA" in result.err
    assert why in result.err and "hdds.x509.rootca.certificate.file" in result.err
    assert not (metadata / "certs" / "certificate.crt").exists()


def test_init_takes_an_external_root_without_a_path_length(cli: Cli, tmp_path: Path) -> None:
    metadata = tmp_path / "scm"
    result = cli(
        "scm",
        "--init",
        "-D",
        f"ozone.metadata.dirs={metadata}",
        *SECURE,
        *_write(tmp_path, *external_root(None)),
    )
    assert result.code == 0, result.err


def test_loading_refuses_an_external_root_of_path_length_0(tmp_path: Path) -> None:
    """A directory that `scm --init` set up before this check: SCM's start names the fix."""
    _write(tmp_path, *external_root(0))
    conf = OzoneConfiguration(
        {
            "ozone.metadata.dirs": str(tmp_path / "scm"),
            "ozone.security.enabled": "true",
            "hdds.x509.rootca.certificate.file": str(tmp_path / "root.crt"),
            "hdds.x509.rootca.private.key.file": str(tmp_path / "root.key"),
        }
    )
    with pytest.raises(
        SecuritySetupError,
        match="sub-CA, which signs every other certificate: its BasicConstraints path length 0 allows",
    ):
        load_root(ScmSecurityFiles.from_conf(conf, SecurityConfig.from_conf(conf)))


def _sub_ca_and_leaf(
    root_key: X.PrivateKey, root: X.Certificate
) -> tuple[X.PrivateKey, X.Certificate, X.PrivateKey, X.Certificate]:
    sub_key = X.generate_private_key()
    sub = X.sub_ca_certificate(
        sub_key,
        root_key,
        root,
        Identity(CertRole.SCM, "scm", SCM_HOSTS[0]),
        SCM_HOSTS,
        "C",
        "S",
        dt.timedelta(days=1),
        2,
    )
    leaf_key = X.generate_private_key()
    csr = X.build_csr(leaf_key, Identity(CertRole.OM, "om", "127.0.0.1"), ("127.0.0.1",))
    return sub_key, sub, leaf_key, X.sign_csr(csr, sub_key, sub, "C", "S", dt.timedelta(hours=1), 3)


def test_verifies_to_enforces_the_roots_path_length_as_openssl_does(tmp_path: Path) -> None:
    root_key, root = external_root(0)
    sub_key, sub, leaf_key, leaf = _sub_ca_and_leaf(root_key, root)
    assert X.verifies_to(sub, (), root)  # the root may sign the sub-CA itself
    assert not X.verifies_to(leaf, [sub], root)
    server = store_of(tmp_path, "scm", sub_key, X.cert_to_pem(sub), X.cert_to_pem(root))
    client = store_of(tmp_path, "om", leaf_key, X.chain_to_pem([leaf, sub]), X.cert_to_pem(root))
    assert "path length constraint exceeded" in handshake(server, client)
    ok_key, ok_root = external_root(1)
    _, ok_sub, _, ok_leaf = _sub_ca_and_leaf(ok_key, ok_root)
    assert X.verifies_to(ok_leaf, [ok_sub], ok_root)


def test_verifies_to_refuses_a_signer_without_key_cert_sign() -> None:
    root_key, root = external_root(None, NO_CERT_SIGN)
    _, sub, _, leaf = _sub_ca_and_leaf(root_key, root)
    assert not X.verifies_to(sub, (), root) and not X.verifies_to(leaf, [sub], root)
