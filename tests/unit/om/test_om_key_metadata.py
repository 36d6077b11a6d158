"""A key's metadata and tags: recorded at openKey, merged at commitKey, replaced by an overwrite, kept by a
rename, returned by lookup and by listings; tagging replaces the set; S3's bounds are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.hdds.om_records import KeyBlock, KeyRecord
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.key_metadata import MAX_METADATA_BYTES, MAX_TAGS
from tests.unit.om.om_fakes import FakeScm, make_om


@pytest.fixture
def om(tmp_path: Path) -> OzoneManager:
    om = make_om(tmp_path, FakeScm())
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    return om


def put(
    om: OzoneManager, key: str, metadata: dict | None = None, tags: dict | None = None, at_commit=None
) -> KeyRecord:
    session = om.keys.open("vol1", "bkt1", key, 10, metadata=metadata, tags=tags)
    block = KeyBlock(session.key.blocks[0].block_id, 0, 10, bcsid=1)
    return om.keys.commit("vol1", "bkt1", key, session.client_id, 10, [block], at_commit)


def meta(record: KeyRecord) -> tuple[dict, dict]:
    return dict(record.metadata), dict(record.tags)


def test_commit_merges_its_metadata_into_opens(om: OzoneManager) -> None:
    put(om, "k", {"Content-Type": "text/plain", "ETag": "pending"}, {"team": "a"}, {"ETag": "abc"})
    found = om.keys.lookup("vol1", "bkt1", "k").key
    assert meta(found) == ({"Content-Type": "text/plain", "ETag": "abc"}, {"team": "a"})


def test_an_overwrite_replaces_metadata_and_tags(om: OzoneManager) -> None:
    put(om, "k", {"ETag": "1", "x-amz-meta-a": "1"}, {"t": "1"})
    put(om, "k", {"ETag": "2"})
    assert meta(om.keys.lookup("vol1", "bkt1", "k").key) == ({"ETag": "2"}, {})


def test_a_rename_keeps_them(om: OzoneManager) -> None:
    put(om, "k", {"ETag": "1"}, {"t": "1"})
    om.keys.rename("vol1", "bkt1", "k", "k2")
    assert meta(om.keys.lookup("vol1", "bkt1", "k2").key) == ({"ETag": "1"}, {"t": "1"})


def test_listing_returns_them(om: OzoneManager) -> None:
    put(om, "a", {"ETag": "ea"}, {"t": "a"})
    put(om, "b", {"ETag": "eb"})
    assert [meta(k) for k in om.keys.list("vol1", "bkt1")] == [
        ({"ETag": "ea"}, {"t": "a"}),
        ({"ETag": "eb"}, {}),
    ]


def test_tagging_replaces_the_set_and_nothing_else(om: OzoneManager) -> None:
    before = put(om, "k", {"ETag": "1"}, {"a": "1", "b": "2"})
    om.keys.set_tags("vol1", "bkt1", "k", {"c": "3"})
    after = om.keys.lookup("vol1", "bkt1", "k").key
    assert meta(after) == ({"ETag": "1"}, {"c": "3"})
    assert (after.blocks, after.data_size, after.modification_ms) == (
        before.blocks,
        before.data_size,
        before.modification_ms,
    )
    om.keys.set_tags("vol1", "bkt1", "k", {})
    assert om.keys.lookup("vol1", "bkt1", "k").key.tags == ()


def test_tagging_a_missing_key(om: OzoneManager) -> None:
    with pytest.raises(OMException) as error:
        om.keys.set_tags("vol1", "bkt1", "nope", {"a": "1"})
    assert error.value.code is OMResultCode.KEY_NOT_FOUND


@pytest.mark.parametrize(
    "tags",
    [
        {f"k{i}": "v" for i in range(MAX_TAGS + 1)},
        {"": "v"},
        {"k" * 129: "v"},
        {"k": "v" * 257},
    ],
)
def test_tags_beyond_s3s_rules_are_refused(om: OzoneManager, tags: dict) -> None:
    put(om, "k")
    for call in (
        lambda: om.keys.set_tags("vol1", "bkt1", "k", tags),
        lambda: om.keys.open("vol1", "bkt1", "k2", 0, tags=tags),
    ):
        with pytest.raises(OMException) as error:
            call()
        assert error.value.code is OMResultCode.INVALID_REQUEST


@pytest.mark.parametrize("metadata", [{"": "v"}, {"a\nb": "v"}, {"big": "v" * MAX_METADATA_BYTES}])
def test_bad_metadata_is_refused(om: OzoneManager, metadata: dict) -> None:
    with pytest.raises(OMException) as error:
        om.keys.open("vol1", "bkt1", "k", 0, metadata=metadata)
    assert error.value.code is OMResultCode.INVALID_REQUEST


def test_commit_metadata_is_checked_as_merged(om: OzoneManager) -> None:
    half = {"a": "v" * (MAX_METADATA_BYTES // 2)}
    with pytest.raises(OMException) as error:
        put(om, "k", half, None, {"b": "v" * (MAX_METADATA_BYTES // 2)})
    assert error.value.code is OMResultCode.INVALID_REQUEST
    assert om.keys.list("vol1", "bkt1") == []
