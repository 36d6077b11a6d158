"""Certificates for tests: a CA and the parties it signs, written where `TlsPaths` looks, made with the
kernel's own x509 functions (so a test's CA issues exactly what SCM's would)."""

from __future__ import annotations

import datetime as dt
import ipaddress
import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.x509.oid import NameOID

from pyozone.common.fsutil import write_file
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.hdds.security import x509 as X

_serials = itertools.count(100)


@dataclass
class CertAuthority:
    root: Path
    cluster_id: str = "CID-test"
    lifetime: dt.timedelta = dt.timedelta(days=1)
    key: X.PrivateKey = field(init=False)
    cert: X.Certificate = field(init=False)

    def __post_init__(self) -> None:
        self.key = X.generate_private_key()
        self.cert = X.self_signed_root(self.key, self.cluster_id, "SCM-test", "127.0.0.1", self.lifetime, 1)

    def issue(
        self,
        name: str,
        identity: X.Identity,
        hosts: tuple[str, ...] | None = None,
        lifetime: dt.timedelta | None = None,
        trust: X.Certificate | None = None,
        datanode: str | None = None,
        om_node: str | None = None,
    ) -> TlsPaths:
        """Key, certificate and CA files for `identity` under root/name; `trust` is the CA it trusts
        (default: this one). A service names `hosts` (default: loopback), a user none; `datanode`: the
        datanode UUID a datanode's certificate names; `om_node`: the "SERVICE/NODE" an HA OM's names."""
        key = X.generate_private_key()
        if hosts is None:
            hosts = ("127.0.0.1", "localhost") if identity.role.is_service else ()
        csr = X.build_csr(key, identity, hosts, datanode, om_node)
        cert = X.sign_csr(
            csr, self.key, self.cert, self.cluster_id, "SCM-test", lifetime or self.lifetime, next(_serials)
        )
        paths = TlsPaths(
            self.root / name / "private.pem", self.root / name / "cert.crt", self.root / name / "ca.crt"
        )
        write_file(paths.key, X.key_to_pem(key), private=True)
        write_file(paths.cert, X.cert_to_pem(cert))
        write_file(paths.ca, X.cert_to_pem(trust or self.cert))
        return paths

    def store(self, name: str, identity: X.Identity, **kwargs) -> TlsStore:
        return TlsStore(self.issue(name, identity, **kwargs))


def crl(ca: CertAuthority, revoked: list[int], number: int) -> bytes:
    """The CA's CRL number `number`, its lastUpdate a second later than the one before."""
    start = int(time.time() * 1000) - 60_000
    listed = [(s, start, "KEY_COMPROMISE") for s in revoked]
    return X.build_crl(ca.key, ca.cert, listed, number, start + 1000 * number, start + 86_400_000)


def serial(store: TlsStore) -> int:
    return X.cert_from_pem(store.paths.cert.read_bytes()).serial_number


def self_signed(root: Path, name: str, identity: X.Identity, trust: X.Certificate) -> TlsStore:
    """A party with a self-made certificate (it signs itself; no CA vouches for it) claiming `identity`,
    trusting `trust`: what an attacker without the CA's key can make."""
    key = X.generate_private_key()
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, identity.common_name)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(next(_serials))
        .not_valid_before(now - dt.timedelta(minutes=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    paths = TlsPaths(root / name / "private.pem", root / name / "cert.crt", root / name / "ca.crt")
    write_file(paths.key, X.key_to_pem(key), private=True)
    write_file(paths.cert, X.cert_to_pem(cert))
    write_file(paths.ca, X.cert_to_pem(trust))
    return TlsStore(paths)


def without_role_names(cert: x509.Certificate, ca_key: Any) -> x509.Certificate:
    """`cert` as the CA issued it before it added role-qualified names (x509.ROLE_NAME_SUFFIX): the same
    subject, key, serial and dates, only its hosts as names, signed by `ca_key`."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    bare = [n for n in sans if not str(n.value).endswith(X.ROLE_NAME_SUFFIX)]
    return (
        x509.CertificateBuilder()
        .subject_name(cert.subject)
        .issuer_name(cert.issuer)
        .public_key(cert.public_key())
        .serial_number(cert.serial_number)
        .not_valid_before(cert.not_valid_before_utc)
        .not_valid_after(cert.not_valid_after_utc)
        .add_extension(x509.SubjectAlternativeName(bare), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
