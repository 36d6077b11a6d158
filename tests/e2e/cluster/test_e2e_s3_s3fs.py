"""The S3 gateway through s3fs (fsspec over aiobotocore) on a live cluster: the client scenario of
tests/e2e/cluster/s3_scenario.py, run once by s3fs_driver.py in s3fs's own venv (.venv-s3fs); each test
checks one step of its JSON report."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cluster import s3_scenario as sc
from tests.e2e.cluster.s3_cluster import S3Endpoint, s3_cluster

PYTHON = sc.REPO / ".venv-s3fs" / "bin" / "python"
DRIVER = Path(__file__).with_name("s3fs_driver.py")

pytestmark = pytest.mark.skipif(not PYTHON.exists(), reason="no .venv-s3fs: run scripts/client_venvs.sh")


@pytest.fixture(scope="module")
def s3(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    with s3_cluster(request, tmp_path_factory, "s3-s3fs") as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def report(s3: S3Endpoint) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(S3_ENDPOINT=s3.url, S3_ACCESS_KEY=s3.access_key, S3_SECRET_KEY=s3.secret_key)
    env.update(AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull)
    done = subprocess.run(
        [str(PYTHON), str(DRIVER)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def step(report: dict[str, Any], name: str) -> Any:
    result = report[name]
    assert not (isinstance(result, dict) and "error" in result), result.get("error")
    return result


def test_a_modern_s3fs(report: dict[str, Any]) -> None:
    assert int(report["version"].split(".")[0]) >= 2024


@pytest.mark.parametrize("name", sc.SIZES)
def test_objects_round_trip_with_md5_etags(report: dict[str, Any], name: str) -> None:
    data = sc.payload(name, sc.SIZES[name])
    got = step(report, "objects")[name]
    want = sc.multipart_etag(data, sc.PART_SIZE) if len(data) > sc.PART_SIZE else sc.md5_hex(data)
    assert got == {"size": len(data), "etag": f'"{want}"', "md5": sc.md5_hex(data)}


def test_ranged_reads(report: dict[str, Any]) -> None:
    data = sc.payload("ranges", sc.RANGE_SIZE)
    got = step(report, "ranges")
    assert got["spans"] == [sc.md5_hex(data[a : b + 1]) for a, b in sc.RANGES]
    assert got["tail"] == sc.md5_hex(data[-10:])


def test_listing_with_a_delimiter_and_pages(report: dict[str, Any]) -> None:
    got = step(report, "listing")
    assert got["dirs"] == [f"{sc.BUCKET}/{p.rstrip('/')}" for p in sc.TOP_PREFIXES]
    assert got["files"] == [f"{sc.BUCKET}/{k}" for k in sc.TOP_KEYS]
    assert got["find"] == [f"{sc.BUCKET}/{k}" for k in sorted(sc.TREE)]
    pages = got["pages"]
    assert len(pages) == -(-len(sc.TREE) // sc.PAGE_SIZE) and all(len(p) <= sc.PAGE_SIZE for p in pages)
    assert [k for page in pages for k in page] == sorted(sc.TREE)


def test_copy_and_batch_delete(report: dict[str, Any]) -> None:
    assert step(report, "copy_and_delete") == {"copied": "copy me", "left": []}


def test_presigned_get_with_curl(report: dict[str, Any]) -> None:
    url = step(report, "presign")
    done = sc.curl(url)
    assert done.returncode == 0 and done.stdout == sc.PRESIGNED_BODY, done.stderr
    tampered = sc.curl(url.replace("shared%20file.txt", "other.txt"))
    assert b"<Code>SignatureDoesNotMatch</Code>" in tampered.stdout


def test_a_wrong_secret_is_refused(report: dict[str, Any]) -> None:
    refusal = step(report, "wrong_secret")
    assert refusal.startswith("PermissionError") and "SignatureDoesNotMatch" in refusal, refusal


def test_lifecycle_round_trip(report: dict[str, Any]) -> None:
    """Put/Get/DeleteBucketLifecycle through s3fs's call_s3 (issue 33, item 4)."""
    got = step(report, "lifecycle")
    assert got["rules"] == [
        {"ID": "tmp", "Filter": {"Prefix": "tmp/"}, "Status": "Enabled", "Expiration": {"Days": 1}}
    ]
    assert got["after_delete"] == "FileNotFoundError"


def test_versioning_round_trip(report: dict[str, Any]) -> None:
    """s3fs's version_aware filesystem: object_version_info, a read by version id, rm leaving a delete
    marker over the versions (issue 33, item 1)."""
    got = step(report, "versioning")
    assert (got["versions"], got["older"]) == (2, "one")
    assert got["latest_after_rm"] == [True] and got["kept"] is True
    assert got["exists_after_rm"] is False


def test_checksums_round_trip(report: dict[str, Any]) -> None:
    """put_object's ChecksumAlgorithm through s3fs, read back by ChecksumMode; a wrong SHA-256 refused
    (issue 33, item 2)."""
    got = step(report, "checksums")
    assert got["CRC32"] == base64.b64encode(zlib.crc32(b"checked").to_bytes(4, "big")).decode()
    assert got["SHA256"] == base64.b64encode(hashlib.sha256(b"checked").digest()).decode()
    # s3fs turns BadDigest into EINVAL with Amazon's message
    message = "The SHA256 you specified did not match the calculated checksum."
    assert got["wrong"] == f"OSError: [Errno 22] {message}"
