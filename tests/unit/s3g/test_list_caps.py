"""Listings the gateway pages over OM's list calls, which answer at most ozone.om.server.list.max.size
(1000) entries each (issue 28, defect 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyozone.om.core import OzoneManager
from pyozone.om.multipart import MultipartManager
from tests.unit.s3g.gateway_harness import with_gateway


def test_list_multipart_uploads_knows_a_page_of_1000_is_truncated(tmp_path: Path) -> None:
    def setup(om: OzoneManager) -> None:
        om.buckets.create("s3v", "bkt")
        mpu = MultipartManager(om)
        for i in range(1001):
            mpu.initiate("s3v", "bkt", f"k{i:04d}")

    def calls(s3: Any) -> None:
        page = s3.list_multipart_uploads(Bucket="bkt")
        assert len(page["Uploads"]) == 1000 and page["IsTruncated"]
        rest = s3.list_multipart_uploads(
            Bucket="bkt", KeyMarker=page["NextKeyMarker"], UploadIdMarker=page["NextUploadIdMarker"]
        )
        assert [u["Key"] for u in rest["Uploads"]] == ["k1000"] and not rest["IsTruncated"]
        two = s3.list_multipart_uploads(Bucket="bkt", MaxUploads=2)
        assert len(two["Uploads"]) == 2 and two["IsTruncated"]

    with_gateway(tmp_path, calls, setup, bucket=None)
