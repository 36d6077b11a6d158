"""The client scenario (s3_scenario.py) through s3fs, run by test_e2e_s3_s3fs.py under .venv-s3fs/bin/python:
s3fs needs an aiobotocore whose botocore pin cannot live beside the main venv's boto3. Reads the endpoint
and keys from S3_ENDPOINT, S3_ACCESS_KEY and S3_SECRET_KEY; prints one JSON object, a result per step (or
the step's error), for the test to check against what it expects."""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import s3fs
from fsspec.asyn import sync

sys.path.insert(0, str(Path(__file__).parent))
import s3_scenario as sc  # standard library only: importable from this venv


def connect(secret: str | None = None, version_aware: bool = False) -> s3fs.S3FileSystem:
    return s3fs.S3FileSystem(
        key=os.environ["S3_ACCESS_KEY"],
        secret=secret or os.environ["S3_SECRET_KEY"],
        endpoint_url=os.environ["S3_ENDPOINT"],
        client_kwargs={"region_name": sc.REGION},
        config_kwargs={
            "s3": {"addressing_style": "path"},
            "signature_version": "s3v4",  # botocore presigns S3 with SigV2 unless told
            "retries": {"max_attempts": 1},
        },
        skip_instance_cache=True,
        use_listings_cache=False,
        version_aware=version_aware,
    )


def path(key: str) -> str:
    return f"{sc.BUCKET}/{key}"


def objects(fs: s3fs.S3FileSystem) -> dict[str, Any]:
    """Each size written through a file of 8 MB blocks (a multipart upload above one block), read back."""
    out = {}
    for name, size in sc.SIZES.items():
        data = sc.payload(name, size)
        with fs.open(path(sc.object_key(name)), "wb", block_size=sc.PART_SIZE) as f:
            for i in range(0, len(data), sc.PART_SIZE):  # a part per block, as an application writes
                f.write(data[i : i + sc.PART_SIZE])
        info = fs.info(path(sc.object_key(name)))
        out[name] = {
            "size": info["size"],
            "etag": info["ETag"],
            "md5": sc.md5_hex(fs.cat_file(path(sc.object_key(name)))),
        }
    return out


def ranges(fs: s3fs.S3FileSystem) -> dict[str, Any]:
    fs.pipe_file(path("ranges"), sc.payload("ranges", sc.RANGE_SIZE))
    spans = [sc.md5_hex(fs.cat_file(path("ranges"), start=a, end=b + 1)) for a, b in sc.RANGES]
    with fs.open(path("ranges"), "rb", block_size=1 << 20) as f:
        f.seek(sc.RANGE_SIZE - 10)
        tail = sc.md5_hex(f.read())
    return {"spans": spans, "tail": tail}


def listing(fs: s3fs.S3FileSystem) -> dict[str, Any]:
    fs.pipe({path(key): key.encode() for key in sc.TREE})
    top = fs.ls(path("tree"), detail=True)

    async def pages() -> list[list[str]]:
        return [
            [c["Key"] for c in page.get("Contents", [])]
            async for page in fs._list_pages(  # s3fs's own paging loop, with a small page
                "list_objects_v2", Bucket=sc.BUCKET, Prefix="tree/", MaxKeys=sc.PAGE_SIZE
            )
        ]

    return {
        "dirs": sorted(i["name"] for i in top if i["type"] == "directory"),
        "files": sorted(i["name"] for i in top if i["type"] == "file"),
        "find": fs.find(path("tree")),
        "pages": sync(fs.loop, pages),
    }


def copy_and_delete(fs: s3fs.S3FileSystem) -> dict[str, Any]:
    fs.pipe_file(path("src"), b"copy me")
    fs.copy(path("src"), path("dst"))
    copied = fs.cat_file(path("dst")).decode()
    fs.pipe({path(f"gone/{i}"): b"x" for i in range(5)})
    fs.rm([path("src"), path("dst"), *(path(f"gone/{i}") for i in range(5))])  # DeleteObjects
    return {"copied": copied, "left": fs.find(path("gone")) + fs.find(path("src")) + fs.find(path("dst"))}


def presign(fs: s3fs.S3FileSystem) -> str:
    fs.pipe_file(path(sc.PRESIGNED_KEY), sc.PRESIGNED_BODY)
    return fs.sign(path(sc.PRESIGNED_KEY), expiration=300)


def wrong_secret(_: s3fs.S3FileSystem) -> str:
    try:
        connect(secret="not-the-secret").ls(sc.BUCKET)
    except Exception as e:  # what s3fs raises, and its message, are what the test checks
        return f"{type(e).__name__}: {e} (from {e.__cause__!r})"
    return "accepted"


def lifecycle(fs: s3fs.S3FileSystem) -> dict[str, Any]:
    """s3fs has no lifecycle API of its own: its call_s3 passthrough makes the calls, and s3fs maps
    NoSuchLifecycleConfiguration to FileNotFoundError."""
    rules = [{"ID": "tmp", "Filter": {"Prefix": "tmp/"}, "Status": "Enabled", "Expiration": {"Days": 1}}]
    fs.call_s3(
        "put_bucket_lifecycle_configuration", Bucket=sc.BUCKET, LifecycleConfiguration={"Rules": rules}
    )
    got = fs.call_s3("get_bucket_lifecycle_configuration", Bucket=sc.BUCKET)["Rules"]
    fs.call_s3("delete_bucket_lifecycle", Bucket=sc.BUCKET)
    try:
        fs.call_s3("get_bucket_lifecycle_configuration", Bucket=sc.BUCKET)
        after = "found"
    except Exception as e:
        after = type(e).__name__
    return {"rules": got, "after_delete": after}


def versioning(fs: s3fs.S3FileSystem) -> dict[str, Any]:
    """A versioned bucket through s3fs's version-aware filesystem: two writes, the versions s3fs lists, the
    older one read by its id, then a removal that leaves a delete marker and the versions behind it."""
    bucket = "versioned-s3fs"
    fs.mkdir(bucket)
    fs.call_s3("put_bucket_versioning", Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    aware = connect(version_aware=True)
    key = f"{bucket}/k"
    for text in (b"one", b"two"):
        aware.pipe_file(key, text)
    versions = aware.object_version_info(key)
    older = next(v["VersionId"] for v in versions if not v["IsLatest"])
    read_older = aware.cat_file(key, version_id=older).decode()
    aware.rm_file(key)
    listed = fs.call_s3("list_object_versions", Bucket=bucket)
    return {
        "versions": len(versions),
        "older": read_older,
        "latest_after_rm": [m["IsLatest"] for m in listed.get("DeleteMarkers", [])],
        "kept": sorted(v["VersionId"] for v in listed.get("Versions", []))
        == sorted(v["VersionId"] for v in versions),
        "exists_after_rm": aware.exists(key),
    }


def checksums(fs: s3fs.S3FileSystem) -> dict[str, Any]:
    """s3fs passes put_object's arguments through: a CRC32 and a SHA-256 stored with their objects and read
    back with ChecksumMode; a wrong value is BadDigest (s3fs's OSError). CRC32, not CRC32C: botocore
    computes CRC32C only with awscrt, which s3fs's venv does not have."""
    out: dict[str, Any] = {}
    for algorithm in ("CRC32", "SHA256"):
        fs.pipe_file(path(f"sum-{algorithm}"), b"checked", ChecksumAlgorithm=algorithm)
        head = fs.call_s3("head_object", Bucket=sc.BUCKET, Key=f"sum-{algorithm}", ChecksumMode="ENABLED")
        out[algorithm] = head.get(f"Checksum{algorithm}")
    try:
        fs.pipe_file(path("sum-wrong"), b"checked", ChecksumSHA256="A" * 43 + "=")
        out["wrong"] = "accepted"
    except Exception as e:  # what s3fs raises is what the test checks
        out["wrong"] = f"{type(e).__name__}: {e}"
    return out


STEPS: dict[str, Callable[[s3fs.S3FileSystem], Any]] = {
    "objects": objects,
    "ranges": ranges,
    "listing": listing,
    "copy_and_delete": copy_and_delete,
    "presign": presign,
    "wrong_secret": wrong_secret,
    "lifecycle": lifecycle,
    "versioning": versioning,
    "checksums": checksums,
}


def main() -> None:
    fs = connect()
    fs.mkdir(sc.BUCKET)
    results: dict[str, Any] = {"version": s3fs.__version__}
    for name, step in STEPS.items():
        try:
            results[name] = step(fs)
        except Exception:
            results[name] = {"error": traceback.format_exc()}
    print(json.dumps(results))


if __name__ == "__main__":
    main()
