"""SCMSecurityClient: a synchronous client of SCM's security protocol (port 9961, always mutual TLS).

Daemons use it for their certificate (first start, renewal) and for the secret keys tokens are signed
with; `pyozone admin cert` uses it to list and issue certificates. Blocking, so callers on an event loop run
it in `asyncio.to_thread`. Every failure is a SecurityError naming Ozone's status.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.hdds.security.x509 import CertRole
from pyozone.proto import ScmSecurityProtocol_pb2 as pb
from pyozone.protocol.security import (
    MAX_LIST_COUNT,
    MAX_SECURITY_MESSAGE_BYTES,
    certificate_from_proto,
    role_to_proto,
    secret_key_from_proto,
)

T = TypeVar("T")

_UNREACHABLE = (rpc.StatusCode.UNAVAILABLE, rpc.StatusCode.DEADLINE_EXCEEDED)


class SCMSecurityClient:
    def __init__(self, address: HostPort, tls: TlsStore, timeout_s: float = 10) -> None:
        self.address = address
        self.timeout_s = timeout_s
        self._channel = rpc.SyncChannel(
            address, rpc.ChannelSettings(MAX_SECURITY_MESSAGE_BYTES), tls, CertRole.SCM
        )
        self._stub: Any = rpc.Stub(self._channel, rpc.service(pb, "SCMSecurityProtocolService"))

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> SCMSecurityClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ certificates
    def get_ca_certificate(self) -> bytes:
        """The CA's certificate (PEM)."""
        return self._call(
            self._stub.getCACertificate,
            pb.SCMGetCACertificateRequestProto(),
            lambda r: certificate_from_proto(r.x509Certificate, "x509Certificate"),
        )

    def sign_csr(self, csr_pem: bytes) -> tuple[bytes, bytes]:
        """A certificate for the CSR and the CA certificate that signed it (PEM both)."""

        def convert(r: pb.SCMGetCertResponseProto) -> tuple[bytes, bytes]:
            return (
                certificate_from_proto(r.x509Certificate, "x509Certificate"),
                certificate_from_proto(r.x509CACertificate, "x509CACertificate"),
            )

        try:
            csr = csr_pem.decode("ascii")
        except UnicodeDecodeError:
            raise SecurityError(SecurityResult.INVALID_CSR, "a CSR is PEM text (ASCII)") from None
        return self._call(self._stub.getCert, pb.SCMGetCertRequestProto(CSR=csr), convert)

    def list_certificates(
        self,
        role: CertRole | None = None,
        start_serial: int = 0,
        count: int = MAX_LIST_COUNT,
        revoked: bool = False,
    ) -> list[bytes]:
        """Up to `count` valid (or `revoked`) certificates (PEM) with serial >= start_serial, in serial
        order."""
        request = pb.SCMListCertificateRequestProto(
            role=role_to_proto(role), startCertId=start_serial, count=count, isRevoked=revoked
        )
        return self._call(
            self._stub.listCertificate,
            request,
            lambda r: [certificate_from_proto(c, f"certificates[{i}]") for i, c in enumerate(r.certificates)],
        )

    def get_certificate(self, serial: int) -> bytes:
        return self._call(
            self._stub.getCertificate,
            pb.SCMGetCertificateRequestProto(certSerialId=str(serial)),
            lambda r: certificate_from_proto(r.x509Certificate, "x509Certificate"),
        )

    def create_join_token(
        self, role: CertRole, name: str, csr_pem: bytes, datanode: str = ""
    ) -> tuple[bytes, bytes]:
        """A JOIN credential's certificate for the CSR's key and the CA certificate (administrators);
        `datanode`: the known datanode it brings back."""
        request = pb.SCMCreateJoinTokenRequestProto(
            role=role_to_proto(role), name=name, CSR=csr_pem.decode(), datanode=datanode
        )
        return self._call(
            self._stub.createJoinToken,
            request,
            lambda r: (
                certificate_from_proto(r.x509Certificate, "x509Certificate"),
                certificate_from_proto(r.x509CACertificate, "x509CACertificate"),
            ),
        )

    def revoke_certificates(self, serials: list[int], reason: int, names: list[str] | None = None) -> int:
        """Revokes the certificates, and every valid one of the common `names` (administrators); the CRL
        number that lists them."""
        request = pb.SCMRevokeCertificatesRequestProto(
            certIds=[str(s) for s in serials], reason=reason, names=names or []
        )
        return self._call(self._stub.revokeCertificates, request, lambda r: int(r.crlId))

    def get_crl(self) -> tuple[int, bytes]:
        """(CRL number, PEM CRL): the CA's current revocation list."""

        def convert(r: pb.SCMGetCrlResponseProto) -> tuple[int, bytes]:
            if not r.x509CRL:
                raise ProtocolError("x509CRL", "is missing")
            return int(r.crlId), r.x509CRL.encode()

        return self._call(self._stub.getCrl, pb.SCMGetCrlRequestProto(), convert)

    # ------------------------------------------------------------------ secret keys (OM and datanodes)
    def get_current_secret_key(self) -> ManagedSecretKey:
        return self._call(
            self._stub.getCurrentSecretKey,
            pb.SCMGetCurrentSecretKeyRequest(),
            lambda r: secret_key_from_proto(r.secretKey, "secretKey"),
        )

    def get_secret_key(self, key_id: uuid.UUID) -> ManagedSecretKey | None:
        """None when SCM holds no key of that id (never made, or expired and dropped)."""
        return self._call(
            self._stub.getSecretKey,
            pb.SCMGetSecretKeyRequest(secretKeyId=str(key_id)),
            lambda r: (
                secret_key_from_proto(r.secretKeyProto, "secretKeyProto")
                if r.HasField("secretKeyProto")
                else None
            ),
        )

    def get_all_secret_keys(self) -> list[ManagedSecretKey]:
        return self._call(
            self._stub.getAllSecretKeys,
            pb.SCMGetAllSecretKeysRequest(),
            lambda r: [secret_key_from_proto(k, f"secretKeys[{i}]") for i, k in enumerate(r.secretKeys)],
        )

    # ------------------------------------------------------------------ one path for failures
    def _call(self, method: Callable[..., Any], request: Any, convert: Callable[[Any], T]) -> T:
        try:
            response = method(request, timeout=self.timeout_s)
        except rpc.RpcError as e:
            raise self._error(e) from None
        try:
            return convert(response)
        except ProtocolError as e:
            raise SecurityError(
                SecurityResult.INTERNAL_ERROR, f"SCM at {self.address} sent a malformed answer: {e}"
            ) from None

    def _error(self, e: rpc.RpcError) -> SecurityError:
        status, details = e.code(), e.details() or ""
        if status in _UNREACHABLE:
            return SecurityError(
                SecurityResult.UNAVAILABLE,
                f"cannot reach SCM's security service at {self.address} "
                f"(ozone.scm.security.service.address): {details or status.name}",
            )
        code, message = split_code(details)
        return SecurityError(code or status.name, message)


def split_code(details: str) -> tuple[str | None, str]:
    """ "INVALID_CSR: why" -> ("INVALID_CSR", "why"); a message without a code -> (None, message)."""
    code, sep, rest = details.partition(":")
    code = code.strip()
    if sep and code and code.replace("_", "").isalnum() and code.upper() == code:
        return code, rest.strip()
    return None, details
