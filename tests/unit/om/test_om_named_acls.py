"""A new object's ACL named by its create (openKey's and createBucket's acls: S3's x-amz-acl / x-amz-grant-*)
and the bucket properties only its owner may change (R37's F1, F3, F10, F11), OM with ozone.acl.enabled."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.hdds.security.acl import OzoneAcl, ResourceType
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.protocol.acl import ObjectPath, acls_from_proto, acls_to_proto, obj_to_proto
from tests.unit.om.test_om_acls import As, acl_request, denied, om
from tests.unit.om.test_om_server import run

PUBLIC = tuple(OzoneAcl.parse(a) for a in ("user:bob:a", "world::r"))


def entries(acls: object) -> list[str]:
    return [str(a) for a in acls_from_proto(list(acls), "acls")]  # type: ignore[call-overload]


async def key_acl(user: As, key: str) -> list[str]:
    path = obj_to_proto(ObjectPath(ResourceType.KEY, "vol", "buck", key))
    return entries((await user.getAcl(pb.GetAclRequest(obj=path))).acls)


async def commit(user: As, opened: pb.OpenKeyResponse, key: str) -> None:
    await user.commitKey(
        pb.CommitKeyRequest(volume="vol", bucket="buck", key=key, clientID=opened.clientID, dataSize=0)
    )


def test_a_writer_names_its_keys_whole_acl_which_the_commit_records(tmp_path: Path) -> None:
    """A WRITE grantee without READ on the bucket (S3's drop box) names the key's ACL with the write, so
    nothing after the commit can fail (F1); the named entries are the whole ACL: no default GROUP entry, no
    DEFAULT one of the bucket. Two writers of one key: each commit records its own open key's ACL, never
    the other's (F10)."""

    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.VOLUME, "/vol", "user:bob:r"))
            drop_box = acl_request(pb.AddAclRequest, ResourceType.BUCKET, "/vol/buck", "user:bob:cwd")
            await alice.addAcl(drop_box)
            await alice.addAcl(
                acl_request(pb.AddAclRequest, ResourceType.BUCKET, "/vol/buck", "user:dave:r[DEFAULT]")
            )
            owner_full = (OzoneAcl.parse("user:bob:a"), OzoneAcl.parse("user:alice:a"))
            request = pb.OpenKeyRequest(
                volume="vol", bucket="buck", key="drop", acls=acls_to_proto(owner_full)
            )
            await commit(bob, await bob.openKey(request), "drop")
            assert await key_acl(alice, "drop") == ["user:bob:a", "user:alice:a"]

            public = await bob.openKey(
                pb.OpenKeyRequest(volume="vol", bucket="buck", key="k", acls=acls_to_proto(PUBLIC))
            )
            private = await alice.openKey(pb.OpenKeyRequest(volume="vol", bucket="buck", key="k"))
            await commit(bob, public, "k")
            await commit(alice, private, "k")  # alice's write lands last: her key, her defaults
            assert await key_acl(alice, "k") == ["user:alice:a", "user:dave:r"]

    run(body())


def test_a_part_takes_its_uploads_acl(tmp_path: Path) -> None:
    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice = As(stub, "root"), As(stub, "alice")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            upload = await alice.initiateMultipartUpload(
                pb.InitiateMultipartUploadRequest(volume="vol", bucket="buck", key="m")
            )
            request = pb.OpenKeyRequest(
                volume="vol", bucket="buck", key="m", multipartUploadID=upload.uploadID, multipartNumber=1,
                acls=acls_to_proto(PUBLIC),
            )  # fmt: skip
            with pytest.raises(rpc.RpcError) as error:
                await alice.openKey(request)
            assert error.value.code() is rpc.StatusCode.INVALID_ARGUMENT

    run(body())


def test_a_bucket_created_with_its_acl(tmp_path: Path) -> None:
    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice = As(stub, "root"), As(stub, "alice")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.addAcl(
                acl_request(pb.AddAclRequest, ResourceType.VOLUME, "/vol", "world::r[DEFAULT]")
            )
            named = (OzoneAcl.parse("user:alice:a"), OzoneAcl.parse("user:bob:rl"))
            await alice.createBucket(
                pb.CreateBucketRequest(volume="vol", bucket="buck", acls=acls_to_proto(named))
            )
            path = obj_to_proto(ObjectPath(ResourceType.BUCKET, "vol", "buck"))
            assert entries((await alice.getAcl(pb.GetAclRequest(obj=path))).acls) == [
                "user:alice:a",
                "user:bob:rl",
            ]

    run(body())


def test_only_the_owner_or_an_administrator_changes_a_buckets_owner_or_quotas(tmp_path: Path) -> None:
    """WRITE_ACL (S3's WRITE_ACP) and WRITE (S3's WRITE) on a bucket carry neither its ownership (F3) nor
    its quotas (F11), unlike Ozone's setBucketProperty."""

    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.VOLUME, "/vol", "world::rwl"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.BUCKET, "/vol/buck", "user:bob:a"))

            def change(**fields: object) -> pb.SetBucketPropertyRequest:
                return pb.SetBucketPropertyRequest(
                    bucketArgs=pb.BucketArgs(volumeName="vol", bucketName="buck", **fields)  # type: ignore[arg-type]
                )

            details = await denied(bob.setBucketProperty, change(ownerName="bob"))
            assert details == (
                "PERMISSION_DENIED: Only the owner of bucket vol/buck may change its owner or quotas. "
                "User: bob"
            )
            await denied(bob.setBucketProperty, change(quotaInNamespace=1))
            await denied(bob.setBucketProperty, change(quotaInBytes=1 << 30))
            await alice.setBucketProperty(change(quotaInNamespace=5))
            await root.setBucketProperty(change(ownerName="carol"))
            info = await root.infoBucket(pb.InfoBucketRequest(volume="vol", bucket="buck"))
            assert (info.bucket.owner, info.bucket.quotaInNamespace) == ("carol", 5)

    run(body())
