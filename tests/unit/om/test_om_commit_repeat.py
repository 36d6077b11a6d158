"""Issue 28 defect 15, OM's side: a client retries commitKey while OM is unreachable, so a commit OM
applied whose answer was lost comes again. OM answers the repeated commit of the same open-key session as
the first one, not KEY_NOT_FOUND; a session whose key was since replaced by another writer's is not found."""

from __future__ import annotations

import asyncio

from pyozone import rpc
from pyozone.proto import OmClientProtocol_pb2 as pb
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_acls import As, denied, om
from tests.unit.om.test_om_server import failure, run, running


def commit_request(opened: pb.OpenKeyResponse, size: int) -> pb.CommitKeyRequest:
    first = opened.keyInfo.locations[0]
    return pb.CommitKeyRequest(
        volume="vol1", bucket="bkt1", key="k", clientID=opened.clientID, dataSize=size,
        locations=[pb.KeyLocation(blockID=first.blockID, offset=0, length=size)],
    )  # fmt: skip


def test_a_repeated_commit_of_one_session_answers_as_the_first(tmp_path) -> None:
    async def body() -> None:
        async with running(tmp_path, FakeScm()) as (_, stub):
            await stub.createVolume(pb.CreateVolumeRequest(volume="vol1"))
            await stub.createBucket(pb.CreateBucketRequest(volume="vol1", bucket="bkt1"))
            opened = await stub.openKey(
                pb.OpenKeyRequest(volume="vol1", bucket="bkt1", key="k", dataSize=100)
            )
            request = commit_request(opened, 100)
            first = await stub.commitKey(request)
            again = await stub.commitKey(request)
            assert again.keyInfo == first.keyInfo
            bucket = await stub.infoBucket(pb.InfoBucketRequest(volume="vol1", bucket="bkt1"))
            assert bucket.bucket.usedNamespace == 1  # counted once

            other = await stub.openKey(pb.OpenKeyRequest(volume="vol1", bucket="bkt1", key="k", dataSize=50))
            await stub.commitKey(commit_request(other, 50))
            status, details = await failure(stub.commitKey, request)
            assert status is rpc.StatusCode.NOT_FOUND and details.startswith("KEY_NOT_FOUND")
            looked = await stub.lookupKey(pb.LookupKeyRequest(volume="vol1", bucket="bkt1", key="k"))
            assert looked.keyInfo.dataSize == 50

    run(asyncio.wait_for(body(), 20))


def test_with_acls_the_writer_repeats_its_commit_and_a_stranger_may_not(tmp_path) -> None:
    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol1", owner="alice"))
            await alice.createBucket(pb.CreateBucketRequest(volume="vol1", bucket="bkt1"))
            opened = await alice.openKey(
                pb.OpenKeyRequest(volume="vol1", bucket="bkt1", key="k", dataSize=100)
            )
            request = commit_request(opened, 100)
            first = await alice.commitKey(request)
            assert (await alice.commitKey(request)).keyInfo == first.keyInfo
            await denied(bob.commitKey, request)

    run(asyncio.wait_for(body(), 20))
