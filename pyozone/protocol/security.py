"""The security protocol's converters (SCMSecurityProtocolService): secret keys, certificate roles and PEM
fields, each naming the field of a bad input (ProtocolError), as pyozone.protocol's converters do, and the
service's requests and answers, built here once for SCM's SecurityService and SCMSecurityClient alike."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence

from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message

from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.hdds.security.x509 import CertRole
from pyozone.proto import ScmSecurityProtocol_pb2 as pb
from pyozone.protocol.common import request_of

SECURITY_SERVICE: ServiceDescriptor = pb.DESCRIPTOR.services_by_name["SCMSecurityProtocolService"]
"""What pyozone.rpc serves on ozone.scm.security.service.address and what SCMSecurityClient calls."""

_ROLE_TO_PROTO = {
    CertRole.OM: pb.OM,
    CertRole.SCM: pb.SCM,
    CertRole.DATANODE: pb.DATANODE,
    CertRole.S3G: pb.S3GATEWAY,
    CertRole.USER: pb.USER,
    CertRole.JOIN: pb.JOIN,
}
_ROLE_FROM_PROTO = {v: k for k, v in _ROLE_TO_PROTO.items()}


def role_to_proto(role: CertRole | None) -> int:
    return pb.NODE_TYPE_UNSPECIFIED if role is None else _ROLE_TO_PROTO[role]


def role_from_proto(value: int, field: str) -> CertRole | None:
    """None for NODE_TYPE_UNSPECIFIED (every role)."""
    if value == pb.NODE_TYPE_UNSPECIFIED:
        return None
    try:
        return _ROLE_FROM_PROTO[value]
    except KeyError:
        raise ProtocolError(field, f"unknown NodeType value {value}") from None


def secret_key_to_proto(key: ManagedSecretKey) -> pb.ManagedSecretKey:
    return pb.ManagedSecretKey(
        id=str(key.id),
        creationTime=key.creation_ms,
        expiryTime=key.expiry_ms,
        algorithm=key.algorithm,
        encoded=key.encoded,
    )


def secret_key_from_proto(proto: pb.ManagedSecretKey, field: str) -> ManagedSecretKey:
    key_id = uuid_from_proto(proto.id, f"{field}.id")
    try:
        return ManagedSecretKey(key_id, proto.creationTime, proto.expiryTime, proto.algorithm, proto.encoded)
    except ValueError as e:
        raise ProtocolError(field, str(e)) from None


def uuid_from_proto(text: str, field: str) -> uuid.UUID:
    if not text:
        raise ProtocolError(field, "is missing")
    try:
        return uuid.UUID(text)
    except ValueError:
        raise ProtocolError(field, f"{text!r} is not a UUID") from None


def serial_from_proto(text: str, field: str) -> int:
    """A certificate serial number in decimal, as Ozone's certSerialId."""
    if not text:
        raise ProtocolError(field, "is missing")
    if not text.isascii() or not text.isdigit() or len(text) > 49:
        raise ProtocolError(field, f"{text[:60]!r} is not a serial number (a decimal number)")
    return int(text)


def certificate_from_proto(text: str, field: str) -> bytes:
    """A PEM certificate field, checked to parse."""
    if not text:
        raise ProtocolError(field, "is missing")
    pem = text.encode()
    try:
        X.cert_from_pem(pem)
    except ValueError as e:
        raise ProtocolError(field, str(e)) from None
    return pem


MAX_SECURITY_MESSAGE_BYTES = 4 << 20
"""SCMSecurityProtocolService: a listing holds at most MAX_LIST_COUNT certificates of about 1.5 KiB."""

MAX_LIST_COUNT = 1000
"""Certificates per listCertificate page (Ozone's CLI asks 20 by default)."""


# ------------------------------------------------------------------ the service's requests and answers
def empty_request(method: str) -> Message:
    """The request of an rpc sent without arguments: getCACertificate, getCrl and the secret keys'."""
    return request_of(SECURITY_SERVICE, method)


def csr_request(csr: str) -> pb.SCMGetCertRequestProto:
    return pb.SCMGetCertRequestProto(CSR=csr)


def scm_csr_request(csr: str, scm_node: str, cluster_id: str, scm_id: str) -> pb.SCMGetSCMCertRequestProto:
    """getSCMCertificate's request: the CSR of SCM node `scm_node` (scmUuid `scm_id`) of `cluster_id`."""
    details = pb.ScmNodeDetailsProto(scmNodeId=scm_node, clusterId=cluster_id, scmId=scm_id)
    return pb.SCMGetSCMCertRequestProto(scmDetails=details, CSR=csr)


def certificate_request(serial: int) -> pb.SCMGetCertificateRequestProto:
    return pb.SCMGetCertificateRequestProto(certSerialId=str(serial))


def list_certificates_request(
    role: CertRole | None, start_serial: int, count: int, revoked: bool
) -> pb.SCMListCertificateRequestProto:
    return pb.SCMListCertificateRequestProto(
        role=role_to_proto(role), startCertId=start_serial, count=count, isRevoked=revoked
    )


def join_token_request(
    role: CertRole, name: str, csr: str, datanode: str, om_node: str = ""
) -> pb.SCMCreateJoinTokenRequestProto:
    return pb.SCMCreateJoinTokenRequestProto(
        role=role_to_proto(role), name=name, CSR=csr, datanode=datanode, omNode=om_node
    )


def revoke_request(
    serials: Iterable[int], reason: int, names: Sequence[str]
) -> pb.SCMRevokeCertificatesRequestProto:
    return pb.SCMRevokeCertificatesRequestProto(certIds=[str(s) for s in serials], reason=reason, names=names)


def secret_key_request(key_id: uuid.UUID) -> pb.SCMGetSecretKeyRequest:
    return pb.SCMGetSecretKeyRequest(secretKeyId=str(key_id))


def certificate_pair_to_proto(cert: bytes, ca: bytes) -> pb.SCMGetCertResponseProto:
    """A certificate (PEM) and the CA certificate that signed it."""
    return pb.SCMGetCertResponseProto(x509Certificate=cert.decode(), x509CACertificate=ca.decode())


def certificate_pair_from_proto(proto: pb.SCMGetCertResponseProto) -> tuple[bytes, bytes]:
    return (
        certificate_from_proto(proto.x509Certificate, "x509Certificate"),
        certificate_from_proto(proto.x509CACertificate, "x509CACertificate"),
    )


def issued_certificate_from_proto(proto: pb.SCMGetCertResponseProto) -> bytes:
    """The certificate alone, of an answer that carries the CA's beside it."""
    return certificate_from_proto(proto.x509Certificate, "x509Certificate")


def certificates_to_proto(pems: Iterable[bytes]) -> pb.SCMListCertificateResponseProto:
    return pb.SCMListCertificateResponseProto(certificates=[p.decode() for p in pems])


def certificates_from_proto(proto: pb.SCMListCertificateResponseProto) -> list[bytes]:
    return [certificate_from_proto(c, f"certificates[{i}]") for i, c in enumerate(proto.certificates)]


def current_secret_key_to_proto(key: ManagedSecretKey) -> pb.SCMGetCurrentSecretKeyResponse:
    return pb.SCMGetCurrentSecretKeyResponse(secretKey=secret_key_to_proto(key))


def current_secret_key_from_proto(proto: pb.SCMGetCurrentSecretKeyResponse) -> ManagedSecretKey:
    return secret_key_from_proto(proto.secretKey, "secretKey")


def found_secret_key_to_proto(key: ManagedSecretKey | None) -> pb.SCMGetSecretKeyResponse:
    """getSecretKey's answer: without a key when SCM holds none of that id."""
    if key is None:
        return pb.SCMGetSecretKeyResponse()
    return pb.SCMGetSecretKeyResponse(secretKeyProto=secret_key_to_proto(key))


def found_secret_key_from_proto(proto: pb.SCMGetSecretKeyResponse) -> ManagedSecretKey | None:
    if not proto.HasField("secretKeyProto"):
        return None
    return secret_key_from_proto(proto.secretKeyProto, "secretKeyProto")


def secret_keys_to_proto(keys: Iterable[ManagedSecretKey]) -> pb.SCMSecretKeysListResponse:
    return pb.SCMSecretKeysListResponse(secretKeys=[secret_key_to_proto(k) for k in keys])


def secret_keys_from_proto(proto: pb.SCMSecretKeysListResponse) -> list[ManagedSecretKey]:
    return [secret_key_from_proto(k, f"secretKeys[{i}]") for i, k in enumerate(proto.secretKeys)]


def revoked_to_proto(crl_id: int) -> pb.SCMRevokeCertificatesResponseProto:
    """revokeCertificates' answer: the number of the CRL that lists them."""
    return pb.SCMRevokeCertificatesResponseProto(crlId=crl_id)


def revoked_from_proto(proto: pb.SCMRevokeCertificatesResponseProto) -> int:
    return int(proto.crlId)


def crl_to_proto(crl_id: int, pem: bytes) -> pb.SCMGetCrlResponseProto:
    return pb.SCMGetCrlResponseProto(crlId=crl_id, x509CRL=pem.decode())


def crl_from_proto(proto: pb.SCMGetCrlResponseProto) -> tuple[int, bytes]:
    """(CRL number, PEM CRL)."""
    if not proto.x509CRL:
        raise ProtocolError("x509CRL", "is missing")
    return int(proto.crlId), proto.x509CRL.encode()
