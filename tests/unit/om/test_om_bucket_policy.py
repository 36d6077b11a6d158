"""A bucket's S3 bucket policy in OM (issue 33, item 5): kept as sent in its own table, checked before it is
kept, changed and read by the bucket's owner alone, gone with its bucket."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyozone.hdds.security.acl import ResourceType
from pyozone.om import bucket_documents
from pyozone.om.bucket_documents import BucketPolicies
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import BUCKET_TABLE, S3_BUCKET_POLICY_TABLE, Op, bucket_key
from pyozone.proto import OmClientProtocol_pb2 as pb
from tests.unit.om.om_fakes import FakeScm, make_om
from tests.unit.om.test_om_acls import As, acl_request, denied, om
from tests.unit.om.test_om_server import run


def policy(bucket: str = "bkt") -> bytes:
    statement = {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                 "Resource": f"arn:aws:s3:::{bucket}/*"}  # fmt: skip
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]}, indent=2).encode()


@pytest.fixture
def cluster(tmp_path: Path) -> tuple[OzoneManager, BucketPolicies]:
    manager = make_om(tmp_path, FakeScm())
    manager.volumes.create("vol")
    manager.buckets.create("vol", "bkt")
    return manager, BucketPolicies(manager)


def test_a_policy_is_kept_as_sent_read_back_and_deleted(
    cluster: tuple[OzoneManager, BucketPolicies],
) -> None:
    _, policies = cluster
    assert policies.get("vol", "bkt") is None
    policies.put("vol", "bkt", policy())
    assert policies.get("vol", "bkt") == policy()
    policies.delete("vol", "bkt")
    assert policies.get("vol", "bkt") is None
    policies.delete("vol", "bkt")  # none: no refusal
    with pytest.raises(OMException) as error:
        policies.put("vol", "nobucket", policy("nobucket"))
    assert error.value.code is OMResultCode.BUCKET_NOT_FOUND


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"[]", "MalformedPolicy: Policies must be valid JSON"),
        (policy("other"), "MalformedPolicy: Policy has invalid resource"),
        (b"{" + b" " * 21 * 1024 + b"}", "MalformedPolicy: Policies must be less than 20 KB"),
    ],
)
def test_om_keeps_no_document_s3_refuses(
    cluster: tuple[OzoneManager, BucketPolicies], body: bytes, words: str
) -> None:
    _, policies = cluster
    with pytest.raises(OMException) as error:
        policies.put("vol", "bkt", body)
    assert error.value.code is OMResultCode.INVALID_REQUEST
    assert error.value.message.startswith(words)
    assert policies.get("vol", "bkt") is None


def test_the_policy_goes_with_its_bucket_and_only_if_it_has_one(
    cluster: tuple[OzoneManager, BucketPolicies], monkeypatch: pytest.MonkeyPatch
) -> None:
    manager, policies = cluster
    policies.put("vol", "bkt", policy())
    manager.buckets.delete("vol", "bkt")
    assert manager.store.get(S3_BUCKET_POLICY_TABLE, bucket_key("vol", "bkt")) is None
    manager.buckets.create("vol", "bkt")
    assert policies.get("vol", "bkt") is None
    tables: list[str] = []
    commit = manager.commit

    def recording(ops: list[Op]) -> None:
        tables.extend(table for table, _, _ in ops)
        commit(ops)

    monkeypatch.setattr(manager, "commit", recording)
    manager.buckets.delete("vol", "bkt")
    assert S3_BUCKET_POLICY_TABLE not in tables and BUCKET_TABLE in tables


def test_only_the_owner_or_an_administrator_reads_or_changes_it(tmp_path: Path) -> None:
    """An ACL granting bob everything on the bucket does not let him near its policy."""

    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.VOLUME, "/vol", "user:bob:a"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.BUCKET, "/vol/buck", "user:bob:a"))
            put = pb.PutBucketPolicyRequest(volume="vol", bucket="buck", policy=policy("buck"))
            get = pb.GetBucketPolicyRequest(volume="vol", bucket="buck")
            delete = pb.DeleteBucketPolicyRequest(volume="vol", bucket="buck")
            for call, request in (
                (bob.putBucketPolicy, put),
                (bob.getBucketPolicy, get),
                (bob.deleteBucketPolicy, delete),
            ):
                details = await denied(call, request)
                assert details.startswith("PERMISSION_DENIED: Only the owner of bucket vol/buck"), details
            assert (await alice.putBucketPolicy(put)).ByteSize() == 0
            assert (await root.getBucketPolicy(get)).policy == policy("buck")
            assert (await alice.deleteBucketPolicy(delete)).ByteSize() == 0
            assert (await alice.getBucketPolicy(get)).policy == b""

    run(body())


BLOCK_POLICY = (
    b"<PublicAccessBlockConfiguration><BlockPublicPolicy>true</BlockPublicPolicy>"
    b"</PublicAccessBlockConfiguration>"
)


def test_a_public_access_block_is_kept_refuses_public_policies_and_goes_with_its_bucket(
    cluster: tuple[OzoneManager, BucketPolicies],
) -> None:
    """BlockPublicPolicy refuses a public policy in the step that would keep it; a policy already kept
    stays (as Amazon's); a non-public one is kept."""
    manager, policies = cluster
    blocks = bucket_documents.public_access_block(manager)
    assert blocks.get("vol", "bkt") is None
    policies.put("vol", "bkt", policy())
    blocks.put("vol", "bkt", BLOCK_POLICY)
    assert b"<BlockPublicPolicy>true</BlockPublicPolicy>" in (blocks.get("vol", "bkt") or b"")
    assert policies.get("vol", "bkt") == policy()
    with pytest.raises(OMException) as error:
        policies.put("vol", "bkt", policy())
    assert error.value.code is OMResultCode.PERMISSION_DENIED
    fixed = json.dumps(
        {
            "Statement": {
                "Effect": "Allow",
                "Principal": {"AWS": "alice"},
                "Action": "s3:GetObject",
                "Resource": "arn:aws:s3:::bkt/*",
            }
        }
    ).encode()
    policies.put("vol", "bkt", fixed)
    with pytest.raises(OMException) as error:
        blocks.put("vol", "bkt", b"<PublicAccessBlockConfiguration><x/>")
    assert error.value.code is OMResultCode.INVALID_REQUEST
    blocks.delete("vol", "bkt")
    policies.put("vol", "bkt", policy())
    blocks.put("vol", "bkt", BLOCK_POLICY)
    manager.buckets.delete("vol", "bkt")
    manager.buckets.create("vol", "bkt")
    assert blocks.get("vol", "bkt") is None
    assert policies.get("vol", "bkt") is None
