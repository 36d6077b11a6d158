"""The S3 gateway through pyarrow.fs.S3FileSystem (the AWS C++ SDK, in-process) on a live cluster: the
client scenario of tests/e2e/cluster/s3_scenario.py. pyarrow writes every object as a multipart upload with
chunked bodies and checksum trailers. It cannot presign, and it pages listings with its own page size only."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyarrow import fs

from tests.e2e.cluster import s3_scenario as sc
from tests.e2e.cluster.s3_cluster import S3Endpoint, s3_cluster


@pytest.fixture(scope="module")
def s3(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    with s3_cluster(request, tmp_path_factory, "s3-pyarrow") as endpoint:
        yield endpoint


def filesystem(s3: S3Endpoint, secret_key: str | None = None) -> fs.S3FileSystem:
    return fs.S3FileSystem(
        access_key=s3.access_key,
        secret_key=secret_key or s3.secret_key,
        region=sc.REGION,
        scheme="http",
        endpoint_override=s3.url.removeprefix("http://"),
        allow_bucket_creation=True,
        allow_bucket_deletion=True,
        retry_strategy=fs.AwsStandardS3RetryStrategy(max_attempts=1),
    )


@pytest.fixture(scope="module")
def arrow(s3: S3Endpoint) -> fs.S3FileSystem:
    arrow_ = filesystem(s3)
    arrow_.create_dir(sc.BUCKET)
    return arrow_


def path(key: str) -> str:
    return f"{sc.BUCKET}/{key}"


def put(arrow: fs.S3FileSystem, key: str, data: bytes) -> None:
    with arrow.open_output_stream(path(key)) as out:
        for i in range(0, len(data), sc.PART_SIZE):
            out.write(data[i : i + sc.PART_SIZE])


def test_the_bucket_is_a_directory(arrow: fs.S3FileSystem) -> None:
    assert arrow.get_file_info(sc.BUCKET).type == fs.FileType.Directory
    assert arrow.get_file_info("no-such-bucket").type == fs.FileType.NotFound


@pytest.mark.parametrize("name", sc.SIZES)
def test_objects_round_trip(arrow: fs.S3FileSystem, s3: S3Endpoint, name: str) -> None:
    data = sc.payload(name, sc.SIZES[name])
    put(arrow, sc.object_key(name), data)
    assert arrow.get_file_info(path(sc.object_key(name))).size == len(data)
    with arrow.open_input_file(path(sc.object_key(name))) as f:  # a known size: one GET
        assert sc.md5_hex(f.read()) == sc.md5_hex(data)
    head = s3.boto3().head_object(Bucket=sc.BUCKET, Key=sc.object_key(name))
    assert head["ContentLength"] == len(data)


def test_ranged_reads(arrow: fs.S3FileSystem) -> None:
    data = sc.payload("ranges", sc.RANGE_SIZE)
    put(arrow, "ranges", data)
    with arrow.open_input_file(path("ranges")) as f:
        assert f.size() == len(data)
        for first, last in sc.RANGES:
            assert f.read_at(last - first + 1, first) == data[first : last + 1], (first, last)
        f.seek(len(data) - 10)
        assert f.read() == data[-10:]


def test_listing_with_and_without_recursion(arrow: fs.S3FileSystem) -> None:
    for key in sc.TREE:
        put(arrow, key, key.encode())
    top = arrow.get_file_info(fs.FileSelector(path("tree"), recursive=False))
    dirs = sorted(i.path for i in top if i.type == fs.FileType.Directory)
    files = sorted(i.path for i in top if i.type == fs.FileType.File)
    assert dirs == [path(p.rstrip("/")) for p in sc.TOP_PREFIXES]
    assert files == [path(k) for k in sc.TOP_KEYS]
    everything = arrow.get_file_info(fs.FileSelector(path("tree"), recursive=True))
    assert sorted(i.path for i in everything if i.type == fs.FileType.File) == [path(k) for k in sc.TREE]
    assert {i.size for i in everything if i.path == path("tree/a/00")} == {len(b"tree/a/00")}


def test_copy_and_batch_delete(arrow: fs.S3FileSystem) -> None:
    put(arrow, "src", b"copy me")
    arrow.copy_file(path("src"), path("dst"))
    with arrow.open_input_stream(path("dst")) as stream:
        assert stream.read() == b"copy me"
    arrow.delete_file(path("src"))
    arrow.delete_file(path("dst"))
    assert arrow.get_file_info(path("dst")).type == fs.FileType.NotFound
    for key in ("gone/a", "gone/b/c", "gone/d"):
        put(arrow, key, b"x")
    arrow.delete_dir_contents(path("gone"))  # one DeleteObjects request for the lot
    assert arrow.get_file_info(fs.FileSelector(path("gone"), recursive=True, allow_not_found=True)) == []


def test_parquet_round_trip(arrow: fs.S3FileSystem) -> None:
    table = pa.table({"id": pa.array(range(100_000)), "name": [f"row-{i}" for i in range(100_000)]})
    pq.write_table(table, path("tables/t.parquet"), filesystem=arrow)
    assert pq.read_table(path("tables/t.parquet"), filesystem=arrow).equals(table)
    read = pq.ParquetFile(path("tables/t.parquet"), filesystem=arrow)  # footer first: ranged reads
    assert read.metadata.num_rows == 100_000


def test_a_wrong_secret_is_refused(s3: S3Endpoint, arrow: fs.S3FileSystem) -> None:
    wrong = filesystem(s3, secret_key="not-the-secret")
    with pytest.raises(OSError, match="SIGNATURE_DOES_NOT_MATCH"):  # a listing: a GET, with an error body
        wrong.get_file_info(fs.FileSelector(path("objects")))
    with pytest.raises(OSError, match="ACCESS_DENIED"):  # HEAD: the 403 alone
        wrong.get_file_info(path(sc.object_key("1KB")))
