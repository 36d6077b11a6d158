"""OM with ozone.acl.enabled, in-process on a free port with a fake SCM: who may do what (plaintext callers
name themselves in x-ozone-user), the refusals' status and wording, the ACL calls, and inheritance."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.client import AsyncOzoneClient, OMException
from pyozone.framework.om import OM_SERVICE
from pyozone.hdds.security.acl import ACLType, Caller, Ownership, OzoneAcl, ResourceType
from pyozone.hdds.security.users import Administrators
from pyozone.om.access import Access
from pyozone.om.exceptions import OMException as OMError
from pyozone.om.exceptions import OMResultCode
from pyozone.om.server import OmDaemon
from pyozone.om.settings import AccessSettings
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.protocol.acl import ObjectPath, acl_to_proto, acls_from_proto, acls_to_proto, obj_to_proto
from tests.unit.om.om_fakes import FakeScm, make_om
from tests.unit.om.test_om_server import conf, om_channel, run


class As:
    """The stub's calls, each naming `user` in x-ozone-user."""

    def __init__(self, stub: rpc.Stub, user: str) -> None:
        self.stub = stub
        self.user = user

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        method = getattr(self.stub, name)
        return lambda request: method(request, metadata=(("x-ozone-user", self.user),))


@asynccontextmanager
async def om(tmp_path: Path, **overrides: str) -> AsyncIterator[rpc.Stub]:
    configuration = conf(tmp_path)
    for key, value in {
        "ozone.acl.enabled": "true",
        "ozone.administrators": "root",
        "hadoop.user.group.static.mapping.overrides": "bob=staff;carol=staff",
        **overrides,
    }.items():
        configuration.set(key, value)
    daemon = OmDaemon(configuration, FakeScm())
    try:
        await daemon.start()
        async with om_channel(daemon.rpc_port) as ch:
            stub = rpc.Stub(ch, OM_SERVICE)
            stub.address = f"127.0.0.1:{daemon.rpc_port}"  # type: ignore[attr-defined]
            yield stub
    finally:
        await daemon.stop(0.5)


async def denied(call, request) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(rpc.RpcError) as error:
        await call(request)
    assert error.value.code() is rpc.StatusCode.PERMISSION_DENIED, error.value.details()
    return error.value.details() or ""


async def put_empty_key(user: As, volume: str, bucket: str, key: str) -> None:
    opened = await user.openKey(pb.OpenKeyRequest(volume=volume, bucket=bucket, key=key))
    await user.commitKey(
        pb.CommitKeyRequest(volume=volume, bucket=bucket, key=key, clientID=opened.clientID, dataSize=0)
    )


def acl_request(kind, resource: ResourceType, path: str, text: str):  # type: ignore[no-untyped-def]
    volume, _, rest = path.strip("/").partition("/")
    bucket, _, key = rest.partition("/")
    return kind(
        obj=obj_to_proto(ObjectPath(resource, volume, bucket, key)), acl=acl_to_proto(OzoneAcl.parse(text))
    )


def test_a_stranger_cannot_touch_anothers_key_until_granted(tmp_path: Path) -> None:
    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            details = await denied(alice.createVolume, pb.CreateVolumeRequest(volume="vol", owner="alice"))
            assert (
                details
                == "PERMISSION_DENIED: Only admin users are authorized to create Ozone volumes. User: alice"
            )
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            await put_empty_key(alice, "vol", "buck", "k")
            key = pb.LookupKeyRequest(volume="vol", bucket="buck", key="k")

            details = await denied(bob.lookupKey, key)
            assert details == (
                "PERMISSION_DENIED: User bob doesn't have READ permission to access VOLUME "
                "Volume:vol Bucket:buck Key:k"
            )
            await denied(bob.listKeys, pb.ListKeysRequest(volume="vol", bucket="buck"))
            await denied(bob.deleteKey, pb.DeleteKeyRequest(volume="vol", bucket="buck", key="k"))
            await denied(bob.openKey, pb.OpenKeyRequest(volume="vol", bucket="buck", key="k"))  # overwrite
            await denied(bob.renameKey, pb.RenameKeyRequest(volume="vol", bucket="buck", key="k", toKey="x"))
            await denied(bob.createBucket, pb.CreateBucketRequest(volume="vol", bucket="mine"))
            await denied(bob.infoVolume, pb.InfoVolumeRequest(volume="vol"))

            # alice owns the volume: she grants bob reading on each level
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.VOLUME, "/vol", "user:bob:r"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.BUCKET, "/vol/buck", "user:bob:rl"))
            details = await denied(bob.lookupKey, key)
            assert "doesn't have READ permission to access KEY Volume:vol Bucket:buck Key:k" in details
            await alice.addAcl(
                acl_request(pb.AddAclRequest, ResourceType.KEY, "/vol/buck/k", "group:staff:r")
            )
            assert (await bob.lookupKey(key)).keyInfo.key == "k"
            assert [
                k.key for k in (await bob.listKeys(pb.ListKeysRequest(volume="vol", bucket="buck"))).keys
            ] == ["k"]
            await denied(bob.deleteKey, pb.DeleteKeyRequest(volume="vol", bucket="buck", key="k"))
            await denied(bob.openKey, pb.OpenKeyRequest(volume="vol", bucket="buck", key="k"))
            # nor may bob change the ACLs he was given
            await denied(
                bob.addAcl, acl_request(pb.AddAclRequest, ResourceType.KEY, "/vol/buck/k", "user:bob:a")
            )
            # carol is in staff, so the group entry speaks for her too
            carol = As(stub, "carol")
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.VOLUME, "/vol", "group:staff:r"))
            await alice.addAcl(
                acl_request(pb.AddAclRequest, ResourceType.BUCKET, "/vol/buck", "group:staff:r")
            )
            assert (await carol.lookupKey(key)).keyInfo.key == "k"
            # the administrator may do anything
            await root.deleteKey(pb.DeleteKeyRequest(volume="vol", bucket="buck", key="k"))

    run(body())


def test_acl_calls_and_default_inheritance(tmp_path: Path) -> None:
    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice = As(stub, "root"), As(stub, "alice")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            volume_obj = pb.GetAclRequest(obj=obj_to_proto(ObjectPath(ResourceType.VOLUME, "vol")))
            acls = acls_from_proto((await alice.getAcl(volume_obj)).acls, "acls")
            assert [str(a) for a in acls] == ["user:alice:a"]  # the owner's ozone.om.user.rights
            await alice.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            bucket = ObjectPath(ResourceType.BUCKET, "vol", "buck")
            add = pb.AddAclRequest(
                obj=obj_to_proto(bucket), acl=acl_to_proto(OzoneAcl.parse("user:bob:r[DEFAULT]"))
            )
            assert (await alice.addAcl(add)).response
            assert not (await alice.addAcl(add)).response  # nothing changed
            await put_empty_key(alice, "vol", "buck", "k")
            key_obj = pb.GetAclRequest(obj=obj_to_proto(ObjectPath(ResourceType.KEY, "vol", "buck", "k")))
            assert [str(a) for a in acls_from_proto((await alice.getAcl(key_obj)).acls, "acls")] == [
                "user:alice:a",
                "user:bob:r",
            ]
            new = tuple(OzoneAcl.parse(t) for t in ("user:alice:a", "world::r"))
            await alice.setAcl(pb.SetAclRequest(obj=obj_to_proto(bucket), acl=acls_to_proto(new)))
            remove = pb.RemoveAclRequest(
                obj=obj_to_proto(bucket), acl=acl_to_proto(OzoneAcl.parse("world::r"))
            )
            assert (await alice.removeAcl(remove)).response
            bucket_acls = await alice.getAcl(pb.GetAclRequest(obj=obj_to_proto(bucket)))
            assert [str(a) for a in acls_from_proto(bucket_acls.acls, "acls")] == ["user:alice:a"]
            bad = pb.GetAclRequest(obj=pb.OzoneObj(resType=pb.OzoneObj.KEY, path="/vol/buck"))
            with pytest.raises(rpc.RpcError) as error:
                await alice.getAcl(bad)
            assert error.value.code() is rpc.StatusCode.INVALID_ARGUMENT
            assert "does not name a KEY" in (error.value.details() or "")

    run(body())


def test_s3_secrets_are_their_users_and_names_are_checked(tmp_path: Path) -> None:
    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            mine = await alice.getS3Secret(pb.GetS3SecretRequest(kerberosID="alice", createIfNotExist=True))
            assert mine.s3Secret.kerberosID == "alice"
            await denied(bob.getS3Secret, pb.GetS3SecretRequest(kerberosID="alice", createIfNotExist=True))
            await denied(bob.revokeS3Secret, pb.RevokeS3SecretRequest(kerberosID="alice"))
            theirs = await root.getS3Secret(pb.GetS3SecretRequest(kerberosID="alice"))
            assert theirs.s3Secret.awsSecret == mine.s3Secret.awsSecret
            signing = pb.GetS3SigningKeyRequest(
                accessId="alice", date="20250101", region="us-east-1", service="s3"
            )
            await denied(bob.getS3SigningKey, signing)
            assert len((await root.getS3SigningKey(signing)).signingKey) == 32
            with pytest.raises(rpc.RpcError) as error:
                await As(stub, "a@b").infoVolume(pb.InfoVolumeRequest(volume="vol"))
            assert error.value.code() is rpc.StatusCode.INVALID_ARGUMENT
            assert (error.value.details() or "").startswith("INVALID_REQUEST: x-ozone-user:")

    run(body())


def test_listing_volumes_without_listall(tmp_path: Path) -> None:
    async def body() -> None:
        async with om(tmp_path, **{"ozone.om.volume.listall.allowed": "false"}) as stub:
            root = As(stub, "root")
            await root.createVolume(pb.CreateVolumeRequest(volume="vola", owner="alice"))
            await root.createVolume(pb.CreateVolumeRequest(volume="volb", owner="bob"))
            listed = await As(stub, "bob").listVolumes(pb.ListVolumesRequest())
            assert [v.volume for v in listed.volumes] == ["volb"]
            assert len((await root.listVolumes(pb.ListVolumesRequest())).volumes) == 2
            # a new owner may delete it; the entries the old one had stay (as in Ozone), a stranger may not
            change = pb.SetVolumePropertyRequest(volumeName="volb", ownerName="carol")
            await denied(As(stub, "dave").setVolumeProperty, change)
            await As(stub, "bob").setVolumeProperty(change)
            await denied(As(stub, "dave").deleteVolume, pb.DeleteVolumeRequest(volume="volb"))
            await As(stub, "carol").deleteVolume(pb.DeleteVolumeRequest(volume="volb"))

    run(body())


def test_the_client_names_its_login_user_and_acts_for_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HADOOP_USER_NAME", "root")

    async def body() -> None:
        async with om(tmp_path) as stub, AsyncOzoneClient(stub.address) as client:  # type: ignore[attr-defined]
            await client.create_volume("vol", owner="alice")  # as root, the administrator
            with client.acting_for("bob"), pytest.raises(OMException) as error:
                await client.volume_info("vol")
            assert error.value.result == "PERMISSION_DENIED"
            assert error.value.message.startswith("User bob doesn't have READ permission")
            with client.acting_for("alice"):
                assert (await client.volume_info("vol")).owner == "alice"
                await client.create_bucket("vol", "buck")
            assert (await client.bucket_info("vol", "buck")).owner == "alice"

    run(body())


class TlsContext:
    """A call over mutual TLS from the certificate named `common_name`, claiming `claimed` if given."""

    def __init__(self, common_name: str, claimed: str | None = None) -> None:
        self.common_name = common_name
        self.claimed = claimed

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return (("x-ozone-user", self.claimed),) if self.claimed is not None else ()

    def auth_context(self) -> dict[str, list[bytes]]:
        return {"x509_common_name": [self.common_name.encode()]}


def test_over_tls_only_om_and_the_gateway_are_services(tmp_path: Path) -> None:
    """A datanode's, SCM's or the join credential's certificate is nobody to OM: no volume, no key of
    another; OM's and the S3 gateway's (acting for itself) are administrators; a user's certificate is
    its user whatever it claims, even a name no certificate could carry."""
    core = make_om(tmp_path)
    settings = AccessSettings(True, True, Administrators(frozenset({"root"}), frozenset()))
    access = Access(core, settings)
    core.volumes.create("vol", "carol", acls=access.defaults("carol"))
    core.buckets.create("vol", "buck", creator=Ownership("carol", access.defaults("carol")))
    for name in ("dn@10.0.0.1", "scm@10.0.0.2", "join@10.0.0.3"):
        caller = access.caller(TlsContext(name, "root"))
        assert caller == Caller("dr.who"), name
        with pytest.raises(OMError) as error:
            access.bucket(caller, ACLType.READ, "vol", "buck")
        assert error.value.code is OMResultCode.PERMISSION_DENIED
        with pytest.raises(OMError):
            access.admin(caller, "create Ozone volumes")
    for name in ("om@10.0.0.4", "s3g@10.0.0.5"):
        assert access.caller(TlsContext(name)) == Caller(name.partition("@")[0], (), True)
    assert access.caller(TlsContext("s3g@10.0.0.5", "bob")) == Caller("bob")
    assert access.caller(TlsContext("bob", "hdfs/nn1@EXAMPLE.COM")) == Caller("bob")


def test_aborting_an_upload_needs_write(tmp_path: Path) -> None:
    """Ozone's abort checks WRITE on the key: a user who may only read and list the bucket cannot abort
    another's upload (the key does not exist yet, so the bucket decides)."""

    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.VOLUME, "/vol", "user:bob:r"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.BUCKET, "/vol/buck", "user:bob:rl"))
            initiate = pb.InitiateMultipartUploadRequest(volume="vol", bucket="buck", key="video")
            upload = (await alice.initiateMultipartUpload(initiate)).uploadID
            listed = pb.ListMultipartUploadsRequest(volume="vol", bucket="buck")
            assert [u.uploadID for u in (await bob.listMultipartUploads(listed)).uploads] == [upload]
            abort = pb.AbortMultipartUploadRequest(volume="vol", bucket="buck", key="video", uploadID=upload)
            details = await denied(bob.abortMultipartUpload, abort)
            assert "User bob doesn't have WRITE permission to access KEY" in details
            assert len((await bob.listMultipartUploads(listed)).uploads) == 1
            await alice.abortMultipartUpload(abort)
            assert (await bob.listMultipartUploads(listed)).uploads == []

    run(body())


def test_an_empty_property_change_is_checked_and_refused(tmp_path: Path) -> None:
    """A setVolumeProperty / setBucketProperty naming no owner and no quota needs WRITE like any quota change
    (a stranger learns nothing of the record, nor touches its modification time) and is INVALID_REQUEST."""

    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            volume = (await alice.infoVolume(pb.InfoVolumeRequest(volume="vol"))).volume
            bucket = (await alice.infoBucket(pb.InfoBucketRequest(volume="vol", bucket="buck"))).bucket
            empty_volume = pb.SetVolumePropertyRequest(volumeName="vol")
            empty_bucket = pb.SetBucketPropertyRequest(
                bucketArgs=pb.BucketArgs(volumeName="vol", bucketName="buck")
            )
            details = await denied(bob.setVolumeProperty, empty_volume)
            assert details.startswith("PERMISSION_DENIED: User bob doesn't have WRITE permission")
            await denied(bob.setBucketProperty, empty_bucket)
            for call, request in (
                (alice.setVolumeProperty, empty_volume),
                (alice.setBucketProperty, empty_bucket),
            ):
                with pytest.raises(rpc.RpcError) as error:
                    await call(request)
                assert error.value.code() is rpc.StatusCode.INVALID_ARGUMENT
                assert "either an owner or a quota should be set" in (error.value.details() or "")
            assert (await alice.infoVolume(pb.InfoVolumeRequest(volume="vol"))).volume == volume
            assert (
                await alice.infoBucket(pb.InfoBucketRequest(volume="vol", bucket="buck"))
            ).bucket == bucket

    run(body())


def test_a_user_lists_only_the_volumes_it_may_read(tmp_path: Path) -> None:
    """Issue 28, defect 8: any user listed every volume with its usage. With ACLs on (and
    ozone.om.volume.listall.allowed at its default, false) a user sees the volumes it may READ or LIST;
    administrators see all; listall.allowed brings back the old listing."""

    async def body() -> None:
        async with om(tmp_path) as stub:
            root = As(stub, "root")
            for volume, owner in (("vola", "alice"), ("volb", "bob"), ("volc", "dave")):
                await root.createVolume(pb.CreateVolumeRequest(volume=volume, owner=owner))
            await root.addAcl(acl_request(pb.AddAclRequest, ResourceType.VOLUME, "/volc", "user:erin:r"))

            async def listed(user: str) -> list[str]:
                reply = await As(stub, user).listVolumes(pb.ListVolumesRequest())
                return [v.volume for v in reply.volumes]

            assert await listed("alice") == ["vola"]
            assert await listed("carol") == ["volb"]  # bob's group staff has READ and LIST on it
            assert await listed("erin") == ["volc"]  # her READ entry
            assert await listed("mallory") == []
            assert await listed("root") == ["vola", "volb", "volc"]

        async with om(tmp_path / "all", **{"ozone.om.volume.listall.allowed": "true"}) as stub:
            await As(stub, "root").createVolume(pb.CreateVolumeRequest(volume="vola", owner="alice"))
            reply = await As(stub, "mallory").listVolumes(pb.ListVolumesRequest())
            assert [v.volume for v in reply.volumes] == ["vola"]

    run(body())


def test_a_version_is_checked_as_its_own_record(tmp_path: Path) -> None:
    """R32's F1: a request naming a version is decided by that version's owner and ACLs, a key whose
    latest is a delete marker by that marker (never as "a key to create"), and a delete marker for a key
    that never was needs WRITE on the bucket: bucket READ (rl) alone reads and removes nothing."""

    def version(info: pb.KeyInfo) -> str:
        return f"{info.versionSeq:016x}"

    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            await alice.setBucketVersioning(
                pb.SetBucketVersioningRequest(volume="vol", bucket="buck", versioning="Enabled")
            )
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.VOLUME, "/vol", "user:bob:r"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.BUCKET, "/vol/buck", "user:bob:rl"))
            await put_empty_key(alice, "vol", "buck", "secret")
            lookup = pb.LookupKeyRequest(volume="vol", bucket="buck", key="secret")
            v1 = version((await alice.lookupKey(lookup)).keyInfo)
            await alice.deleteKey(pb.DeleteKeyRequest(volume="vol", bucket="buck", key="secret"))
            named = pb.LookupKeyRequest(volume="vol", bucket="buck", key="secret", versionId=v1)
            assert "KEY" in await denied(bob.lookupKey, named)
            remove = pb.DeleteKeyRequest(volume="vol", bucket="buck", key="secret", versionId=v1)
            await denied(bob.deleteKey, remove)
            await denied(bob.deleteKey, pb.DeleteKeyRequest(volume="vol", bucket="buck", key="secret"))
            marker = pb.LookupKeyRequest(volume="vol", bucket="buck", key="secret", deleteMarkers=True)
            await denied(bob.lookupKey, marker)
            assert (await alice.lookupKey(named)).keyInfo.key == "secret"  # still there, still hers
            # a marker for a key that never existed: bucket READ is not enough, WRITE is
            never = pb.DeleteKeyRequest(volume="vol", bucket="buck", key="never")
            await denied(bob.deleteKey, never)
            # sharing the current version shares it alone, not the older ones
            await put_empty_key(alice, "vol", "buck", "diary")
            d1 = version(
                (await alice.lookupKey(pb.LookupKeyRequest(volume="vol", bucket="buck", key="diary"))).keyInfo
            )
            await put_empty_key(alice, "vol", "buck", "diary")
            await alice.addAcl(
                acl_request(pb.AddAclRequest, ResourceType.KEY, "/vol/buck/diary", "user:bob:r")
            )
            await bob.lookupKey(pb.LookupKeyRequest(volume="vol", bucket="buck", key="diary"))
            await denied(
                bob.lookupKey, pb.LookupKeyRequest(volume="vol", bucket="buck", key="diary", versionId=d1)
            )
            # with WRITE on the bucket bob adds markers; each is his, so he may remove it again
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.BUCKET, "/vol/buck", "user:bob:w"))
            answer = await bob.deleteKey(never)
            await bob.deleteKey(pb.DeleteKeyRequest(volume="vol", bucket="buck", key="never"))
            await bob.deleteKey(
                pb.DeleteKeyRequest(volume="vol", bucket="buck", key="never", versionId=answer.versionId)
            )
            listed = await alice.listKeyVersions(pb.ListKeyVersionsRequest(volume="vol", bucket="buck"))
            assert sum(v.key.key == "secret" for v in listed.versions) == 2  # v1 and alice's marker

    run(body())
