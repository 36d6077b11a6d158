"""The S3 gateway through boto3 on a live cluster: the client scenario every S3 client runs (buckets; 0 B,
1 KB, 20 MB and 100 MB objects, multipart where boto3 chooses it; ranges; listings with a delimiter and
pages; copy; batch delete; a presigned GET by curl; a wrong secret refused), then S3's finer points."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
from collections.abc import Iterator

import pytest
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from tests.e2e.cluster.s3_cluster import S3Endpoint, s3_cluster

MiB = 1 << 20
SIZES = {"empty": 0, "1KB": 1000, "20MB": 20 * MiB, "100MB": 100 * MiB}
MULTIPART = TransferConfig(multipart_threshold=8 * MiB, multipart_chunksize=8 * MiB)


@pytest.fixture(scope="module")
def s3(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    with s3_cluster(request, tmp_path_factory, "s3-boto3") as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def client(s3: S3Endpoint):  # type: ignore[no-untyped-def]
    c = s3.boto3()
    c.create_bucket(Bucket="scenario")
    return c


def code_of(e: ClientError) -> str:
    return e.response["Error"]["Code"]


def test_buckets_are_listed_headed_and_located(client) -> None:  # type: ignore[no-untyped-def]
    names = [b["Name"] for b in client.list_buckets()["Buckets"]]
    assert "scenario" in names
    client.head_bucket(Bucket="scenario")
    assert client.get_bucket_location(Bucket="scenario")["LocationConstraint"] is None
    client.create_bucket(Bucket="scenario")  # your own again: 200 in us-east-1, as Amazon answers
    with pytest.raises(ClientError) as e:
        client.head_bucket(Bucket="no-such-bucket")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


@pytest.mark.parametrize("name", SIZES)
def test_objects_round_trip_with_md5_etags(client, name: str) -> None:  # type: ignore[no-untyped-def]
    data = os.urandom(SIZES[name])
    client.upload_fileobj(io.BytesIO(data), "scenario", f"objects/{name}", Config=MULTIPART)
    head = client.head_object(Bucket="scenario", Key=f"objects/{name}")
    assert head["ContentLength"] == len(data)
    if len(data) < MULTIPART.multipart_threshold:
        assert head["ETag"] == f'"{hashlib.md5(data).hexdigest()}"'
    else:
        parts = [data[i : i + 8 * MiB] for i in range(0, len(data), 8 * MiB)]
        md5s = b"".join(hashlib.md5(p).digest() for p in parts)
        assert head["ETag"] == f'"{hashlib.md5(md5s).hexdigest()}-{len(parts)}"'
    out = io.BytesIO()
    client.download_fileobj("scenario", f"objects/{name}", out)
    assert out.getvalue() == data


def test_ranged_reads(client) -> None:  # type: ignore[no-untyped-def]
    data = os.urandom(3 * MiB + 17)
    client.put_object(Bucket="scenario", Key="ranges", Body=data)
    for spec, want in [
        ("bytes=0-0", data[:1]),
        ("bytes=100-2000000", data[100:2000001]),
        ("bytes=-10", data[-10:]),
        (f"bytes={len(data) - 5}-", data[-5:]),
        (f"bytes=10-{len(data) * 2}", data[10:]),
    ]:
        got = client.get_object(Bucket="scenario", Key="ranges", Range=spec)
        assert got["Body"].read() == want, spec
        assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
        assert got["ContentRange"].endswith(f"/{len(data)}")
    with pytest.raises(ClientError) as e:
        client.get_object(Bucket="scenario", Key="ranges", Range=f"bytes={len(data)}-")
    assert code_of(e.value) == "InvalidRange"


def test_listing_with_a_delimiter_and_pages(client) -> None:  # type: ignore[no-untyped-def]
    keys = [f"tree/{d}/{i:02d}" for d in ("a", "b", "c") for i in range(5)] + ["tree/top1", "tree/top2"]
    for key in keys:
        client.put_object(Bucket="scenario", Key=key, Body=key.encode())
    top = client.list_objects_v2(Bucket="scenario", Prefix="tree/", Delimiter="/")
    assert [p["Prefix"] for p in top["CommonPrefixes"]] == ["tree/a/", "tree/b/", "tree/c/"]
    assert [c["Key"] for c in top["Contents"]] == ["tree/top1", "tree/top2"]
    assert top["KeyCount"] == 5
    seen: list[str] = []
    for page in client.get_paginator("list_objects_v2").paginate(
        Bucket="scenario", Prefix="tree/", PaginationConfig={"PageSize": 4}
    ):
        assert page["KeyCount"] <= 4
        seen += [c["Key"] for c in page.get("Contents", [])]
    assert seen == sorted(keys)
    v1: list[str] = []
    for page in client.get_paginator("list_objects").paginate(
        Bucket="scenario", Prefix="tree/", Delimiter="/", PaginationConfig={"PageSize": 2}
    ):
        v1 += [p["Prefix"] for p in page.get("CommonPrefixes", [])] + [
            c["Key"] for c in page.get("Contents", [])
        ]
    assert sorted(v1) == ["tree/a/", "tree/b/", "tree/c/", "tree/top1", "tree/top2"]
    assert client.list_objects_v2(Bucket="scenario", Prefix="tree/", StartAfter="tree/c/04")["KeyCount"] == 2


def test_copy_and_batch_delete(client) -> None:  # type: ignore[no-untyped-def]
    client.put_object(Bucket="scenario", Key="src", Body=b"copy me", Metadata={"colour": "blue"})
    client.copy_object(Bucket="scenario", Key="dst", CopySource={"Bucket": "scenario", "Key": "src"})
    got = client.get_object(Bucket="scenario", Key="dst")
    assert got["Body"].read() == b"copy me" and got["Metadata"] == {"colour": "blue"}
    client.copy_object(
        Bucket="scenario", Key="dst2", CopySource="scenario/src", MetadataDirective="REPLACE",
        Metadata={"colour": "red"},
    )  # fmt: skip
    assert client.head_object(Bucket="scenario", Key="dst2")["Metadata"] == {"colour": "red"}
    deleted = client.delete_objects(
        Bucket="scenario", Delete={"Objects": [{"Key": k} for k in ("src", "dst", "dst2", "never-was")]}
    )
    assert sorted(d["Key"] for d in deleted["Deleted"]) == ["dst", "dst2", "never-was", "src"]
    assert client.list_objects_v2(Bucket="scenario", Prefix="dst")["KeyCount"] == 0


def test_presigned_get_with_curl(client) -> None:  # type: ignore[no-untyped-def]
    client.put_object(Bucket="scenario", Key="shared file.txt", Body=b"presigned!")
    url = client.generate_presigned_url("get_object", Params={"Bucket": "scenario", "Key": "shared file.txt"})
    done = subprocess.run(["curl", "-sS", "-f", url], capture_output=True, timeout=30)
    assert done.returncode == 0 and done.stdout == b"presigned!", done.stderr
    tampered = url.replace("shared%20file.txt", "other.txt")
    done = subprocess.run(["curl", "-sS", tampered], capture_output=True, timeout=30)
    assert b"<Code>SignatureDoesNotMatch</Code>" in done.stdout


def test_a_wrong_secret_or_unknown_key_is_refused(s3: S3Endpoint) -> None:
    with pytest.raises(ClientError) as e:
        s3.boto3(secret_key="not-the-secret").list_buckets()
    assert code_of(e.value) == "SignatureDoesNotMatch"
    import boto3

    stranger = boto3.client(
        "s3",
        endpoint_url=s3.url,
        aws_access_key_id="nobody",
        aws_secret_access_key="x",
        region_name="us-east-1",
    )
    with pytest.raises(ClientError) as e:
        stranger.list_buckets()
    assert code_of(e.value) == "InvalidAccessKeyId"


def test_metadata_tags_and_conditional_gets(client) -> None:  # type: ignore[no-untyped-def]
    put = client.put_object(
        Bucket="scenario",
        Key="meta",
        Body=b"x",
        ContentType="text/plain",
        Metadata={"a": "1"},
        Tagging="k=v&n=2",
    )
    got = client.get_object(Bucket="scenario", Key="meta", ResponseContentType="application/json")
    assert got["ContentType"] == "application/json" and got["Metadata"] == {"a": "1"}
    assert got["TagCount"] == 2
    tags = client.get_object_tagging(Bucket="scenario", Key="meta")["TagSet"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("k", "v"), ("n", "2")]
    client.put_object_tagging(Bucket="scenario", Key="meta", Tagging={"TagSet": [{"Key": "z", "Value": ""}]})
    assert client.get_object_tagging(Bucket="scenario", Key="meta")["TagSet"] == [{"Key": "z", "Value": ""}]
    client.delete_object_tagging(Bucket="scenario", Key="meta")
    assert client.get_object_tagging(Bucket="scenario", Key="meta")["TagSet"] == []
    with pytest.raises(ClientError) as e:
        client.get_object(Bucket="scenario", Key="meta", IfNoneMatch=put["ETag"])
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 304
    with pytest.raises(ClientError) as e:
        client.get_object(Bucket="scenario", Key="meta", IfMatch='"0000"')
    assert code_of(e.value) == "PreconditionFailed"


def test_multipart_lifecycle(client) -> None:  # type: ignore[no-untyped-def]
    upload = client.create_multipart_upload(Bucket="scenario", Key="mpu")["UploadId"]
    first, second = os.urandom(5 * MiB), os.urandom(1000)
    e1 = client.upload_part(Bucket="scenario", Key="mpu", UploadId=upload, PartNumber=1, Body=first)["ETag"]
    e2 = client.upload_part(Bucket="scenario", Key="mpu", UploadId=upload, PartNumber=2, Body=second)["ETag"]
    listed = client.list_parts(Bucket="scenario", Key="mpu", UploadId=upload)["Parts"]
    assert [(p["PartNumber"], p["Size"]) for p in listed] == [(1, 5 * MiB), (2, 1000)]
    uploads = client.list_multipart_uploads(Bucket="scenario")["Uploads"]
    assert [(u["Key"], u["UploadId"]) for u in uploads] == [("mpu", upload)]
    with pytest.raises(ClientError) as e:
        client.complete_multipart_upload(
            Bucket="scenario", Key="mpu", UploadId=upload,
            MultipartUpload={"Parts": [{"PartNumber": 2, "ETag": e2}, {"PartNumber": 1, "ETag": e1}]},
        )  # fmt: skip
    assert code_of(e.value) == "InvalidPartOrder"
    client.complete_multipart_upload(
        Bucket="scenario", Key="mpu", UploadId=upload,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]},
    )  # fmt: skip
    assert client.get_object(Bucket="scenario", Key="mpu")["Body"].read() == first + second
    assert "Uploads" not in client.list_multipart_uploads(Bucket="scenario")
    aborted = client.create_multipart_upload(Bucket="scenario", Key="gone")["UploadId"]
    client.upload_part(Bucket="scenario", Key="gone", UploadId=aborted, PartNumber=1, Body=b"x")
    client.abort_multipart_upload(Bucket="scenario", Key="gone", UploadId=aborted)
    with pytest.raises(ClientError) as e:
        client.list_parts(Bucket="scenario", Key="gone", UploadId=aborted)
    assert code_of(e.value) == "NoSuchUpload"
    with pytest.raises(ClientError) as e:
        client.head_object(Bucket="scenario", Key="gone")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_upload_part_copy(client) -> None:  # type: ignore[no-untyped-def]
    source = os.urandom(6 * MiB)
    client.put_object(Bucket="scenario", Key="part-source", Body=source)
    upload = client.create_multipart_upload(Bucket="scenario", Key="assembled")["UploadId"]
    p1 = client.upload_part_copy(
        Bucket="scenario", Key="assembled", UploadId=upload, PartNumber=1,
        CopySource={"Bucket": "scenario", "Key": "part-source"}, CopySourceRange=f"bytes=0-{5 * MiB - 1}",
    )["CopyPartResult"]["ETag"]  # fmt: skip
    p2 = client.upload_part_copy(
        Bucket="scenario", Key="assembled", UploadId=upload, PartNumber=2,
        CopySource="scenario/part-source", CopySourceRange=f"bytes={5 * MiB}-{6 * MiB - 1}",
    )["CopyPartResult"]["ETag"]  # fmt: skip
    client.complete_multipart_upload(
        Bucket="scenario", Key="assembled", UploadId=upload,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": p1}, {"PartNumber": 2, "ETag": p2}]},
    )  # fmt: skip
    assert client.get_object(Bucket="scenario", Key="assembled")["Body"].read() == source


def test_delete_bucket(client) -> None:  # type: ignore[no-untyped-def]
    client.create_bucket(Bucket="short-lived")
    client.put_object(Bucket="short-lived", Key="k", Body=b"")
    with pytest.raises(ClientError) as e:
        client.delete_bucket(Bucket="short-lived")
    assert code_of(e.value) == "BucketNotEmpty"
    client.delete_object(Bucket="short-lived", Key="k")
    client.delete_bucket(Bucket="short-lived")
    assert "short-lived" not in [b["Name"] for b in client.list_buckets()["Buckets"]]
