"""S3 ACLs through the gateway onto OM's native ACLs (issue 33, item 5), from Amazon's PutBucketAcl,
GetBucketAcl, PutObjectAcl, GetObjectAcl, PutObject, CopyObject and CreateBucket references: canned ACLs,
grant headers and AccessControlPolicy bodies in a bucket whose ACLs are enabled (ObjectWriter), the views
of S3 and of OM agreeing, and the refusals (MalformedACLError, InvalidArgument, InvalidRequest,
NotImplemented, AccessDenied). OM here has ACLs off: the gateway's own READ_ACP / WRITE_ACP checks hold."""

from __future__ import annotations

from typing import Any

import pytest

from pyozone.hdds.security.acl import OzoneAcl, ResourceType
from pyozone.protocol.acl import ObjectPath
from tests.unit.s3g.gateway_thread import GatewayOnThread, refused

BUCKET = "acl-writer"
ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"


def grants(acl: dict[str, Any]) -> list[tuple[str, str]]:
    return [(g["Grantee"].get("ID") or g["Grantee"]["URI"], g["Permission"]) for g in acl["Grants"]]


@pytest.fixture(scope="module")
def alice(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3("alice")
    client.create_bucket(Bucket=BUCKET, ObjectOwnership="ObjectWriter")
    return client


def native(gateway: GatewayOnThread, key: str = "") -> list[str]:
    assert gateway.gateway.client is not None
    resource = ResourceType.KEY if key else ResourceType.BUCKET
    path = ObjectPath(resource, gateway.gateway.settings.volume, BUCKET, key)
    return [str(a) for a in gateway.call(gateway.gateway.client.get_acl(path))]


def test_a_bucket_acl_is_written_to_ozone_and_read_back(gateway: GatewayOnThread, alice) -> None:  # type: ignore[no-untyped-def]
    assert grants(alice.get_bucket_acl(Bucket=BUCKET)) == [("alice", "FULL_CONTROL")]
    alice.put_bucket_acl(Bucket=BUCKET, ACL="public-read")
    assert native(gateway) == ["user:alice:a", "world::rl"]
    assert grants(alice.get_bucket_acl(Bucket=BUCKET)) == [("alice", "FULL_CONTROL"), (ALL_USERS, "READ")]
    alice.put_bucket_acl(Bucket=BUCKET, GrantRead='id="bob"', GrantWriteACP="id=carol")
    assert native(gateway) == ["user:alice:a", "user:bob:rl", "user:carol:y"]  # the owner's kept: R37's F9
    assert grants(alice.get_bucket_acl(Bucket=BUCKET)) == [
        ("alice", "FULL_CONTROL"),
        ("bob", "READ"),
        ("carol", "WRITE_ACP"),
    ]
    alice.put_bucket_acl(Bucket=BUCKET, ACL="private")
    assert native(gateway) == ["user:alice:a"]


def test_a_native_addacl_shows_up_as_a_grant(gateway: GatewayOnThread, alice) -> None:  # type: ignore[no-untyped-def]
    assert gateway.gateway.client is not None
    path = ObjectPath(ResourceType.BUCKET, gateway.gateway.settings.volume, BUCKET)
    gateway.call(gateway.gateway.client.add_acl(path, OzoneAcl.parse("user:dave:rwcld")))
    assert ("dave", "READ") in grants(alice.get_bucket_acl(Bucket=BUCKET))
    assert ("dave", "WRITE") in grants(alice.get_bucket_acl(Bucket=BUCKET))
    alice.put_bucket_acl(Bucket=BUCKET, ACL="private")


def test_an_access_control_policy_body(gateway: GatewayOnThread, alice) -> None:  # type: ignore[no-untyped-def]
    owner = {"ID": "alice"}
    policy = {
        "Owner": owner,
        "Grants": [
            {"Grantee": {"Type": "CanonicalUser", "ID": "alice"}, "Permission": "FULL_CONTROL"},
            {"Grantee": {"Type": "Group", "URI": ALL_USERS}, "Permission": "READ"},
            {"Grantee": {"Type": "CanonicalUser", "ID": "bob"}, "Permission": "WRITE"},
        ],
    }
    alice.put_bucket_acl(Bucket=BUCKET, AccessControlPolicy=policy)
    assert native(gateway) == ["user:alice:a", "world::rl", "user:bob:wcd"]
    email = {
        "Grantee": {"Type": "AmazonCustomerByEmail", "EmailAddress": "a@example.com"},
        "Permission": "READ",
    }
    assert refused(
        alice.put_bucket_acl, Bucket=BUCKET, AccessControlPolicy={"Owner": owner, "Grants": [email]}
    ) == (
        501,
        "NotImplemented",
    )
    status, text = gateway.signed_request("PUT", f"/{BUCKET}?acl", b"<AccessControlPolicy/>", user="alice")
    assert status == 400 and "<Code>MalformedACLError</Code>" in text
    status, text = gateway.signed_request("PUT", f"/{BUCKET}?acl", b"", user="alice")
    assert status == 400 and "<Code>MissingSecurityHeader</Code>" in text  # Amazon's (R37's F19)
    status, text = gateway.signed_request(
        "PUT", f"/{BUCKET}?acl", b"x", headers={"x-amz-acl": "private"}, user="alice"
    )
    assert status == 400 and "<Code>UnexpectedContent</Code>" in text
    alice.put_bucket_acl(Bucket=BUCKET, ACL="private")


def test_header_refusals(alice) -> None:  # type: ignore[no-untyped-def]
    assert refused(alice.put_bucket_acl, Bucket=BUCKET, ACL="public") == (400, "InvalidArgument")
    assert refused(alice.put_bucket_acl, Bucket=BUCKET, ACL="private", GrantRead="id=bob") == (
        400,
        "InvalidRequest",
    )
    assert refused(alice.put_object, Bucket=BUCKET, Key="k", Body=b"", GrantRead="bob") == (
        400,
        "InvalidArgument",
    )
    assert refused(alice.put_object, Bucket=BUCKET, Key="k", Body=b"", ACL="aws-exec-read") == (
        501,
        "NotImplemented",
    )
    assert refused(alice.create_multipart_upload, Bucket=BUCKET, Key="m", ACL="public-read") == (
        501,
        "NotImplemented",
    )


def test_object_acls_on_put_copy_and_put_object_acl(gateway: GatewayOnThread, alice) -> None:  # type: ignore[no-untyped-def]
    alice.put_object(Bucket=BUCKET, Key="pub", Body=b"", ACL="public-read")
    assert native(gateway, "pub") == ["user:alice:a", "world::r"]
    assert grants(alice.get_object_acl(Bucket=BUCKET, Key="pub")) == [
        ("alice", "FULL_CONTROL"),
        (ALL_USERS, "READ"),
    ]
    alice.copy_object(Bucket=BUCKET, Key="copy", CopySource=f"{BUCKET}/pub", GrantRead="id=bob")
    assert native(gateway, "copy") == ["user:alice:a", "user:bob:r"]
    alice.put_object_acl(Bucket=BUCKET, Key="copy", ACL="private")
    assert native(gateway, "copy") == ["user:alice:a"]
    alice.put_object(Bucket=BUCKET, Key="plain", Body=b"")
    assert grants(alice.get_object_acl(Bucket=BUCKET, Key="plain")) == [("alice", "FULL_CONTROL")]
    assert refused(alice.get_object_acl, Bucket=BUCKET, Key="nokey") == (404, "NoSuchKey")


def test_another_user_needs_read_acp_and_write_acp(gateway: GatewayOnThread, alice) -> None:  # type: ignore[no-untyped-def]
    bob = gateway.boto3("bob")
    alice.put_object(Bucket=BUCKET, Key="shared", Body=b"")
    assert refused(bob.get_object_acl, Bucket=BUCKET, Key="shared") == (403, "AccessDenied")
    assert refused(bob.put_object_acl, Bucket=BUCKET, Key="shared", ACL="public-read") == (
        403,
        "AccessDenied",
    )
    alice.put_object_acl(Bucket=BUCKET, Key="shared", GrantReadACP="id=bob", GrantWriteACP="id=bob")
    assert grants(bob.get_object_acl(Bucket=BUCKET, Key="shared"))[0] == ("alice", "FULL_CONTROL")
    bob.put_object_acl(Bucket=BUCKET, Key="shared", ACL="public-read")
    assert native(gateway, "shared") == ["user:alice:a", "world::r"]


def test_a_write_naming_an_acl_over_anothers_object_needs_write_acp(gateway: GatewayOnThread, alice) -> None:  # type: ignore[no-untyped-def]
    """R37's F7: OM has no owner record here (ACLs off), so the object a write replaces keeps showing its
    bucket's owner; a PutObject or CopyObject naming an ACL over it needs WRITE_ACP as PutObjectAcl does,
    checked before anything is written (on main: bob's copy onto itself made alice's object public)."""
    bob = gateway.boto3("bob")
    alice.put_object(Bucket=BUCKET, Key="secret", Body=b"", Metadata={"who": "alice"})
    denied = (403, "AccessDenied")
    copy = {"CopySource": f"{BUCKET}/secret", "MetadataDirective": "REPLACE", "ACL": "public-read"}
    assert refused(bob.copy_object, Bucket=BUCKET, Key="secret", **copy) == denied
    assert refused(bob.put_object, Bucket=BUCKET, Key="secret", Body=b"", ACL="public-read") == denied
    assert native(gateway, "secret") == []
    assert alice.head_object(Bucket=BUCKET, Key="secret")["Metadata"] == {"who": "alice"}
    bob.put_object(Bucket=BUCKET, Key="secret", Body=b"")  # no ACL named: as before (ACLs off)
    alice.put_object_acl(Bucket=BUCKET, Key="secret", GrantWriteACP="id=bob", GrantFullControl="id=alice")
    bob.copy_object(Bucket=BUCKET, Key="secret", **copy)
    assert native(gateway, "secret") == ["user:bob:a", "world::r"]


def test_block_public_acls_refuses_a_public_body(gateway: GatewayOnThread, alice) -> None:  # type: ignore[no-untyped-def]
    alice.put_public_access_block(Bucket=BUCKET, PublicAccessBlockConfiguration={"BlockPublicAcls": True})
    try:
        policy = {
            "Owner": {"ID": "alice"},
            "Grants": [{"Grantee": {"Type": "Group", "URI": ALL_USERS}, "Permission": "READ"}],
        }
        assert refused(alice.put_bucket_acl, Bucket=BUCKET, AccessControlPolicy=policy) == (
            403,
            "AccessDenied",
        )
        assert refused(alice.put_bucket_acl, Bucket=BUCKET, ACL="public-read") == (403, "AccessDenied")
    finally:
        alice.delete_public_access_block(Bucket=BUCKET)


def test_create_bucket_with_an_acl(gateway: GatewayOnThread, alice) -> None:  # type: ignore[no-untyped-def]
    alice.create_bucket(Bucket="acl-made", ObjectOwnership="BucketOwnerPreferred", ACL="public-read")
    assert grants(alice.get_bucket_acl(Bucket="acl-made")) == [("alice", "FULL_CONTROL"), (ALL_USERS, "READ")]


def test_an_object_acl_of_a_version(alice) -> None:  # type: ignore[no-untyped-def]
    """OM keeps one ACL per key: the current version's is read and written, another is NotImplemented."""
    alice.create_bucket(Bucket="acl-versions", ObjectOwnership="ObjectWriter")
    alice.put_bucket_versioning(Bucket="acl-versions", VersioningConfiguration={"Status": "Enabled"})
    old = alice.put_object(Bucket="acl-versions", Key="k", Body=b"")["VersionId"]
    new = alice.put_object(Bucket="acl-versions", Key="k", Body=b"")["VersionId"]
    alice.put_object_acl(Bucket="acl-versions", Key="k", VersionId=new, ACL="public-read")
    acl = alice.get_object_acl(Bucket="acl-versions", Key="k", VersionId=new)
    assert grants(acl) == [("alice", "FULL_CONTROL"), (ALL_USERS, "READ")]
    assert refused(alice.get_object_acl, Bucket="acl-versions", Key="k", VersionId=old) == (
        501,
        "NotImplemented",
    )
    assert refused(alice.put_object_acl, Bucket="acl-versions", Key="k", VersionId=old, ACL="private") == (
        501,
        "NotImplemented",
    )
    # R37's F16: under a delete marker a real version is noncurrent (501), not NoSuchKey; the marker 405
    marker = alice.delete_object(Bucket="acl-versions", Key="k")["VersionId"]
    assert refused(alice.get_object_acl, Bucket="acl-versions", Key="k", VersionId=new) == (
        501,
        "NotImplemented",
    )
    assert refused(alice.get_object_acl, Bucket="acl-versions", Key="k", VersionId=marker) == (
        405,
        "MethodNotAllowed",
    )
    assert refused(alice.get_object_acl, Bucket="acl-versions", Key="k") == (404, "NoSuchKey")
