"""The S3 gateway under bad input, over raw sockets on a live cluster: each bad request gets S3's XML error
with S3's code and status (never a traceback, never a hang), nothing is stored by a refused upload, and
the gateway keeps serving (a good request right after succeeds).

Requests are signed and sent by tests/e2e/cluster/s3_raw.py, byte for byte as written here, so a test
can send what no SDK would: a tampered body, no Content-Length, a length
it never delivers, a flood of headers, a head one byte at a time.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import re
import select
import socket
import time
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from unittest import mock
from urllib.parse import quote, urlsplit

import pytest
from botocore.credentials import Credentials

from tests.e2e.cluster.s3_cluster import S3Endpoint, s3_cluster
from tests.e2e.cluster.s3_raw import Answer, RawS3, md5_b64, read_answer
from tests.e2e.cluster.s3_raw import object_path as path_in

BUCKET = "badinput"
OBJECT = b"0123456789" * 10  # the 100-byte object the range tests read
HEAD_DEADLINE_S = 3.0  # ozone.s3g.http.head.timeout, shortened for the test
BODY_IDLE_S = 4.0  # ozone.s3g.http.body.idle.timeout, shortened for the test
FIVE_GB = 5_000_000_000


# ------------------------------------------------------------------ answers
def object_path(key: str) -> str:
    return path_in(key, BUCKET)


def _wait_closed(sock: socket.socket, timeout_s: float) -> bool:
    """True when the peer closes (or resets) the connection within timeout_s."""
    deadline = time.monotonic() + timeout_s
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([sock], [], [], left)
        if not readable:
            return False
        try:
            if not sock.recv(65536):
                return True
        except OSError:
            return True
    return False


# ------------------------------------------------------------------ the cluster
@pytest.fixture(scope="module")
def s3(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    timeouts = {
        "ozone.s3g.http.head.timeout": f"{HEAD_DEADLINE_S:g}s",
        "ozone.s3g.http.body.idle.timeout": f"{BODY_IDLE_S:g}s",
    }
    with s3_cluster(request, tmp_path_factory, "s3-bad-input", overrides=timeouts) as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def raw(s3: S3Endpoint) -> RawS3:
    client = RawS3(s3, BUCKET)
    assert client.request("PUT", f"/{BUCKET}").status == 200
    assert client.put("ranged", OBJECT).status == 200
    return client


def gateway_pid(s3: S3Endpoint) -> int:
    return s3.cluster.state.pids["s3g"]


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} for pid {pid}")


@contextlib.contextmanager
def refused_quickly(limit_s: float = 3.0) -> Iterator[None]:
    start = time.monotonic()
    yield
    assert time.monotonic() - start < limit_s, "the refusal took too long"


# ------------------------------------------------------------------ malformed XML bodies
MALFORMED = [
    b"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>",  # cut short
    b"not xml at all",
    b"<Other/>",  # well formed, the wrong document
]


@pytest.mark.parametrize("body", MALFORMED, ids=["truncated", "not-xml", "wrong-root"])
def test_malformed_complete_multipart_upload(raw: RawS3, body: bytes) -> None:
    created = raw.request("POST", object_path("mpu-xml") + "?uploads")
    upload_id = re.search(rb"<UploadId>([^<]+)</UploadId>", created.body)
    assert created.status == 200 and upload_id, created
    answer = raw.request(
        "POST", object_path("mpu-xml") + f"?uploadId={quote(upload_id.group(1).decode())}", body
    )
    assert answer.is_s3_error(400, "MalformedXML"), answer
    assert not raw.exists("mpu-xml")
    raw.assert_serving()


@pytest.mark.parametrize(
    "body", [b"<Delete><Object><Key>a</Key>", b"<Delete><Object><Key>a</Key></Wrong></Delete>"]
)
def test_malformed_delete_objects(raw: RawS3, body: bytes) -> None:
    assert raw.put("kept", b"kept").status == 200
    answer = raw.request("POST", f"/{BUCKET}?delete", body, {"Content-MD5": md5_b64(body)})
    assert answer.is_s3_error(400, "MalformedXML"), answer
    assert raw.exists("kept")
    raw.assert_serving()


def test_malformed_put_object_tagging(raw: RawS3) -> None:
    assert raw.put("tagged", b"x").status == 200
    for body in (b"<Tagging><TagSet><Tag><Key>k</Key>", b"<Tagging><NoTagSet/></Tagging>"):
        answer = raw.request("PUT", object_path("tagged") + "?tagging", body, {"Content-MD5": md5_b64(body)})
        assert answer.is_s3_error(400, "MalformedXML"), (body, answer)
    raw.assert_serving()


def test_malformed_create_bucket_configuration(raw: RawS3) -> None:
    answer = raw.request("PUT", "/never-made", b"<CreateBucketConfiguration><LocationConstraint>")
    assert answer.is_s3_error(400, "MalformedXML"), answer
    assert raw.request("HEAD", "/never-made").status == 404
    raw.assert_serving()


BILLION_LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE lolz [\n<!ENTITY lol "lol">\n'
    + b"".join(
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10 if i > 1 else "&lol;" * 10}">\n'.encode()
        for i in range(1, 10)
    )
    + b"]>\n<Delete><Object><Key>&lol9;</Key></Object></Delete>"
)
"""A 1 KB document that expands to 3 * 10**9 bytes if its entities are expanded."""


def test_an_xml_bomb_is_refused_quickly_in_bounded_memory(raw: RawS3, s3: S3Endpoint) -> None:
    pid = gateway_pid(s3)
    before = rss_kb(pid)
    with refused_quickly():
        answer = raw.request(
            "POST", f"/{BUCKET}?delete", BILLION_LAUGHS, {"Content-MD5": md5_b64(BILLION_LAUGHS)}
        )
    assert answer.is_s3_error(400, "MalformedXML"), answer
    assert rss_kb(pid) - before < 64 * 1024, "the bomb grew the gateway by more than 64 MB"
    raw.assert_serving()


def test_an_external_entity_is_not_resolved(raw: RawS3) -> None:
    body = b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><Delete><Object><Key>&x;</Key></Object></Delete>'
    answer = raw.request("POST", f"/{BUCKET}?delete", body, {"Content-MD5": md5_b64(body)})
    assert answer.is_s3_error(400, "MalformedXML"), answer
    assert b"root:" not in answer.body


# ------------------------------------------------------------------ ranges, part numbers, uploads, max-keys
def test_a_range_past_the_end_is_invalid_range(raw: RawS3) -> None:
    for spec in ("bytes=100-", "bytes=1000-2000"):
        answer = raw.request("GET", object_path("ranged"), headers={"Range": spec})
        assert answer.is_s3_error(416, "InvalidRange"), (spec, answer)
    raw.assert_serving()


@pytest.mark.parametrize(
    "spec", ["bytes=abc", "bytes=5-2", "bytes=0-1,4-5", "lines=0-5", "bytes=--1", "bytes="]
)
def test_an_unparsable_range_gets_the_whole_object(raw: RawS3, spec: str) -> None:
    answer = raw.request("GET", object_path("ranged"), headers={"Range": spec})
    assert answer.status == 200 and answer.body == OBJECT, (spec, answer)
    assert "content-range" not in answer.headers


@pytest.fixture(scope="module")
def upload_id(raw: RawS3) -> str:
    created = raw.request("POST", object_path("parts") + "?uploads")
    found = re.search(rb"<UploadId>([^<]+)</UploadId>", created.body)
    assert created.status == 200 and found, created
    return quote(found.group(1).decode(), safe="")


@pytest.mark.parametrize("number", ["0", "10001", "abc", "-1", "1.5", ""])
def test_a_bad_part_number_is_invalid_argument(raw: RawS3, upload_id: str, number: str) -> None:
    answer = raw.request("PUT", object_path("parts") + f"?partNumber={number}&uploadId={upload_id}", b"part")
    assert answer.is_s3_error(400, "InvalidArgument"), (number, answer)
    raw.assert_serving()


def test_an_unknown_upload_id_is_no_such_upload(raw: RawS3) -> None:
    target = object_path("parts") + "?uploadId=no-such-upload"
    complete = (
        b"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"
        + b"0" * 32
        + b"</ETag></Part></CompleteMultipartUpload>"
    )
    for method, query, body in [
        ("PUT", "&partNumber=1", b"part"),
        ("GET", "", b""),
        ("POST", "", complete),
        ("DELETE", "", b""),
    ]:
        answer = raw.request(method, target + query, body)
        assert answer.is_s3_error(404, "NoSuchUpload"), (method, answer)
    raw.assert_serving()


def test_completing_an_unknown_upload_with_a_non_md5_etag_is_no_such_upload(raw: RawS3) -> None:
    body = b"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>x</ETag></Part>"
    answer = raw.request(
        "POST", object_path("parts") + "?uploadId=no-such-upload", body + b"</CompleteMultipartUpload>"
    )
    assert answer.is_s3_error(404, "NoSuchUpload"), answer


@pytest.mark.parametrize("value", ["-1", "x", "1e3", "99999999999999999999"])
@pytest.mark.parametrize("listing", ["", "list-type=2&"])
def test_a_bad_max_keys_is_invalid_argument(raw: RawS3, listing: str, value: str) -> None:
    answer = raw.request("GET", f"/{BUCKET}?{listing}max-keys={value}")
    assert answer.is_s3_error(400, "InvalidArgument"), (value, answer)


# ------------------------------------------------------------------ lengths the body does not keep
def test_a_put_without_content_length_is_411(raw: RawS3) -> None:
    headers = raw.signed_headers("PUT", object_path("no-length"))
    answer = raw.send("PUT", object_path("no-length"), headers, content_length=None)
    assert answer.is_s3_error(411, "MissingContentLength"), answer
    assert not raw.exists("no-length")
    raw.assert_serving()


def _start_5gb_put(raw: RawS3, sock: socket.socket, key: str) -> None:
    """A PUT that announces 5 GB and sends 10 bytes of it."""
    headers = raw.signed_headers("PUT", object_path(key), sign_payload=False)
    sock.sendall(raw.head("PUT", object_path(key), headers, FIVE_GB) + b"0123456789")


@pytest.mark.parametrize(
    "pause_s",
    [pytest.param(0.5, id="fin-after-the-handler-began"), pytest.param(0.0, id="fin-with-the-head")],
)
def test_5gb_announced_10_bytes_sent_then_half_closed_is_incomplete_body(raw: RawS3, pause_s: float) -> None:
    """The client half-closes (shutdown SHUT_WR) after 10 bytes: the body can never be finished."""
    with raw.connect() as sock:
        _start_5gb_put(raw, sock, "half-closed")
        time.sleep(pause_s)
        sock.shutdown(socket.SHUT_WR)
        try:
            answer: Answer | None = read_answer(sock, "PUT", timeout_s=BODY_IDLE_S - 1)
        except (ConnectionError, http.client.RemoteDisconnected):
            answer = None  # closed without an answer: S3 may do so too
    assert answer is None or answer.is_s3_error(400, "IncompleteBody"), answer
    raw.assert_serving()
    assert not raw.exists("half-closed")


def test_5gb_announced_10_bytes_sent_then_closed_stores_nothing(raw: RawS3) -> None:
    with raw.connect() as sock:
        _start_5gb_put(raw, sock, "closed")
        time.sleep(0.2)  # the gateway has begun the key before the client vanishes
    raw.assert_serving()
    assert not raw.exists("closed")
    listed = raw.request("GET", f"/{BUCKET}?list-type=2&prefix=closed")
    assert b"<KeyCount>0</KeyCount>" in listed.body, listed


def test_5gb_announced_10_bytes_sent_then_silence_is_request_timeout(raw: RawS3) -> None:
    """Answered at the body idle timeout (ozone.s3g.http.body.idle.timeout, shortened here)."""
    with raw.connect() as sock:
        start = time.monotonic()
        _start_5gb_put(raw, sock, "silent")
        try:
            answer: Answer | None = read_answer(sock, "PUT", timeout_s=BODY_IDLE_S + 15)
        except (ConnectionError, http.client.RemoteDisconnected):
            answer = None
        waited = time.monotonic() - start
    assert answer is None or answer.is_s3_error(400, "RequestTimeout"), answer
    assert BODY_IDLE_S - 1 <= waited <= BODY_IDLE_S + 10, waited
    raw.assert_serving()
    assert not raw.exists("silent")


# ------------------------------------------------------------------ header floods and slowloris
def _refused_head(raw: RawS3, data: bytes) -> tuple[Answer, bool]:
    """The answer to a request head, and whether the server closed the connection after it."""
    with raw.connect() as sock:
        with contextlib.suppress(ConnectionError):  # refused while still sending: the answer may wait
            sock.sendall(data)
        answer = read_answer(sock, "GET")
        return answer, answer.headers.get("connection", "").lower() == "close" or _wait_closed(sock, 2.0)


def test_a_flood_of_headers_is_refused_and_closed(raw: RawS3) -> None:
    flood = "".join(f"X-Flood-{i}: {i}\r\n" for i in range(1000))
    answer, closed = _refused_head(
        raw, f"GET /{BUCKET} HTTP/1.1\r\nHost: {raw.netloc}\r\n{flood}\r\n".encode()
    )
    assert answer.status in (400, 431) and closed, answer
    assert answer.code == "RequestHeaderSectionTooLarge", answer
    raw.assert_serving()


@pytest.mark.parametrize("where", ["value", "name", "request-line"])
def test_one_huge_header_is_refused_and_closed(raw: RawS3, where: str) -> None:
    huge = "a" * 64 * 1024
    head = {
        "value": f"GET /{BUCKET} HTTP/1.1\r\nHost: {raw.netloc}\r\nX-Huge: {huge}\r\n\r\n",
        "name": f"GET /{BUCKET} HTTP/1.1\r\nHost: {raw.netloc}\r\nX-{huge}: 1\r\n\r\n",
        "request-line": f"GET /{BUCKET}/{huge} HTTP/1.1\r\nHost: {raw.netloc}\r\n\r\n",
    }[where]
    answer, closed = _refused_head(raw, head.encode())
    assert answer.status in (400, 414, 431) and closed, answer
    assert answer.code is not None and b"Traceback" not in answer.body, answer
    raw.assert_serving()


def test_slowloris_is_cut_after_the_head_deadline_while_others_are_served(raw: RawS3) -> None:
    """Takes the head deadline (shortened here): the head is dribbled a byte per 100 ms and never ends."""
    head = f"GET /{BUCKET} HTTP/1.1\r\nHost: {raw.netloc}\r\nX-Slow: ".encode() + b"s" * 1000
    served = 0
    with raw.connect() as sock:
        start = time.monotonic()
        cut_after: float | None = None
        for i, byte in enumerate(head):
            try:
                sock.send(bytes([byte]))
            except OSError:
                cut_after = time.monotonic() - start
                break
            if _wait_closed(sock, 0.1):
                cut_after = time.monotonic() - start
                break
            if i % 5 == 0:
                raw.assert_serving()
                served += 1
            if time.monotonic() - start > HEAD_DEADLINE_S + 10:
                break
    assert cut_after is not None, "the dribbling client was never cut off"
    assert HEAD_DEADLINE_S - 1 <= cut_after <= HEAD_DEADLINE_S + 5, cut_after
    assert served >= 3
    raw.assert_serving()


# ------------------------------------------------------------------ integrity checks
def test_a_tampered_signed_body_is_a_sha256_mismatch(raw: RawS3) -> None:
    signed_for, sent = b"the body that was signed", b"the body that was SENT!!"
    headers = raw.signed_headers("PUT", object_path("tampered"), signed_for)
    answer = raw.send("PUT", object_path("tampered"), headers, sent)
    assert answer.is_s3_error(400, "XAmzContentSHA256Mismatch"), answer
    assert not raw.exists("tampered")
    raw.assert_serving()


def test_a_wrong_content_md5_is_bad_digest(raw: RawS3) -> None:
    answer = raw.put("bad-md5", b"some bytes", {"Content-MD5": md5_b64(b"other bytes")})
    assert answer.is_s3_error(400, "BadDigest"), answer
    assert not raw.exists("bad-md5")
    raw.assert_serving()


def test_a_wrong_crc32_checksum_is_bad_digest(raw: RawS3) -> None:
    wrong = base64.b64encode(zlib.crc32(b"other bytes").to_bytes(4, "big")).decode()
    answer = raw.put("bad-crc", b"some bytes", {"x-amz-checksum-crc32": wrong})
    assert answer.is_s3_error(400, "BadDigest"), answer
    assert not raw.exists("bad-crc")
    raw.assert_serving()


# ------------------------------------------------------------------ authentication
def test_no_auth_is_access_denied(raw: RawS3) -> None:
    for method, target in [("GET", "/"), ("GET", object_path("ranged")), ("PUT", object_path("anon"))]:
        answer = raw.send(method, target, {"Host": raw.netloc}, b"x" if method == "PUT" else b"")
        assert answer.is_s3_error(403, "AccessDenied"), (method, target, answer)
    assert not raw.exists("anon")


def test_an_expired_presigned_url_is_access_denied(raw: RawS3) -> None:
    url = raw.presigned_url("GET", object_path("ranged"), 60, datetime.now(UTC) - timedelta(hours=1))
    parts = urlsplit(url)
    answer = raw.send("GET", f"{parts.path}?{parts.query}", {"Host": raw.netloc})
    assert answer.is_s3_error(403, "AccessDenied"), answer
    assert b"expired" in answer.body.lower()
    fresh = raw.presigned_url("GET", object_path("ranged"), 60, datetime.now(UTC))
    parts = urlsplit(fresh)
    assert raw.send("GET", f"{parts.path}?{parts.query}", {"Host": raw.netloc}).body == OBJECT


def test_a_skewed_date_is_request_time_too_skewed(raw: RawS3) -> None:
    for skew in (timedelta(minutes=20), -timedelta(minutes=20)):
        when = (datetime.now(UTC) + skew).replace(tzinfo=None)
        with mock.patch("botocore.auth.get_current_datetime", return_value=when):
            headers = raw.signed_headers("GET", "/")
        answer = raw.send("GET", "/", headers)
        assert answer.is_s3_error(403, "RequestTimeTooSkewed"), (skew, answer)


def test_an_unknown_access_key_is_invalid_access_key_id(raw: RawS3) -> None:
    headers = raw.signed_headers("GET", "/", credentials=Credentials("NOSUCHKEY0000000", "secret"))
    answer = raw.send("GET", "/", headers)
    assert answer.is_s3_error(403, "InvalidAccessKeyId"), answer


# ------------------------------------------------------------------ names
@pytest.mark.parametrize(
    "name",
    ["ab", "a" * 64, "UpperCase", "under_score", "-leading", "trailing-", "dots..twice", "192.168.1.1"],
)
def test_an_invalid_bucket_name_is_invalid_bucket_name(raw: RawS3, name: str) -> None:
    answer = raw.request("PUT", f"/{name}")
    assert answer.is_s3_error(400, "InvalidBucketName"), (name, answer)
    assert raw.request("HEAD", f"/{name}").status in (400, 404)


@pytest.mark.parametrize("key", ["k" * 1025, "é" * 513], ids=["1025-ascii", "1026-utf8-bytes"])
def test_a_key_over_1024_bytes_is_key_too_long(raw: RawS3, key: str) -> None:
    answer = raw.put(key, b"x")
    assert answer.is_s3_error(400, "KeyTooLongError"), answer
    raw.assert_serving()


def test_a_key_of_1024_bytes_is_stored(raw: RawS3) -> None:
    key = "k" * 1024
    assert raw.put(key, b"x").status == 200
    assert raw.exists(key)
