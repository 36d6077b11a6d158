"""Object ownership controls through the gateway (issue 33, item 5), from Amazon's
Put/Get/DeleteBucketOwnershipControls reference: every bucket is BucketOwnerEnforced, which Get shows
and Put of accepts; what would change it is NotImplemented; a malformed document is MalformedXML; the
owner's alone. The canned ACL bucket-owner-full-control is what every object is, so it is accepted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from pyozone.s3g.policy import ACTIONS
from pyozone.s3g.routing import Operation
from tests.unit.s3g.gateway_thread import GatewayOnThread

BUCKET = "owned-controls"
ENFORCED = {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}


def refused(call: Callable[..., Any], **kwargs: Any) -> tuple[int, str]:
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    return e.value.response["ResponseMetadata"]["HTTPStatusCode"], e.value.response["Error"]["Code"]


@pytest.fixture(scope="module")
def alice(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3("alice")
    client.create_bucket(Bucket=BUCKET)
    return client


def test_every_bucket_is_bucket_owner_enforced(gateway: GatewayOnThread, alice) -> None:  # type: ignore[no-untyped-def]
    assert alice.get_bucket_ownership_controls(Bucket=BUCKET)["OwnershipControls"] == ENFORCED
    alice.put_bucket_ownership_controls(Bucket=BUCKET, OwnershipControls=ENFORCED)
    for other in ("BucketOwnerPreferred", "ObjectWriter"):
        controls = {"Rules": [{"ObjectOwnership": other}]}
        assert refused(alice.put_bucket_ownership_controls, Bucket=BUCKET, OwnershipControls=controls) == (
            501,
            "NotImplemented",
        )
    assert refused(alice.delete_bucket_ownership_controls, Bucket=BUCKET) == (501, "NotImplemented")
    assert alice.get_bucket_ownership_controls(Bucket=BUCKET)["OwnershipControls"] == ENFORCED
    bob = gateway.boto3("bob")
    assert refused(bob.get_bucket_ownership_controls, Bucket=BUCKET) == (403, "AccessDenied")
    assert refused(bob.put_bucket_ownership_controls, Bucket=BUCKET, OwnershipControls=ENFORCED) == (
        403,
        "AccessDenied",
    )


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
    alice.put_object(Bucket=BUCKET, Key="k", Body=b"", ACL="bucket-owner-full-control")
    alice.put_object_acl(Bucket=BUCKET, Key="k", ACL="bucket-owner-full-control")
    alice.put_bucket_acl(Bucket=BUCKET, ACL="bucket-owner-full-control")
    assert refused(alice.put_object, Bucket=BUCKET, Key="k", Body=b"", ACL="bucket-owner-read") == (
        501,
        "NotImplemented",
    )


def test_every_operation_has_its_policy_action() -> None:
    """One table: an operation added without its s3: action fails here, not at a request."""
    assert set(ACTIONS) == set(Operation)
    no_bucket = {Operation.LIST_BUCKETS, Operation.CREATE_BUCKET, Operation.OPTIONS_OBJECT}
    assert {o for o, a in ACTIONS.items() if a is None} == no_bucket
