"""OM's side of S3 server-side encryption (issue 33, item 7): an SSE-S3 key's data key is made per key,
kept wrapped and answered only to a caller allowed to write or read the key; an SSE-C key keeps the
customer key's MD5 and nothing from which its data could be read."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.framework.om import OM_SERVICE
from pyozone.hdds.security.acl import ResourceType
from pyozone.hdds.security.sse import SseAlgorithm, key_md5
from pyozone.om.master_keys import KEYSTORE_FILE, MasterKeyStore
from pyozone.om.metadata import KEY_TABLE, key_key
from pyozone.om.server import OmDaemon
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.protocol import om_records
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_acls import As, acl_request, denied, om
from tests.unit.om.test_om_server import conf, om_channel, run


async def put(user: As, key: str, **sse: object) -> pb.OpenKeyResponse:
    opened = await user.openKey(pb.OpenKeyRequest(volume="vol", bucket="buck", key=key, **sse))
    await user.commitKey(
        pb.CommitKeyRequest(volume="vol", bucket="buck", key=key, clientID=opened.clientID, dataSize=0)
    )
    return opened


def lookup(key: str) -> pb.LookupKeyRequest:
    return pb.LookupKeyRequest(volume="vol", bucket="buck", key=key)


def test_an_sse_s3_data_key_is_answered_only_to_allowed_callers(tmp_path: Path) -> None:
    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            opened = await put(alice, "k", sseAlgorithm=pb.SSE_S3)
            data_key = opened.keyInfo.sseDataKey
            assert len(data_key) == 32 and len(opened.keyInfo.sseIv) == 16
            again = await put(alice, "k2", sseAlgorithm=pb.SSE_S3)
            assert again.keyInfo.sseDataKey != data_key  # a fresh data key per object

            info = (await alice.lookupKey(lookup("k"))).keyInfo
            assert info.sseAlgorithm == pb.SSE_S3 and info.sseDataKey == data_key
            assert info.sseMasterKeyVersion == 1 and data_key not in info.sseWrappedKey
            await denied(bob.lookupKey, lookup("k"))  # no read, no key
            listed = (await alice.listKeys(pb.ListKeysRequest(volume="vol", bucket="buck"))).keys
            assert [k.sseDataKey for k in listed] == [b"", b""]  # a listing never carries one
            assert all(k.sseWrappedKey for k in listed)

            for resource, path in ((ResourceType.VOLUME, "/vol"), (ResourceType.BUCKET, "/vol/buck"),
                                   (ResourceType.KEY, "/vol/buck/k")):  # fmt: skip
                await alice.addAcl(acl_request(pb.AddAclRequest, resource, path, "user:bob:r"))
            assert (await bob.lookupKey(lookup("k"))).keyInfo.sseDataKey == data_key

    run(body())


def test_rotation_keeps_old_keys_readable_and_wraps_new_ones_with_the_newest(tmp_path: Path) -> None:
    async def body() -> None:
        async with om(tmp_path) as stub:
            root = As(stub, "root")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol"))
            await root.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            old = (await put(root, "old", sseAlgorithm=pb.SSE_S3)).keyInfo.sseDataKey
            await root.rotateS3MasterKey(pb.RotateS3MasterKeyRequest())
            new = await put(root, "new", sseAlgorithm=pb.SSE_S3)
            assert new.keyInfo.sseMasterKeyVersion == 2
            assert (await root.lookupKey(lookup("old"))).keyInfo.sseDataKey == old
            assert (await root.lookupKey(lookup("new"))).keyInfo.sseMasterKeyVersion == 2
            alice = As(stub, "alice")
            details = await denied(alice.rotateS3MasterKey, pb.RotateS3MasterKeyRequest())
            assert "admin" in details
        store = MasterKeyStore.load(tmp_path / KEYSTORE_FILE)
        assert store.versions == (1, 2)

    run(body())


def test_sse_c_keeps_only_the_customer_keys_md5(tmp_path: Path) -> None:
    customer = os.urandom(32)

    async def body() -> None:
        async with om(tmp_path) as stub:
            root = As(stub, "root")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol"))
            await root.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            opened = await put(root, "c", sseAlgorithm=pb.SSE_C, sseCustomerKeyMD5=key_md5(customer))
            assert opened.keyInfo.sseDataKey == b""
            info = (await root.lookupKey(lookup("c"))).keyInfo
            assert info.sseAlgorithm == SseAlgorithm.SSE_C and info.sseCustomerKeyMD5 == key_md5(customer)
            assert info.sseDataKey == b"" and info.sseWrappedKey == b"" and len(info.sseIv) == 16
            with pytest.raises(rpc.RpcError, match="base64 MD5"):
                await put(root, "bad", sseAlgorithm=pb.SSE_C, sseCustomerKeyMD5="nope")

    run(body())


def test_a_bucket_default_encryption_encrypts_keys_asked_none(tmp_path: Path) -> None:
    aes = (
        b"<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256"
        b"</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>"
    )

    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            assert (await put(alice, "before")).keyInfo.sseAlgorithm == pb.SSE_NONE
            put_config = pb.PutBucketEncryptionRequest(volume="vol", bucket="buck", configuration=aes)
            await denied(bob.putBucketEncryption, put_config)  # the owner's alone
            await alice.putBucketEncryption(put_config)
            kept = await alice.getBucketEncryption(pb.GetBucketEncryptionRequest(volume="vol", bucket="buck"))
            assert b"AES256" in kept.configuration
            opened = await put(alice, "after")
            assert opened.keyInfo.sseAlgorithm == pb.SSE_S3 and len(opened.keyInfo.sseDataKey) == 32
            upload = await alice.initiateMultipartUpload(
                pb.InitiateMultipartUploadRequest(volume="vol", bucket="buck", key="mpu")
            )
            assert upload.sseAlgorithm == pb.SSE_S3
            await alice.deleteBucketEncryption(pb.DeleteBucketEncryptionRequest(volume="vol", bucket="buck"))
            assert (await put(alice, "later")).keyInfo.sseAlgorithm == pb.SSE_NONE
            assert (await alice.lookupKey(lookup("after"))).keyInfo.sseDataKey == opened.keyInfo.sseDataKey

    run(body())


def test_only_the_initiator_opens_a_part_of_an_sse_s3_upload(tmp_path: Path) -> None:
    """R36 F5: bob, who may write the bucket but not read alice's key, gets no part of her SSE-S3 upload
    (its open would answer the completed object's data key)."""

    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            for resource, path, right in (
                (ResourceType.VOLUME, "/vol", "r"),
                (ResourceType.BUCKET, "/vol/buck", "w"),
            ):
                await alice.addAcl(acl_request(pb.AddAclRequest, resource, path, f"user:bob:{right}"))

            def part(upload: str, number: int) -> pb.OpenKeyRequest:
                return pb.OpenKeyRequest(
                    volume="vol",
                    bucket="buck",
                    key="secret",
                    multipartUploadID=upload,
                    multipartNumber=number,
                )

            up = await alice.initiateMultipartUpload(
                pb.InitiateMultipartUploadRequest(
                    volume="vol", bucket="buck", key="secret", sseAlgorithm=pb.SSE_S3
                )
            )
            mine = await alice.openKey(part(up.uploadID, 1))
            assert len(mine.keyInfo.sseDataKey) == 32
            with pytest.raises(rpc.RpcError) as refused:
                await bob.openKey(part(up.uploadID, 9))
            assert refused.value.code() is rpc.StatusCode.PERMISSION_DENIED
            assert "its parts are written by its initiator alice alone" in (refused.value.details() or "")
            await denied(bob.lookupKey, lookup("secret"))
            plain = await alice.initiateMultipartUpload(
                pb.InitiateMultipartUploadRequest(volume="vol", bucket="buck", key="open")
            )
            opened = await bob.openKey(
                pb.OpenKeyRequest(
                    volume="vol",
                    bucket="buck",
                    key="open",
                    multipartUploadID=plain.uploadID,
                    multipartNumber=1,
                )
            )
            assert opened.keyInfo.sseDataKey == b""  # a plain upload's parts: anyone who may write

    run(body())


def test_a_wrapped_key_copied_onto_another_record_does_not_open_and_a_rename_keeps_it(tmp_path: Path) -> None:
    """R36 F12: a data key is wrapped for its object's name, so a record given another's wrapped key (an
    edited om.db) answers no data key; a rename wraps it again for the new name."""

    async def body() -> None:
        daemon = OmDaemon(conf(tmp_path), FakeScm())
        await daemon.start()
        try:
            async with om_channel(daemon.rpc_port) as channel:
                stub = rpc.Stub(channel, OM_SERVICE)
                await stub.createVolume(pb.CreateVolumeRequest(volume="vol", owner="me"))
                await stub.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
                victim = await put(stub, "victim", sseAlgorithm=pb.SSE_S3)  # type: ignore[arg-type]
                await put(stub, "mine", sseAlgorithm=pb.SSE_S3)  # type: ignore[arg-type]
                core = daemon.core
                assert core is not None
                stolen = core.keys.record("vol", "buck", "victim").encryption
                forged = replace(core.keys.record("vol", "buck", "mine"), encryption=stolen)
                core.commit([(KEY_TABLE, key_key("vol", "buck", "mine"), om_records.encode_key(forged))])
                with pytest.raises(rpc.RpcError) as refused:
                    await stub.lookupKey(lookup("mine"))
                assert "INVALID_KMS_PROVIDER" in (refused.value.details() or "")
                assert "for /vol/buck/mine (altered, or wrapped for another object)" in (
                    refused.value.details() or ""
                )
                await stub.renameKey(
                    pb.RenameKeyRequest(volume="vol", bucket="buck", key="victim", toKey="moved")
                )
                moved = (await stub.lookupKey(lookup("moved"))).keyInfo
                assert (
                    moved.sseDataKey == victim.keyInfo.sseDataKey
                    and moved.sseWrappedKey != stolen.wrapped_key
                )  # type: ignore[union-attr]
        finally:
            await daemon.stop(0.5)

    run(body())


def test_an_sse_c_upload_is_completed_with_its_own_key_or_none(tmp_path: Path) -> None:
    """R36 F9: CompleteMultipartUpload sending another SSE-C key than the upload's is refused (S3's
    AccessDenied, as a part's), one for an upload not SSE-C too; none sent completes."""
    customer, other = os.urandom(32), os.urandom(32)

    async def body() -> None:
        async with om(tmp_path) as stub:
            root = As(stub, "root")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol"))
            await root.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))

            async def upload(key: str, **sse: object) -> str:
                started = await root.initiateMultipartUpload(
                    pb.InitiateMultipartUploadRequest(volume="vol", bucket="buck", key=key, **sse)
                )
                part = await root.openKey(
                    pb.OpenKeyRequest(
                        volume="vol",
                        bucket="buck",
                        key=key,
                        multipartUploadID=started.uploadID,
                        multipartNumber=1,
                    )
                )
                await root.commitMultipartUploadPart(
                    pb.CommitMultipartUploadPartRequest(
                        volume="vol", bucket="buck", key=key, clientID=part.clientID,
                        multipartUploadID=started.uploadID, multipartNumber=1, metadata={"ETag": "e1"},
                    )
                )  # fmt: skip
                return started.uploadID

            def complete(key: str, upload_id: str, md5: str) -> pb.CompleteMultipartUploadRequest:
                return pb.CompleteMultipartUploadRequest(
                    volume="vol", bucket="buck", key=key, uploadID=upload_id,
                    parts=[pb.Part(partNumber=1, partName="e1")], sseCustomerKeyMD5=md5,
                )  # fmt: skip

            sse_c = await upload("c", sseAlgorithm=pb.SSE_C, sseCustomerKeyMD5=key_md5(customer))
            assert "another SSE-C key" in await denied(
                root.completeMultipartUpload, complete("c", sse_c, key_md5(other))
            )
            plain = await upload("p")
            with pytest.raises(rpc.RpcError) as refused:
                await root.completeMultipartUpload(complete("p", plain, key_md5(customer)))
            assert (
                refused.value.details()
                == "INVALID_REQUEST: InvalidRequest: The encryption parameters are not applicable to this "
                "object."
            )
            await root.completeMultipartUpload(complete("p", plain, ""))
            done = await root.completeMultipartUpload(complete("c", sse_c, key_md5(customer)))
            assert done.keyInfo.sseCustomerKeyMD5 == key_md5(customer)

    run(body())
