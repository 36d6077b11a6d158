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


def connect(secret: str | None = None) -> s3fs.S3FileSystem:
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


STEPS: dict[str, Callable[[s3fs.S3FileSystem], Any]] = {
    "objects": objects,
    "ranges": ranges,
    "listing": listing,
    "copy_and_delete": copy_and_delete,
    "presign": presign,
    "wrong_secret": wrong_secret,
    "lifecycle": lifecycle,
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
