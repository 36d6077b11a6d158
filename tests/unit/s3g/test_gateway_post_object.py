"""POST Object through the gateway over a real OM (no datanodes: the files are empty), with forms built as
boto3's generate_presigned_post builds them (issue 33, item 3): the answers (204, 200, 201's PostResponse,
303 redirects), `${filename}`, metadata and tags, and every refusal decided before a byte is stored, with
Amazon's codes (AccessDenied "Invalid according to Policy: ...", SignatureDoesNotMatch, InvalidAccessKeyId,
EntityTooSmall, InvalidArgument, MalformedPOSTRequest, IncorrectNumberOfFilesInPostRequest, ...)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import socket
import uuid
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit
from xml.etree import ElementTree as ET

import pytest

from pyozone.s3g.auth import sigv4
from tests.unit.s3g.gateway_thread import GatewayOnThread

BUCKET = "forms"
NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"
EMPTY_MD5 = "d41d8cd98f00b204e9800998ecf8427e"


@pytest.fixture(scope="module")
def s3(gateway: GatewayOnThread):  # type: ignore[no-untyped-def]
    client = gateway.boto3(signature_version="s3v4")  # generate_presigned_post's SigV4 form
    client.create_bucket(Bucket=BUCKET)
    return client


def encode(
    fields: list[tuple[str, str]], file: tuple[str, bytes] | None = (("a.txt", b""))
) -> tuple[bytes, str]:
    """A multipart/form-data body as a browser sends it: the fields in order, then the file."""
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields
    ]
    if file is not None:
        filename, data = file
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
            f"Content-Type: application/octet-stream\r\n\r\n".encode()
            + data
            + b"\r\n"
        )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def post(
    gateway: GatewayOnThread,
    fields: list[tuple[str, str]],
    file: tuple[str, bytes] | None = ("a.txt", b""),
    path: str = f"/{BUCKET}",
    content_type: str | None = None,
) -> tuple[int, dict[str, str], str]:
    body, form_type = encode(fields, file)
    return send(gateway, body, content_type or form_type, path)


def send(
    gateway: GatewayOnThread, body: bytes, content_type: str, path: str = f"/{BUCKET}"
) -> tuple[int, dict[str, str], str]:
    connection = http.client.HTTPConnection("127.0.0.1", gateway.gateway.port, timeout=20)
    try:
        connection.request("POST", path, body, {"Content-Type": content_type})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()
    finally:
        connection.close()


def presigned(
    s3: Any,
    key: str,
    fields: dict[str, str] | None = None,
    conditions: list[Any] | None = None,
    expires: int = 300,
) -> list[tuple[str, str]]:
    form = s3.generate_presigned_post(BUCKET, key, Fields=fields, Conditions=conditions, ExpiresIn=expires)
    return list(form["fields"].items())


def error(body: str) -> tuple[str, str]:
    root = ET.fromstring(body)
    return root.findtext("Code") or "", root.findtext("Message") or ""


def test_a_boto3_form_stores_the_file_and_answers_204(gateway: GatewayOnThread, s3: Any) -> None:
    status, headers, body = post(gateway, presigned(s3, "plain.txt"))
    assert status == 204, body
    assert headers["ETag"] == f'"{EMPTY_MD5}"'
    assert headers["Location"].endswith(f"/{BUCKET}/plain.txt")
    assert s3.head_object(Bucket=BUCKET, Key="plain.txt")["ETag"] == f'"{EMPTY_MD5}"'


def test_filename_metadata_and_tags_come_from_the_form(gateway: GatewayOnThread, s3: Any) -> None:
    tagging = "<Tagging><TagSet><Tag><Key>team</Key><Value>web</Value></Tag></TagSet></Tagging>"
    fields = {"Content-Type": "text/plain", "x-amz-meta-owner": "ann", "tagging": tagging}
    conditions: list[Any] = [
        {"Content-Type": "text/plain"},
        ["starts-with", "$x-amz-meta-owner", ""],
        {"tagging": tagging},
    ]
    status, _, _ = post(gateway, presigned(s3, "up/${filename}", fields, conditions), ("photo.txt", b""))
    assert status == 204
    head = s3.head_object(Bucket=BUCKET, Key="up/photo.txt")
    assert head["ContentType"] == "text/plain"
    assert head["Metadata"] == {"owner": "ann"}
    assert s3.get_object_tagging(Bucket=BUCKET, Key="up/photo.txt")["TagSet"] == [
        {"Key": "team", "Value": "web"}
    ]


def test_success_action_status_201_answers_the_post_response(gateway: GatewayOnThread, s3: Any) -> None:
    fields = {"success_action_status": "201"}
    status, _, body = post(gateway, presigned(s3, "a b.txt", fields, [fields]))
    assert status == 201
    root = ET.fromstring(body)
    assert root.tag == f"{NS}PostResponse"
    assert root.findtext(f"{NS}Bucket") == BUCKET
    assert root.findtext(f"{NS}Key") == "a b.txt"
    assert root.findtext(f"{NS}ETag") == f'"{EMPTY_MD5}"'
    assert (root.findtext(f"{NS}Location") or "").endswith(f"/{BUCKET}/a%20b.txt")


@pytest.mark.parametrize(("asked", "answered"), [("200", 200), ("204", 204), ("404", 204)])
def test_other_statuses(gateway: GatewayOnThread, s3: Any, asked: str, answered: int) -> None:
    fields = {"success_action_status": asked}
    status, _, body = post(gateway, presigned(s3, "status.txt", fields, [fields]))
    assert (status, body) == (answered, "")


def test_success_action_redirect_is_303_with_bucket_key_and_etag(gateway: GatewayOnThread, s3: Any) -> None:
    fields = {"success_action_redirect": "https://app.example/done?x=1"}
    status, headers, _ = post(gateway, presigned(s3, "r.txt", fields, [fields]))
    assert status == 303
    location = urlsplit(headers["Location"])
    assert (location.scheme, location.netloc, location.path) == ("https", "app.example", "/done")
    assert parse_qs(location.query) == {
        "x": ["1"],
        "bucket": [BUCKET],
        "key": ["r.txt"],
        "etag": [f'"{EMPTY_MD5}"'],
    }


def test_an_invalid_redirect_is_ignored(gateway: GatewayOnThread, s3: Any) -> None:
    fields = {"success_action_redirect": "not a url"}
    assert post(gateway, presigned(s3, "r2.txt", fields, [fields]))[0] == 204


# ------------------------------------------------------------------ refusals
def test_a_field_no_condition_names_is_refused(gateway: GatewayOnThread, s3: Any) -> None:
    form = [*presigned(s3, "extra.txt"), ("x-amz-meta-sneaky", "1")]
    status, _, body = post(gateway, form)
    assert (status, *error(body)) == (
        403,
        "AccessDenied",
        "Invalid according to Policy: Extra input fields: x-amz-meta-sneaky",
    )
    form = [*presigned(s3, "ignored.txt"), ("x-ignore-me", "1")]  # x-ignore-* needs none
    assert post(gateway, form)[0] == 204


def test_a_condition_that_fails_is_refused(gateway: GatewayOnThread, s3: Any) -> None:
    form = [(k, "other.txt" if k == "key" else v) for k, v in presigned(s3, "named.txt")]
    status, _, body = post(gateway, form)
    assert (status, *error(body)) == (
        403,
        "AccessDenied",
        'Invalid according to Policy: Policy Condition failed: ["eq", "$key", "named.txt"]',
    )
    form = presigned(s3, "pre/${filename}")
    status, _, body = post(gateway, [(k, "elsewhere/x" if k == "key" else v) for k, v in form])
    assert (status, *error(body)) == (
        403,
        "AccessDenied",
        'Invalid according to Policy: Policy Condition failed: ["starts-with", "$key", "pre/"]',
    )


def test_a_form_for_another_bucket_is_refused(gateway: GatewayOnThread, s3: Any) -> None:
    s3.create_bucket(Bucket="other")
    status, _, body = post(gateway, presigned(s3, "k"), path="/other")
    assert (status, *error(body)) == (
        403,
        "AccessDenied",
        f'Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "{BUCKET}"]',
    )


def test_an_expired_policy_is_refused(gateway: GatewayOnThread, s3: Any) -> None:
    status, _, body = post(gateway, presigned(s3, "late.txt", expires=-10))
    assert (status, *error(body)) == (403, "AccessDenied", "Invalid according to Policy: Policy expired.")


def test_a_bad_signature_is_refused(gateway: GatewayOnThread, s3: Any) -> None:
    form = [(k, "0" * 64 if k == "x-amz-signature" else v) for k, v in presigned(s3, "sig.txt")]
    status, _, body = post(gateway, form)
    assert (status, error(body)[0]) == (403, "SignatureDoesNotMatch")
    policy = dict(form)["policy"]
    tampered = [(k, policy[:-4] + "AAAA" if k == "policy" else v) for k, v in presigned(s3, "sig.txt")]
    assert error(post(gateway, tampered)[2])[0] == "SignatureDoesNotMatch"


def test_an_unknown_access_key_is_refused(gateway: GatewayOnThread) -> None:
    import boto3
    from botocore.config import Config

    stranger = boto3.client(
        "s3",
        endpoint_url=gateway.url,
        aws_access_key_id="nobody",
        aws_secret_access_key="x" * 40,
        region_name="us-east-1",
        config=Config(signature_version="s3v4"),
    )
    form = stranger.generate_presigned_post(BUCKET, "k")["fields"]
    status, _, body = post(gateway, list(form.items()))
    assert (status, error(body)[0]) == (403, "InvalidAccessKeyId")


def test_a_file_outside_the_length_range_is_refused(gateway: GatewayOnThread, s3: Any) -> None:
    status, _, body = post(gateway, presigned(s3, "small.txt", conditions=[["content-length-range", 1, 10]]))
    assert (status, error(body)[0]) == (400, "EntityTooSmall")
    assert (
        error(
            post(gateway, presigned(s3, "big.txt", conditions=[["content-length-range", 0, 0]]), ("b", b"x"))[
                2
            ]
        )[0]
        == "EntityTooLarge"
    )
    with pytest.raises(Exception, match="404"):
        s3.head_object(Bucket=BUCKET, Key="small.txt")


def test_missing_parts_are_refused(gateway: GatewayOnThread, s3: Any) -> None:
    status, _, body = post(gateway, presigned(s3, "nofile.txt"), file=None)
    assert (status, error(body)[0]) == (400, "IncorrectNumberOfFilesInPostRequest")
    without_key = [(k, v) for k, v in presigned(s3, "k") if k != "key"]
    status, _, body = post(gateway, without_key)
    assert (status, error(body)[0]) == (400, "InvalidArgument")
    assert "must contain a field named 'key'" in error(body)[1]
    without_policy = [(k, v) for k, v in presigned(s3, "k") if k != "policy"]
    assert error(post(gateway, without_policy)[2])[0] == "InvalidArgument"


def test_anonymous_sigv2_tokens_and_bad_bodies_are_refused(gateway: GatewayOnThread, s3: Any) -> None:
    status, _, body = post(gateway, [("key", "anon.txt")])
    assert (status, error(body)[0]) == (403, "AccessDenied")
    status, _, body = post(gateway, [("key", "anon.txt")], path="/no-such-bucket")
    assert (status, error(body)[0]) == (404, "NoSuchBucket")
    v2 = [("key", "k"), ("AWSAccessKeyId", "tester"), ("policy", "e30="), ("signature", "x")]
    assert post(gateway, v2)[0] == 501
    token = {"x-amz-security-token": "t"}
    assert error(post(gateway, presigned(s3, "t.txt", token, [token]))[2])[0] == "InvalidToken"
    status, _, body = post(gateway, presigned(s3, "k"), content_type="text/plain")
    assert (status, error(body)[0]) == (412, "PreconditionFailed")
    connection = http.client.HTTPConnection("127.0.0.1", gateway.gateway.port, timeout=20)
    connection.request(
        "POST",
        f"/{BUCKET}",
        b"--b\r\nnot a header\r\n\r\n--b--\r\n",
        {"Content-Type": "multipart/form-data; boundary=b"},
    )
    response = connection.getresponse()
    assert (response.status, error(response.read().decode())[0]) == (400, "MalformedPOSTRequest")
    connection.close()


def test_unimplemented_fields_are_refused(gateway: GatewayOnThread, s3: Any) -> None:
    for fields in ({"acl": "aws-exec-read"}, {"x-amz-server-side-encryption": "aws:kms"}):
        assert post(gateway, presigned(s3, "k", fields, [fields]))[0] == 501


def test_the_sse_field_encrypts_as_put_object_and_the_answer_says_so(
    gateway: GatewayOnThread, s3: Any
) -> None:
    """R36 F10: `x-amz-server-side-encryption: AES256` stores the file SSE-S3, and the answer names the
    encryption, also of a bucket's default encryption."""
    sse = {"x-amz-server-side-encryption": "AES256"}
    status, headers, body = post(gateway, presigned(s3, "sse.txt", sse, [sse]))  # empty: no datanodes here
    assert status == 204, body
    assert headers["x-amz-server-side-encryption"] == "AES256"
    got = s3.get_object(Bucket=BUCKET, Key="sse.txt")
    assert got["ServerSideEncryption"] == "AES256" and got["Body"].read() == b""
    rule = {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
    s3.put_bucket_encryption(Bucket=BUCKET, ServerSideEncryptionConfiguration={"Rules": [rule]})
    try:
        status, headers, body = post(gateway, presigned(s3, "default.txt"))
        assert status == 204 and headers["x-amz-server-side-encryption"] == "AES256", body
    finally:
        s3.delete_bucket_encryption(Bucket=BUCKET)


def test_the_acl_field(gateway: GatewayOnThread, s3: Any) -> None:
    """Issue 33, item 5: the form's canned ACL is the key's where the bucket's ACLs apply;
    AccessControlListNotSupported where they are disabled (a new bucket's BucketOwnerEnforced), nothing
    stored; a name that is no canned ACL InvalidArgument."""
    public = {"acl": "public-read"}
    status, _, body = post(gateway, presigned(s3, "acl.txt", public, [public]))
    assert (status, error(body)[0]) == (400, "AccessControlListNotSupported")
    assert post(gateway, presigned(s3, "acl.txt", {"acl": "private"}, [{"acl": "private"}]))[0] == 204
    writer = {"Rules": [{"ObjectOwnership": "ObjectWriter"}]}
    s3.put_bucket_ownership_controls(Bucket=BUCKET, OwnershipControls=writer)
    try:
        assert post(gateway, presigned(s3, "acl.txt", public, [public]))[0] == 204
        grants = s3.get_object_acl(Bucket=BUCKET, Key="acl.txt")["Grants"]
        everyone = "http://acs.amazonaws.com/groups/global/AllUsers"
        assert {"Grantee": {"Type": "Group", "URI": everyone}, "Permission": "READ"} in grants
        bad = {"acl": "public"}
        status, _, body = post(gateway, presigned(s3, "bad.txt", bad, [bad]))
        assert (status, error(body)[0]) == (400, "InvalidArgument")
    finally:
        enforced = {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}
        s3.put_bucket_ownership_controls(Bucket=BUCKET, OwnershipControls=enforced)


def test_a_key_too_long_and_a_repeated_field_are_refused(gateway: GatewayOnThread, s3: Any) -> None:
    status, _, body = post(gateway, presigned(s3, "${filename}"), ("é" * 513, b""))  # 1026 bytes
    assert (status, error(body)[0]) == (400, "KeyTooLongError")
    status, _, body = post(gateway, [*presigned(s3, "twice"), ("key", "twice")])
    assert (status, error(body)[0]) == (400, "InvalidArgument")


# ------------------------------------------------------------------ review R28
def test_filename_is_the_text_after_the_last_slash(gateway: GatewayOnThread, s3: Any) -> None:
    """Review R28 F3: Amazon keeps only what follows the last / or \\ of the file's name."""
    form = presigned(s3, "up/${filename}", conditions=[["starts-with", "$key", "up/"]])
    for filename, key in (("../../escape", "up/escape"), ("C:\\Program Files\\d\\f.txt", "up/f.txt")):
        assert post(gateway, form, (filename, b""))[0] == 204
        assert s3.head_object(Bucket=BUCKET, Key=key)["ETag"] == f'"{EMPTY_MD5}"'
    body, content_type = encode(form, None)
    rfc2231 = body.replace(
        b"--\r\n",
        b"\r\nContent-Disposition: form-data; name=file; filename*=UTF-8''..%2F..%2Frfc2231\r\n\r\n\r\n--"
        + content_type.split("=")[1].encode()
        + b"--\r\n",
    )
    assert send(gateway, rfc2231, content_type)[0] == 204
    assert s3.head_object(Bucket=BUCKET, Key="up/rfc2231")["ETag"] == f'"{EMPTY_MD5}"'
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="up/")["Contents"]]
    assert not [key for key in keys if ".." in key or "\\" in key]


def test_a_filename_that_is_not_utf8_is_refused(gateway: GatewayOnThread, s3: Any) -> None:
    """Review R28 F4: not stored as U+FFFD (two such names would be one key)."""
    body, content_type = encode(presigned(s3, "up/${filename}"), ("NAME", b""))
    status, _, answer = send(gateway, body.replace(b"NAME", b"\xff\xfe.txt"), content_type)
    assert (status, error(answer)[0]) == (400, "MalformedPOSTRequest")


def test_the_5_gb_bound_holds_whatever_the_length_range(
    gateway: GatewayOnThread, s3: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review R28 F5: with the bound lowered to 0 bytes, a 1-byte file stands for one over 5 GB."""
    from pyozone.s3g import post_object

    monkeypatch.setattr(post_object, "MAX_PUT_BYTES", 0)
    for conditions in ([], [["content-length-range", 0, 10**12]]):
        status, _, body = post(gateway, presigned(s3, "cap.txt", conditions=conditions), ("f", b"x"))
        assert (status, error(body)[0]) == (400, "EntityTooLarge"), conditions


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("x-amz-credential", lambda v: v.replace("/us-east-1/", "/us east/")),
        ("x-amz-date", lambda v: "20261399" + v[8:]),
    ],
)
def test_a_credential_scope_om_refuses_is_invalid_argument(
    gateway: GatewayOnThread, s3: Any, field: str, value: Any
) -> None:
    """Review R28 F6: a form has no Authorization header to be malformed."""
    form = presigned(s3, "scope.txt")
    if field == "x-amz-date":  # the credential's date follows, else parse_post refuses the mismatch
        date = value(dict(form)["x-amz-date"])[:8]
        form = [(k, v.replace(v.split("/")[1], date) if k == "x-amz-credential" else v) for k, v in form]
    status, _, body = post(gateway, [(k, value(v) if k == field else v) for k, v in form])
    assert (status, error(body)[0]) == (400, "InvalidArgument"), body
    assert "<ArgumentName>x-amz-credential</ArgumentName>" in body


def test_a_deeply_nested_signed_policy_is_invalid(gateway: GatewayOnThread) -> None:
    """Review R28 F7: json's RecursionError is InvalidPolicyDocument, not a 500."""
    access_key, secret = gateway.secret("tester")
    now = datetime.now(UTC)
    date, stamp = now.strftime("%Y%m%d"), now.strftime("%Y%m%dT%H%M%SZ")
    policy = base64.b64encode(
        ('{"expiration":"2099-01-01T00:00:00Z","conditions":[' + "[" * 3000 + "]" * 3000 + "]}").encode()
    ).decode()
    signature = hmac.new(sigv4.signing_key(secret, date, "us-east-1", "s3"), policy.encode(), hashlib.sha256)
    form = [
        ("key", "deep.txt"),
        ("x-amz-algorithm", "AWS4-HMAC-SHA256"),
        ("x-amz-credential", f"{access_key}/{date}/us-east-1/s3/aws4_request"),
        ("x-amz-date", stamp),
        ("policy", policy),
        ("x-amz-signature", signature.hexdigest()),
    ]
    status, _, body = post(gateway, form)
    assert (status, error(body)[0]) == (400, "InvalidPolicyDocument"), body


@pytest.mark.parametrize(
    "field",
    [
        "Content-Type",
        "Content-Disposition",
        "Cache-Control",
        "Content-Encoding",
        "Expires",
        "x-amz-meta-note",
        "success_action_redirect",
    ],
)
@pytest.mark.parametrize("control", ["\r\nSet-Cookie: a=b", "\n", "\x00", "\x0b", "\x7f"])
def test_a_field_a_header_cannot_carry_is_refused(
    gateway: GatewayOnThread, s3: Any, field: str, control: str
) -> None:
    """Review R28 F8, F9: what would be sent back as a header (stored metadata, the redirect's Location)
    holds no control character but TAB, as no PUT's header can; refused before anything is stored."""
    key = f"ctl-{uuid.uuid4().hex}"
    fields = {field: f"https://app.example/a{control}b"}
    form = presigned(s3, key, fields, [["starts-with", f"${field}", ""]])
    status, _, body = post(gateway, form)
    assert (status, error(body)[0]) == (400, "InvalidArgument"), body
    assert f"<ArgumentName>{field.lower() if field.startswith('x-') else field}</ArgumentName>" in body
    with pytest.raises(Exception, match="404"):
        s3.head_object(Bucket=BUCKET, Key=key)


def test_a_tab_in_a_stored_field_is_kept(gateway: GatewayOnThread, s3: Any) -> None:
    fields = {"x-amz-meta-note": "a\tb"}
    assert post(gateway, presigned(s3, "tab.txt", fields, [fields]))[0] == 204
    assert s3.head_object(Bucket=BUCKET, Key="tab.txt")["Metadata"] == {"note": "a\tb"}


def test_anonymous_bodies_are_refused_within_the_pre_data_bound(gateway: GatewayOnThread) -> None:
    """Review R28 F1, F2, F10 through the gateway, no credentials: padding after a boundary, parts with
    8,000-byte names and empty values, tiny empty parts: each refused before the file, within 20 KB."""
    name = b"x-amz-meta-" + b"a" * 8000
    long_names = b'\r\nContent-Disposition: form-data; name="' + name + b'"\r\n\r\n\r\n--B'
    tiny = b'\r\nContent-Disposition: form-data; name="x-amz-meta-a"\r\n\r\n\r\n--B'
    for body, code in (
        (b"--B" + b" " * (64 << 10) + b"\r\n", "MalformedPOSTRequest"),
        (b"--B" + long_names * 30 + b"--\r\n", "MaxPostPreDataLengthExceededError"),
        (b"--B" + tiny * 1000 + b"--\r\n", "MaxPostPreDataLengthExceededError"),
    ):
        status, _, answer = send(gateway, body, "multipart/form-data; boundary=B")
        assert (status, error(answer)[0]) == (400, code)


@pytest.mark.parametrize(
    ("md5", "expected"),
    [("1B2M2Y8AsgTpgAmY7PhCfg==", 204), ("XrY7u+Ae7tCTyyK7j1rNww==", 400)],  # the empty file's, another's
    ids=["right", "wrong"],
)
def test_a_content_md5_field_is_checked(gateway: GatewayOnThread, s3: Any, md5: str, expected: int) -> None:
    """The file's Content-MD5 field, as on a PUT: a wrong one is BadDigest and stores nothing."""
    key = f"md5-{expected}.txt"
    status, _, body = post(gateway, presigned(s3, key, {"Content-MD5": md5}, [{"Content-MD5": md5}]))
    assert status == expected, body
    if expected == 400:
        assert error(body)[0] == "BadDigest"
        assert "Contents" not in s3.list_objects_v2(Bucket=BUCKET, Prefix=key)


def test_a_checksum_field_is_not_implemented(gateway: GatewayOnThread, s3: Any) -> None:
    value = "AAAAAA=="
    form = presigned(s3, "crc.txt", {"x-amz-checksum-crc32": value}, [{"x-amz-checksum-crc32": value}])
    status, _, body = post(gateway, form)
    assert (status, error(body)[0]) == (501, "NotImplemented")


def test_an_object_lock_field_is_not_implemented(gateway: GatewayOnThread, s3: Any) -> None:
    """Never stored without the retention it asks for (issue 33, item 6: the gateway's header check no longer
    refuses it for every write)."""
    form = presigned(
        s3, "lock.txt", {"x-amz-object-lock-legal-hold": "ON"}, [{"x-amz-object-lock-legal-hold": "ON"}]
    )
    status, _, body = post(gateway, form)
    assert (status, error(body)[0]) == (501, "NotImplemented")
    assert "Contents" not in s3.list_objects_v2(Bucket=BUCKET, Prefix="lock.txt")


def test_an_anonymous_form_is_refused_at_its_bound_without_more_bytes(gateway: GatewayOnThread) -> None:
    """R30's P1: the form reached the parser only once 8 MiB of it were held (two 4 MiB pieces), so 30 KB
    before the file, then silence, got no answer, and every such connection held megabytes. Now the parser
    sees bytes as they come: 30 KB of one field's value, and the answer comes without another byte."""
    head = (
        f"POST /{BUCKET} HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=B\r\n"
        f"Content-Length: {1 << 30}\r\n\r\n"
    ).encode()
    part = b'--B\r\nContent-Disposition: form-data; name="x-amz-meta-a"\r\n\r\n'
    with socket.create_connection(("127.0.0.1", gateway.gateway.port), timeout=10) as connection:
        connection.sendall(head + part + b"v" * 30_000)
        answer = connection.recv(4096)
    assert answer.startswith(b"HTTP/1.1 400") and b"MaxPostPreDataLengthExceededError" in answer


def test_an_error_echoing_control_characters_is_still_xml(gateway: GatewayOnThread) -> None:
    """R30's P3: a field named with a control character, given twice (refused before authentication),
    was echoed raw into a document no XML parser reads."""
    body, content_type = encode([("a\x01b", "1"), ("a\x01b", "2")])
    status, _, answer = send(gateway, body, content_type)
    assert status == 400
    assert ET.fromstring(answer).findtext("ArgumentName") == "a\\x01b"


def test_a_form_in_a_versioned_bucket_answers_its_version(gateway: GatewayOnThread, s3: Any) -> None:
    """R32's F7c: POST Object answers x-amz-version-id in a versioned bucket, as PutObject does."""
    bucket = "versioned-forms"
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    form = s3.generate_presigned_post(bucket, "v.txt", ExpiresIn=300)
    status, headers, body = post(gateway, list(form["fields"].items()), path=f"/{bucket}")
    assert status == 204, body
    version = s3.head_object(Bucket=bucket, Key="v.txt")["VersionId"]
    assert version != "null" and headers["x-amz-version-id"] == version
