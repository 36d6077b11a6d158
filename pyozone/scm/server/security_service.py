"""SCMSecurityProtocolService: the CA and the secret keys on port 9961, always over mutual TLS.

The caller is the identity its verified certificate names (peer_identity); ScmSecurity decides what
it may do. A refusal is a status whose message starts with Ozone's status name.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.x509 import Identity
from pyozone.protocol.security import (
    MAX_LIST_COUNT,
    certificate_pair_to_proto,
    certificates_to_proto,
    crl_to_proto,
    current_secret_key_to_proto,
    found_secret_key_to_proto,
    revoked_to_proto,
    role_from_proto,
    secret_keys_to_proto,
    serial_from_proto,
    uuid_from_proto,
)
from pyozone.rpc import CallContext, StatusCode
from pyozone.rpc.metadata import peer_identity
from pyozone.scm.security.certificates import RevocationReason
from pyozone.scm.security.manager import ScmSecurity
from pyozone.scm.server.rpc import Handler, InvalidRequest, parse, rpc
from pyozone.security.service_access import peer_certificate, peer_node

if TYPE_CHECKING:
    from pyozone.proto import ScmSecurityProtocol_pb2 as pb

Context = CallContext

_STATUS = {
    SecurityResult.INVALID_CSR: StatusCode.INVALID_ARGUMENT,
    SecurityResult.PERMISSION_DENIED: StatusCode.PERMISSION_DENIED,
    SecurityResult.CERTIFICATE_NOT_FOUND: StatusCode.NOT_FOUND,
    SecurityResult.UNABLE_TO_ISSUE_CERTIFICATE: StatusCode.FAILED_PRECONDITION,
    SecurityResult.SECRET_KEY_NOT_INITIALIZED: StatusCode.FAILED_PRECONDITION,
}


def security_rpc(handler: Handler) -> Handler:
    """`rpc`, plus a SecurityError answered with its status and code."""

    @functools.wraps(handler)
    async def wrapper(self: SecurityService, request: object, context: Context) -> object:
        try:
            return await handler(self, request, context)
        except SecurityError as e:
            await context.abort(_STATUS.get(e.code, StatusCode.INTERNAL), str(e))  # type: ignore[call-overload]

    return rpc(wrapper)


def caller(context: Context) -> Identity:
    try:
        identity = peer_identity(context)
    except ValueError as e:
        raise SecurityError(SecurityResult.PERMISSION_DENIED, f"the caller's certificate: {e}") from None
    if identity is None:
        raise SecurityError(SecurityResult.PERMISSION_DENIED, "the caller presented no certificate")
    return identity


def _revocation_reason(code: int, field: str) -> RevocationReason:
    try:
        return RevocationReason(code)
    except ValueError:
        codes = ", ".join(f"{r.value} {r.name}" for r in RevocationReason)
        raise ProtocolError(field, f"{code} is not a revocation reason ({codes})") from None


class SecurityService:
    def __init__(self, security: ScmSecurity) -> None:
        self.security = security

    def caller(self, context: Context) -> Identity:
        """The caller, unless its certificate was revoked (every call: a revoked certificate renews
        nothing and reads nothing)."""
        identity = caller(context)
        cert = peer_certificate(context)
        self.security.check_caller(identity, None if cert is None else cert.serial_number, peer_node(context))
        return identity

    @security_rpc
    async def getCACertificate(
        self, request: pb.SCMGetCACertificateRequestProto, context: Context
    ) -> pb.SCMGetCertResponseProto:
        self.caller(context)
        ca = self.security.ca_certificate()
        return certificate_pair_to_proto(ca, ca)

    @security_rpc
    async def getCert(
        self, request: pb.SCMGetCertRequestProto, context: Context
    ) -> pb.SCMGetCertResponseProto:
        identity = caller(context)  # sign() refuses a revoked one, and a JOIN credential by its serial
        if not request.CSR:
            raise SecurityError(SecurityResult.INVALID_CSR, "CSR: is missing")
        own = peer_certificate(context)
        cert, ca = self.security.sign(
            identity,
            request.CSR.encode(),
            peer_node(context),
            None if own is None else own.serial_number,
        )
        return certificate_pair_to_proto(cert, ca)

    @security_rpc
    async def getSCMCertificate(
        self, request: pb.SCMGetSCMCertRequestProto, context: Context
    ) -> pb.SCMGetCertResponseProto:
        """Ozone's getSCMCertificate: another SCM's sub-CA at its `scm --bootstrap`, from the SCM holding the
        root's key whatever its Raft role (no quorum may exist yet)."""
        identity = self.caller(context)
        if not request.CSR:
            raise SecurityError(SecurityResult.INVALID_CSR, "CSR: is missing")
        details = request.scmDetails
        if not details.scmNodeId or not details.scmId:
            raise InvalidRequest("scmDetails: scmNodeId and scmId are required")
        own = peer_certificate(context)
        cert, ca = self.security.sign_scm(
            identity,
            None if own is None else own.serial_number,
            request.CSR.encode(),
            details.scmNodeId,
            details.scmId,
            details.clusterId,
        )
        return certificate_pair_to_proto(cert, ca)

    @security_rpc
    async def getCertificate(
        self, request: pb.SCMGetCertificateRequestProto, context: Context
    ) -> pb.SCMGetCertResponseProto:
        identity = self.caller(context)
        pem = self.security.certificate(
            identity, parse(serial_from_proto, request.certSerialId, "certSerialId")
        )
        return certificate_pair_to_proto(pem, self.security.ca_certificate())

    @security_rpc
    async def listCertificate(
        self, request: pb.SCMListCertificateRequestProto, context: Context
    ) -> pb.SCMListCertificateResponseProto:
        role = parse(role_from_proto, request.role, "role")
        count = min(request.count or MAX_LIST_COUNT, MAX_LIST_COUNT)
        pems = self.security.certificates(
            self.caller(context), role, max(request.startCertId, 0), count, request.isRevoked
        )
        return certificates_to_proto(pems)

    @security_rpc
    async def getCurrentSecretKey(
        self, request: pb.SCMGetCurrentSecretKeyRequest, context: Context
    ) -> pb.SCMGetCurrentSecretKeyResponse:
        return current_secret_key_to_proto(self.security.current_secret_key(self.caller(context)))

    @security_rpc
    async def getSecretKey(
        self, request: pb.SCMGetSecretKeyRequest, context: Context
    ) -> pb.SCMGetSecretKeyResponse:
        identity = self.caller(context)
        key = self.security.secret_key(identity, parse(uuid_from_proto, request.secretKeyId, "secretKeyId"))
        return found_secret_key_to_proto(key)

    @security_rpc
    async def getAllSecretKeys(
        self, request: pb.SCMGetAllSecretKeysRequest, context: Context
    ) -> pb.SCMSecretKeysListResponse:
        return secret_keys_to_proto(self.security.all_secret_keys(self.caller(context)))

    @security_rpc
    async def createJoinToken(
        self, request: pb.SCMCreateJoinTokenRequestProto, context: Context
    ) -> pb.SCMGetCertResponseProto:
        identity = self.caller(context)
        role = parse(role_from_proto, request.role, "role")
        if role is None:
            raise SecurityError(SecurityResult.INVALID_CSR, "role: is missing (OM, DATANODE or S3GATEWAY)")
        if not request.CSR:
            raise SecurityError(SecurityResult.INVALID_CSR, "CSR: is missing")
        cert, ca = self.security.mint_join(
            identity, role, request.name, request.CSR.encode(), request.datanode, request.omNode
        )
        return certificate_pair_to_proto(cert, ca)

    @security_rpc
    async def revokeCertificates(
        self, request: pb.SCMRevokeCertificatesRequestProto, context: Context
    ) -> pb.SCMRevokeCertificatesResponseProto:
        identity = self.caller(context)
        if not 0 < len(request.certIds) + len(request.names) <= MAX_LIST_COUNT:
            raise InvalidRequest(
                f"certIds and names: {len(request.certIds) + len(request.names)} (1 to {MAX_LIST_COUNT})"
            )
        serials = [parse(serial_from_proto, c, f"certIds[{i}]") for i, c in enumerate(request.certIds)]
        reason = parse(_revocation_reason, request.reason, "reason")
        self.security.revoke(identity, serials, reason, list(request.names))
        crl_id, _ = self.security.crl()
        return revoked_to_proto(crl_id)

    @security_rpc
    async def getCrl(self, request: pb.SCMGetCrlRequestProto, context: Context) -> pb.SCMGetCrlResponseProto:
        self.caller(context)
        return crl_to_proto(*self.security.crl())
