"""Object ownership controls through the gateway (issue 33, item 5), from Amazon's
Put/Get/DeleteBucketOwnershipControls and CreateBucket references: a new bucket is BucketOwnerEnforced;
each of Amazon's values is kept; Delete leaves none; a malformed document is MalformedXML; the owner's
alone. BucketOwnerEnforced disables ACLs: AccessControlListNotSupported for any but the owner's."""

from __future__ import annotations

import pytest

from pyozone.hdds.security.acl import ResourceType
from pyozone.protocol.acl import ObjectPath
from pyozone.s3g.policy import ACTIONS
from pyozone.s3g.routing import Operation
from tests.unit.s3g.gateway_thread import GatewayOnThread, refused

BUCKET = "owned-controls"
ENFORCED = {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}


@pytest.fixture(scope="module")
def alice(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3("alice")
    client.create_bucket(Bucket=BUCKET)
    return client


def test_a_new_bucket_is_bucket_owner_enforced_and_each_value_is_kept(
    gateway: GatewayOnThread, alice
) -> None:  # type: ignore[no-untyped-def]
    assert alice.get_bucket_ownership_controls(Bucket=BUCKET)["OwnershipControls"] == ENFORCED
    for value in ("BucketOwnerPreferred", "ObjectWriter", "BucketOwnerEnforced"):
        controls = {"Rules": [{"ObjectOwnership": value}]}
        alice.put_bucket_ownership_controls(Bucket=BUCKET, OwnershipControls=controls)
        assert alice.get_bucket_ownership_controls(Bucket=BUCKET)["OwnershipControls"] == controls
    bob = gateway.boto3("bob")
    assert refused(bob.get_bucket_ownership_controls, Bucket=BUCKET) == (403, "AccessDenied")
    assert refused(bob.put_bucket_ownership_controls, Bucket=BUCKET, OwnershipControls=ENFORCED) == (
        403,
        "AccessDenied",
    )
    assert refused(bob.delete_bucket_ownership_controls, Bucket=BUCKET) == (403, "AccessDenied")


def test_delete_leaves_no_controls(alice) -> None:  # type: ignore[no-untyped-def]
    """R34's F9: DeleteBucketOwnershipControls works (Terraform's destroy), Get then answers
    OwnershipControlsNotFoundError, and a second Delete is 204 too."""
    alice.create_bucket(Bucket="own-del")
    alice.delete_bucket_ownership_controls(Bucket="own-del")
    assert refused(alice.get_bucket_ownership_controls, Bucket="own-del") == (
        404,
        "OwnershipControlsNotFoundError",
    )
    alice.delete_bucket_ownership_controls(Bucket="own-del")
    alice.put_bucket_ownership_controls(Bucket="own-del", OwnershipControls=ENFORCED)
    assert alice.get_bucket_ownership_controls(Bucket="own-del")["OwnershipControls"] == ENFORCED


def test_create_bucket_takes_object_ownership(alice) -> None:  # type: ignore[no-untyped-def]
    alice.create_bucket(Bucket="own-writer", ObjectOwnership="ObjectWriter")
    assert alice.get_bucket_ownership_controls(Bucket="own-writer")["OwnershipControls"] == {
        "Rules": [{"ObjectOwnership": "ObjectWriter"}]
    }
    assert refused(alice.create_bucket, Bucket="own-bad", ObjectOwnership="Anyone") == (
        400,
        "InvalidArgument",
    )
    assert refused(alice.head_bucket, Bucket="own-bad") == (404, "404")


@pytest.mark.parametrize(
    "body",
    [
        b"<OwnershipControls/>",
        b"<OwnershipControls><Rule><ObjectOwnership>Anyone</ObjectOwnership></Rule></OwnershipControls>",
        b"<OwnershipControls><Rule/></OwnershipControls>",
        b"<OwnershipControls><Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule>"
        b"<Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule></OwnershipControls>",
        b"not xml",
    ],
)
def test_a_malformed_document_is_malformed_xml(gateway: GatewayOnThread, alice, body: bytes) -> None:  # type: ignore[no-untyped-def]
    status, text = gateway.signed_request("PUT", f"/{BUCKET}?ownershipControls", body, user="alice")
    assert status == 400 and "<Code>MalformedXML</Code>" in text


def test_bucket_owner_full_control_is_accepted_where_private_is(alice) -> None:  # type: ignore[no-untyped-def]
    alice.put_bucket_ownership_controls(Bucket=BUCKET, OwnershipControls=ENFORCED)
    alice.put_object(Bucket=BUCKET, Key="k", Body=b"", ACL="bucket-owner-full-control")
    alice.put_object_acl(Bucket=BUCKET, Key="k", ACL="bucket-owner-full-control")
    alice.put_bucket_acl(Bucket=BUCKET, ACL="bucket-owner-full-control")


def test_acls_disabled_refuse_every_other_acl(alice) -> None:  # type: ignore[no-untyped-def]
    """BucketOwnerEnforced: "requests to set ACLs or update ACLs fail and return the
    AccessControlListNotSupported error code" (400), whatever the ACL is."""
    alice.put_bucket_ownership_controls(Bucket=BUCKET, OwnershipControls=ENFORCED)
    alice.put_object(Bucket=BUCKET, Key="k", Body=b"")
    unsupported = (400, "AccessControlListNotSupported")
    assert refused(alice.put_object, Bucket=BUCKET, Key="k", Body=b"", ACL="bucket-owner-read") == unsupported
    assert refused(alice.put_object, Bucket=BUCKET, Key="k", Body=b"", GrantRead="id=bob") == unsupported
    assert refused(alice.put_object_acl, Bucket=BUCKET, Key="k", ACL="public-read") == unsupported
    assert refused(alice.put_bucket_acl, Bucket=BUCKET, ACL="public-read") == unsupported
    assert refused(alice.create_multipart_upload, Bucket=BUCKET, Key="m", ACL="public-read") == unsupported
    grant = {"Grantee": {"Type": "CanonicalUser", "ID": "bob"}, "Permission": "READ"}
    policy = {"Owner": {"ID": "alice"}, "Grants": [grant]}
    assert refused(alice.put_bucket_acl, Bucket=BUCKET, AccessControlPolicy=policy) == unsupported


def test_enforcing_needs_an_owner_only_acl_and_an_owner_only_write_resets(
    gateway: GatewayOnThread, alice
) -> None:  # type: ignore[no-untyped-def]
    """R37's F2: Amazon refuses BucketOwnerEnforced on a bucket whose ACL grants others
    (InvalidBucketAclWithObjectOwnership), and under it an owner-only ACL write leaves the owner alone (on
    main: the switch was accepted and `private` answered 200, changing nothing)."""
    alice.create_bucket(Bucket="own-shared", ObjectOwnership="ObjectWriter")
    alice.put_bucket_acl(Bucket="own-shared", GrantRead="id=bob", GrantFullControl="id=alice")
    alice.put_object(Bucket="own-shared", Key="o", Body=b"", GrantRead="id=bob", GrantFullControl="id=alice")
    assert refused(alice.put_bucket_ownership_controls, Bucket="own-shared", OwnershipControls=ENFORCED) == (
        400,
        "InvalidBucketAclWithObjectOwnership",
    )
    alice.put_bucket_acl(Bucket="own-shared", ACL="private")
    alice.put_bucket_ownership_controls(Bucket="own-shared", OwnershipControls=ENFORCED)
    alice.put_object_acl(Bucket="own-shared", Key="o", ACL="bucket-owner-full-control")
    assert native_acl(gateway, "own-shared", "o") == ["user:alice:a"]
    assert [g["Grantee"]["ID"] for g in alice.get_object_acl(Bucket="own-shared", Key="o")["Grants"]] == [
        "alice"
    ]


def native_acl(gateway: GatewayOnThread, bucket: str, key: str = "") -> list[str]:
    assert gateway.gateway.client is not None
    resource = ResourceType.KEY if key else ResourceType.BUCKET
    path = ObjectPath(resource, gateway.gateway.settings.volume, bucket, key)
    return [str(a) for a in gateway.call(gateway.gateway.client.get_acl(path))]


def test_every_operation_has_its_policy_action() -> None:
    """One table: an operation added without its s3: action fails here, not at a request."""
    assert set(ACTIONS) == set(Operation)
    no_bucket = {Operation.LIST_BUCKETS, Operation.CREATE_BUCKET, Operation.OPTIONS_OBJECT}
    assert {o for o, a in ACTIONS.items() if a is None} == no_bucket
