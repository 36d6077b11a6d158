"""SCMSecurityClient: a synchronous client of SCM's security protocol (port 9961, always mutual TLS).

Daemons use it for their certificate (first start, renewal) and for the secret keys tokens are signed
with; `pyozone admin cert` uses it to list and issue certificates. Blocking, so callers on an event loop run
it in `asyncio.to_thread`. Every failure is a SecurityError naming Ozone's status. With an SCM HA service
(`scm_security_nodes`) its calls go to the leader and fail over as the block and admin clients' do
(framework/scm_failover.py: the CA's records are the leader's); `get_scm_certificate` goes to one SCM, the
primordial, whatever its role.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.scm_ha import ScmProtocol
from pyozone.common.tls import TlsStore
from pyozone.config import OzoneConfiguration
from pyozone.framework.scm_errors import ScmClientError
from pyozone.framework.scm_failover import FailoverStub, ScmNodes, channel_stubs
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol import security as wire
from pyozone.protocol.security import MAX_LIST_COUNT, MAX_SECURITY_MESSAGE_BYTES

T = TypeVar("T")

_UNREACHABLE = (rpc.StatusCode.UNAVAILABLE, rpc.StatusCode.DEADLINE_EXCEEDED)


def scm_security_nodes(conf: OzoneConfiguration) -> ScmNodes:
    """The SCMs of the service at their security ports (`ozone.scm.security.service.port` of each node), or
    the lone SCM's (`ozone.scm.security.service.address`, else the host of the first of ozone.scm.names)."""
    return ScmNodes.configured(conf, ScmProtocol.SECURITY)


class SCMSecurityClient:
    def __init__(self, scm: HostPort | ScmNodes, tls: TlsStore, timeout_s: float = 10) -> None:
        nodes = scm if isinstance(scm, ScmNodes) else ScmNodes.lone(scm)
        self.timeout_s = timeout_s
        spec = rpc.ServiceSpec.of(wire.SECURITY_SERVICE)
        self._stub: Any = FailoverStub(
            nodes, channel_stubs(nodes, spec, MAX_SECURITY_MESSAGE_BYTES, tls, CertRole.SCM)
        )

    @property
    def address(self) -> HostPort:
        """The SCM calls go to now."""
        return self._stub.address  # type: ignore[no-any-return]

    def close(self) -> None:
        self._stub.close()

    def __enter__(self) -> SCMSecurityClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ certificates
    def get_ca_certificate(self) -> bytes:
        """The CA's certificate (PEM)."""
        return self._call(
            self._stub.getCACertificate,
            wire.empty_request("getCACertificate"),
            wire.issued_certificate_from_proto,
        )

    def sign_csr(self, csr_pem: bytes) -> tuple[bytes, bytes]:
        """A certificate for the CSR and the CA certificate that signed it (PEM both)."""
        try:
            csr = csr_pem.decode("ascii")
        except UnicodeDecodeError:
            raise SecurityError(SecurityResult.INVALID_CSR, "a CSR is PEM text (ASCII)") from None
        return self._call(self._stub.getCert, wire.csr_request(csr), wire.certificate_pair_from_proto)

    def get_scm_certificate(
        self, csr_pem: bytes, scm_node: str, cluster_id: str, scm_id: str
    ) -> tuple[bytes, bytes]:
        """Ozone's getSCMCertificate: the sub-CA of SCM node `scm_node` (scmUuid `scm_id`) of `cluster_id` and
        the root CA certificate (PEM both), from the SCM holding the root's key."""
        request = wire.scm_csr_request(csr_pem.decode("ascii"), scm_node, cluster_id, scm_id)
        return self._call(self._stub.getSCMCertificate, request, wire.certificate_pair_from_proto)

    def list_certificates(
        self,
        role: CertRole | None = None,
        start_serial: int = 0,
        count: int = MAX_LIST_COUNT,
        revoked: bool = False,
    ) -> list[bytes]:
        """Up to `count` valid (or `revoked`) certificates (PEM) with serial >= start_serial, in serial
        order."""
        request = wire.list_certificates_request(role, start_serial, count, revoked)
        return self._call(self._stub.listCertificate, request, wire.certificates_from_proto)

    def get_certificate(self, serial: int) -> bytes:
        return self._call(
            self._stub.getCertificate, wire.certificate_request(serial), wire.issued_certificate_from_proto
        )

    def create_join_token(
        self, role: CertRole, name: str, csr_pem: bytes, datanode: str = "", om_node: str = ""
    ) -> tuple[bytes, bytes]:
        """A JOIN credential's certificate for the CSR's key and the CA certificate (administrators);
        `datanode`: the known datanode it brings back; `om_node`: the HA OM node it is for."""
        request = wire.join_token_request(role, name, csr_pem.decode(), datanode, om_node)
        return self._call(self._stub.createJoinToken, request, wire.certificate_pair_from_proto)

    def revoke_certificates(self, serials: list[int], reason: int, names: list[str] | None = None) -> int:
        """Revokes the certificates, and every valid one of the common `names` (administrators); the CRL
        number that lists them."""
        request = wire.revoke_request(serials, reason, names or [])
        return self._call(self._stub.revokeCertificates, request, wire.revoked_from_proto)

    def get_crl(self) -> tuple[int, bytes]:
        """(CRL number, PEM CRL): the CA's current revocation list."""
        return self._call(self._stub.getCrl, wire.empty_request("getCrl"), wire.crl_from_proto)

    # ------------------------------------------------------------------ secret keys (OM and datanodes)
    def get_current_secret_key(self) -> ManagedSecretKey:
        return self._call(
            self._stub.getCurrentSecretKey,
            wire.empty_request("getCurrentSecretKey"),
            wire.current_secret_key_from_proto,
        )

    def get_secret_key(self, key_id: uuid.UUID) -> ManagedSecretKey | None:
        """None when SCM holds no key of that id (never made, or expired and dropped)."""
        return self._call(
            self._stub.getSecretKey, wire.secret_key_request(key_id), wire.found_secret_key_from_proto
        )

    def get_all_secret_keys(self) -> list[ManagedSecretKey]:
        return self._call(
            self._stub.getAllSecretKeys, wire.empty_request("getAllSecretKeys"), wire.secret_keys_from_proto
        )

    # ------------------------------------------------------------------ one path for failures
    def _call(self, method: Callable[..., Any], request: Any, convert: Callable[[Any], T]) -> T:
        try:
            response = method(request, timeout=self.timeout_s)
        except rpc.RpcError as e:
            raise self._error(e) from None
        except ScmClientError as e:  # no SCM of the service took it (failover exhausted)
            raise SecurityError(SecurityResult.UNAVAILABLE, str(e)) from None
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
