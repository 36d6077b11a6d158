"""The security protocol's converters: secret keys, certificate roles and PEM fields, each naming the
field of a bad input (ProtocolError), as pyozone.protocol's converters do."""

from __future__ import annotations

import uuid

from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.hdds.security.x509 import CertRole
from pyozone.proto import ScmSecurityProtocol_pb2 as pb

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
