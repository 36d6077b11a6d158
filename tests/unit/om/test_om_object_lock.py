"""S3 Object Lock in OM (om/object_lock.py) on a manual clock: a bucket created with it stays versioned, a
write gets the retention it names or the bucket's default, and OM refuses to remove a locked version by
version id (a native delete adds a marker; the lifecycle service skips it) until the clock passes its
date; retention changes follow the rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.hdds.clock import ManualClock
from pyozone.hdds.om_records import KeyBlock
from pyozone.hdds.s3_lifecycle import DAY_MS, LifecycleRun
from pyozone.hdds.s3_lifecycle import parse as parse_lifecycle
from pyozone.hdds.s3_object_lock import (
    DefaultRetention,
    ObjectLockConfiguration,
    Retention,
    RetentionMode,
    iso_date,
    legal_hold_document,
    retention_document,
)
from pyozone.hdds.s3_versions import BucketVersioning, version_id
from pyozone.hdds.security.acl import ResourceType
from pyozone.om import bucket_documents
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.lifecycle import S3LifecycleService
from pyozone.om.multipart import MultipartManager
from pyozone.om.object_lock import LOCK_METADATA, ObjectLocks
from pyozone.proto import OmClientProtocol_pb2 as pb
from tests.unit.om.om_fakes import FakeScm, make_om
from tests.unit.om.test_om_acls import As, acl_request, denied, put_empty_key
from tests.unit.om.test_om_acls import om as acl_om
from tests.unit.om.test_om_server import run

GOV, COMP = RetentionMode.GOVERNANCE, RetentionMode.COMPLIANCE
MODE, UNTIL, HOLD = LOCK_METADATA


class Locked:
    """An OM on a manual clock with bucket vol/bkt created with Object Lock."""

    def __init__(self, path: Path) -> None:
        self.clock = ManualClock()
        self.om = make_om(path, FakeScm(), clock=self.clock)
        self.om.volumes.create("vol")
        self.om.buckets.create("vol", "bkt", lock=True)
        self.locks = ObjectLocks(self.om)

    @property
    def now(self) -> int:
        return self.clock.wall_ms()

    def put(self, key: str, metadata: dict[str, str] | None = None, bucket: str = "bkt") -> str:
        session = self.om.keys.open("vol", bucket, key, 10, metadata=metadata)
        block = session.key.blocks[0].block_id
        record = self.om.keys.commit(
            "vol", bucket, key, session.client_id, 10, [KeyBlock(block, 0, 10, bcsid=1)]
        )
        return record.version_id

    def locked_put(self, key: str, mode: RetentionMode, days: float) -> str:
        return self.put(key, {MODE: mode.value, UNTIL: iso_date(self.now + int(days * DAY_MS))})

    def version(self, key: str, version: str):  # type: ignore[no-untyped-def]
        return self.om.versions.find("vol", "bkt", key, version)

    def refused(self, call, *args, **kw) -> OMException:  # type: ignore[no-untyped-def]
        with pytest.raises(OMException) as e:
            call(*args, **kw)
        return e.value


@pytest.fixture
def b(tmp_path: Path) -> Locked:
    return Locked(tmp_path)


def test_a_bucket_created_with_object_lock_is_versioned_and_never_suspended(b: Locked) -> None:
    record = b.om.bucket_info("vol", "bkt")
    assert record.versioning is BucketVersioning.ENABLED
    assert record.object_lock == ObjectLockConfiguration()
    e = b.refused(b.om.versions.set_state, "vol", "bkt", BucketVersioning.SUSPENDED)
    assert e.code is OMResultCode.INVALID_REQUEST and "InvalidBucketState" in e.message
    b.om.versions.set_state("vol", "bkt", BucketVersioning.ENABLED)  # Enabled again: allowed


def test_a_configuration_needs_versioning_enabled_and_sets_the_default(b: Locked) -> None:
    body = b"<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>"
    body += b"<Mode>GOVERNANCE</Mode><Days>2</Days></DefaultRetention></Rule></ObjectLockConfiguration>"
    b.locks.configure("vol", "bkt", body)
    assert b.om.bucket_info("vol", "bkt").object_lock == ObjectLockConfiguration(
        DefaultRetention(GOV, days=2)
    )
    b.om.buckets.create("vol", "plain")
    e = b.refused(b.locks.configure, "vol", "plain", body)
    assert "InvalidBucketState" in e.message
    b.om.versions.set_state("vol", "plain", BucketVersioning.ENABLED)
    b.locks.configure("vol", "plain", body)  # an existing bucket, once versioning is Enabled (Amazon's now)
    assert b.om.bucket_info("vol", "plain").object_lock is not None
    assert "MalformedXML" in b.refused(b.locks.configure, "vol", "bkt", b"<ObjectLockConfiguration/>").message


def test_a_write_gets_the_retention_it_names_or_the_default_and_keeps_no_lock_metadata(b: Locked) -> None:
    vid = b.put("named", {MODE: "COMPLIANCE", UNTIL: iso_date(b.now + DAY_MS), HOLD: "ON", "ETag": "x"})
    record = b.version("named", vid)
    assert record.retention == Retention(COMP, b.now + DAY_MS)
    assert record.legal_hold is True
    assert dict(record.metadata) == {"ETag": "x"}
    assert b.version("named", vid).retention is not None
    plain = b.put("plain")
    assert b.version("plain", plain).retention is None and b.version("plain", plain).legal_hold is None
    b.locks.configure(
        "vol", "bkt",
        b"<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>"
        b"<Mode>COMPLIANCE</Mode><Years>1</Years></DefaultRetention></Rule></ObjectLockConfiguration>",
    )  # fmt: skip
    defaulted = b.put("plain")
    assert b.version("plain", defaulted).retention == Retention(COMP, b.now + 365 * DAY_MS)


def test_a_write_naming_a_lock_is_refused_without_object_lock_or_with_a_past_date(b: Locked) -> None:
    b.om.buckets.create("vol", "plain")
    e = b.refused(b.put, "k", {HOLD: "ON"}, bucket="plain")
    assert (
        e.code is OMResultCode.INVALID_REQUEST and "Bucket is missing Object Lock Configuration" in e.message
    )
    e = b.refused(b.put, "k", {MODE: "GOVERNANCE", UNTIL: iso_date(b.now)})
    assert "The retain until date must be in the future!" in e.message
    e = b.refused(b.put, "k", {MODE: "GOVERNANCE"})
    assert "must both be supplied" in e.message
    uploads = MultipartManager(b.om)
    e = b.refused(uploads.initiate, "vol", "plain", "k", metadata={HOLD: "OFF"})
    assert "Bucket is missing Object Lock Configuration" in e.message


def test_compliance_refuses_a_delete_by_version_until_its_date_even_with_the_bypass(b: Locked) -> None:
    vid = b.locked_put("k", COMP, 1)
    e = b.refused(b.om.keys.delete, "vol", "bkt", "k", version=vid, bypass=True)
    assert e.code is OMResultCode.PERMISSION_DENIED
    b.put("k")  # an overwrite: a new version, the locked one kept
    e = b.refused(b.om.keys.delete, "vol", "bkt", "k", version=vid)
    assert e.code is OMResultCode.PERMISSION_DENIED  # noncurrent now, still locked
    b.clock.advance(DAY_MS)
    assert b.om.keys.delete("vol", "bkt", "k", version=vid).version_id == vid


def test_governance_gives_way_to_the_bypass_alone(b: Locked) -> None:
    vid = b.locked_put("k", GOV, 1)
    assert b.refused(b.om.keys.delete, "vol", "bkt", "k", version=vid).code is OMResultCode.PERMISSION_DENIED
    assert b.om.keys.delete("vol", "bkt", "k", version=vid, bypass=True).version_id == vid


def test_a_legal_hold_refuses_every_delete_by_version_until_it_is_off(b: Locked) -> None:
    vid = b.put("k", {HOLD: "ON"})
    assert b.refused(b.om.keys.delete, "vol", "bkt", "k", version=vid, bypass=True).code is (
        OMResultCode.PERMISSION_DENIED
    )
    b.locks.set_legal_hold("vol", "bkt", "k", vid, legal_hold_document(False))
    assert b.version("k", vid).legal_hold is False
    b.om.keys.delete("vol", "bkt", "k", version=vid)


def test_a_native_delete_of_a_locked_current_version_adds_a_marker_and_keeps_the_data(b: Locked) -> None:
    vid = b.locked_put("k", COMP, 1)
    outcome = b.om.keys.delete("vol", "bkt", "k")  # `ozone sh key delete`: no version named
    assert outcome.delete_marker
    assert b.version("k", vid).retention is not None  # still there, noncurrent
    assert b.refused(b.om.keys.delete, "vol", "bkt", "k", version=vid).code is OMResultCode.PERMISSION_DENIED
    # removing the marker is allowed: it holds no data, and the locked version is current again
    b.om.keys.delete("vol", "bkt", "k", version=outcome.version_id)
    assert b.om.keys.lookup("vol", "bkt", "k").key.version_id == vid


def test_locked_versions_keep_the_bucket_from_being_deleted(b: Locked) -> None:
    b.locked_put("k", COMP, 1)
    b.om.keys.delete("vol", "bkt", "k")
    assert b.refused(b.om.buckets.delete, "vol", "bkt").code is OMResultCode.BUCKET_NOT_EMPTY


def test_retention_is_extended_freely_shortened_only_as_the_rules_allow(b: Locked) -> None:
    comp = b.locked_put("c", COMP, 1)
    b.locks.set_retention(
        "vol", "bkt", "c", comp, retention_document(Retention(COMP, b.now + 2 * DAY_MS)), False
    )
    assert b.version("c", comp).retention == Retention(COMP, b.now + 2 * DAY_MS)
    shorter = retention_document(Retention(COMP, b.now + DAY_MS))
    e = b.refused(b.locks.set_retention, "vol", "bkt", "c", comp, shorter, True)
    assert e.code is OMResultCode.PERMISSION_DENIED  # not even with the bypass (an administrator's)
    assert b.refused(b.locks.set_retention, "vol", "bkt", "c", comp, b"<Retention/>", True).code is (
        OMResultCode.PERMISSION_DENIED
    )
    gov = b.locked_put("g", GOV, 2)
    shorter = retention_document(Retention(GOV, b.now + DAY_MS))
    assert b.refused(b.locks.set_retention, "vol", "bkt", "g", gov, shorter, False).code is (
        OMResultCode.PERMISSION_DENIED
    )
    b.locks.set_retention("vol", "bkt", "g", gov, b"<Retention/>", True)
    assert b.version("g", gov).retention is None
    past = retention_document(Retention(GOV, b.now - 1))
    assert "in the future" in b.refused(b.locks.set_retention, "vol", "bkt", "g", gov, past, False).message


def test_retention_and_legal_hold_need_a_bucket_with_object_lock(b: Locked) -> None:
    b.om.buckets.create("vol", "plain")
    b.put("k", bucket="plain")
    e = b.refused(b.locks.set_legal_hold, "vol", "plain", "k", "", legal_hold_document(True))
    assert "Bucket is missing ObjectLockConfiguration" in e.message


def test_lifecycle_skips_locked_noncurrent_versions(b: Locked) -> None:
    rule = (
        "<Rule><ID>r</ID><Filter/><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1"
        "</NoncurrentDays></NoncurrentVersionExpiration></Rule>"
    )
    bucket_documents.lifecycle(b.om).put(
        "vol", "bkt", f"<LifecycleConfiguration>{rule}</LifecycleConfiguration>".encode()
    )
    locked = b.locked_put("k", COMP, 10)
    held = b.put("k", {HOLD: "ON"})
    free = b.put("k")
    b.put("k")  # every earlier one noncurrent
    b.clock.advance(3 * DAY_MS)
    service = S3LifecycleService(b.om)
    # the plan names no locked version: OM's refusal at delete is the second guard, not the only one (a
    # locked version planned takes a place in the run's budget)
    config = parse_lifecycle(f"<LifecycleConfiguration>{rule}</LifecycleConfiguration>".encode())
    assert [version for _, version in service._plan("vol", "bkt", "k", config, b.now)] == [free]
    assert service.run_once() == LifecycleRun(versions_expired=1)
    remaining = {r.version_id for r, _ in b.om.versions.list("vol", "bkt")}
    assert {locked, held} <= remaining and free not in remaining


def test_with_acls_the_bypass_is_the_owner_s_or_an_administrator_s(tmp_path: Path) -> None:
    """Over RPC with ozone.acl.enabled: bob, granted every right on the bucket, may not bypass GOVERNANCE
    retention nor change its configuration; alice, its owner, and root, an administrator, may bypass."""

    async def body() -> None:
        async with acl_om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(
                pb.CreateBucketRequest(volume="vol", bucket="buck", objectLockEnabled=True)
            )
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.BUCKET, "/vol/buck", "user:bob:a"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.VOLUME, "/vol", "user:bob:a"))
            config = pb.PutObjectLockConfigurationRequest(
                volume="vol", bucket="buck",
                configuration=b"<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled>"
                b"<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule>"
                b"</ObjectLockConfiguration>",
            )  # fmt: skip
            assert "Only the owner of bucket vol/buck" in await denied(bob.putObjectLockConfiguration, config)
            await alice.putObjectLockConfiguration(config)
            versions = []
            for _ in range(2):
                await put_empty_key(bob, "vol", "buck", "k")
                found = await bob.lookupKey(pb.LookupKeyRequest(volume="vol", bucket="buck", key="k"))
                assert found.keyInfo.retentionMode == "GOVERNANCE"
                versions.append(version_id(found.keyInfo.versionSeq, found.keyInfo.versioned))

            def delete(version: str) -> pb.DeleteKeyRequest:
                return pb.DeleteKeyRequest(
                    volume="vol", bucket="buck", key="k", versionId=version, bypassGovernanceRetention=True
                )

            assert "GOVERNANCE retention" in await denied(bob.deleteKey, delete(versions[0]))
            await alice.deleteKey(delete(versions[0]))
            await root.deleteKey(delete(versions[1]))
            await put_empty_key(bob, "vol", "buck", "held")
            hold = pb.PutObjectLegalHoldRequest(
                volume="vol", bucket="buck", key="held", legalHold=legal_hold_document(True)
            )
            assert "Only the owner of bucket vol/buck" in await denied(bob.putObjectLegalHold, hold)
            await alice.putObjectLegalHold(hold)
            await denied(
                As(stub, "carol").putObjectLegalHold, hold
            )  # no right on the bucket or key: PERMISSION_DENIED

    run(body())


async def _lookup(user: As, key: str, version: str = "") -> pb.KeyInfo:
    found = await user.lookupKey(pb.LookupKeyRequest(volume="vol", bucket="buck", key=key, versionId=version))
    return found.keyInfo


def test_with_acls_a_lock_change_is_decided_by_the_version_it_names(tmp_path: Path) -> None:
    """R35's F1 (fails before its fix): bob, who may write the bucket but not alice's version v1, uploads a
    version of his own (or finds a delete marker latest) and still may neither lift v1's legal hold nor
    lock it under COMPLIANCE: the version the request names decides, not the key's current one."""
    far = Retention(COMP, 32_472_144_000_000)  # 2999-01-01

    async def body() -> None:
        async with acl_om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(
                pb.CreateBucketRequest(volume="vol", bucket="buck", objectLockEnabled=True)
            )
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.VOLUME, "/vol", "user:bob:r"))
            await alice.addAcl(
                acl_request(pb.AddAclRequest, ResourceType.BUCKET, "/vol/buck", "user:bob:rwlc")
            )
            versions = {}
            for key in ("k", "k2"):
                await put_empty_key(alice, "vol", "buck", key)
                info = await _lookup(alice, key)
                versions[key] = version_id(info.versionSeq, info.versioned)
                await alice.putObjectLegalHold(
                    pb.PutObjectLegalHoldRequest(
                        volume="vol", bucket="buck", key=key, versionId=versions[key],
                        legalHold=legal_hold_document(True),
                    )
                )  # fmt: skip
            await put_empty_key(bob, "vol", "buck", "k")  # bob's own version is now k's current one
            await alice.deleteKey(pb.DeleteKeyRequest(volume="vol", bucket="buck", key="k2"))  # a marker
            for key, version in versions.items():
                off = pb.PutObjectLegalHoldRequest(
                    volume="vol",
                    bucket="buck",
                    key=key,
                    versionId=version,
                    legalHold=legal_hold_document(False),
                )
                lock = pb.PutObjectRetentionRequest(
                    volume="vol", bucket="buck", key=key, versionId=version, retention=retention_document(far)
                )
                for call, request in ((bob.putObjectLegalHold, off), (bob.putObjectRetention, lock)):
                    assert "doesn't have WRITE permission to access KEY" in await denied(call, request)
                info = await _lookup(alice, key, version)
                assert (info.legalHold, info.retentionMode) == ("ON", "")

    run(body())


def test_with_acls_a_write_that_sets_a_lock_is_the_owner_s_or_an_administrator_s(tmp_path: Path) -> None:
    """R35's F3 (fails before its fix): bob, granted every right on alice's bucket and on his own key, may
    write it but not with a retention or legal hold (openKey, commitKey, initiateMultipartUpload), nor set
    one later (Amazon's s3:PutObjectRetention / s3:PutObjectLegalHold, which no ACL grants); alice may, and
    bob's plain write still gets the bucket's default retention."""
    lock = {MODE: "COMPLIANCE", UNTIL: "2999-01-01T00:00:00Z"}
    held = {HOLD: "ON"}

    async def body() -> None:
        async with acl_om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(
                pb.CreateBucketRequest(volume="vol", bucket="buck", objectLockEnabled=True)
            )
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.VOLUME, "/vol", "user:bob:a"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.BUCKET, "/vol/buck", "user:bob:a"))
            owner_only = "Only the owner of bucket vol/buck may set an S3 Object Lock"
            for metadata in (lock, held):
                opening = pb.OpenKeyRequest(volume="vol", bucket="buck", key="b", metadata=metadata)
                assert owner_only in await denied(bob.openKey, opening)
                initiate = pb.InitiateMultipartUploadRequest(
                    volume="vol", bucket="buck", key="b", metadata=metadata
                )
                assert owner_only in await denied(bob.initiateMultipartUpload, initiate)
                opened = await bob.openKey(pb.OpenKeyRequest(volume="vol", bucket="buck", key="b"))
                commit = pb.CommitKeyRequest(
                    volume="vol",
                    bucket="buck",
                    key="b",
                    clientID=opened.clientID,
                    dataSize=0,
                    metadata=metadata,
                )
                assert owner_only in await denied(bob.commitKey, commit)
            await put_empty_key(bob, "vol", "buck", "b")
            info = await _lookup(bob, "b")
            assert (info.retentionMode, info.legalHold) == ("", "")
            version = version_id(info.versionSeq, info.versioned)
            retention = pb.PutObjectRetentionRequest(
                volume="vol", bucket="buck", key="b", versionId=version,
                retention=retention_document(Retention(COMP, 32_472_144_000_000)),
            )  # fmt: skip
            assert owner_only in await denied(bob.putObjectRetention, retention)
            hold = pb.PutObjectLegalHoldRequest(
                volume="vol", bucket="buck", key="b", versionId=version, legalHold=legal_hold_document(True)
            )
            assert owner_only in await denied(bob.putObjectLegalHold, hold)
            await root.putObjectLegalHold(hold)
            opened = await alice.openKey(
                pb.OpenKeyRequest(volume="vol", bucket="buck", key="a", metadata=lock)
            )
            await alice.commitKey(
                pb.CommitKeyRequest(
                    volume="vol", bucket="buck", key="a", clientID=opened.clientID, dataSize=0
                )
            )
            assert (await _lookup(alice, "a")).retentionMode == "COMPLIANCE"
            config = pb.PutObjectLockConfigurationRequest(
                volume="vol", bucket="buck",
                configuration=b"<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled>"
                b"<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule>"
                b"</ObjectLockConfiguration>",
            )  # fmt: skip
            await alice.putObjectLockConfiguration(config)
            await put_empty_key(bob, "vol", "buck", "c")
            assert (await _lookup(bob, "c")).retentionMode == "GOVERNANCE"

    run(body())
