"""Who calls OM, and whether they may (ozone.acl.enabled): the native authorizer over OM's records.

With ACLs off nothing here runs: a request has no caller and is not checked, as before, but for the S3
gateway's anonymous requests (S3_ANONYMOUS), which are checked against WORLD entries always. With them on, the
caller comes from the request (hdds/security/acl.caller_name: the certificate over TLS, else the user x-ozone-
user claims), its groups from Hadoop's static mapping and its administrator bit from ozone.administrators; a
check reads the object and its parents and asks the kernel's check_access, and a refusal is PERMISSION_DENIED
in Ozone's words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyozone.hdds.om_records import BucketRecord, VolumeRecord
from pyozone.hdds.s3_versions import BucketVersioning
from pyozone.hdds.security.acl import (
    ANONYMOUS_CALLER,
    ANONYMOUS_USER,
    S3_ANONYMOUS,
    Acls,
    ACLType,
    Caller,
    Ownership,
    ResourceType,
    Target,
    caller_name,
    check_access,
    default_acls,
)
from pyozone.hdds.security.x509 import CertRole
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.settings import AccessSettings
from pyozone.rpc.metadata import USER_METADATA, peer_identity


class Access:
    def __init__(self, om: OzoneManager, settings: AccessSettings) -> None:
        self.om = om
        self.settings = settings

    # ------------------------------------------------------------------ callers
    def caller(self, context: Any) -> Caller | None:
        """Who an RPC request comes from; None when ACLs are off (but the S3 gateway's anonymous caller,
        ANONYMOUS_CALLER, which WORLD entries decide for either way). OM's or the S3 gateway's certificate
        acting for itself (the gateway making its volume) is an administrator, as the daemons' own user is
        in Ozone; another service's is nobody (caller_name)."""
        if not self.settings.enabled:
            return ANONYMOUS_CALLER if self._claimed(context) == S3_ANONYMOUS else None
        return self.identify(context)

    @staticmethod
    def _claimed(context: Any) -> str | None:
        return next((v for k, v in context.invocation_metadata() or () if k == USER_METADATA), None)

    def identify(self, context: Any) -> Caller:
        """Who an RPC request comes from whether or not ACLs are on, with its administrator bit from
        ozone.administrators: for the calls never open to all (runS3Lifecycle). Without TLS the name is the
        one x-ozone-user claims, as Ozone's simple authentication trusts it; none is the anonymous user."""
        claimed = self._claimed(context)
        peer = peer_identity(context) if self.settings.tls else None
        if claimed == S3_ANONYMOUS and (peer is None or peer.role is CertRole.S3G):
            return ANONYMOUS_CALLER  # never an administrator, whatever ozone.administrators says
        try:
            user, service = caller_name(peer, claimed, self.settings.tls)
        except ValueError as e:
            raise OMException(OMResultCode.INVALID_REQUEST, f"{USER_METADATA}: {e}") from None
        groups = self.settings.groups.groups(user)
        return Caller(user, groups, service or self.settings.administrators.permits(user, groups))

    def creator(self, caller: Caller | None) -> Ownership | None:
        """What a new bucket or key of the caller's records: the caller as owner, with its default entries
        (ozone.om.user.rights and, for its groups, ozone.om.group.rights)."""
        if caller is None:
            return None
        return Ownership(caller.user, self.defaults(caller.user))

    def defaults(self, user: str) -> Acls:
        s = self.settings
        return default_acls(user, s.groups.groups(user), s.user_rights, s.group_rights)

    # ------------------------------------------------------------------ checks (they read om.db)
    def admin(self, caller: Caller | None, what: str) -> None:
        """Only administrators (Ozone: "Only admin users are authorized to create Ozone volumes")."""
        if caller is not None and not caller.admin:
            raise OMException(
                OMResultCode.PERMISSION_DENIED,
                f"Only admin users are authorized to {what}. User: {caller.user}",
            )

    def administrator(self, caller: Caller, what: str) -> None:
        """Only a known administrator, ACLs on or off: a caller who names nobody is refused too, even when
        ozone.administrators is "*"."""
        if caller.user == ANONYMOUS_USER or not caller.admin:
            raise OMException(
                OMResultCode.PERMISSION_DENIED,
                f"Only admin users are authorized to {what}. User: {caller.user}",
            )

    def volume(self, caller: Caller | None, right: ACLType, volume: str) -> None:
        if caller is None:
            return
        record = self.om.volume_info(volume)
        self._decide(caller, right, Target(ResourceType.VOLUME, volume, record.ownership))

    def bucket(self, caller: Caller | None, right: ACLType, volume: str, bucket: str) -> None:
        """`right` CREATE: the bucket does not exist yet; its volume decides."""
        if caller is None:
            return
        parent = self.om.volume_info(volume)
        record = None if right is ACLType.CREATE else self.om.bucket_info(volume, bucket).ownership
        self._decide(caller, right, Target(ResourceType.BUCKET, volume, parent.ownership, bucket, record))

    def bucket_owner(self, caller: Caller | None, volume: str, bucket: str, what: str) -> None:
        """The bucket's owner or an administrator, whatever ACLs grant others: S3's default grant of a
        bucket's configuration (s3:GetBucketCORS, s3:PutBucketCORS) is its owner's alone."""
        if caller is None or caller.admin:
            return
        if self.om.bucket_info(volume, bucket).owner != caller.user:
            raise OMException(
                OMResultCode.PERMISSION_DENIED,
                f"Only the owner of bucket {volume}/{bucket} may {what}. User: {caller.user}",
            )

    def may_bypass_governance(self, caller: Caller | None, volume: str, bucket: str) -> bool:
        """Whether the caller may bypass S3 Object Lock's GOVERNANCE retention (Amazon's
        s3:BypassGovernanceRetention): the bucket's owner or an administrator (with ACLs off, anyone: the
        gateway then decides by the bucket's owner and policy)."""
        if caller is None or caller.admin:
            return True
        return self.om.bucket_info(volume, bucket).owner == caller.user

    def key(self, caller: Caller | None, right: ACLType, volume: str, bucket: str, key: str) -> None:
        """The committed key's entries decide with its parents'; a key that does not exist (one to create)
        leaves it to the parents, as Ozone does."""
        if caller is None:
            return
        parent = self.om.bucket_info(volume, bucket)
        found = None if right is ACLType.CREATE else self.om.keys.find(volume, bucket, key)
        self._key(caller, right, parent, key, found.ownership if found is not None else None)

    def key_version(
        self, caller: Caller | None, right: ACLType, volume: str, bucket: str, key: str, version: str
    ) -> None:
        """READ, WRITE or DELETE on a key of a bucket that may keep S3 versions (lookupKey, deleteKey,
        putObjectRetention, putObjectLegalHold): the record
        the request acts on decides, as Ozone's key check does for the key (R32's F1). With `version`, that
        version's own owner and ACLs (Amazon keeps them per version; one the key lacks: its newest's);
        without, the current version's or, when a delete marker is latest, that marker's. A key with no
        version at all leaves it to the parents as in Ozone (KeyManagerImpl.checkAccess: a missing key is
        permitted there), except a delete in a versioned bucket: it writes a delete marker, a new record, so
        it needs what a write needs, WRITE on the bucket (OzoneAclUtils.getParentNativeAcl for CREATE)."""
        if caller is None:
            return
        parent = self.om.bucket_info(volume, bucket)
        found = self.om.versions.governing(volume, bucket, key, version)
        if (
            found is None
            and right is ACLType.DELETE
            and not version
            and parent.versioning is not BucketVersioning.UNVERSIONED
        ):
            right = ACLType.CREATE
        self._key(caller, right, parent, key, found.ownership if found is not None else None)

    def open_key(self, caller: Caller | None, volume: str, bucket: str, key: str, client_id: int) -> None:
        """WRITE on an open key (allocateBlock, commitKey): its writer's entries (Ozone's
        checkKeyAclsInOpenKeyTable); on the key it committed, for a repeated commit."""
        if caller is None:
            return
        parent = self.om.bucket_info(volume, bucket)
        opened = self.om.keys.committed_session(volume, bucket, key, client_id) or self.om.keys.open_record(
            volume, bucket, key, client_id
        )
        self._key(caller, ACLType.WRITE, parent, key, opened.ownership)

    def s3_secret(self, caller: Caller | None, user: str) -> None:
        """A user's own S3 secret, or anyone's for an administrator (Ozone's getS3Secret)."""
        if caller is not None and not caller.admin and caller.user != user:
            raise OMException(
                OMResultCode.PERMISSION_DENIED,
                f"User {caller.user} doesn't have permission to access the S3 secret of {user}",
            )

    def list_volumes(self, caller: Caller | None) -> Callable[[VolumeRecord], bool] | None:
        """Which volumes a listing shows: None for all (ACLs off, an administrator, or
        ozone.om.volume.listall.allowed), else those the caller may READ or LIST, its own among them (Ozone:
        with listall off, "non-admin users can only list the volumes they have access to")."""
        if caller is None or caller.admin or self.settings.list_all_volumes:
            return None

        def visible(record: VolumeRecord) -> bool:
            target = Target(ResourceType.VOLUME, record.volume, record.ownership)
            return any(check_access(caller, right, target) is None for right in (ACLType.READ, ACLType.LIST))

        return visible

    def _key(
        self, caller: Caller, right: ACLType, parent: BucketRecord, key: str, found: Ownership | None
    ) -> None:
        volume = self.om.volume_info(parent.volume)
        self._decide(
            caller,
            right,
            Target(
                ResourceType.KEY, parent.volume, volume.ownership, parent.bucket, parent.ownership, key, found
            ),
        )

    @staticmethod
    def _decide(caller: Caller, right: ACLType, target: Target) -> None:
        denial = check_access(caller, right, target)
        if denial is not None:
            raise OMException(OMResultCode.PERMISSION_DENIED, denial.message())
