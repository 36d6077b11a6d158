"""Which ACL check each OM request needs (Ozone's OMClientRequest.checkAcls of each request class), built
from its caller and fields; OzoneManagerService hands it to CoreCalls.run, which runs it in the call's own
pool job just before the call (om/access.py decides; with ACLs off the checks return at once)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from pyozone.hdds.security.acl import ACLType, Caller, ResourceType
from pyozone.om.access import Access
from pyozone.om.object_lock import LOCK_METADATA
from pyozone.protocol.acl import ObjectPath
from pyozone.rpc import CallContext as Context

if TYPE_CHECKING:
    from pyozone.proto import OmClientProtocol_pb2 as pb

Check = Callable[[], None]
LOCK_WHAT = "set an S3 Object Lock retention or legal hold"
"""What only a bucket's owner or an administrator may (Amazon's s3:PutObjectRetention and
s3:PutObjectLegalHold)."""


class RequestChecks:
    def __init__(self, access: Access) -> None:
        self.access = access

    def bucket(self, context: Context, right: ACLType, request: _BucketRequest) -> Check:
        caller = self.access.caller(context)
        return partial(self.access.bucket, caller, right, request.volume, request.bucket)

    def owner(self, context: Context, request: _OwnerRequest, what: str) -> Check:
        caller = self.access.caller(context)
        return partial(self.access.bucket_owner, caller, request.volume, request.bucket, what)

    def key(self, context: Context, right: ACLType, request: _KeyRequest) -> Check:
        caller = self.access.caller(context)
        return partial(self.access.key, caller, right, request.volume, request.bucket, request.key)

    def version(self, context: Context, right: ACLType, request: pb.LookupKeyRequest) -> Check:
        caller = self.access.caller(context)
        return partial(
            self.access.key_version,
            caller,
            right,
            request.volume,
            request.bucket,
            request.key,
            request.versionId,
        )

    def lock(
        self, context: Context, request: pb.PutObjectRetentionRequest | pb.PutObjectLegalHoldRequest
    ) -> Check:
        """PutObjectRetention, PutObjectLegalHold: WRITE on the version the request names, decided by that
        version's owner and ACLs (Access.key_version; R35's F1: not the current version's), and Amazon's
        s3:PutObjectRetention / s3:PutObjectLegalHold, which no ACL grants: the bucket's owner or an
        administrator (the gateway acts as the owner for whom its policy allows them; R35's F3)."""
        caller = self.access.caller(context)

        def check() -> None:
            v, b = request.volume, request.bucket
            self.access.key_version(caller, ACLType.WRITE, v, b, request.key, request.versionId)
            self.access.bucket_owner(caller, v, b, LOCK_WHAT)

        return check

    def locking_write(self, caller: Caller | None, request: _WriteRequest, check: Check) -> Check:
        """A write whose metadata names a retention or legal hold (om/object_lock.LOCK_METADATA) needs what
        PutObjectRetention / PutObjectLegalHold need besides its own right (R35's F3: WRITE alone must not
        plant COMPLIANCE retention nobody can remove); any other write `check` alone."""
        if caller is None or not any(name in request.metadata for name in LOCK_METADATA):
            return check

        def both() -> None:
            check()
            self.lock_setter(caller, request)

        return both

    def lock_setter(self, caller: Caller | None, request: _WriteRequest) -> None:
        """PERMISSION_DENIED unless a write naming a lock is the bucket's owner's or an administrator's."""
        if any(name in request.metadata for name in LOCK_METADATA):
            self.access.bucket_owner(caller, request.volume, request.bucket, LOCK_WHAT)

    def open_key(self, context: Context, request: _OpenKeyRequest) -> Check:
        caller = self.access.caller(context)
        return partial(
            self.access.open_key, caller, request.volume, request.bucket, request.key, request.clientID
        )

    def acl(self, context: Context, right: ACLType, path: ObjectPath) -> Check:
        caller = self.access.caller(context)
        if path.resource is ResourceType.VOLUME:
            return partial(self.access.volume, caller, right, path.volume)
        if path.resource is ResourceType.BUCKET:
            return partial(self.access.bucket, caller, right, path.volume, path.bucket)
        return partial(self.access.key, caller, right, path.volume, path.bucket, path.key)


if TYPE_CHECKING:
    _BucketRequest = (
        pb.InfoBucketRequest | pb.DeleteBucketRequest | pb.ListKeysRequest | pb.ListMultipartUploadsRequest
        | pb.ListKeyVersionsRequest
    )  # fmt: skip
    _KeyRequest = (
        pb.LookupKeyRequest | pb.DeleteKeyRequest | pb.PutObjectTaggingRequest
        | pb.CompleteMultipartUploadRequest | pb.AbortMultipartUploadRequest | pb.ListPartsRequest
        | pb.InitiateMultipartUploadRequest
    )  # fmt: skip
    _OwnerRequest = (
        pb.PutBucketCorsRequest | pb.GetBucketCorsRequest | pb.DeleteBucketCorsRequest
        | pb.SetBucketVersioningRequest | pb.PutBucketLifecycleRequest | pb.GetBucketLifecycleRequest
        | pb.DeleteBucketLifecycleRequest
        | pb.PutBucketPolicyRequest | pb.GetBucketPolicyRequest | pb.DeleteBucketPolicyRequest
        | pb.PutBucketPublicAccessBlockRequest | pb.GetBucketPublicAccessBlockRequest
        | pb.DeleteBucketPublicAccessBlockRequest | pb.PutObjectLockConfigurationRequest
        | pb.PutBucketEncryptionRequest | pb.GetBucketEncryptionRequest | pb.DeleteBucketEncryptionRequest
        | pb.PutBucketOwnershipControlsRequest | pb.GetBucketOwnershipControlsRequest
        | pb.DeleteBucketOwnershipControlsRequest
    )  # fmt: skip
    _OpenKeyRequest = pb.AllocateBlockRequest | pb.CommitKeyRequest | pb.CommitMultipartUploadPartRequest
    _WriteRequest = (
        pb.OpenKeyRequest | pb.CommitKeyRequest | pb.InitiateMultipartUploadRequest
        | pb.CompleteMultipartUploadRequest
    )  # fmt: skip
