"""POST Object (browser form uploads) through the S3 gateway of a live cluster (issue 33, item 3): forms made
by boto3's generate_presigned_post, the real client, posted as multipart/form-data by aiohttp (as a
browser's form is: the fields, then the file): the file read back whole, `${filename}`, metadata, 201 and
303 answers, an empty file and a 96 MB one streamed (the gateway's peak memory grows by less than half of
it), the CORS headers of the answer, and each refusal with Amazon's code (an expired policy, a bad
signature, an unknown access key, a file outside the content-length-range, no file, a field no condition
names, no policy at all, a key outside the policy, a policy not base64 JSON, no key, a missing bucket, a
wrong Content-MD5, a url-encoded body), none of which leaves a key behind; success_action_status 200; and
anonymous bodies that would have the gateway buffer or re-scan what precedes the file (review R28 F1, F2,
F10) refused within 20 KB."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import http.client
import os
import select
import socket
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit
from xml.etree import ElementTree as ET

import aiohttp
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from multidict import CIMultiDict

from tests.e2e.cluster.s3_cluster import REGION, S3Endpoint, s3_cluster

BUCKET = "uploads"
MiB = 1 << 20
NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"
APP = "https://app.example"


@pytest.fixture(scope="module")
def s3(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    with s3_cluster(request, tmp_path_factory, "s3-post") as endpoint:
        endpoint.boto3().create_bucket(Bucket=BUCKET)
        yield endpoint


@pytest.fixture(scope="module")
def client(s3: S3Endpoint):  # type: ignore[no-untyped-def]
    return s3.boto3()


def form(
    client: Any,
    key: str,
    fields: dict[str, str] | None = None,
    conditions: list[Any] | None = None,
    expires: int = 600,
) -> dict[str, str]:
    made = client.generate_presigned_post(
        BUCKET, key, Fields=fields, Conditions=conditions, ExpiresIn=expires
    )
    assert made["url"].endswith(f"/{BUCKET}")
    return dict(made["fields"])


def post(
    s3: S3Endpoint,
    fields: dict[str, str],
    file: bytes | Path | None,
    filename: str = "upload.bin",
    headers: dict[str, str] | None = None,
    bucket: str = BUCKET,
) -> tuple[int, CIMultiDict[str], str]:
    """The form posted as a browser posts it (aiohttp's multipart writer; a Path is streamed from disk)."""

    async def send() -> tuple[int, CIMultiDict[str], str]:
        data = aiohttp.FormData(quote_fields=False, default_to_multipart=True)
        for name, value in fields.items():
            data.add_field(name, value)
        if file is not None:
            content = file.open("rb") if isinstance(file, Path) else file
            data.add_field("file", content, filename=filename, content_type="application/octet-stream")
        timeout = aiohttp.ClientTimeout(total=120)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.post(f"{s3.url}/{bucket}", data=data, headers=headers, allow_redirects=False) as response,
        ):
            return response.status, CIMultiDict(response.headers), await response.text()

    return asyncio.run(send())


def code(body: str) -> str:
    return ET.fromstring(body).findtext("Code") or ""


def body_of(client: Any, key: str) -> bytes:
    return client.get_object(Bucket=BUCKET, Key=key)["Body"].read()


def test_a_presigned_post_stores_the_file(s3: S3Endpoint, client: Any) -> None:
    data = os.urandom(1000)
    status, headers, _ = post(s3, form(client, "one.bin"), data)
    assert status == 204, headers
    assert headers["ETag"] == f'"{hashlib.md5(data).hexdigest()}"'
    assert body_of(client, "one.bin") == data
    again = os.urandom(10)
    assert post(s3, form(client, "one.bin"), again)[0] == 204  # a second POST replaces it, as a PUT does
    assert body_of(client, "one.bin") == again


def test_an_empty_file(s3: S3Endpoint, client: Any) -> None:
    assert post(s3, form(client, "empty"), b"")[0] == 204
    assert client.head_object(Bucket=BUCKET, Key="empty")["ContentLength"] == 0


def test_filename_metadata_and_201(s3: S3Endpoint, client: Any) -> None:
    fields = {"Content-Type": "image/png", "x-amz-meta-album": "summer", "success_action_status": "201"}
    conditions: list[Any] = [
        ["starts-with", "$Content-Type", "image/"],
        {"x-amz-meta-album": "summer"},
        {"success_action_status": "201"},
    ]
    status, _, body = post(s3, form(client, "photos/${filename}", fields, conditions), b"png", "beach.png")
    assert status == 201
    root = ET.fromstring(body)
    assert (root.findtext(f"{NS}Bucket"), root.findtext(f"{NS}Key")) == (BUCKET, "photos/beach.png")
    head = client.head_object(Bucket=BUCKET, Key="photos/beach.png")
    assert (head["ContentType"], head["Metadata"]) == ("image/png", {"album": "summer"})


def test_a_redirect(s3: S3Endpoint, client: Any) -> None:
    fields = {"success_action_redirect": f"{APP}/uploaded"}
    status, headers, _ = post(s3, form(client, "r.txt", fields, [fields]), b"r")
    assert status == 303
    location = urlsplit(headers["Location"])
    assert location.netloc == "app.example"
    assert parse_qs(location.query) == {
        "bucket": [BUCKET],
        "key": ["r.txt"],
        "etag": [f'"{hashlib.md5(b"r").hexdigest()}"'],
    }


def stream_until_answered(s3: S3Endpoint, length: int, pieces: Iterable[bytes]) -> tuple[int, bytes]:
    """Sends an anonymous POST of `length` bytes piece by piece, stopping once the gateway answers: the
    bytes of the body sent, and the answer's first bytes."""
    host, port = (urlsplit(s3.url).hostname or "", urlsplit(s3.url).port or 0)
    with socket.create_connection((host, port), timeout=60) as sock:
        sock.sendall(
            f"POST /{BUCKET} HTTP/1.1\r\nHost: {host}\r\nContent-Type: multipart/form-data; boundary=B\r\n"
            f"Content-Length: {length}\r\n\r\n".encode()
        )
        sent = 0
        for piece in pieces:
            if select.select([sock], [], [], 0)[0]:
                break
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(piece)
        return sent, sock.recv(4096)


def test_anonymous_padding_and_tiny_parts_are_refused_before_they_are_read(s3: S3Endpoint) -> None:
    """Review R28 F1: 192 MiB of spaces after a boundary grew the real gateway by 178 MiB before its 400;
    F10: 16 MiB of empty parts froze it for 29 s. Now both are refused within the 20 KB before the file."""
    gateway = s3.cluster.state.pids["s3g"]
    before = peak_rss(gateway)
    padding = (b" " * MiB for _ in range(192))
    sent, answer = stream_until_answered(s3, 3 + 192 * MiB + 2, [b"--B", *padding, b"\r\n"])
    assert sent < 64 * MiB  # answered while the body was still coming
    assert answer.startswith(b"HTTP/1.1 400") and b"<Code>MalformedPOSTRequest</Code>" in answer, answer
    tiny = b'\r\nContent-Disposition: form-data; name="x-amz-meta-a"\r\n\r\n\r\n--B'
    parts = b"--B" + tiny * ((16 * MiB) // len(tiny)) + b"--\r\n"
    _, answer = stream_until_answered(
        s3, len(parts), (parts[at : at + MiB] for at in range(0, len(parts), MiB))
    )
    assert b"<Code>MaxPostPreDataLengthExceededError</Code>" in answer, answer
    assert peak_rss(gateway) - before < 48 * MiB  # a body piece and aiohttp's buffers, not 192 MiB


def peak_rss(pid: int) -> int:
    """The process's peak resident set (VmHWM), in bytes."""
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmHWM:"))


def test_a_96_mb_file_streams_through_the_gateway(s3: S3Endpoint, client: Any, tmp_path: Path) -> None:
    path = tmp_path / "big.bin"
    data = os.urandom(96 * MiB)
    path.write_bytes(data)
    conditions = [["content-length-range", 1, 100 * MiB]]
    gateway = s3.cluster.state.pids["s3g"]
    post(s3, form(client, "warm.bin"), os.urandom(8 * MiB))  # the gateway's buffers, allocated once
    before = peak_rss(gateway)
    status, headers, body = post(s3, form(client, "big.bin", conditions=conditions), path)
    assert status == 204, body
    assert (
        peak_rss(gateway) - before < 48 * MiB
    )  # streamed: the gateway never held the file (~30 MB: buffers)
    assert headers["ETag"] == f'"{hashlib.md5(data).hexdigest()}"'
    assert hashlib.md5(body_of(client, "big.bin")).digest() == hashlib.md5(data).digest()


def test_the_answer_has_the_bucket_s_cors_headers(s3: S3Endpoint, client: Any) -> None:
    rules = {"CORSRules": [{"AllowedOrigins": [APP], "AllowedMethods": ["POST"], "ExposeHeaders": ["ETag"]}]}
    client.put_bucket_cors(Bucket=BUCKET, CORSConfiguration=rules)
    try:
        status, headers, _ = post(s3, form(client, "cors.txt"), b"c", headers={"Origin": APP})
        assert status == 204
        assert headers["Access-Control-Allow-Origin"] == APP
        assert headers["Access-Control-Expose-Headers"] == "ETag"
    finally:
        client.delete_bucket_cors(Bucket=BUCKET)


def _stranger(s3: S3Endpoint) -> Any:
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=s3.url,
        aws_access_key_id="stranger",
        aws_secret_access_key="x" * 40,
        region_name=REGION,
        config=Config(signature_version="s3v4"),
    )


def signed_anew(s3: S3Endpoint, fields: dict[str, str], policy: str) -> dict[str, str]:
    """The form with another policy field, signed as SigV4 signs a POST policy (the field's text itself)."""
    date = fields["x-amz-credential"].split("/")[1]
    key = ("AWS4" + s3.secret_key).encode()
    for part in (date, REGION, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, policy.encode(), hashlib.sha256).hexdigest()
    return {**fields, "policy": policy, "x-amz-signature": signature}


@pytest.mark.parametrize(
    ("case", "status", "expected"),
    [
        ("expired", 403, "AccessDenied"),
        ("bad signature", 403, "SignatureDoesNotMatch"),
        ("unknown access key", 403, "InvalidAccessKeyId"),
        ("too large", 400, "EntityTooLarge"),
        ("too small", 400, "EntityTooSmall"),
        ("no file", 400, "IncorrectNumberOfFilesInPostRequest"),
        ("extra field", 403, "AccessDenied"),
        ("anonymous", 403, "AccessDenied"),
        ("key outside the policy", 403, "AccessDenied"),
        ("policy not base64 json", 400, "InvalidPolicyDocument"),
        ("no key", 400, "InvalidArgument"),
        ("missing bucket", 404, "NoSuchBucket"),
        ("wrong content-md5", 400, "BadDigest"),
    ],
)
def test_refusals_leave_no_key(s3: S3Endpoint, client: Any, case: str, status: int, expected: str) -> None:
    key = "refused-" + case.replace(" ", "-")
    fields = form(client, key)
    file: bytes | None = b"12345"
    if case == "expired":
        fields = form(client, key, expires=-1)
    elif case == "bad signature":
        fields["x-amz-signature"] = "0" * 64
    elif case == "unknown access key":
        fields = dict(_stranger(s3).generate_presigned_post(BUCKET, key)["fields"])
    elif case == "too large":
        fields = form(client, key, conditions=[["content-length-range", 0, 4]])
    elif case == "too small":
        fields = form(client, key, conditions=[["content-length-range", 6, 10]])
    elif case == "no file":
        file = None
    elif case == "extra field":
        fields["x-amz-meta-unsigned"] = "1"
    elif case == "anonymous":
        fields = {"key": key}
    elif case == "key outside the policy":
        fields = form(client, key, conditions=[["starts-with", "$key", "uploads/"]])
    elif case == "policy not base64 json":
        fields = signed_anew(s3, fields, "not base64 json!")
    elif case == "missing bucket":
        fields = dict(client.generate_presigned_post("no-such-bucket", key)["fields"])
    elif case == "no key":
        del fields["key"]
    elif case == "wrong content-md5":
        other = base64.b64encode(hashlib.md5(b"other").digest()).decode()
        fields = form(client, key, fields={"Content-MD5": other}, conditions=[{"Content-MD5": other}])
    answered, _, body = post(
        s3, fields, file, bucket="no-such-bucket" if case == "missing bucket" else BUCKET
    )
    assert (answered, code(body)) == (status, expected)
    if case == "key outside the policy":
        assert (
            ET.fromstring(body)
            .findtext("Message", "")
            .startswith("Invalid according to Policy: Policy Condition failed: ")
        )
    with pytest.raises(ClientError) as e:
        client.head_object(Bucket=BUCKET, Key=key)
    assert e.value.response["Error"]["Code"] == "404"


def test_a_url_encoded_form_is_a_precondition_failure(s3: S3Endpoint, client: Any) -> None:
    """POST Object takes multipart/form-data only: a url-encoded form is PreconditionFailed (S3's answer
    to a POST it cannot read as a form), and stores nothing."""
    url = urlsplit(s3.url)
    connection = http.client.HTTPConnection(url.hostname or "", url.port, timeout=30)
    try:
        fields = {**form(client, "urlencoded"), "file": "12345"}
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        connection.request("POST", f"/{BUCKET}", body=urlencode(fields), headers=headers)
        response = connection.getresponse()
        assert (response.status, code(response.read().decode())) == (412, "PreconditionFailed")
    finally:
        connection.close()
    with pytest.raises(ClientError):
        client.head_object(Bucket=BUCKET, Key="urlencoded")


def test_success_action_status_200_answers_an_empty_200(s3: S3Endpoint, client: Any) -> None:
    fields = form(client, "ok200", fields={"success_action_status": "200"},
                  conditions=[{"success_action_status": "200"}])  # fmt: skip
    status, _, text = post(s3, fields, b"12345")
    assert (status, text) == (200, "")
    assert body_of(client, "ok200") == b"12345"
