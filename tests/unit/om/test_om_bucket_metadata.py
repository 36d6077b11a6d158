"""A bucket's metadata (Ozone's OmBucketInfo metadata; issue 33: where the S3 gateway keeps a bucket's CORS
configuration): set through setBucketProperty, an empty value removing its entry, bounded, and kept in the
bucket's record beside its owner and quotas."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.om_records import BucketRecord, pairs
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.key_metadata import MAX_BUCKET_METADATA_BYTES
from pyozone.om.metadata import BUCKET_TABLE, bucket_key
from pyozone.om.properties import PropertyManager
from pyozone.protocol import om as wire
from pyozone.protocol import om_records
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.om_fakes import make_om as fake_om


@pytest.fixture
def om(tmp_path: Path) -> OzoneManager:
    om = fake_om(tmp_path, FakeScm())
    om.create_volume("vol1")
    om.create_bucket("vol1", "bkt1")
    return om


def test_entries_are_set_merged_and_removed_by_an_empty_value(om: OzoneManager) -> None:
    props = PropertyManager(om)
    props.set_bucket("vol1", "bkt1", quota_namespace=5)
    props.set_bucket("vol1", "bkt1", metadata={"s3.cors": "<a/>"})
    record = props.set_bucket("vol1", "bkt1", metadata={"other": "x"})
    assert record.metadata == pairs({"s3.cors": "<a/>", "other": "x"})
    assert record.quota_namespace == 5  # nothing else changes
    assert props.set_bucket("vol1", "bkt1", metadata={"s3.cors": ""}).metadata == pairs({"other": "x"})
    assert props.set_bucket("vol1", "bkt1", metadata={"absent": ""}).metadata == pairs({"other": "x"})
    stored = om_records.decode_bucket(om.store.get(BUCKET_TABLE, bucket_key("vol1", "bkt1")))
    assert stored.metadata == pairs({"other": "x"})


def test_the_bucket_s_metadata_is_bounded(om: OzoneManager) -> None:
    props = PropertyManager(om)
    props.set_bucket("vol1", "bkt1", metadata={"a": "x" * (MAX_BUCKET_METADATA_BYTES - 1)})
    with pytest.raises(OMException) as e:
        props.set_bucket("vol1", "bkt1", metadata={"b": "y"})
    assert e.value.code is OMResultCode.INVALID_REQUEST
    with pytest.raises(OMException):
        props.set_bucket("vol1", "bkt1", metadata={"": "y"})


def test_metadata_travels_in_bucket_args_and_bucket_info() -> None:
    request = wire.set_bucket_property_request("v", "b", "", 0, 0, {"s3.cors": "<x/>", "gone": ""})
    assert dict(request.bucketArgs.metadata) == {"s3.cors": "<x/>", "gone": ""}
    record = BucketRecord("v", "b", "o", 1, 2, RATIS_THREE, metadata=pairs({"s3.cors": "<x/>"}))
    assert om_records.decode_bucket(om_records.encode_bucket(record)) == record
    answer = wire.bucket_answer("infoBucket", record)
    assert wire.bucket_info_from_proto(answer.bucket).metadata == {"s3.cors": "<x/>"}
