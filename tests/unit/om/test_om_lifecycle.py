"""S3 lifecycle in OM (issue 33, item 4): the configuration kept in its own table, owner-only and gone with
its bucket; the lifecycle service (om/lifecycle.py) on an injected clock: current versions expire (deleted,
or a delete marker in a versioned bucket), noncurrent versions after NoncurrentDays beyond those kept,
expired object delete markers go, incomplete uploads are aborted, filters hold, and a run is throttled."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.hdds import s3_lifecycle
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.om_records import KeyBlock
from pyozone.hdds.s3_lifecycle import DAY_MS, LifecycleRun
from pyozone.hdds.s3_versions import BucketVersioning
from pyozone.hdds.security.acl import ResourceType
from pyozone.om import bucket_documents
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.lifecycle import S3LifecycleService
from pyozone.om.metadata import DELETED_TABLE, S3_BUCKET_LIFECYCLE_TABLE, bucket_key
from pyozone.om.multipart import MultipartManager
from pyozone.proto import OmClientProtocol_pb2 as pb
from tests.unit.om.om_fakes import FakeScm, make_om
from tests.unit.om.test_om_acls import As, acl_request, denied, om
from tests.unit.om.test_om_server import run

HOUR_MS = 3600_000


def lifecycle(*rules: str) -> bytes:
    body = "".join(f"<Rule><ID>r{i}</ID>{rule}</Rule>" for i, rule in enumerate(rules))
    return f"<LifecycleConfiguration>{body}</LifecycleConfiguration>".encode()


def expire(days: int, filter_xml: str = "") -> str:
    return (
        f"<Filter>{filter_xml}</Filter><Status>Enabled</Status><Expiration><Days>{days}</Days></Expiration>"
    )


class Bucket:
    """An OM on a manual clock with one bucket, its lifecycle configuration and the service."""

    def __init__(self, path: Path, **settings: object) -> None:
        self.clock = ManualClock(start_ms=10 * HOUR_MS)  # 2026-01-01 10:00 UTC
        self.om = make_om(path, FakeScm(), clock=self.clock, **settings)
        self.om.volumes.create("vol")
        self.om.buckets.create("vol", "bkt")
        self.config = bucket_documents.lifecycle(self.om)
        self.service = S3LifecycleService(self.om)
        self.multipart = MultipartManager(self.om)

    def put(self, key: str, size: int = 10, tags: dict[str, str] | None = None) -> str:
        session = self.om.keys.open("vol", "bkt", key, size)
        block = session.key.blocks[0].block_id
        record = self.om.keys.commit(
            "vol", "bkt", key, session.client_id, size, [KeyBlock(block, 0, size, bcsid=1)]
        )
        if tags:
            self.om.keys.set_tags("vol", "bkt", key, tags)
        return record.version_id

    def version(self) -> None:
        self.om.versions.set_state("vol", "bkt", BucketVersioning.ENABLED)

    def keys(self) -> list[str]:
        return [r.key for r in self.om.keys.list("vol", "bkt")]

    def versions(self) -> list[tuple[str, str, bool]]:
        return [(r.key, r.version_id, r.delete_marker) for r, _ in self.om.versions.list("vol", "bkt")]

    def after_days(self, days: float) -> LifecycleRun:
        self.clock.advance(int(days * DAY_MS))
        return self.service.run_once()


@pytest.fixture
def bucket(tmp_path: Path) -> Bucket:
    return Bucket(tmp_path)


# ------------------------------------------------------------------ the configuration
def test_a_configuration_is_kept_read_back_deleted_and_goes_with_its_bucket(bucket: Bucket) -> None:
    config = bucket.config
    assert config.get("vol", "bkt") is None
    config.put("vol", "bkt", lifecycle(expire(1)))
    assert config.get("vol", "bkt") == s3_lifecycle.document(s3_lifecycle.parse(lifecycle(expire(1))))
    config.delete("vol", "bkt")
    assert config.get("vol", "bkt") is None
    config.delete("vol", "bkt")  # none: no refusal
    config.put("vol", "bkt", lifecycle(expire(1)))
    bucket.om.buckets.delete("vol", "bkt")
    assert bucket.om.store.get(S3_BUCKET_LIFECYCLE_TABLE, bucket_key("vol", "bkt")) is None
    with pytest.raises(OMException) as error:
        config.put("vol", "bkt", lifecycle(expire(1)))
    assert error.value.code is OMResultCode.BUCKET_NOT_FOUND


@pytest.mark.parametrize(
    "body",
    [
        b"<x/>",
        lifecycle("<Filter/><Status>Enabled</Status><Expiration><Days>0</Days></Expiration>"),
        lifecycle(
            "<Filter/><Status>Enabled</Status><Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition>"
        ),
    ],
)
def test_om_keeps_no_document_s3_refuses(bucket: Bucket, body: bytes) -> None:
    with pytest.raises(OMException) as error:
        bucket.config.put("vol", "bkt", body)
    assert error.value.code is OMResultCode.INVALID_REQUEST
    assert bucket.config.get("vol", "bkt") is None


def test_only_the_owner_or_an_administrator_reads_or_changes_it_and_runs_the_service(tmp_path: Path) -> None:
    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.BUCKET, "/vol/buck", "user:bob:a"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.VOLUME, "/vol", "user:bob:a"))
            put = pb.PutBucketLifecycleRequest(
                volume="vol", bucket="buck", configuration=lifecycle(expire(1))
            )
            get = pb.GetBucketLifecycleRequest(volume="vol", bucket="buck")
            delete = pb.DeleteBucketLifecycleRequest(volume="vol", bucket="buck")
            for call, request in ((bob.putBucketLifecycle, put), (bob.getBucketLifecycle, get),
                                  (bob.deleteBucketLifecycle, delete)):  # fmt: skip
                assert "Only the owner of bucket vol/buck" in await denied(call, request)
            await alice.putBucketLifecycle(put)
            assert b"<Days>1</Days>" in (await alice.getBucketLifecycle(get)).configuration
            assert (await root.getBucketLifecycle(get)).configuration
            assert "Only admin users" in await denied(alice.runS3Lifecycle, pb.RunS3LifecycleRequest())
            answer = await root.runS3Lifecycle(pb.RunS3LifecycleRequest())
            assert answer.keysExpired == 0
            await alice.deleteBucketLifecycle(delete)
            assert not (await alice.getBucketLifecycle(get)).configuration

    run(body())


def test_with_acls_off_only_a_named_administrator_runs_the_service(tmp_path: Path) -> None:
    """R33 F2's reproduction: with ozone.acl.enabled false, an anonymous runS3Lifecycle(nowMs=2**63)
    expired a key kept 10 years. Now the anonymous caller and a user ozone.administrators does not name
    are refused, and a nowMs is refused while ozone.om.s3.lifecycle.time.override.enabled is false."""

    async def body() -> None:
        async with om(tmp_path, **{"ozone.acl.enabled": "false"}) as stub:
            root, mallory = As(stub, "root"), As(stub, "mallory")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="root"))
            await root.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            await root.putBucketLifecycle(
                pb.PutBucketLifecycleRequest(
                    volume="vol", bucket="buck", configuration=lifecycle(expire(3650))
                )
            )
            for caller, now in ((stub, 2**63), (mallory, 2**64 - 1), (stub, 0), (mallory, 0)):
                details = await denied(caller.runS3Lifecycle, pb.RunS3LifecycleRequest(nowMs=now))
                assert "Only admin users are authorized to run the S3 lifecycle service" in details
            with pytest.raises(rpc.RpcError) as error:
                await root.runS3Lifecycle(pb.RunS3LifecycleRequest(nowMs=2**63))
            assert error.value.code() is rpc.StatusCode.INVALID_ARGUMENT, error.value.details()
            assert "ozone.om.s3.lifecycle.time.override.enabled is false" in (error.value.details() or "")
            assert (await root.runS3Lifecycle(pb.RunS3LifecycleRequest())).keysExpired == 0

    run(body())


def test_a_run_at_a_given_time_where_the_configuration_allows_it(tmp_path: Path) -> None:
    async def body() -> None:
        overrides = {"ozone.acl.enabled": "false", "ozone.om.s3.lifecycle.time.override.enabled": "true"}
        async with om(tmp_path, **overrides) as stub:
            root = As(stub, "root")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="root"))
            await root.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            answer = await root.runS3Lifecycle(pb.RunS3LifecycleRequest(nowMs=2**40))
            assert answer.keysExpired == 0
            assert "Only admin users" in await denied(
                stub.runS3Lifecycle, pb.RunS3LifecycleRequest(nowMs=2**40)
            )

    run(body())


# ------------------------------------------------------------------ the service
def test_an_unversioned_key_is_deleted_at_the_midnight_after_its_days(bucket: Bucket) -> None:
    bucket.config.put("vol", "bkt", lifecycle(expire(1)))
    bucket.put("k")  # 2026-01-01 10:00: due 2026-01-03 00:00
    assert bucket.after_days(1) == LifecycleRun()  # 2026-01-02 10:00
    assert bucket.keys() == ["k"]
    bucket.clock.advance(14 * HOUR_MS - 1)  # 2026-01-02 23:59:59.999
    assert bucket.service.run_once().keys_expired == 0
    bucket.clock.advance(1)
    assert bucket.service.run_once() == LifecycleRun(keys_expired=1)
    assert bucket.keys() == []
    assert next(bucket.om.store.scan(DELETED_TABLE), None) is not None  # its blocks go to deletion
    assert bucket.om.bucket_info("vol", "bkt").used_namespace == 0


def test_a_versioned_key_gets_a_delete_marker_and_its_data_is_kept(bucket: Bucket) -> None:
    bucket.version()
    bucket.config.put("vol", "bkt", lifecycle(expire(1)))
    vid = bucket.put("k")
    assert bucket.after_days(2) == LifecycleRun(keys_expired=1)
    assert bucket.keys() == []
    (marker, kept) = bucket.versions()
    assert marker[2] and kept == ("k", vid, False)
    assert bucket.after_days(10) == LifecycleRun()  # a marker over a version is left alone


def test_a_suspended_bucket_s_null_version_is_replaced_by_a_null_marker(bucket: Bucket) -> None:
    """Amazon's "Expiring objects": in a versioning-suspended bucket the expiration adds a delete marker
    with the null version id, which replaces the null version (its blocks go to deletion)."""
    bucket.version()
    kept = bucket.put("k")  # a version of its own, kept
    bucket.om.versions.set_state("vol", "bkt", BucketVersioning.SUSPENDED)
    bucket.put("k")  # the null version, current
    bucket.config.put("vol", "bkt", lifecycle(expire(1)))
    assert bucket.after_days(2) == LifecycleRun(keys_expired=1)
    assert bucket.versions() == [("k", "null", True), ("k", kept, False)]
    assert next(bucket.om.store.scan(DELETED_TABLE), None) is not None


def test_a_noncurrent_null_version_expires_and_its_pointer_row_is_no_version(bucket: Bucket) -> None:
    """Reread: the scan read the null version's pointer row (versions.py NULL_POINTER, a number) as a
    version. A key written unversioned, then overwritten once versioning is on, has one."""
    bucket.put("k")  # the null version
    bucket.version()
    current = bucket.put("k")  # the null version is noncurrent now, found through its pointer row
    rule = ("<Filter/><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1"
            "</NoncurrentDays></NoncurrentVersionExpiration>")  # fmt: skip
    bucket.config.put("vol", "bkt", lifecycle(rule))
    assert bucket.after_days(3) == LifecycleRun(versions_expired=1)
    assert bucket.versions() == [("k", current, False)]  # (key, version, is a delete marker)


def test_noncurrent_versions_expire_after_noncurrent_days_keeping_the_newer(bucket: Bucket) -> None:
    bucket.version()
    rule = ("<Filter/><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays>"
            "<NewerNoncurrentVersions>1</NewerNoncurrentVersions></NoncurrentVersionExpiration>")  # fmt: skip
    bucket.config.put("vol", "bkt", lifecycle(rule))
    oldest = bucket.put("k")
    middle = bucket.put("k")  # oldest noncurrent since 10:00
    bucket.clock.advance(DAY_MS)
    newest = bucket.put("k")  # middle noncurrent since the next day, 10:00
    run = bucket.after_days(5)
    assert run == LifecycleRun(versions_expired=1)  # middle is the one newer noncurrent version kept
    assert [v for _, v, _ in bucket.versions()] == [newest, middle]
    assert oldest not in [v for _, v, _ in bucket.versions()]


def test_noncurrent_days_count_from_when_the_version_became_noncurrent(bucket: Bucket) -> None:
    bucket.version()
    rule = (
        "<Filter/><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>2</NoncurrentDays>"
        "</NoncurrentVersionExpiration>"
    )
    bucket.config.put("vol", "bkt", lifecycle(rule))
    old = bucket.put("k")
    bucket.clock.advance(10 * DAY_MS)  # old for days, but still current
    assert bucket.service.run_once() == LifecycleRun()
    bucket.put("k")  # 2026-01-11 10:00: old noncurrent from now, due 2026-01-14 00:00
    assert bucket.after_days(2) == LifecycleRun()  # 2026-01-13 10:00
    assert bucket.after_days(0.6) == LifecycleRun(versions_expired=1)
    assert old not in [v for _, v, _ in bucket.versions()]


def test_an_expired_object_delete_marker_goes_once_it_is_alone(bucket: Bucket) -> None:
    bucket.version()
    rules = (
        "<Filter/><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker>"
        "</Expiration><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration>"
    )
    bucket.config.put("vol", "bkt", lifecycle(rules))
    bucket.put("k")
    bucket.om.keys.delete("vol", "bkt", "k")  # a marker over the version
    assert bucket.service.run_once() == LifecycleRun()
    assert bucket.after_days(2) == LifecycleRun(versions_expired=1)  # the version goes, the marker is alone
    assert bucket.service.run_once() == LifecycleRun(markers_removed=1)  # the next run removes it
    assert bucket.versions() == []
    bucket.om.buckets.delete("vol", "bkt")  # nothing left in it


def test_filters_by_prefix_tags_and_size(bucket: Bucket) -> None:
    tag = "<And><Prefix>logs/</Prefix><Tag><Key>tmp</Key><Value>1</Value></Tag></And>"
    bucket.config.put(
        "vol",
        "bkt",
        lifecycle(expire(1, tag), expire(1, "<ObjectSizeGreaterThan>100</ObjectSizeGreaterThan>")),
    )
    bucket.put("logs/a", tags={"tmp": "1"})
    bucket.put("logs/b", tags={"tmp": "0"})
    bucket.put("data/c", tags={"tmp": "1"})
    bucket.put("big", size=200)
    assert bucket.after_days(3).keys_expired == 2
    assert bucket.keys() == ["data/c", "logs/b"]


def test_disabled_rules_and_dates_not_reached_take_no_action(bucket: Bucket) -> None:
    bucket.config.put(
        "vol", "bkt",
        lifecycle("<Filter/><Status>Disabled</Status><Expiration><Days>1</Days></Expiration>",
                  "<Filter/><Status>Enabled</Status><Expiration><Date>2026-02-01T00:00:00Z</Date></Expiration>"),
    )  # fmt: skip
    bucket.put("k")
    assert bucket.after_days(10) == LifecycleRun()
    assert bucket.after_days(21) == LifecycleRun(keys_expired=1)  # 2026-02-01 10:00


def test_incomplete_uploads_are_aborted_after_days_after_initiation(bucket: Bucket) -> None:
    rule = (
        "<Filter><Prefix>up/</Prefix></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload>"
        "<DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>"
    )
    bucket.config.put("vol", "bkt", lifecycle(rule))
    upload = bucket.multipart.initiate("vol", "bkt", "up/x")
    bucket.multipart.initiate("vol", "bkt", "other")
    assert bucket.after_days(1) == LifecycleRun()
    assert bucket.after_days(1) == LifecycleRun(uploads_aborted=1)
    remaining = bucket.multipart.list_uploads("vol", "bkt")
    assert [u.key for u in remaining] == ["other"] and upload.upload_id not in [
        u.upload_id for u in remaining
    ]
    assert bucket.keys() == []  # the rule has no Expiration


def test_a_run_takes_at_most_the_limit_and_the_next_run_the_rest(tmp_path: Path) -> None:
    bucket = Bucket(tmp_path, s3_lifecycle_limit=2)
    bucket.config.put("vol", "bkt", lifecycle(expire(1)))
    for i in range(5):
        bucket.put(f"k{i}")
    assert bucket.after_days(2).keys_expired == 2
    assert bucket.service.run_once().keys_expired == 2
    assert bucket.service.run_once().keys_expired == 1
    assert bucket.keys() == []
    progress = bucket.service.progress
    assert (progress.runs, progress.keys_expired) == (3, 5)


def test_a_legacy_prefix_with_a_space_expires_only_the_keys_it_names(bucket: Bucket) -> None:
    """R33 F1's reproduction: `<Prefix> tmp/</Prefix>` selects " tmp/...", never "tmp/..."."""
    bucket.config.put(
        "vol",
        "bkt",
        lifecycle("<Prefix> tmp/</Prefix><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"),
    )
    assert b"<Prefix> tmp/</Prefix>" in (bucket.config.get("vol", "bkt") or b"")
    bucket.put("tmp/keep-me")
    bucket.put(" tmp/expire-me")
    assert bucket.after_days(2) == LifecycleRun(keys_expired=1)
    assert bucket.keys() == ["tmp/keep-me"]


def test_an_empty_and_is_refused_and_the_bucket_kept(bucket: Bucket) -> None:
    """R33 F4's reproduction: `<Filter><And></And></Filter>` expired every key of the bucket."""
    for key in ("logs/a", "data/important", "x"):
        bucket.put(key)
    with pytest.raises(OMException) as error:
        bucket.config.put("vol", "bkt", lifecycle(expire(1, "<And></And>")))
    assert error.value.code is OMResultCode.INVALID_REQUEST and "MalformedXML" in str(error.value)
    assert bucket.after_days(2) == LifecycleRun()
    assert bucket.keys() == ["data/important", "logs/a", "x"]


def test_a_busy_first_bucket_does_not_starve_the_others(tmp_path: Path) -> None:
    """R33 F5's reproduction: with a limit of 2 and the first bucket given 2 due keys each day, every run
    spent its budget there and vol/zzz's "old-temp" (due since day 0) was never expired. The next run
    resumes where the last one stopped."""
    bucket = Bucket(tmp_path, s3_lifecycle_limit=2)
    bucket.om.buckets.create("vol", "zzz")
    for name in ("bkt", "zzz"):
        bucket.config.put("vol", name, lifecycle(expire(1)))
    session = bucket.om.keys.open("vol", "zzz", "old-temp", 10)
    block = session.key.blocks[0].block_id
    bucket.om.keys.commit("vol", "zzz", "old-temp", session.client_id, 10, [KeyBlock(block, 0, 10, bcsid=1)])
    expired = 0
    for day in range(3):
        for i in range(2):
            bucket.put(f"d{day}-{i}")
        expired += bucket.after_days(2).keys_expired
    assert [r.key for r in bucket.om.keys.list("vol", "zzz")] == []
    assert expired == 6 and len(bucket.keys()) == 1  # the budget was spent in full every run


def test_a_run_resumes_in_a_bucket_after_the_last_key_it_looked_at(tmp_path: Path) -> None:
    """In a versioned bucket an expired key stays (a delete marker on top): the next run goes on after
    the keys the last one served instead of judging them again from the first."""
    bucket = Bucket(tmp_path, s3_lifecycle_limit=2)
    bucket.version()
    bucket.config.put("vol", "bkt", lifecycle(expire(1)))
    for i in range(5):
        bucket.put(f"k{i}")
    bucket.clock.advance(2 * DAY_MS)
    looked: list[str | None] = []
    look = bucket.service._versions

    def recorded(*args: object) -> Iterator[object]:
        looked.append(args[3])  # type: ignore[arg-type]
        yield from look(*args)  # type: ignore[arg-type]

    bucket.service._versions = recorded  # type: ignore[method-assign,assignment]
    assert [bucket.service.run_once().keys_expired for _ in range(3)] == [2, 2, 1]
    assert looked[:3] == [None, "k1", "k3"]
    assert sum(deleted for _, _, deleted in bucket.versions()) == 5  # one marker a key


def test_a_key_rewritten_since_is_judged_as_it_is_then(bucket: Bucket) -> None:
    """Planned again under OM's lock: a key overwritten after the lock-free look is not expired."""
    bucket.config.put("vol", "bkt", lifecycle(expire(1)))
    bucket.put("k")
    bucket.clock.advance(2 * DAY_MS)
    look = bucket.service._versions

    def look_then_rewrite(*args: object) -> Iterator[object]:
        yield from look(*args)  # type: ignore[arg-type]
        bucket.put("k")  # written between the look and the action

    bucket.service._versions = look_then_rewrite  # type: ignore[method-assign,assignment]
    assert bucket.service.run_once() == LifecycleRun()
    assert bucket.keys() == ["k"]


def test_a_configuration_deleted_since_the_look_stops_the_bucket_s_actions(bucket: Bucket) -> None:
    bucket.config.put("vol", "bkt", lifecycle(expire(1)))
    bucket.put("k")
    bucket.clock.advance(2 * DAY_MS)
    look = bucket.service._versions

    def look_then_delete(*args: object) -> Iterator[object]:
        yield from look(*args)  # type: ignore[arg-type]
        bucket.config.delete("vol", "bkt")

    bucket.service._versions = look_then_delete  # type: ignore[method-assign,assignment]
    assert bucket.service.run_once() == LifecycleRun()
    assert bucket.keys() == ["k"]


def test_a_run_at_a_given_time(bucket: Bucket) -> None:
    """runS3Lifecycle's `nowMs`: judged at that time, OM's clock untouched."""
    bucket.config.put("vol", "bkt", lifecycle(expire(1)))
    bucket.put("k")
    assert bucket.service.run_once(bucket.clock.wall_ms() + 3 * DAY_MS) == LifecycleRun(keys_expired=1)
