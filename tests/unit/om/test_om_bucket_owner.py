"""createBucket naming its owner (CreateBucketRequest.owner, as Ozone's client sends BucketInfo.owner): the
bucket exists with that owner from its first moment (the S3 gateway's CreateBucket, issue 28's review); with
ACLs on, only an administrator names another user than the caller; a name OM refuses makes no bucket."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.proto import OmClientProtocol_pb2 as pb
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_acls import As, denied, om
from tests.unit.om.test_om_server import run, running


def test_with_acls_a_user_names_only_herself_and_an_admin_anyone(tmp_path: Path) -> None:
    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice = As(stub, "root"), As(stub, "alice")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            made = await alice.createBucket(
                pb.CreateBucketRequest(volume="vol", bucket="mine", owner="alice")
            )
            assert made.bucket.owner == "alice"
            details = await denied(
                alice.createBucket, pb.CreateBucketRequest(volume="vol", bucket="bbb", owner="bob")
            )
            assert "Only admin users may create a bucket owned by another user. User: alice" in details
            made = await root.createBucket(pb.CreateBucketRequest(volume="vol", bucket="bbb", owner="bob"))
            assert made.bucket.owner == "bob"

    run(body())


def test_without_acls_the_named_owner_is_recorded_and_a_bad_name_makes_no_bucket(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path, FakeScm()) as (_, stub):
            await stub.createVolume(pb.CreateVolumeRequest(volume="vol", owner="root"))
            made = await stub.createBucket(pb.CreateBucketRequest(volume="vol", bucket="bbb", owner="carol"))
            assert made.bucket.owner == "carol"
            with pytest.raises(rpc.RpcError) as error:
                await stub.createBucket(
                    pb.CreateBucketRequest(volume="vol", bucket="ccc", owner="carol@EXAMPLE.COM")
                )
            assert error.value.code() is rpc.StatusCode.INVALID_ARGUMENT, error.value.details()
            with pytest.raises(rpc.RpcError) as error:
                await stub.infoBucket(pb.InfoBucketRequest(volume="vol", bucket="ccc"))
            assert "BUCKET_NOT_FOUND" in (error.value.details() or "")
            plain = await stub.createBucket(pb.CreateBucketRequest(volume="vol", bucket="ddd"))
            assert plain.bucket.owner == "root"  # unnamed: the volume's owner, as before

    run(body())
