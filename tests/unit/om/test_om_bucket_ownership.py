"""A bucket's S3 object ownership controls in OM (issue 33, item 5; R34's F9): kept as Get answers them,
checked before they are kept, gone with their bucket."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.hdds.s3_ownership import ObjectOwnership, document
from pyozone.hdds.security.acl import OzoneAcl
from pyozone.om import bucket_documents
from pyozone.om.bucket_documents import BucketDocuments
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import BUCKET_TABLE, S3_BUCKET_OWNERSHIP_CONTROLS_TABLE, bucket_key
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.protocol import om_records
from tests.unit.om.om_fakes import FakeScm, make_om
from tests.unit.om.test_om_server import run, running


@pytest.fixture
def cluster(tmp_path: Path) -> tuple[OzoneManager, BucketDocuments]:
    manager = make_om(tmp_path, FakeScm())
    manager.volumes.create("vol")
    manager.buckets.create("vol", "bkt")
    return manager, bucket_documents.ownership_controls(manager)


def test_controls_are_kept_in_amazons_form_read_back_and_deleted(
    cluster: tuple[OzoneManager, BucketDocuments],
) -> None:
    _, controls = cluster
    assert controls.get("vol", "bkt") is None
    sent = (
        b"<OwnershipControls><Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule></OwnershipControls>"
    )
    controls.put("vol", "bkt", sent)
    assert controls.get("vol", "bkt") == document(ObjectOwnership.OBJECT_WRITER)
    controls.delete("vol", "bkt")
    assert controls.get("vol", "bkt") is None
    controls.delete("vol", "bkt")  # none: no refusal


def test_om_keeps_no_document_s3_refuses(cluster: tuple[OzoneManager, BucketDocuments]) -> None:
    _, controls = cluster
    with pytest.raises(OMException) as error:
        controls.put("vol", "bkt", b"<OwnershipControls/>")
    assert error.value.code is OMResultCode.INVALID_REQUEST
    assert error.value.message.startswith("MalformedXML")
    assert controls.get("vol", "bkt") is None


def test_the_controls_go_with_their_bucket(cluster: tuple[OzoneManager, BucketDocuments]) -> None:
    manager, controls = cluster
    controls.put("vol", "bkt", document(ObjectOwnership.BUCKET_OWNER_ENFORCED))
    manager.buckets.delete("vol", "bkt")
    assert manager.store.get(S3_BUCKET_OWNERSHIP_CONTROLS_TABLE, bucket_key("vol", "bkt")) is None
    manager.buckets.create("vol", "bkt")
    assert controls.get("vol", "bkt") is None


def test_create_bucket_keeps_its_ownership_controls_in_its_own_step(tmp_path: Path) -> None:
    """CreateBucketRequest.ownershipControls: kept by the create itself, so no failure between two calls
    (or a retry finding the bucket made) leaves an S3 bucket without them (the session's reread); a document
    S3 refuses makes no bucket."""

    async def body() -> None:
        async with running(tmp_path, FakeScm()) as (_, stub):
            await stub.createVolume(pb.CreateVolumeRequest(volume="vol", owner="root"))
            controls = document(ObjectOwnership.OBJECT_WRITER)
            await stub.createBucket(
                pb.CreateBucketRequest(volume="vol", bucket="bkt", ownershipControls=controls)
            )
            got = await stub.getBucketOwnershipControls(
                pb.GetBucketOwnershipControlsRequest(volume="vol", bucket="bkt")
            )
            assert got.configuration == controls
            with pytest.raises(rpc.RpcError):
                await stub.createBucket(
                    pb.CreateBucketRequest(
                        volume="vol", bucket="bad", ownershipControls=b"<OwnershipControls/>"
                    )
                )
            with pytest.raises(rpc.RpcError) as error:
                await stub.infoBucket(pb.InfoBucketRequest(volume="vol", bucket="bad"))
            assert "BUCKET_NOT_FOUND" in (error.value.details() or "")

    run(body())


def test_bucket_owner_enforced_is_refused_under_oms_lock_while_the_acl_grants_others(
    cluster: tuple[OzoneManager, BucketDocuments],
) -> None:
    """The gateway's look at the bucket ACL and its write were two calls: a PutBucketAcl between them left
    BucketOwnerEnforced over a shared ACL (the session's reread). OM judges it in the step that keeps it."""
    manager, controls = cluster
    record = manager.bucket_info("vol", "bkt")
    shared = replace(record, owner="alice", acls=(OzoneAcl.parse("user:alice:a"), OzoneAcl.parse("world::r")))
    manager.commit([(BUCKET_TABLE, bucket_key("vol", "bkt"), om_records.encode_bucket(shared))])
    with pytest.raises(OMException) as error:
        controls.put("vol", "bkt", document(ObjectOwnership.BUCKET_OWNER_ENFORCED))
    assert error.value.message.startswith("InvalidBucketAclWithObjectOwnership")
    controls.put("vol", "bkt", document(ObjectOwnership.OBJECT_WRITER))  # ACLs on: any ACL
    manager.commit(
        [
            (
                BUCKET_TABLE,
                bucket_key("vol", "bkt"),
                om_records.encode_bucket(replace(shared, acls=shared.acls[:1])),
            )
        ]
    )
    controls.put("vol", "bkt", document(ObjectOwnership.BUCKET_OWNER_ENFORCED))
    assert controls.get("vol", "bkt") == document(ObjectOwnership.BUCKET_OWNER_ENFORCED)
