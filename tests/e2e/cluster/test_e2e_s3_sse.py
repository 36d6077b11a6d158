"""S3 server-side encryption through the gateway of a live cluster (issue 33, item 7), from Amazon's
reference ("Using server-side encryption with Amazon S3 managed keys (SSE-S3)", "Using server-side
encryption with customer-provided keys (SSE-C)", PutObject, GetObject, HeadObject, CopyObject): the answer
headers, the plaintext back from whole, ranged and copied reads, the refusals of missing, wrong and
malformed keys, what is not built refused NotImplemented, no plaintext on the datanodes, `ozone sh key get`
of an SSE-S3 object, and awscli's --sse and --sse-c round trips."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from pyozone.cluster.layout import HOST
from tests.e2e.cluster.s3_cluster import S3Endpoint, s3_cluster
from tests.e2e.cluster.s3_raw import before_sign
from tests.e2e.cluster.test_e2e_s3_awscli import AWS, CONFIG, Aws

BUCKET = "sse"
KEY = os.urandom(32)
OTHER = os.urandom(32)
SSE_S3 = {"ServerSideEncryption": "AES256"}


def customer(key: bytes = KEY) -> dict[str, str]:
    return {
        "SSECustomerAlgorithm": "AES256",
        "SSECustomerKey": base64.b64encode(key).decode(),
        "SSECustomerKeyMD5": base64.b64encode(hashlib.md5(key).digest()).decode(),
    }


def copy_customer(key: bytes = KEY) -> dict[str, str]:
    return {f"CopySource{k}": v for k, v in customer(key).items()}


@pytest.fixture(scope="module")
def s3(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    overrides = {"ozone.s3g.sse.customer.require.https": "false"}  # the test cluster speaks plain HTTP
    with s3_cluster(request, tmp_path_factory, "s3-sse", overrides=overrides) as endpoint:
        endpoint.boto3().create_bucket(Bucket=BUCKET)
        yield endpoint


@pytest.fixture(scope="module")
def client(s3: S3Endpoint):  # type: ignore[no-untyped-def]
    return s3.boto3()


def refusal(call: Any, **kwargs: Any) -> tuple[int, str]:
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    return e.value.response["ResponseMetadata"]["HTTPStatusCode"], e.value.response["Error"].get("Code", "")


def asking_sse_s3(request: Any) -> None:
    """x-amz-server-side-encryption on a request boto3 would not send it with (before_sign)."""
    request.headers["x-amz-server-side-encryption"] = "AES256"


def test_sse_s3_put_get_head_and_ranges_answer_the_plaintext(client) -> None:  # type: ignore[no-untyped-def]
    data = os.urandom(3 * 1024 * 1024 + 17)
    put = client.put_object(Bucket=BUCKET, Key="s3", Body=data, **SSE_S3)
    assert put["ServerSideEncryption"] == "AES256"
    assert put["ETag"] == f'"{hashlib.md5(data).hexdigest()}"'  # Amazon's SSE-S3 ETag: the plaintext's MD5
    got = client.get_object(Bucket=BUCKET, Key="s3")
    assert got["ServerSideEncryption"] == "AES256" and got["Body"].read() == data
    assert client.head_object(Bucket=BUCKET, Key="s3")["ServerSideEncryption"] == "AES256"
    for first, last in ((0, 0), (1, 16), (15, 33), (1_048_575, 2_097_200), (len(data) - 5, len(data) - 1)):
        ranged = client.get_object(Bucket=BUCKET, Key="s3", Range=f"bytes={first}-{last}")
        assert ranged["Body"].read() == data[first : last + 1], (first, last)
    empty = client.put_object(Bucket=BUCKET, Key="s3-empty", Body=b"", **SSE_S3)
    assert empty["ServerSideEncryption"] == "AES256"
    assert client.get_object(Bucket=BUCKET, Key="s3-empty")["Body"].read() == b""
    plain = client.put_object(Bucket=BUCKET, Key="plain", Body=b"plain")
    assert "ServerSideEncryption" not in plain
    assert "ServerSideEncryption" not in client.head_object(Bucket=BUCKET, Key="plain")


def test_sse_s3_refusals(client) -> None:  # type: ignore[no-untyped-def]
    put = client.put_object
    assert refusal(put, Bucket=BUCKET, Key="x", Body=b"x", ServerSideEncryption="AES128") == (
        400, "InvalidArgument",
    )  # fmt: skip
    assert refusal(put, Bucket=BUCKET, Key="x", Body=b"x", ServerSideEncryption="aws:kms") == (
        501, "NotImplemented",
    )  # fmt: skip
    both = {**SSE_S3, **customer()}
    assert refusal(put, Bucket=BUCKET, Key="x", Body=b"x", **both) == (400, "InvalidArgument")
    kms = {"ServerSideEncryption": "AES256", "SSEKMSKeyId": "k"}
    assert refusal(put, Bucket=BUCKET, Key="x", Body=b"x", **kms) == (501, "NotImplemented")
    client.put_object(Bucket=BUCKET, Key="read-s3", Body=b"x", **SSE_S3)
    with before_sign(client, "GetObject", asking_sse_s3):
        assert refusal(client.get_object, Bucket=BUCKET, Key="read-s3") == (400, "InvalidArgument")
    with before_sign(client, "PutObjectTagging", asking_sse_s3):
        tagging = {"TagSet": []}  # an operation that takes no encryption refuses it, never ignores it
        assert refusal(client.put_object_tagging, Bucket=BUCKET, Key="read-s3", Tagging=tagging) == (
            501, "NotImplemented",
        )  # fmt: skip


def test_sse_c_needs_the_same_key_to_read(client) -> None:  # type: ignore[no-untyped-def]
    data = os.urandom(100_000)
    put = client.put_object(Bucket=BUCKET, Key="c", Body=data, **customer())
    assert (
        put["SSECustomerAlgorithm"] == "AES256"
        and put["SSECustomerKeyMD5"] == customer()["SSECustomerKeyMD5"]
    )
    assert put["ETag"] != f'"{hashlib.md5(data).hexdigest()}"'  # Amazon's SSE-C ETag is not the MD5
    got = client.get_object(Bucket=BUCKET, Key="c", **customer())
    assert got["Body"].read() == data and got["SSECustomerKeyMD5"] == customer()["SSECustomerKeyMD5"]
    assert got["ETag"] == put["ETag"]
    ranged = client.get_object(Bucket=BUCKET, Key="c", Range="bytes=99-4242", **customer())
    assert ranged["Body"].read() == data[99:4243]
    head = client.head_object(Bucket=BUCKET, Key="c", **customer())
    assert head["SSECustomerAlgorithm"] == "AES256" and head["ContentLength"] == len(data)

    assert refusal(client.get_object, Bucket=BUCKET, Key="c") == (400, "InvalidRequest")
    assert refusal(client.head_object, Bucket=BUCKET, Key="c") == (400, "400")  # HEAD: no body, no code
    assert refusal(client.get_object, Bucket=BUCKET, Key="c", **customer(OTHER)) == (403, "AccessDenied")
    assert refusal(client.head_object, Bucket=BUCKET, Key="c", **customer(OTHER)) == (403, "403")
    attributes = {"Bucket": BUCKET, "Key": "c", "ObjectAttributes": ["ObjectSize"]}
    assert client.get_object_attributes(**attributes, **customer())["ObjectSize"] == len(data)
    assert refusal(client.get_object_attributes, **attributes) == (400, "InvalidRequest")
    client.put_object(Bucket=BUCKET, Key="c-plain", Body=b"x")
    assert refusal(client.get_object, Bucket=BUCKET, Key="c-plain", **customer()) == (400, "InvalidRequest")
    client.put_object(Bucket=BUCKET, Key="c-s3", Body=b"x", **SSE_S3)
    assert refusal(client.get_object, Bucket=BUCKET, Key="c-s3", **customer()) == (400, "InvalidRequest")


def test_a_key_missing_is_refused_in_amazon_s_words(client) -> None:  # type: ignore[no-untyped-def]
    """R36 F9: GET, a copy's source and UploadPart without the SSE-C key say what Amazon says, never OM's
    path of the key."""
    client.put_object(Bucket=BUCKET, Key="c-words", Body=b"x", **customer())
    upload = client.create_multipart_upload(Bucket=BUCKET, Key="c-words-mpu", **customer())["UploadId"]

    def message(call: Any, **kwargs: Any) -> str:
        with pytest.raises(ClientError) as e:
            call(**kwargs)
        assert e.value.response["Error"]["Code"] == "InvalidRequest"
        return str(e.value.response["Error"]["Message"])

    stored = "was stored using a form of Server Side Encryption. The correct parameters must be provided"
    got = message(client.get_object, Bucket=BUCKET, Key="c-words", Range="bytes=0-0")
    assert got.startswith(f"The object {stored}") and "/s3v/" not in got
    got = message(client.copy_object, Bucket=BUCKET, Key="t", CopySource=f"{BUCKET}/c-words")
    assert got.startswith(f"The copy source {stored}")
    got = message(
        client.upload_part, Bucket=BUCKET, Key="c-words-mpu", UploadId=upload, PartNumber=1, Body=b"x"
    )
    assert got.startswith("The multipart upload initiate requested encryption. Subsequent part requests")


def test_sse_c_malformed_keys_are_refused(client) -> None:  # type: ignore[no-untyped-def]
    bad_md5 = {**customer(), "SSECustomerKeyMD5": customer(OTHER)["SSECustomerKeyMD5"]}
    put = client.put_object
    assert refusal(put, Bucket=BUCKET, Key="x", Body=b"x", **bad_md5) == (400, "InvalidArgument")
    short = os.urandom(16)
    assert refusal(put, Bucket=BUCKET, Key="x", Body=b"x", **customer(short)) == (400, "InvalidArgument")
    algorithm = {**customer(), "SSECustomerAlgorithm": "AES128"}
    assert refusal(put, Bucket=BUCKET, Key="x", Body=b"x", **algorithm) == (
        400, "InvalidEncryptionAlgorithmError",
    )  # fmt: skip


def test_copies_between_encrypted_and_plain_objects(client) -> None:  # type: ignore[no-untyped-def]
    data = os.urandom(50_000)
    client.put_object(Bucket=BUCKET, Key="src-plain", Body=data)
    client.put_object(Bucket=BUCKET, Key="src-c", Body=data, **customer())
    copy = client.copy_object
    answer = copy(Bucket=BUCKET, Key="plain-to-s3", CopySource=f"{BUCKET}/src-plain", **SSE_S3)
    assert answer["ServerSideEncryption"] == "AES256"
    assert client.get_object(Bucket=BUCKET, Key="plain-to-s3")["Body"].read() == data
    copy(Bucket=BUCKET, Key="s3-to-plain", CopySource=f"{BUCKET}/plain-to-s3")
    got = client.get_object(Bucket=BUCKET, Key="s3-to-plain")
    assert got["Body"].read() == data and "ServerSideEncryption" not in got
    answer = copy(
        Bucket=BUCKET, Key="c-to-c", CopySource=f"{BUCKET}/src-c", **copy_customer(), **customer(OTHER)
    )
    assert answer["SSECustomerKeyMD5"] == customer(OTHER)["SSECustomerKeyMD5"]
    assert client.get_object(Bucket=BUCKET, Key="c-to-c", **customer(OTHER))["Body"].read() == data
    copy(Bucket=BUCKET, Key="c-to-s3", CopySource=f"{BUCKET}/src-c", **copy_customer(), **SSE_S3)
    assert client.get_object(Bucket=BUCKET, Key="c-to-s3")["Body"].read() == data
    # in place: changing the encryption makes a copy to itself legal
    copy(Bucket=BUCKET, Key="src-plain", CopySource=f"{BUCKET}/src-plain", **SSE_S3)
    assert client.head_object(Bucket=BUCKET, Key="src-plain")["ServerSideEncryption"] == "AES256"
    assert refusal(copy, Bucket=BUCKET, Key="x", CopySource=f"{BUCKET}/src-c") == (400, "InvalidRequest")
    wrong = copy_customer(OTHER)
    assert refusal(copy, Bucket=BUCKET, Key="x", CopySource=f"{BUCKET}/src-c", **wrong) == (
        403,
        "AccessDenied",
    )


PART = 5 * 1024 * 1024


def test_multipart_uploads_encrypt_each_part_and_read_back_by_range_and_part(client) -> None:  # type: ignore[no-untyped-def]
    data = os.urandom(2 * PART + 1000)
    for name, write, read in (("mpu-s3", SSE_S3, {}), ("mpu-c", customer(), customer())):
        created = client.create_multipart_upload(Bucket=BUCKET, Key=name, **write)
        upload = created["UploadId"]
        if write is SSE_S3:
            assert created["ServerSideEncryption"] == "AES256"
        else:
            assert created["SSECustomerKeyMD5"] == customer()["SSECustomerKeyMD5"]
        part_args = {} if write is SSE_S3 else customer()
        etags = []
        for number, start in ((1, 0), (2, PART), (3, 2 * PART)):
            piece = data[start : start + PART]
            answer = client.upload_part(
                Bucket=BUCKET, Key=name, UploadId=upload, PartNumber=number, Body=piece, **part_args
            )
            etags.append(answer["ETag"])
            if write is SSE_S3:
                assert answer["ServerSideEncryption"] == "AES256"
        again = client.upload_part(  # part 2 written again: its own iv, the same bytes back
            Bucket=BUCKET, Key=name, UploadId=upload, PartNumber=2, Body=data[PART : 2 * PART], **part_args
        )
        etags[1] = again["ETag"]
        if write is not SSE_S3:
            assert refusal(client.upload_part, Bucket=BUCKET, Key=name, UploadId=upload, PartNumber=4,
                           Body=b"x") == (400, "InvalidRequest")  # fmt: skip
            assert refusal(client.upload_part, Bucket=BUCKET, Key=name, UploadId=upload, PartNumber=4,
                           Body=b"x", **customer(OTHER)) == (403, "AccessDenied")  # fmt: skip
        parts = [{"PartNumber": n, "ETag": e} for n, e in enumerate(etags, 1)]
        if write is not SSE_S3:  # completed with another key than its parts': refused (R36 F9)
            refused = refusal(
                client.complete_multipart_upload, Bucket=BUCKET, Key=name, UploadId=upload,
                MultipartUpload={"Parts": parts}, **customer(OTHER),
            )  # fmt: skip
            assert refused == (403, "AccessDenied")
        done = client.complete_multipart_upload(
            Bucket=BUCKET, Key=name, UploadId=upload, MultipartUpload={"Parts": parts}, **part_args
        )
        if write is SSE_S3:
            assert done["ServerSideEncryption"] == "AES256"
        assert client.get_object(Bucket=BUCKET, Key=name, **read)["Body"].read() == data
        across = f"bytes={PART - 10}-{2 * PART + 9}"  # three parts' bytes in one range
        ranged = client.get_object(Bucket=BUCKET, Key=name, Range=across, **read)["Body"].read()
        assert ranged == data[PART - 10 : 2 * PART + 10]
        second = client.get_object(Bucket=BUCKET, Key=name, PartNumber=2, **read)["Body"].read()
        assert second == data[PART : 2 * PART]


def test_upload_part_copy_between_encrypted_and_plain(client) -> None:  # type: ignore[no-untyped-def]
    data = os.urandom(PART + 100)
    client.put_object(Bucket=BUCKET, Key="copy-src-c", Body=data, **customer())
    upload = client.create_multipart_upload(Bucket=BUCKET, Key="copied-mpu", **SSE_S3)["UploadId"]
    first = client.upload_part_copy(
        Bucket=BUCKET, Key="copied-mpu", UploadId=upload, PartNumber=1, CopySource=f"{BUCKET}/copy-src-c",
        CopySourceRange=f"bytes=0-{PART - 1}", **copy_customer(),
    )  # fmt: skip
    second = client.upload_part_copy(
        Bucket=BUCKET, Key="copied-mpu", UploadId=upload, PartNumber=2, CopySource=f"{BUCKET}/copy-src-c",
        CopySourceRange=f"bytes={PART}-{PART + 99}", **copy_customer(),
    )  # fmt: skip
    assert first["ServerSideEncryption"] == "AES256"
    parts = [{"PartNumber": 1, "ETag": first["CopyPartResult"]["ETag"]},
             {"PartNumber": 2, "ETag": second["CopyPartResult"]["ETag"]}]  # fmt: skip
    client.complete_multipart_upload(Bucket=BUCKET, Key="copied-mpu", UploadId=upload,
                                     MultipartUpload={"Parts": parts})  # fmt: skip
    assert client.get_object(Bucket=BUCKET, Key="copied-mpu")["Body"].read() == data
    refused = refusal(
        client.upload_part_copy, Bucket=BUCKET, Key="copied-mpu", UploadId=upload, PartNumber=3,
        CopySource=f"{BUCKET}/copy-src-c",
    )  # fmt: skip
    assert refused == (400, "InvalidRequest")


def test_bucket_default_encryption(s3: S3Endpoint, client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bucket = "sse-default"
    client.create_bucket(Bucket=bucket)
    absent = refusal(client.get_bucket_encryption, Bucket=bucket)
    assert absent == (404, "ServerSideEncryptionConfigurationNotFoundError")
    rule = {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
    put = client.put_bucket_encryption
    for bad, answer in (
        ({"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms"}}, (501, "NotImplemented")),
        ({"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256", "KMSMasterKeyID": "k"}},
         (400, "InvalidArgument")),
    ):  # fmt: skip
        assert refusal(put, Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [bad]}) == answer
    two = {"Rules": [rule, rule]}
    assert refusal(put, Bucket=bucket, ServerSideEncryptionConfiguration=two) == (400, "MalformedXML")
    put(Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [{**rule, "BucketKeyEnabled": False}]})
    got = client.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"]
    assert got == [{**rule, "BucketKeyEnabled": False}]

    answer = client.put_object(Bucket=bucket, Key="by-default", Body=b"default")
    assert answer["ServerSideEncryption"] == "AES256"
    assert client.head_object(Bucket=bucket, Key="by-default")["ServerSideEncryption"] == "AES256"
    assert client.get_object(Bucket=bucket, Key="by-default")["Body"].read() == b"default"
    own = client.put_object(Bucket=bucket, Key="own-key", Body=b"c", **customer())  # the request's wins
    assert own["SSECustomerKeyMD5"] == customer()["SSECustomerKeyMD5"]
    upload = client.create_multipart_upload(Bucket=bucket, Key="mpu")
    assert upload["ServerSideEncryption"] == "AES256"
    native = tmp_path / "native"
    native.write_bytes(b"native write")
    conf = ("--conf", str(s3.cluster.conf_dir))
    wrote = s3.cluster.pyozone("sh", "key", "put", *conf, f"/s3v/{bucket}/native", str(native))
    assert wrote.code == 0, wrote
    assert client.head_object(Bucket=bucket, Key="native")["ServerSideEncryption"] == "AES256"
    assert client.get_object(Bucket=bucket, Key="native")["Body"].read() == b"native write"

    client.delete_bucket_encryption(Bucket=bucket)
    assert refusal(client.get_bucket_encryption, Bucket=bucket)[0] == 404
    assert "ServerSideEncryption" not in client.put_object(Bucket=bucket, Key="after", Body=b"x")
    assert client.get_object(Bucket=bucket, Key="by-default")["Body"].read() == b"default"


def test_no_plaintext_reaches_the_datanodes(s3: S3Endpoint, client) -> None:  # type: ignore[no-untyped-def]
    secret = b"pyozone-sse-plaintext-marker-" * 4096  # 116 KiB of a pattern a scan finds
    control = b"pyozone-plain-control-marker-" * 4096
    client.put_object(Bucket=BUCKET, Key="pattern-s3", Body=secret, **SSE_S3)
    client.put_object(Bucket=BUCKET, Key="pattern-c", Body=secret, **customer())
    client.put_object(Bucket=BUCKET, Key="pattern-plain", Body=control)
    needle, seen = secret[:29], control[:29]
    found_secret, found_control = [], []
    for path in s3.cluster.data_dir.rglob("*"):
        if path.is_file() and not path.is_symlink():
            content = path.read_bytes()
            if needle in content:
                found_secret.append(path)
            if seen in content:
                found_control.append(path)
    assert found_control, "the scan finds a plain object's bytes in its chunk files"
    assert found_secret == []
    assert client.get_object(Bucket=BUCKET, Key="pattern-s3")["Body"].read() == secret


def test_an_acl_an_encryption_and_a_lock_on_one_write_all_hold(s3: S3Endpoint, client) -> None:  # type: ignore[no-untyped-def]
    """The three features merged from parallel branches meet on one PutObject: its public-read ACL, its
    SSE-S3 encryption and its legal hold are all recorded by the one commit; an unsigned reader gets the
    plaintext (never the data key) and no lock header; the held version is not deleted; no plaintext
    reaches a datanode (the session's reread)."""
    import boto3
    from botocore import UNSIGNED
    from botocore.config import Config

    bucket = "sse-acl-lock"
    client.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True, ObjectOwnership="ObjectWriter")
    secret = b"pyozone-three-features-marker" * 4096
    put = client.put_object(
        Bucket=bucket, Key="k", Body=secret, ACL="public-read", ObjectLockLegalHoldStatus="ON",
        ChecksumAlgorithm="SHA256", **SSE_S3,
    )  # fmt: skip
    assert put["ServerSideEncryption"] == "AES256"
    grants = client.get_object_acl(Bucket=bucket, Key="k")["Grants"]
    assert {"Type": "Group", "URI": "http://acs.amazonaws.com/groups/global/AllUsers"} in [
        g["Grantee"] for g in grants if g["Permission"] == "READ"
    ]
    head = client.head_object(Bucket=bucket, Key="k")
    assert (head["ServerSideEncryption"], head["ObjectLockLegalHoldStatus"]) == ("AES256", "ON")
    anonymous = boto3.client(
        "s3", endpoint_url=s3.url, region_name="us-east-1",
        config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"}),
    )  # fmt: skip
    got = anonymous.get_object(Bucket=bucket, Key="k")
    assert got["Body"].read() == secret
    assert "x-amz-object-lock-legal-hold" not in got["ResponseMetadata"]["HTTPHeaders"]
    assert refusal(client.delete_object, Bucket=bucket, Key="k", VersionId=put["VersionId"]) == (
        403,
        "AccessDenied",
    )
    needle = secret[:29]
    assert not [
        p
        for p in s3.cluster.data_dir.rglob("*")
        if p.is_file() and not p.is_symlink() and needle in p.read_bytes()
    ]


def test_sh_key_get_and_cat_read_an_sse_s3_object_and_refuse_an_sse_c_one(
    s3: S3Endpoint,
    client,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    """Every CLI command that reads a key's data (`sh key get`, `sh key cat`: R36 F7)."""
    data = os.urandom(70_000)
    client.put_object(Bucket=BUCKET, Key="native-s3", Body=data, **SSE_S3)
    client.put_object(Bucket=BUCKET, Key="native-c", Body=data, **customer())
    conf = ("--conf", str(s3.cluster.conf_dir))
    out = tmp_path / "got"
    result = s3.cluster.pyozone("sh", "key", "get", *conf, f"/s3v/{BUCKET}/native-s3", str(out))
    assert result.code == 0, result
    assert out.read_bytes() == data
    refused = s3.cluster.pyozone("sh", "key", "get", *conf, f"/s3v/{BUCKET}/native-c", str(tmp_path / "c"))
    assert refused.code != 0 and "encrypted" in refused.err, refused
    assert not (tmp_path / "c").exists()
    text = os.urandom(20_000).hex()  # the CLI's output is text: printable bytes
    client.put_object(Bucket=BUCKET, Key="cat-s3", Body=text.encode(), **SSE_S3)
    catted = s3.cluster.pyozone("sh", "key", "cat", *conf, f"/s3v/{BUCKET}/cat-s3")
    assert catted.code == 0 and catted.out == text, catted.err
    refused = s3.cluster.pyozone("sh", "key", "cat", *conf, f"/s3v/{BUCKET}/native-c")
    assert refused.code != 0 and "encrypted" in refused.err and not refused.out, refused


def test_an_sse_c_multipart_object_shows_no_plaintext_md5_without_its_key(client) -> None:  # type: ignore[no-untyped-def]
    """R36 F6: each part's ETag (UploadPart, UploadPartCopy, ListParts) and the completed object's (in a
    listing, which needs no key) are keyed as a single SSE-C PUT's, never the plaintext's MD5s."""
    first, second = b"a" * PART, b"guessable"
    client.put_object(Bucket=BUCKET, Key="etag-src", Body=second)
    upload = client.create_multipart_upload(Bucket=BUCKET, Key="etag-c", **customer())["UploadId"]
    e1 = client.upload_part(
        Bucket=BUCKET, Key="etag-c", UploadId=upload, PartNumber=1, Body=first, **customer()
    )
    e2 = client.upload_part_copy(
        Bucket=BUCKET,
        Key="etag-c",
        UploadId=upload,
        PartNumber=2,
        CopySource=f"{BUCKET}/etag-src",
        **customer(),
    )["CopyPartResult"]["ETag"]
    md5s = [hashlib.md5(first).hexdigest(), hashlib.md5(second).hexdigest()]
    assert e1["ETag"].strip('"') != md5s[0] and e2.strip('"') != md5s[1]
    listed = client.list_parts(Bucket=BUCKET, Key="etag-c", UploadId=upload)["Parts"]
    assert not {p["ETag"].strip('"') for p in listed} & set(md5s)
    parts = [{"PartNumber": 1, "ETag": e1["ETag"]}, {"PartNumber": 2, "ETag": e2}]
    client.complete_multipart_upload(
        Bucket=BUCKET, Key="etag-c", UploadId=upload, MultipartUpload={"Parts": parts}, **customer()
    )
    guess = hashlib.md5(b"".join(bytes.fromhex(m) for m in md5s)).hexdigest() + "-2"
    shown = {o["Key"]: o["ETag"] for o in client.list_objects_v2(Bucket=BUCKET, Prefix="etag-c")["Contents"]}
    assert shown["etag-c"].strip('"') != guess
    assert client.get_object(Bucket=BUCKET, Key="etag-c", **customer())["Body"].read() == first + second


def test_list_parts_shows_an_sse_c_upload_s_checksums_to_its_key_alone(client) -> None:  # type: ignore[no-untyped-def]
    """An SSE-C upload's part checksums are of the plaintext: ListParts shows them to a caller naming the
    upload's key (Amazon's ListParts takes the SSE-C headers for this), not to one without it (R3's F2:
    they confirmed a guess of a part); another key is 403, a key for a plain upload 400 InvalidRequest."""
    body = b"guessable"
    upload = client.create_multipart_upload(
        Bucket=BUCKET, Key="sums-c", ChecksumAlgorithm="SHA256", **customer()
    )["UploadId"]
    client.upload_part(
        Bucket=BUCKET, Key="sums-c", UploadId=upload, PartNumber=1, Body=body, ChecksumAlgorithm="SHA256",
        **customer(),
    )  # fmt: skip
    sha256 = base64.b64encode(hashlib.sha256(body).digest()).decode()
    ask = {"Bucket": BUCKET, "Key": "sums-c", "UploadId": upload}
    assert "ChecksumSHA256" not in client.list_parts(**ask)["Parts"][0]
    assert client.list_parts(**ask, **customer())["Parts"][0]["ChecksumSHA256"] == sha256
    assert refusal(client.list_parts, **ask, **customer(OTHER)) == (403, "AccessDenied")
    client.abort_multipart_upload(**ask)
    plain = client.create_multipart_upload(Bucket=BUCKET, Key="sums-plain")["UploadId"]
    assert refusal(
        client.list_parts, Bucket=BUCKET, Key="sums-plain", UploadId=plain, **customer()
    ) == (400, "InvalidRequest")  # fmt: skip
    client.abort_multipart_upload(Bucket=BUCKET, Key="sums-plain", UploadId=plain)


def test_ofs_reads_an_sse_s3_object_from_any_offset(s3: S3Endpoint, client) -> None:  # type: ignore[no-untyped-def]
    import fsspec

    data = os.urandom(300_000)
    client.put_object(Bucket=BUCKET, Key="ofs-s3", Body=data, **SSE_S3)
    client.put_object(Bucket=BUCKET, Key="ofs-c", Body=data, **customer())
    fs, _ = fsspec.core.url_to_fs(f"ofs://{HOST}:{s3.cluster.port('om', 'rpc')}/")
    with fs.open(f"/s3v/{BUCKET}/ofs-s3", "rb") as f:
        f.seek(123_457)
        assert f.read(70_000) == data[123_457:193_457]
        f.seek(0)
        assert f.read() == data
    with pytest.raises(Exception, match="encrypted"):
        fs.cat_file(f"/s3v/{BUCKET}/ofs-c")


def test_rotation_keeps_older_objects_readable(s3: S3Endpoint, client) -> None:  # type: ignore[no-untyped-def]
    client.put_object(Bucket=BUCKET, Key="before-rotation", Body=b"old", **SSE_S3)
    result = s3.cluster.pyozone("admin", "om", "rotate-s3-master-key", "--conf", str(s3.cluster.conf_dir))
    assert result.code == 0 and "version 2" in result.out, result
    client.put_object(Bucket=BUCKET, Key="after-rotation", Body=b"new", **SSE_S3)
    assert client.get_object(Bucket=BUCKET, Key="before-rotation")["Body"].read() == b"old"
    assert client.get_object(Bucket=BUCKET, Key="after-rotation")["Body"].read() == b"new"


@pytest.mark.skipif(not AWS.exists(), reason="no .venv-awscli: run scripts/client_venvs.sh")
def test_awscli_round_trips_with_sse_and_sse_c(s3: S3Endpoint, tmp_path: Path) -> None:
    home = tmp_path / "aws-home"
    home.mkdir()
    (home / "config").write_text(CONFIG)
    (home / "credentials").write_text("")
    cli = Aws(s3, home)
    source = tmp_path / "in"
    source.write_bytes(os.urandom(20 * 1024 * 1024))  # above 8 MB: a multipart upload and ranged GETs
    key_file = tmp_path / "key"
    key_file.write_bytes(KEY)
    sse_c = ("--sse-c", "AES256", "--sse-c-key", f"fileb://{key_file}")
    for name, put_args, get_args in (("cli-s3", ("--sse", "AES256"), ()), ("cli-c", sse_c, sse_c)):
        cli.ok("s3", "cp", str(source), f"s3://{BUCKET}/{name}", *put_args)
        cli.ok("s3", "cp", f"s3://{BUCKET}/{name}", str(tmp_path / name), *get_args)
        assert (tmp_path / name).read_bytes() == source.read_bytes()
    head = json.loads(cli.ok("s3api", "head-object", "--bucket", BUCKET, "--key", "cli-s3"))
    assert head["ServerSideEncryption"] == "AES256"
