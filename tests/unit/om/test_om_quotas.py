"""Quotas: replicated space and namespace of buckets and volumes, checked before SCM allocates (openKey,
allocateBlock) and at commit, where a refused key leaves nothing but blocks to delete; setting and clearing
them; usage after deletes and overwrites."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, ReplicationConfig
from pyozone.hdds.om_records import KeyBlock, replicated_size
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import KEY_TABLE, OPEN_KEY_TABLE, key_key
from pyozone.om.properties import PropertyManager
from tests.unit.om.om_fakes import BLOCK, FakeScm
from tests.unit.om.om_fakes import make_om as fake_om
from tests.unit.om.test_om_keys import deleted, write


@pytest.fixture
def scm() -> FakeScm:
    return FakeScm()


@pytest.fixture
def om(tmp_path: Path, scm: FakeScm) -> OzoneManager:
    om = fake_om(tmp_path, scm)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")  # RATIS/THREE: every byte counts three times
    return om


def refused(call, *args, **kwargs) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(OMException) as error:
        call(*args, **kwargs)
    assert error.value.code is OMResultCode.QUOTA_EXCEEDED
    return error.value.message


def test_replicated_size_counts_every_copy_and_ec_parity() -> None:
    assert replicated_size(RATIS_THREE, 1000) == 3000
    assert replicated_size(RATIS_ONE, 1000) == 1000
    rs32 = ReplicationConfig.parse("rs-3-2-1024k")
    # each stripe's two parity cells are as long as its first data cell (Ozone's QuotaUtil)
    assert replicated_size(rs32, 100) == 100 + 2 * 100
    assert replicated_size(rs32, 3 * 1024 * 1024 + 10) == 5 * 1024 * 1024 + 10 + 2 * 10


def test_open_key_is_refused_before_scm_allocates(om: OzoneManager, scm: FakeScm) -> None:
    PropertyManager(om).set_bucket("vol1", "bkt1", quota_bytes=3 * BLOCK)
    message = refused(om.keys.open, "vol1", "bkt1", "big", BLOCK + 1)
    assert message == (
        f"The DiskSpace quota of bucket:bkt1 exceeded quotaInBytes: {3 * BLOCK} Bytes but diskspace "
        f"consumed: {3 * (BLOCK + 1)} Bytes."
    )
    assert scm.allocations == [] and list(om.store.scan(OPEN_KEY_TABLE)) == []
    write(om, "fits", BLOCK)  # exactly the quota
    assert om.bucket_info("vol1", "bkt1").used_bytes == 3 * BLOCK
    refused(om.keys.open, "vol1", "bkt1", "more", 1)


def test_a_commit_past_the_quota_leaves_nothing_but_blocks_to_delete(om: OzoneManager) -> None:
    """Two writers open while there is room (each checked against committed usage, as Ozone); the second
    to commit does not fit: refused, its open key gone, its blocks queued for deletion, usage unchanged."""
    PropertyManager(om).set_bucket("vol1", "bkt1", quota_bytes=3 * BLOCK)
    first = om.keys.open("vol1", "bkt1", "a", BLOCK)
    second = om.keys.open("vol1", "bkt1", "b", 0)
    om.keys.commit(
        "vol1", "bkt1", "a", first.client_id, BLOCK, [KeyBlock(first.key.blocks[0].block_id, 0, BLOCK)]
    )
    block = second.key.blocks[0].block_id
    refused(om.keys.commit, "vol1", "bkt1", "b", second.client_id, 10, [KeyBlock(block, 0, 10)])
    assert om.keys.find("vol1", "bkt1", "b") is None
    assert list(om.store.scan(OPEN_KEY_TABLE)) == []
    assert [blocks for name, blocks in deleted(om).items() if name.startswith("/vol1/bkt1/b/")] == [[block]]
    assert om.bucket_info("vol1", "bkt1").used_bytes == 3 * BLOCK
    assert om.volume_info("vol1").used_bytes == 3 * BLOCK


def test_allocate_block_needs_room_for_one_more_block(om: OzoneManager, scm: FakeScm) -> None:
    PropertyManager(om).set_bucket("vol1", "bkt1", quota_bytes=3 * BLOCK + 200)
    session = om.keys.open("vol1", "bkt1", "k", 0)  # one block: 3 * BLOCK fits
    write(om, "small", 100)  # 300 used: a second block no longer fits
    calls = len(scm.allocations)
    refused(om.keys.allocate_block, "vol1", "bkt1", "k", session.client_id)
    assert len(scm.allocations) == calls


def test_volume_space_quota_covers_its_buckets(om: OzoneManager) -> None:
    om.buckets.create("vol1", "bkt2")
    PropertyManager(om).set_volume("vol1", quota_bytes=4 * BLOCK)
    write(om, "k", 400)  # 1200 of the volume's 4000 used, in bucket 1
    message = refused(om.keys.open, "vol1", "bkt2", "k", BLOCK)
    assert message.startswith("The DiskSpace quota of volume:vol1 exceeded quotaInBytes: 4000 Bytes")


def test_namespace_quotas(om: OzoneManager) -> None:
    props = PropertyManager(om)
    props.set_bucket("vol1", "bkt1", quota_namespace=1)
    write(om, "only", 10)
    write(om, "only", 20)  # an overwrite adds no key
    message = refused(om.keys.open, "vol1", "bkt1", "second", 10)
    assert (
        message
        == "The namespace quota of Bucket:bkt1 exceeded: quotaInNamespace: 1 but namespace consumed: 2."
    )
    om.keys.delete("vol1", "bkt1", "only")
    write(om, "second", 10)
    props.set_volume("vol1", quota_namespace=1)
    message = refused(om.buckets.create, "vol1", "bkt2")
    assert (
        message
        == "The namespace quota of Volume:vol1 exceeded: quotaInNamespace: 1 but namespace consumed: 2."
    )


def test_usage_follows_overwrites_and_deletes(om: OzoneManager) -> None:
    write(om, "k", 100)
    write(om, "k", 40)
    write(om, "j", 10)
    assert om.bucket_info("vol1", "bkt1").used_bytes == 3 * 50
    om.keys.delete("vol1", "bkt1", "k")
    bucket = om.bucket_info("vol1", "bkt1")
    assert (bucket.used_bytes, bucket.used_namespace) == (30, 1)
    assert om.volume_info("vol1").used_bytes == 30
    assert om.store.get(KEY_TABLE, key_key("vol1", "bkt1", "k")) is None


def test_setting_and_clearing_quotas(om: OzoneManager) -> None:
    props = PropertyManager(om)
    write(om, "k", 100)
    with pytest.raises(OMException) as error:
        props.set_bucket("vol1", "bkt1", quota_bytes=299)
    assert (
        error.value.code is OMResultCode.QUOTA_ERROR
        and "less than the 300 already used" in error.value.message
    )
    with pytest.raises(OMException) as error:
        props.set_volume("vol1", quota_bytes=-5)
    assert error.value.code is OMResultCode.QUOTA_ERROR
    bucket = props.set_bucket("vol1", "bkt1", quota_bytes=300, quota_namespace=5)
    assert (bucket.quota_bytes, bucket.quota_namespace) == (300, 5)
    bucket = props.set_bucket("vol1", "bkt1", quota_namespace=7)  # the other one stays
    assert (bucket.quota_bytes, bucket.quota_namespace) == (300, 7)
    bucket = props.set_bucket("vol1", "bkt1", quota_bytes=-1)  # cleared
    assert (bucket.quota_bytes, bucket.quota_namespace) == (0, 7)
    write(om, "big", 5 * BLOCK)
