"""The S3 gateway through minio-py on a live cluster: the client scenario of tests/e2e/cluster/s3_scenario.py.
minio signs every body (x-amz-content-sha256 is the payload's hash, not UNSIGNED-PAYLOAD) and uploads
in parts of `part_size` when the length is larger."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from minio import Minio
from minio.commonconfig import CopySource
from minio.deleteobjects import DeleteObject
from minio.error import S3Error

from tests.e2e.cluster import s3_scenario as sc
from tests.e2e.cluster.s3_cluster import S3Endpoint, s3_cluster


@pytest.fixture(scope="module")
def s3(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    with s3_cluster(request, tmp_path_factory, "s3-minio") as endpoint:
        yield endpoint


def connect(s3: S3Endpoint, secret_key: str | None = None) -> Minio:
    return Minio(
        s3.url.removeprefix("http://"),
        access_key=s3.access_key,
        secret_key=secret_key or s3.secret_key,
        secure=False,
        region=sc.REGION,
    )


@pytest.fixture(scope="module")
def client(s3: S3Endpoint) -> Minio:
    c = connect(s3)
    c.make_bucket(sc.BUCKET)
    return c


def put(client: Minio, key: str, data: bytes) -> str:
    return client.put_object(sc.BUCKET, key, io.BytesIO(data), len(data), part_size=sc.PART_SIZE).etag


def get(client: Minio, key: str, offset: int = 0, length: int = 0) -> bytes:
    response = client.get_object(sc.BUCKET, key, offset=offset, length=length)
    try:
        return response.read()
    finally:
        response.close()
        response.release_conn()


def test_buckets(client: Minio) -> None:
    assert client.bucket_exists(sc.BUCKET)
    assert not client.bucket_exists("no-such-bucket")
    assert sc.BUCKET in [b.name for b in client.list_buckets()]


@pytest.mark.parametrize("name", sc.SIZES)
def test_objects_round_trip_with_md5_etags(client: Minio, name: str) -> None:
    data = sc.payload(name, sc.SIZES[name])
    etag = put(client, sc.object_key(name), data)
    want = sc.md5_hex(data) if len(data) <= sc.PART_SIZE else sc.multipart_etag(data, sc.PART_SIZE)
    assert etag == want
    stat = client.stat_object(sc.BUCKET, sc.object_key(name))
    assert (stat.size, stat.etag) == (len(data), want)
    assert sc.md5_hex(get(client, sc.object_key(name))) == sc.md5_hex(data)


def test_ranged_reads(client: Minio) -> None:
    data = sc.payload("ranges", sc.RANGE_SIZE)
    put(client, "ranges", data)
    for first, last in sc.RANGES:
        assert get(client, "ranges", offset=first, length=last - first + 1) == data[first : last + 1]
    assert get(client, "ranges", offset=len(data) - 7) == data[-7:]  # `bytes=N-`
    with pytest.raises(S3Error) as e:
        get(client, "ranges", offset=len(data))
    assert e.value.code == "InvalidRange"


def test_listing_with_a_delimiter_and_pages(client: Minio) -> None:
    for key in sc.TREE:
        put(client, key, key.encode())
    top = list(client.list_objects(sc.BUCKET, prefix="tree/"))  # not recursive: delimiter "/"
    assert [o.object_name for o in top if o.is_dir] == sc.TOP_PREFIXES
    assert [o.object_name for o in top if not o.is_dir] == sc.TOP_KEYS
    everything = list(client.list_objects(sc.BUCKET, prefix="tree/", recursive=True))
    assert [o.object_name for o in everything] == sorted(sc.TREE)
    assert all(o.etag == sc.md5_hex(o.object_name.encode()) for o in everything)
    # minio's public listing always asks for 1000 keys: its own paging loop, with a small page, is private
    paged = list(client._list_objects(sc.BUCKET, prefix="tree/", max_keys=sc.PAGE_SIZE))
    assert [o.object_name for o in paged] == sorted(sc.TREE)
    v1 = list(client._list_objects(sc.BUCKET, prefix="tree/", delimiter="/", max_keys=2, use_api_v1=True))
    assert sorted(o.object_name for o in v1) == sc.TOP_PREFIXES + sc.TOP_KEYS  # per page: keys, then prefixes
    after = client.list_objects(sc.BUCKET, prefix="tree/", recursive=True, start_after="tree/c/04")
    assert [o.object_name for o in after] == sc.TOP_KEYS


def test_copy_and_batch_delete(client: Minio) -> None:
    client.put_object(sc.BUCKET, "src", io.BytesIO(b"copy me"), 7, metadata={"colour": "blue"})
    client.copy_object(sc.BUCKET, "dst", CopySource(sc.BUCKET, "src"))
    assert get(client, "dst") == b"copy me"
    assert client.stat_object(sc.BUCKET, "dst").metadata["x-amz-meta-colour"] == "blue"
    keys = ["src", "dst", "never-was"]
    errors = list(client.remove_objects(sc.BUCKET, [DeleteObject(k) for k in keys]))
    assert errors == []
    assert list(client.list_objects(sc.BUCKET, prefix="src")) == []
    assert list(client.list_objects(sc.BUCKET, prefix="dst")) == []


def test_presigned_get_with_curl(client: Minio) -> None:
    client.put_object(sc.BUCKET, sc.PRESIGNED_KEY, io.BytesIO(sc.PRESIGNED_BODY), len(sc.PRESIGNED_BODY))
    url = client.presigned_get_object(sc.BUCKET, sc.PRESIGNED_KEY)
    done = sc.curl(url)
    assert done.returncode == 0 and done.stdout == sc.PRESIGNED_BODY, done.stderr
    tampered = sc.curl(url.replace("shared%20file.txt", "other.txt"))
    assert b"<Code>SignatureDoesNotMatch</Code>" in tampered.stdout


def test_a_wrong_secret_is_refused(s3: S3Endpoint, client: Minio) -> None:
    with pytest.raises(S3Error) as e:
        connect(s3, secret_key="not-the-secret").list_buckets()
    assert e.value.code == "SignatureDoesNotMatch"
