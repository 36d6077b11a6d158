"""ACL entries and the objects they are set on, to and from OmClientProtocol's OzoneAclInfo and OzoneObj.

OM stores entries in its records with these converters and clients send and read them with the same ones.
Reading a request's entry checks it (a known type, rights within the nine, a name where the type needs
one) and names the field of a bad one.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.security.acl import (
    ACLIdentityType,
    Acls,
    AclScope,
    OzoneAcl,
    ResourceType,
    rights_from_mask,
    rights_mask,
)
from pyozone.proto import OmClientProtocol_pb2 as om_pb

_TYPES = {kind: om_pb.OzoneAclInfo.OzoneAclType.Value(kind.name) for kind in ACLIdentityType}
_KINDS = {number: kind for kind, number in _TYPES.items()}
_SCOPES = {AclScope.ACCESS: om_pb.OzoneAclInfo.ACCESS, AclScope.DEFAULT: om_pb.OzoneAclInfo.DEFAULT}
_RESOURCES = {resource: om_pb.OzoneObj.ObjectType.Value(resource.name) for resource in ResourceType}


def acl_to_proto(acl: OzoneAcl) -> om_pb.OzoneAclInfo:
    mask = rights_mask(acl.rights)
    return om_pb.OzoneAclInfo(
        type=_TYPES[acl.type],
        name=acl.name,
        rights=mask.to_bytes(max(1, (mask.bit_length() + 7) // 8), "little"),
        aclScope=_SCOPES[acl.scope],
    )


def acl_from_proto(proto: om_pb.OzoneAclInfo, field: str) -> OzoneAcl:
    kind = _KINDS.get(proto.type)
    if kind is None:
        raise ProtocolError(f"{field}.type", f"{proto.type} is not an ACL identity type")
    if proto.aclScope not in (om_pb.OzoneAclInfo.ACCESS, om_pb.OzoneAclInfo.DEFAULT):
        raise ProtocolError(f"{field}.aclScope", f"{proto.aclScope} is not ACCESS or DEFAULT")
    scope = AclScope.DEFAULT if proto.aclScope == om_pb.OzoneAclInfo.DEFAULT else AclScope.ACCESS
    try:
        rights = rights_from_mask(int.from_bytes(proto.rights, "little"))
        return OzoneAcl(kind, proto.name, rights, scope)
    except ValueError as e:
        raise ProtocolError(field, str(e)) from None


def acls_to_proto(acls: Acls) -> list[om_pb.OzoneAclInfo]:
    return [acl_to_proto(acl) for acl in acls]


def acls_from_proto(protos: list[om_pb.OzoneAclInfo], field: str) -> Acls:
    return tuple(acl_from_proto(p, f"{field}[{i}]") for i, p in enumerate(protos))


@dataclass(frozen=True, slots=True)
class ObjectPath:
    """A volume, bucket or key an ACL call names."""

    resource: ResourceType
    volume: str
    bucket: str = ""
    key: str = ""

    def __str__(self) -> str:
        return "/" + "/".join(p for p in (self.volume, self.bucket, self.key) if p)


def obj_to_proto(path: ObjectPath) -> om_pb.OzoneObj:
    return om_pb.OzoneObj(resType=_RESOURCES[path.resource], storeType=om_pb.OzoneObj.OZONE, path=str(path))


def obj_from_proto(proto: om_pb.OzoneObj, field: str) -> ObjectPath:
    """The object of /VOLUME, /VOLUME/BUCKET or /VOLUME/BUCKET/KEY (a key may hold '/'), by resType."""
    resource = next((r for r, number in _RESOURCES.items() if number == proto.resType), None)
    if resource is None:
        raise ProtocolError(f"{field}.resType", f"{proto.resType} is not VOLUME, BUCKET or KEY")
    depth = {ResourceType.VOLUME: 1, ResourceType.BUCKET: 2, ResourceType.KEY: 3}[resource]
    parts = proto.path.lstrip("/").split("/", depth - 1)
    if len(parts) != depth or not all(parts):
        shape = "/".join(("/VOLUME", "BUCKET", "KEY")[:depth])
        raise ProtocolError(f"{field}.path", f"{proto.path[:256]!r} does not name a {resource.name}: {shape}")
    return ObjectPath(resource, *parts)
