"""SCM's certificate authority: signs CSRs the policy allows, with serials from `CertificateId`, for
hdds.x509.default.duration (never past the CA's own expiry), and records them in `validCerts`.

The CA's key and certificate are handed in (the daemon loads them), the time comes from the Clock, so the
same code issues at `scm --init`, on the security protocol and in tests on virtual time.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from pyozone.hdds.clock import Clock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.certificates import CertificateStore, expiry_ms
from pyozone.scm.security.policy import AccessPolicy


@dataclass(frozen=True, slots=True)
class CaMaterial:
    """The issuing CA's key pair and certificate, and the root it chains to. In Ozone's layout (`scm --init`)
    `cert` is the SCM's own sub-CA, signed by `root`, and `root_key` signs the root's CRL and renews the
    sub-CA; a CA without `root` is a root that issues directly (tests; the CA on its own)."""

    key: X.PrivateKey
    cert: X.Certificate
    root: X.Certificate | None = None
    root_key: X.PrivateKey | None = None

    def __post_init__(self) -> None:
        if self.cert.public_key().public_numbers() != self.key.public_key().public_numbers():  # type: ignore[union-attr]
            raise ValueError("the CA certificate is not for the CA private key")
        if not X.is_ca(self.cert):
            raise ValueError("the CA certificate is not a CA certificate (BasicConstraints CA:true)")
        if self.root is not None and not X.verifies_to(self.cert, (), self.root):
            raise ValueError(f"the sub-CA {X.common_name(self.cert)} is not signed by the root CA")
        if self.root_key is not None and (
            self.trust_anchor.public_key().public_numbers() != self.root_key.public_key().public_numbers()  # type: ignore[union-attr]
        ):
            raise ValueError("the root CA certificate is not for the root CA private key")

    @property
    def trust_anchor(self) -> X.Certificate:
        """The root every certificate chains to: what daemons keep as ca.crt."""
        return self.root if self.root is not None else self.cert

    @property
    def pem(self) -> bytes:
        """The trust anchor's PEM (ca.crt)."""
        return X.cert_to_pem(self.trust_anchor)

    @property
    def chain(self) -> tuple[X.Certificate, ...]:
        """The certificates a leaf's file holds after the leaf: the issuing sub-CA (none for a root CA)."""
        return () if self.root is None else (self.cert,)

    def with_cert(self, cert: X.Certificate) -> CaMaterial:
        """The same CA with its renewed certificate (same key and subject)."""
        return CaMaterial(self.key, cert, self.root, self.root_key)


def renewal_due(cert: X.Certificate, now_ms: int, grace_ms: int) -> bool:
    """A certificate is renewed once it is within the grace period of its expiry."""
    return now_ms >= expiry_ms(cert) - grace_ms


def requested_identity(csr: X.CertificateSigningRequest) -> Identity:
    """The identity a CSR asks for; a name no peer could be, or a datanode's CSR naming no datanode UUID,
    is INVALID_CSR."""
    try:
        identity = Identity.from_common_name(X.csr_common_name(csr))
        if identity.role is CertRole.USER:
            X.check_user_name(identity.principal)
    except ValueError as e:
        raise SecurityError(SecurityResult.INVALID_CSR, str(e)) from None
    if identity.role is CertRole.DATANODE and X.datanode_id(csr) is None:
        raise SecurityError(
            SecurityResult.INVALID_CSR,
            f"{identity.common_name}: a datanode's certificate names its datanode UUID",
        )
    return identity


def parse_csr(csr_pem: bytes) -> X.CertificateSigningRequest:
    try:
        csr = X.csr_from_pem(csr_pem)
    except ValueError:
        raise SecurityError(SecurityResult.INVALID_CSR, "not a PEM certificate signing request") from None
    if not csr.is_signature_valid:
        raise SecurityError(SecurityResult.INVALID_CSR, "the CSR's signature does not verify")
    return csr


class CertificateAuthority:
    def __init__(
        self,
        material: CaMaterial,
        certs: CertificateStore,
        clock: Clock,
        cluster_id: str,
        scm_id: str,
        lifetime_ms: int,
    ) -> None:
        self.material = material
        self.certs = certs
        self.clock = clock
        self.cluster_id = cluster_id
        self.scm_id = scm_id
        self.lifetime = dt.timedelta(milliseconds=lifetime_ms)

    def issue(self, csr: X.CertificateSigningRequest, lifetime: dt.timedelta | None = None) -> X.Certificate:
        """Signs a parsed CSR (the caller checked who may have its name) and records the certificate."""
        now = dt.datetime.fromtimestamp(self.clock.wall_ms() / 1000, dt.UTC)
        if now >= self.material.cert.not_valid_after_utc:
            raise SecurityError(
                SecurityResult.UNABLE_TO_ISSUE_CERTIFICATE,
                f"the CA certificate expired at {self.material.cert.not_valid_after_utc.isoformat()}",
            )
        try:
            cert = X.sign_csr(
                csr,
                self.material.key,
                self.material.cert,
                self.cluster_id,
                self.scm_id,
                lifetime or self.lifetime,
                self.certs.next_serial(),
                not_before=now,
            )
        except ValueError as e:
            raise SecurityError(SecurityResult.INVALID_CSR, str(e)) from None
        self.certs.add(cert)
        return cert

    def file_pem(self, cert: X.Certificate) -> bytes:
        """What a holder's certificate file holds: the certificate, then its issuing sub-CA (TLS sends the
        chain; ca.crt, the root, is the trust anchor)."""
        return X.chain_to_pem((cert, *self.material.chain))

    def sign_request(
        self, csr_pem: bytes, caller: Identity, policy: AccessPolicy, caller_node: str | None = None
    ) -> X.Certificate:
        """The security protocol's getCert: a certificate if `caller` (whose certificate names the datanode
        or OM node `caller_node`, if any; X.node_of) may have the CSR's name."""
        csr = parse_csr(csr_pem)
        policy.check_csr(caller, requested_identity(csr), caller_node, X.node_of(csr))
        return self.issue(csr)

    def remove_expired(self) -> list[int]:
        return self.certs.remove_expired(self.clock.wall_ms())
