"""ScmSecurity: the CA, the secret keys and the access policy behind the security protocol, and their
periodic work (key rotation, dropping expired certificates) on the core's schedule."""

from __future__ import annotations

import logging
import uuid

from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.periodic import PeriodicTask
from pyozone.scm.security.authority import CertificateAuthority
from pyozone.scm.security.policy import AccessPolicy
from pyozone.scm.security.secret_key_manager import SecretKeyManager
from pyozone.security.config import SecurityConfig
from pyozone.security.errors import SecurityError, SecurityResult

log = logging.getLogger(__name__)


class ScmSecurity:
    def __init__(
        self,
        settings: SecurityConfig,
        ca: CertificateAuthority,
        secret_keys: SecretKeyManager,
        policy: AccessPolicy,
    ) -> None:
        self.ca = ca
        self.secret_keys = secret_keys
        self.policy = policy
        self.secret_keys.check_and_rotate()  # a current key before the first request
        self.tasks = [
            PeriodicTask("SecretKeyRotation", settings.secret_key_check_ms, secret_keys.check_and_rotate),
            PeriodicTask("ExpiredCertificateCleanup", settings.expired_check_ms, self.remove_expired),
        ]

    def remove_expired(self) -> None:
        removed = self.ca.remove_expired()
        if removed:
            log.info("Removed %d expired certificate(s) from validCerts: %s", len(removed), removed)

    # ------------------------------------------------------------------ certificates
    def sign(
        self, caller: Identity, csr_pem: bytes, caller_datanode: str | None = None
    ) -> tuple[bytes, bytes]:
        """(certificate PEM, CA PEM) for a CSR the caller may have signed; `caller_datanode`: the datanode
        UUID the caller's certificate names."""
        cert = self.ca.sign_request(csr_pem, caller, self.policy, caller_datanode)
        log.info(
            "Issued certificate %d for %s to %s, valid until %s",
            cert.serial_number,
            X.common_name(cert),
            caller.common_name,
            cert.not_valid_after_utc.isoformat(),
        )
        return X.cert_to_pem(cert), self.ca.material.pem

    def ca_certificate(self) -> bytes:
        return self.ca.material.pem

    def certificate(self, caller: Identity, serial: int) -> bytes:
        self.policy.check_read_certificates(caller)
        record = self.ca.certs.get(serial)
        if record is None:
            raise SecurityError(
                SecurityResult.CERTIFICATE_NOT_FOUND, f"no valid certificate with serial {serial}"
            )
        return record.pem

    def certificates(
        self, caller: Identity, role: CertRole | None, start_serial: int, count: int
    ) -> list[bytes]:
        self.policy.check_read_certificates(caller)
        return [r.pem for r in self.ca.certs.list(role, start_serial, count)]

    # ------------------------------------------------------------------ secret keys
    def current_secret_key(self, caller: Identity) -> ManagedSecretKey:
        self.policy.check_read_secret_keys(caller)
        key = self.secret_keys.current()
        if key is None:
            raise SecurityError(SecurityResult.SECRET_KEY_NOT_INITIALIZED, "SCM holds no current secret key")
        return key

    def secret_key(self, caller: Identity, key_id: uuid.UUID) -> ManagedSecretKey | None:
        self.policy.check_read_secret_keys(caller)
        return self.secret_keys.get(key_id)

    def all_secret_keys(self, caller: Identity) -> list[ManagedSecretKey]:
        self.policy.check_read_secret_keys(caller)
        return self.secret_keys.all()
