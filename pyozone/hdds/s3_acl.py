"""S3 ACLs as Ozone's native ACLs: canned ACLs, x-amz-grant-* headers and AccessControlPolicy documents read
into grants, and grants mapped both ways onto OzoneAcl entries, so that GetBucketAcl answers what
`ozone sh bucket getacl` shows and a native `addacl` shows up as a grant. Sans-IO and in the kernel: the S3
gateway reads and writes through OM's getAcl/setAcl (s3g/acls.py); the rules are here.

The mapping is Apache Ozone's gateway's (S3Acl.ACLType, ACLIdentityType): READ -> READ (a bucket's: READ
and LIST), WRITE -> WRITE (a bucket's: CREATE, WRITE and DELETE), READ_ACP -> READ_ACL, WRITE_ACP ->
WRITE_ACL, FULL_CONTROL -> ALL; a CanonicalUser grantee (its ID is the pyozone user name) -> a USER entry,
the AllUsers group -> the WORLD entry. Back, an entry shows each S3 permission whose Ozone right it holds
(ALL: FULL_CONTROL alone); ANONYMOUS and CLIENT_IP entries show as AllUsers, whom they grant in Ozone's
check (OzoneAclUtil matches them for every caller). S3's ACL is the whole ACL: a PutAcl leaves exactly its
grants' entries, removing what S3 cannot name (GROUP entries, DEFAULT-scope entries, rights no permission
shows) (R37's F5, F12), and keeps each grantee's rights for a permission it already showed as they were,
so writing back what GetAcl answered changes nothing S3 shows (F6). The AuthenticatedUsers and
LogDelivery groups, grantees by e-mail address and the canned ACLs built on them (authenticated-read,
aws-exec-read, log-delivery-write) are NotImplemented: Ozone has no identity for them (its WORLD is every
caller, which AllUsers is).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType

from pyozone.hdds.security.acl import ACLIdentityType, Acls, AclScope, ACLType, OzoneAcl, ResourceType
from pyozone.hdds.security.x509 import check_user_name

S3_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"
AUTHENTICATED_USERS = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
LOG_DELIVERY = "http://acs.amazonaws.com/groups/s3/LogDelivery"
MAX_POLICY_BYTES = 64 * 1024
"""An AccessControlPolicy's most: Amazon keeps at most 100 grants."""
MAX_GRANTS = 100
"""Amazon's limit of grants in one ACL."""


class AclError(Exception):
    """What S3 refuses: `code` is S3's error code (MalformedACLError, InvalidArgument, InvalidRequest,
    NotImplemented)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Permission(Enum):
    """S3's permissions in Amazon's order."""

    FULL_CONTROL = "FULL_CONTROL"
    WRITE = "WRITE"
    WRITE_ACP = "WRITE_ACP"
    READ = "READ"
    READ_ACP = "READ_ACP"


@dataclass(frozen=True, slots=True)
class Grantee:
    """A user by its canonical ID (the pyozone user name) or, `group` true, Amazon's AllUsers group."""

    id: str
    group: bool = False


EVERYONE = Grantee(ALL_USERS, group=True)


@dataclass(frozen=True, slots=True)
class Grant:
    grantee: Grantee
    permission: Permission


_BUCKET_RIGHTS = {
    Permission.READ: frozenset({ACLType.READ, ACLType.LIST}),
    Permission.WRITE: frozenset({ACLType.CREATE, ACLType.WRITE, ACLType.DELETE}),
}
_RIGHTS = {
    Permission.READ: frozenset({ACLType.READ}),
    Permission.WRITE: frozenset({ACLType.WRITE}),
    Permission.READ_ACP: frozenset({ACLType.READ_ACL}),
    Permission.WRITE_ACP: frozenset({ACLType.WRITE_ACL}),
    Permission.FULL_CONTROL: frozenset({ACLType.ALL}),
}
_SHOWN = {  # the Ozone right whose presence shows each permission
    Permission.READ: ACLType.READ,
    Permission.WRITE: ACLType.WRITE,
    Permission.READ_ACP: ACLType.READ_ACL,
    Permission.WRITE_ACP: ACLType.WRITE_ACL,
}


def rights(permission: Permission, resource: ResourceType) -> frozenset[ACLType]:
    if resource is ResourceType.BUCKET and permission in _BUCKET_RIGHTS:
        return _BUCKET_RIGHTS[permission]
    return _RIGHTS[permission]


# ---------------------------------------------------------------------- grants -> Ozone
def to_ozone(grants: Iterable[Grant], resource: ResourceType) -> Acls:
    """One ACCESS entry per grantee, in the order grantees first appear, holding the rights of all its
    grants (ALL alone where FULL_CONTROL is one of them)."""
    return replace_shown((), grants, resource)


_EVERYONE_TYPES = (ACLIdentityType.WORLD, ACLIdentityType.ANONYMOUS, ACLIdentityType.CLIENT_IP)


def shown(acl: OzoneAcl) -> bool:
    """Whether S3 can show the entry: a USER, or an AllUsers (WORLD, ANONYMOUS, CLIENT_IP), ACCESS entry."""
    return acl.scope is AclScope.ACCESS and (acl.type is ACLIdentityType.USER or acl.type in _EVERYONE_TYPES)


def _grantee_of(acl: OzoneAcl) -> Grantee:
    return EVERYONE if acl.type in _EVERYONE_TYPES else Grantee(acl.name)


def replace_shown(current: Acls, grants: Iterable[Grant], resource: ResourceType) -> Acls:
    """What a PutAcl leaves: its grants' entries and nothing else. A permission the grantee's current
    entries already show keeps the rights they hold for it (a bucket's `user:bob:w` stays `w` when bob's
    WRITE is written back, not CREATE, WRITE and DELETE); a new one gets its full mapping."""
    held: dict[Grantee, set[ACLType]] = {}
    for acl in current:
        if shown(acl):
            held.setdefault(_grantee_of(acl), set()).update(acl.rights)
    merged: dict[Grantee, set[ACLType]] = {}
    for grant in grants:
        old = held.get(grant.grantee, set())
        mapped = rights(grant.permission, resource)
        showing = ACLType.ALL not in old and grant.permission in _SHOWN and _SHOWN[grant.permission] in old
        merged.setdefault(grant.grantee, set()).update(mapped & old if showing else mapped)
    return _entries(merged)


def _entries(merged: Mapping[Grantee, set[ACLType]]) -> Acls:
    """One ACCESS entry per grantee (ALL alone where it is held)."""
    return tuple(
        OzoneAcl(ACLIdentityType.WORLD, "", _rights(r))
        if grantee.group
        else OzoneAcl(ACLIdentityType.USER, grantee.id, _rights(r))
        for grantee, r in merged.items()
    )


def _rights(held: set[ACLType]) -> frozenset[ACLType]:
    return frozenset({ACLType.ALL}) if ACLType.ALL in held else frozenset(held)


def with_owner(grants: Iterable[Grant], owner: str) -> tuple[Grant, ...]:
    """The grants with the owner's FULL_CONTROL first (R37's F9): GetAcl shows it whatever the entries
    say, and OM lets a bucket's owner, not a key's, pass every check, so an ACL written without it would
    lock the key's owner out while showing it FULL_CONTROL."""
    full = Grant(Grantee(owner), Permission.FULL_CONTROL)
    return (full, *(g for g in grants if g != full))


# ---------------------------------------------------------------------- Ozone -> grants
def from_ozone(acls: Iterable[OzoneAcl], owner: str) -> tuple[Grant, ...]:
    """The grants the entries S3 can show make, the owner's FULL_CONTROL first whatever its entry says
    (Ozone's owner passes every check: OzoneNativeAuthorizer; and a record made while ACLs were off has no
    entries): ALL is FULL_CONTROL alone; otherwise one grant per permission whose right the entry holds
    (NONE: none)."""
    grants: dict[Grant, None] = {Grant(Grantee(owner), Permission.FULL_CONTROL): None}
    for acl in acls:
        if not shown(acl) or ACLType.NONE in acl.rights:
            continue
        if acl.type is ACLIdentityType.USER and acl.name == owner:
            continue
        grantee = _grantee_of(acl)
        if ACLType.ALL in acl.rights:
            grants[Grant(grantee, Permission.FULL_CONTROL)] = None
            continue
        grants.update((Grant(grantee, p), None) for p, right in _SHOWN.items() if right in acl.rights)
    return tuple(grants)


def is_public(grants: Iterable[Grant]) -> bool:
    """Whether a grant names AllUsers (BlockPublicAcls, IgnorePublicAcls)."""
    return any(g.grantee.group for g in grants)


def owner_only(grants: Iterable[Grant], owner: str) -> bool:
    """Whether the grants are the owner's FULL_CONTROL alone: what a bucket whose ACLs are disabled
    accepts (BucketOwnerEnforced)."""
    return set(grants) <= {Grant(Grantee(owner), Permission.FULL_CONTROL)}


# ---------------------------------------------------------------------- canned ACLs
CANNED = frozenset(
    {"private", "public-read", "public-read-write", "authenticated-read", "aws-exec-read",
     "bucket-owner-read", "bucket-owner-full-control", "log-delivery-write"}
)  # fmt: skip
"""Amazon's canned ACLs ("Canned ACL")."""
_UNMAPPED_CANNED = frozenset({"authenticated-read", "aws-exec-read", "log-delivery-write"})


def canned(name: str, owner: str, bucket_owner: str, resource: ResourceType) -> tuple[Grant, ...]:
    """The grants of a canned ACL on a bucket or object `owner` owns in a bucket `bucket_owner` owns; a name
    Amazon has not is InvalidArgument. The bucket-owner-* ones on a bucket are `private`, as Amazon
    ignores them there."""
    name = name.strip()
    if name not in CANNED:
        raise AclError("InvalidArgument", f"{name!r} is not a canned ACL.")
    if name in _UNMAPPED_CANNED:
        raise AclError(
            "NotImplemented", f"The canned ACL {name} is not implemented: Ozone has no grantee for it."
        )
    grants = [Grant(Grantee(owner), Permission.FULL_CONTROL)]
    if name in ("public-read", "public-read-write"):
        grants.append(Grant(EVERYONE, Permission.READ))
    if name == "public-read-write":
        grants.append(Grant(EVERYONE, Permission.WRITE))
    if resource is ResourceType.KEY and bucket_owner != owner:
        if name == "bucket-owner-read":
            grants.append(Grant(Grantee(bucket_owner), Permission.READ))
        elif name == "bucket-owner-full-control":
            grants.append(Grant(Grantee(bucket_owner), Permission.FULL_CONTROL))
    return tuple(grants)


# ---------------------------------------------------------------------- x-amz-grant-* headers
GRANT_HEADERS = MappingProxyType(
    {
        "x-amz-grant-read": Permission.READ,
        "x-amz-grant-write": Permission.WRITE,
        "x-amz-grant-read-acp": Permission.READ_ACP,
        "x-amz-grant-write-acp": Permission.WRITE_ACP,
        "x-amz-grant-full-control": Permission.FULL_CONTROL,
    }
)
_GRANTEE = re.compile(r'\s*(id|uri|emailAddress)\s*=\s*(?:"([^"]*)"|([^",]*))\s*(?:,|$)', re.IGNORECASE)
"""A grantee: a quoted value is one value whatever it holds (a comma in it does not split it: R37's F15)."""


def header_grants(headers: Mapping[str, str]) -> tuple[Grant, ...]:
    """The grants of the x-amz-grant-* headers: each a comma-separated list of `id="..."`,
    `uri="..."` or `emailAddress="..."`; another form, or another x-amz-grant- header, is InvalidArgument."""
    grants: list[Grant] = []
    for name, value in headers.items():
        lower = name.lower()
        if not lower.startswith("x-amz-grant-"):
            continue
        permission = GRANT_HEADERS.get(lower)
        if permission is None:
            raise AclError("InvalidArgument", f"{name} is not a grant header.")
        position = 0
        text = value.strip()
        if not text:
            raise AclError("InvalidArgument", f"{name} names no grantee.")
        while position < len(text):
            match = _GRANTEE.match(text, position)
            if match is None or match.end() == position:
                raise AclError(
                    "InvalidArgument", f"{name}: {text!r} is not a list of id=, uri= or emailAddress=."
                )
            value = match.group(2) if match.group(2) is not None else match.group(3)
            grants.append(Grant(_grantee(match.group(1).lower(), value.strip()), permission))
            position = match.end()
    if len(grants) > MAX_GRANTS:  # as a body's (R37's F15)
        raise AclError("InvalidArgument", f"An ACL holds at most {MAX_GRANTS} grants.")
    return tuple(grants)


def _grantee(kind: str, value: str) -> Grantee:
    if kind == "emailaddress":
        raise AclError(
            "NotImplemented", "Grantees by e-mail address are not implemented (Amazon retired them)."
        )
    if kind == "uri":
        return _group(value)
    return _user(value)


def _group(uri: str) -> Grantee:
    if uri == ALL_USERS:
        return EVERYONE
    if uri in (AUTHENTICATED_USERS, LOG_DELIVERY):
        raise AclError("NotImplemented", f"Grants to {uri} are not implemented: Ozone has no such grantee.")
    raise AclError("InvalidArgument", f"{uri!r} is not a group URI.")


def _user(name: str) -> Grantee:
    """A canonical ID: the pyozone user name (InvalidArgument for one that cannot be a user: x509's
    check_user_name, which the gateway's access ids pass)."""
    try:
        return Grantee(check_user_name(name))
    except ValueError:
        raise AclError("InvalidArgument", f"Invalid id {name!r}.") from None


# ---------------------------------------------------------------------- AccessControlPolicy documents
@dataclass(frozen=True, slots=True)
class AccessControlPolicy:
    owner: str
    grants: tuple[Grant, ...]


def parse_policy(body: bytes) -> AccessControlPolicy:
    """PutBucketAcl / PutObjectAcl's body: an Owner with an ID and an AccessControlList of Grants, each a
    Grantee (xsi:type CanonicalUser with ID, Group with URI, AmazonCustomerByEmail) and a Permission;
    anything else is MalformedACLError."""
    if len(body) > MAX_POLICY_BYTES:
        raise AclError("MalformedACLError", "The ACL is too long.")
    try:
        root = ET.fromstring(body)  # expat: no external entities
    except (ET.ParseError, LookupError, ValueError):
        raise AclError("MalformedACLError", "The XML is not well-formed.") from None
    if _local(root.tag) != "AccessControlPolicy":
        raise AclError("MalformedACLError", "The root element must be AccessControlPolicy.")
    owner = _child(root, "Owner")
    owner_id = _text(_child(owner, "ID")) if owner is not None else None
    acl = _child(root, "AccessControlList")
    if owner_id is None or acl is None:
        raise AclError(
            "MalformedACLError", "An AccessControlPolicy needs an Owner ID and an AccessControlList."
        )
    grants = [_grant(element) for element in acl]
    if len(grants) > MAX_GRANTS:
        raise AclError("MalformedACLError", f"An ACL holds at most {MAX_GRANTS} grants.")
    return AccessControlPolicy(owner_id, tuple(grants))


def _grant(element: ET.Element) -> Grant:
    grantee = _child(element, "Grantee")
    permission = _text(_child(element, "Permission"))
    if _local(element.tag) != "Grant" or grantee is None or permission is None:
        raise AclError("MalformedACLError", "A Grant holds a Grantee and a Permission.")
    try:
        granted = Permission(permission)
    except ValueError:
        raise AclError("MalformedACLError", f"{permission!r} is not a permission.") from None
    kind = grantee.get(f"{{{XSI}}}type")
    fields = {_local(c.tag): _text(c) or "" for c in grantee}
    if kind == "CanonicalUser" and fields.get("ID"):
        return Grant(_user(fields["ID"]), granted)
    if kind == "Group" and fields.get("URI"):
        return Grant(_group(fields["URI"]), granted)
    if kind == "AmazonCustomerByEmail" and fields.get("EmailAddress"):
        return Grant(_grantee("emailaddress", fields["EmailAddress"]), granted)
    raise AclError("MalformedACLError", "A Grantee is a CanonicalUser with an ID or a Group with a URI.")


def _child(element: ET.Element | None, name: str) -> ET.Element | None:
    if element is None:
        return None
    return next((c for c in element if _local(c.tag) == name), None)


def _text(element: ET.Element | None) -> str | None:
    return None if element is None else (element.text or "").strip()


def _local(tag: object) -> str:
    return str(tag).rsplit("}", 1)[-1]


def document(owner: str, grants: Iterable[Grant]) -> bytes:
    """GetBucketAcl / GetObjectAcl's answer."""
    root = ET.Element("AccessControlPolicy", {"xmlns": S3_NAMESPACE})
    owner_element = ET.SubElement(root, "Owner")
    ET.SubElement(owner_element, "ID").text = owner
    ET.SubElement(owner_element, "DisplayName").text = owner
    acl = ET.SubElement(root, "AccessControlList")
    for grant in grants:
        element = ET.SubElement(acl, "Grant")
        grantee = ET.SubElement(element, "Grantee", {"xmlns:xsi": XSI})
        if grant.grantee.group:
            grantee.set("xsi:type", "Group")
            ET.SubElement(grantee, "URI").text = grant.grantee.id
        else:
            grantee.set("xsi:type", "CanonicalUser")
            ET.SubElement(grantee, "ID").text = grant.grantee.id
            ET.SubElement(grantee, "DisplayName").text = grant.grantee.id
        ET.SubElement(element, "Permission").text = grant.permission.value
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8")
