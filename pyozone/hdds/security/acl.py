"""Ozone's ACLs and its native authorizer's decision: one definition for OM, the CLI and the tests.

An ACL entry names who (a user, a group, the world), which rights (Ozone's IAccessAuthorizer.ACLType, with
the letters `ozone sh ... addacl` takes: r w c l d x y a n) and a scope: ACCESS entries decide access to
their object; DEFAULT entries on a volume or bucket are what its new children inherit as ACCESS entries.
The text form is Ozone's ("user:alice:rw", "group:staff:a", "world::r", "user:bob:r[DEFAULT]").

`check_access` is OzoneNativeAuthorizer with the parent rights of Ozone 1.4+ (OzoneAclUtils): an
administrator may do anything; a volume's owner anything in the volume; a bucket's owner anything in the
bucket; everyone else needs an entry granting the right on the object itself and the parent rights on its
bucket and volume. Only administrators create volumes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import Enum

from pyozone.hdds.security.x509 import CertRole, Identity, check_user_name


class ACLType(Enum):
    """Ozone's rights in Ozone's order (the bit of each in OzoneAclInfo.rights is its position)."""

    READ = "r"
    WRITE = "w"
    CREATE = "c"
    LIST = "l"
    DELETE = "d"
    READ_ACL = "x"
    WRITE_ACL = "y"
    ALL = "a"
    NONE = "n"

    @property
    def bit(self) -> int:
        return _ORDER.index(self)

    @classmethod
    def from_letter(cls, letter: str) -> ACLType:
        try:
            return cls(letter)
        except ValueError:
            letters = "".join(t.value for t in cls)
            raise ValueError(
                f"[{letter}] ACL right is not recognized (rights are letters of {letters!r})"
            ) from None


_ORDER = tuple(ACLType)


class ACLIdentityType(Enum):
    """Who an entry names; the value is Ozone's text form of the type."""

    USER = "user"
    GROUP = "group"
    WORLD = "world"
    ANONYMOUS = "anonymous"
    CLIENT_IP = "ip"

    @property
    def named(self) -> bool:
        """Whether entries of this type name someone (world and anonymous name everybody)."""
        return self not in (ACLIdentityType.WORLD, ACLIdentityType.ANONYMOUS)

    @classmethod
    def parse(cls, text: str) -> ACLIdentityType:
        key = text.strip().lower()
        for kind in cls:
            if key in (kind.value, kind.name.lower()):
                return kind
        types = ", ".join(k.value for k in cls)
        raise ValueError(f"{text!r} is not an ACL identity type ({types})")


class AclScope(Enum):
    ACCESS = "ACCESS"
    DEFAULT = "DEFAULT"


class ResourceType(Enum):
    """OzoneObj.ResourceType: what an ACL check is about (pyozone has no prefixes)."""

    VOLUME = "VOLUME"
    BUCKET = "BUCKET"
    KEY = "KEY"


def rights_text(rights: Iterable[ACLType]) -> str:
    present = set(rights)
    return "".join(t.value for t in _ORDER if t in present)


def rights_mask(rights: Iterable[ACLType]) -> int:
    """The rights as a bit set: bit i is the i-th ACLType (Ozone's BitSet of an OzoneAcl)."""
    return sum(1 << t.bit for t in set(rights))


def rights_from_mask(mask: int) -> frozenset[ACLType]:
    if mask >> len(_ORDER):
        raise ValueError(f"rights bit set {mask:#x} names a right past NONE (bit {len(_ORDER) - 1})")
    return frozenset(t for t in _ORDER if mask >> t.bit & 1)


def parse_rights_names(text: str) -> frozenset[ACLType]:
    """ "READ,LIST" or "ALL" (ozone.om.user.rights, ozone.om.group.rights) -> the rights."""
    rights = set()
    for name in (n.strip().upper() for n in text.split(",")):
        if not name:
            continue
        try:
            rights.add(ACLType[name])
        except KeyError:
            names = ", ".join(t.name for t in ACLType)
            raise ValueError(f"{name!r} is not an ACL right ({names})") from None
    return frozenset(rights)


@dataclass(frozen=True, slots=True)
class OzoneAcl:
    """One ACL entry. World and anonymous entries are named after their type ("WORLD"), as Ozone's."""

    type: ACLIdentityType
    name: str
    rights: frozenset[ACLType]
    scope: AclScope = AclScope.ACCESS

    def __post_init__(self) -> None:
        if not self.type.named:
            if self.name not in ("", "WORLD", "ANONYMOUS", self.type.name):
                raise ValueError(f"a {self.type.value} ACL names nobody, but {self.name!r} was given")
            object.__setattr__(self, "name", self.type.name)
        elif not self.name:
            raise ValueError(f"a {self.type.value} ACL needs a name ({self.type.value}:NAME:RIGHTS)")
        elif any(c in self.name for c in ":,[] \t\n"):
            raise ValueError(f"ACL name {self.name!r} holds one of ':,[]' or a space")
        if not self.rights:
            raise ValueError(f"the {self.type.value} ACL for {self.name!r} grants no rights (use n for none)")
        object.__setattr__(self, "rights", frozenset(self.rights))

    @classmethod
    def of(cls, kind: ACLIdentityType, name: str, rights: Iterable[ACLType] | str,
           scope: AclScope = AclScope.ACCESS) -> OzoneAcl:  # fmt: skip
        """`rights` as ACLTypes or as letters ("rw")."""
        if isinstance(rights, str):
            rights = [ACLType.from_letter(c) for c in rights]
        return cls(kind, name, frozenset(rights), scope)

    @classmethod
    def parse(cls, text: str) -> OzoneAcl:
        """Ozone's OzoneAcl.parseAcl: TYPE:NAME:RIGHTS with an optional [ACCESS] or [DEFAULT] suffix."""
        raw = text.strip()
        parts = raw.split(":")
        if len(parts) != 3:
            raise ValueError(
                f"ACL {text!r} is not TYPE:NAME:RIGHTS[SCOPE], e.g. user:alice:rw, group:staff:r, "
                "world::r or user:bob:rw[DEFAULT]"
            )
        kind, name, rights = parts
        scope = AclScope.ACCESS
        if rights.endswith("]"):
            rights, bracket, scope_name = rights[:-1].partition("[")
            if not bracket or scope_name not in AclScope.__members__:
                raise ValueError(f"ACL {text!r}: the scope is [ACCESS] or [DEFAULT]")
            scope = AclScope[scope_name]
        if not rights:
            raise ValueError(f"ACL {text!r} names no rights (letters of 'rwcldxyan')")
        try:
            return cls.of(ACLIdentityType.parse(kind), name, rights, scope)
        except ValueError as e:
            raise ValueError(f"ACL {text!r}: {e}") from None

    def __str__(self) -> str:
        name = self.name if self.type.named else ""
        suffix = "[DEFAULT]" if self.scope is AclScope.DEFAULT else ""
        return f"{self.type.value}:{name}:{rights_text(self.rights)}{suffix}"

    def to_json(self) -> dict[str, object]:
        """As `ozone sh ... getacl` prints an entry."""
        return {
            "type": self.type.name,
            "name": self.name,
            "aclScope": self.scope.value,
            "aclList": [t.name for t in _ORDER if t in self.rights],
        }

    def grants(self, right: ACLType) -> bool:
        """OzoneAcl.checkAccess: the right or ALL is set, and NONE is not."""
        return (right in self.rights or ACLType.ALL in self.rights) and ACLType.NONE not in self.rights

    def same_subject(self, other: OzoneAcl) -> bool:
        return (self.type, self.name, self.scope) == (other.type, other.name, other.scope)

    def applies_to(self, caller: Caller) -> bool:
        """Whether this entry speaks for the caller (Ozone checks no address for ip entries); for an
        anonymous caller only WORLD and ANONYMOUS entries do."""
        if caller.anonymous:
            return self.type in (ACLIdentityType.WORLD, ACLIdentityType.ANONYMOUS)
        if self.type is ACLIdentityType.USER:
            return self.name == caller.user
        if self.type is ACLIdentityType.GROUP:
            return self.name in caller.groups
        return True


def parse_acls(text: str) -> tuple[OzoneAcl, ...]:
    """A comma-separated list of entries (Ozone's OzoneAcl.parseAcls)."""
    if not text.strip():
        raise ValueError("an empty ACL list")
    return tuple(OzoneAcl.parse(part) for part in text.split(","))


Acls = tuple[OzoneAcl, ...]


def add_acl(acls: Acls, acl: OzoneAcl) -> Acls:
    """The entry's rights joined to the entry for the same subject and scope, or the entry appended."""
    for i, current in enumerate(acls):
        if current.same_subject(acl):
            return (*acls[:i], replace(current, rights=current.rights | acl.rights), *acls[i + 1 :])
    return (*acls, acl)


def remove_acl(acls: Acls, acl: OzoneAcl) -> Acls:
    """The entry's rights taken from the entry for the same subject and scope; an entry left with no rights
    goes."""
    for i, current in enumerate(acls):
        if current.same_subject(acl):
            left = current.rights - acl.rights
            kept = (replace(current, rights=left),) if left else ()
            return (*acls[:i], *kept, *acls[i + 1 :])
    return acls


def inherit_defaults(acls: Acls, parent: Acls) -> Acls:
    """A new child's entries: its own, with the parent's DEFAULT entries added as ACCESS entries
    (OzoneAclUtil.inheritDefaultAcls)."""
    for acl in parent:
        if acl.scope is AclScope.DEFAULT:
            acls = add_acl(acls, replace(acl, scope=AclScope.ACCESS))
    return acls


def default_acls(
    user: str, groups: Iterable[str], user_rights: frozenset[ACLType], group_rights: frozenset[ACLType]
) -> Acls:
    """What a new object grants its creator (ozone.om.user.rights) and the creator's groups
    (ozone.om.group.rights): OzoneAclUtil.getAclList."""
    acls: list[OzoneAcl] = [OzoneAcl(ACLIdentityType.USER, user, user_rights)] if user_rights else []
    if group_rights:
        acls.extend(OzoneAcl(ACLIdentityType.GROUP, g, group_rights) for g in groups)
    return tuple(acls)


# ---------------------------------------------------------------------- callers
ANONYMOUS_USER = "dr.who"
"""Who a call that names no one is (Hadoop's name for the unauthenticated user)."""


S3_ANONYMOUS = "@anonymous"
"""What the S3 gateway claims for an anonymous request (no signature): never a user name (check_user_name
refuses '@'), so no user is ever taken for it."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who asks: the user ACL entries are matched against, the user's groups, and whether the user is an
    administrator (ozone.administrators). `anonymous`: an unsigned S3 request, which only WORLD entries of
    the object itself speak for (check_access)."""

    user: str
    groups: tuple[str, ...] = ()
    admin: bool = False
    anonymous: bool = False


ANONYMOUS_CALLER = Caller(S3_ANONYMOUS, anonymous=True)


def caller_name(peer: Identity | None, claimed: str | None, tls: bool | None = None) -> tuple[str, bool]:
    """(user, is a service acting for itself): who calls OM, by contract 4 of issue 15. Over TLS the
    certificate says who calls (no certificate: nobody); a user's certificate cannot act for another, but
    the S3 gateway acts for the user a request names (Ozone's proxy user, which only OM accepts; every
    other server names its caller by `certificate_caller`). Without TLS the claimed name is trusted, as
    Ozone's simple authentication trusts the client. `tls`: whether the server speaks TLS (None: when a
    peer is known).

    Only OM and the S3 gateway acting for itself (making its volume) are services to OM, with an
    administrator's rights; a datanode, SCM or the join credential has no business there and is nobody.
    A claim is checked only where it is believed (ValueError when it names no valid user)."""
    if not (peer is not None if tls is None else tls):
        return (ANONYMOUS_USER if claimed is None else check_user_name(claimed)), False
    if peer is None:
        return ANONYMOUS_USER, False
    if peer.role is CertRole.USER:
        return peer.principal, False
    if peer.role is CertRole.S3G and claimed:
        return check_user_name(claimed), False
    if peer.role in (CertRole.OM, CertRole.S3G):
        return peer.principal, True
    return ANONYMOUS_USER, False


def certificate_caller(peer: Identity | None, claimed: str | None, tls: bool) -> str:
    """Who calls a server that takes no proxied user (SCM): over TLS the certificate alone, whatever
    x-ozone-user claims: its user, or its service's principal ("s3g", "om", "dn"), which is an
    administrator only if ozone.administrators names it; no certificate is nobody. Without TLS the claimed
    name, as in `caller_name` (ValueError when it names no valid user)."""
    if not tls:
        return ANONYMOUS_USER if claimed is None else check_user_name(claimed)
    return ANONYMOUS_USER if peer is None else peer.principal


# ---------------------------------------------------------------------- the native authorizer
@dataclass(frozen=True, slots=True)
class Ownership:
    """What an ACL check reads of an object: its owner and its entries. A record written before ACLs
    has no entries: only its owners (and administrators) reach it."""

    owner: str
    acls: Acls = ()
    explicit: bool = False
    """A new object's: `acls` is its whole ACL as its writer named it (an S3 ACL: openKey's and createBucket's
    acls), not its creator's defaults, so its parent's DEFAULT entries are not added."""

    def entries(self, parent: Acls) -> Acls:
        """A new child's entries: the named ones alone, or its defaults with the parent's DEFAULT entries."""
        return self.acls if self.explicit else inherit_defaults(self.acls, parent)


@dataclass(frozen=True, slots=True)
class Target:
    """The object a request is about, with its parents. A bucket being created is None; so is a key that
    does not exist (yet): its own entries are then not checked (Ozone permits a missing key's name and
    lets the parents decide)."""

    resource: ResourceType
    volume_name: str
    volume: Ownership
    bucket_name: str = ""
    bucket: Ownership | None = None
    key_name: str = ""
    key: Ownership | None = None

    def __post_init__(self) -> None:
        if self.resource is ResourceType.KEY and self.bucket is None:
            raise ValueError("a key's ACL check needs its bucket")

    def path(self) -> str:
        """As Ozone's refusal names the object: "Volume:vol Bucket:b Key:k"."""
        parts = [f"Volume:{self.volume_name}"]
        if self.resource is not ResourceType.VOLUME:
            parts.append(f"Bucket:{self.bucket_name}")
        if self.resource is ResourceType.KEY:
            parts.append(f"Key:{self.key_name}")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Denial:
    """A refusal: which right on which resource the caller lacked (the first check that failed)."""

    user: str
    right: ACLType
    resource: ResourceType
    path: str

    def message(self) -> str:
        """OmMetadataReader's wording."""
        return (
            f"User {self.user} doesn't have {self.right.name} permission to access "
            f"{self.resource.name} {self.path}"
        )


def parent_right(right: ACLType, resource: ResourceType) -> ACLType:
    """The right a request needs on the parent of `resource` (OzoneAclUtils.getParentNativeAcl): a bucket's
    volume READ (WRITE to create the bucket); a key's bucket WRITE to create or write the key, else READ."""
    if right is ACLType.CREATE:
        return ACLType.WRITE
    if resource is ResourceType.KEY and right in (ACLType.READ, ACLType.WRITE):
        return right
    return ACLType.READ


def granted(caller: Caller, right: ACLType, acls: Acls) -> bool:
    """OzoneAclUtil.checkAclRights: some entry that speaks for the caller grants the right."""
    return any(acl.applies_to(caller) and acl.grants(right) for acl in acls)


def check_access(caller: Caller, right: ACLType, target: Target) -> Denial | None:
    """None when the caller may; else what it lacked. OzoneAclUtils.checkAllAcls over
    OzoneNativeAuthorizer.checkAccess: the volume first (its owner passes; anyone else needs the parent
    right there), then the object, where the bucket's owner passes and anyone else needs an entry for the
    right on the object and the parent rights on its bucket and volume."""
    if caller.admin:
        return None
    path = target.path()
    if caller.anonymous:
        return _anonymous(caller, right, target)
    volume = target.volume
    if target.resource is ResourceType.VOLUME:
        if right is not ACLType.CREATE and (
            caller.user == volume.owner or granted(caller, right, volume.acls)
        ):
            return None
        return Denial(caller.user, right, ResourceType.VOLUME, path)
    if caller.user == volume.owner:
        return None
    on_volume = (
        parent_right(right, ResourceType.BUCKET) if target.resource is ResourceType.BUCKET else ACLType.READ
    )
    if not granted(caller, on_volume, volume.acls):
        return Denial(caller.user, on_volume, ResourceType.VOLUME, path)
    bucket = target.bucket
    if bucket is not None and caller.user == bucket.owner:
        return None
    if target.resource is ResourceType.BUCKET:
        ok = bucket is None or granted(caller, right, bucket.acls)  # None: being created
    else:
        assert bucket is not None  # __post_init__
        key = target.key
        ok = (key is None or right is ACLType.CREATE or granted(caller, right, key.acls)) and granted(
            caller, parent_right(right, ResourceType.KEY), bucket.acls
        )
    return None if ok else Denial(caller.user, right, target.resource, path)


ANONYMOUS_RIGHTS = frozenset({ACLType.READ, ACLType.LIST})
"""What an anonymous S3 request may be granted: reading an object, listing a bucket (S3's READ)."""


def _anonymous(caller: Caller, right: ACLType, target: Target) -> Denial | None:
    """An anonymous caller (S3's AllUsers): the object's own WORLD entry decides, without the parent
    rights Ozone asks of a user, as Amazon's public-read object is readable in a private bucket; a key that
    does not exist, a right beyond READ and LIST, and anything an owner or a named entry would pass are
    refused."""
    own = {
        ResourceType.VOLUME: target.volume,
        ResourceType.BUCKET: target.bucket,
        ResourceType.KEY: target.key,
    }
    record = own[target.resource]
    if right in ANONYMOUS_RIGHTS and record is not None and granted(caller, right, record.acls):
        return None
    return Denial(caller.user, right, target.resource, target.path())
