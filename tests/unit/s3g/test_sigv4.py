"""SigV4 verification against what botocore, minio-py and pyarrow (AWS C++ SDK) really sign and send, and
S3's refusal for each element tampered with or missing."""

from __future__ import annotations

import dataclasses
import io
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import botocore.auth
import botocore.credentials
import pytest
from botocore.awsrequest import AWSRequest
from multidict import CIMultiDict

from pyozone.s3g.auth import sigv4
from pyozone.s3g.errors import S3Error, S3ErrorCode
from tests.unit.s3g.wire import (
    ACCESS_KEY,
    REGION,
    SECRET,
    Captured,
    botocore_requests,
    minio_requests,
)

KEYS = ["plain.txt", "a b", "a+b", "tilde~x", "é/ü/日本", "k=v&x=y", "a%b", "sp  two/ /x", "!*'()$@:;,"]
CREDENTIALS = botocore.credentials.Credentials(ACCESS_KEY, SECRET)


def verify(request: Captured, now: datetime | None = None, region: str | None = None) -> sigv4.SignedRequest:
    """The gateway's sequence: parse, derive the key, verify."""
    signed = sigv4.parse(request.raw_query, request.headers, now or datetime.now(UTC), region=region)
    key = sigv4.signing_key(SECRET, signed.date, signed.region, signed.service)
    sigv4.verify(signed, key, request.method, request.raw_path, request.raw_query, request.headers)
    return signed


def refused(request: Captured, code: S3ErrorCode, now: datetime | None = None) -> S3Error:
    with pytest.raises(S3Error) as caught:
        verify(request, now)
    assert caught.value.code is code, caught.value.message
    return caught.value


def with_headers(request: Captured, **changes: str | None) -> Captured:
    headers = CIMultiDict(request.headers)
    for name, value in changes.items():
        name = name.replace("_", "-")
        headers.popall(name, None)
        if value is not None:
            headers[name] = value
    return dataclasses.replace(request, headers=headers)


def botocore_calls(client: Any) -> None:
    for key in KEYS:
        client.put_object(Bucket="bkt", Key=key, Body=b"hello", Metadata={"who": "me  and   you"})
        client.get_object(Bucket="bkt", Key=key, Range="bytes=0-1")
    client.list_objects_v2(Bucket="bkt", Prefix="a b+c~é=&", Delimiter="/", EncodingType="url")
    client.create_multipart_upload(Bucket="bkt", Key="a b")
    client.upload_part(Bucket="bkt", Key="a b", UploadId="u+1/=", PartNumber=2, Body=b"x")
    client.delete_objects(Bucket="bkt", Delete={"Objects": [{"Key": "a b"}]})
    client.copy_object(Bucket="bkt", Key="c", CopySource={"Bucket": "bkt", "Key": "a b+é"})
    client.put_object_tagging(Bucket="bkt", Key="a", Tagging={"TagSet": [{"Key": "k", "Value": "v"}]})


@pytest.mark.parametrize("endpoint", ["https://s3.test", "http://127.0.0.1:9878"])
def test_botocore_requests_verify(endpoint: str) -> None:
    requests = botocore_requests(botocore_calls, endpoint=endpoint)
    assert len(requests) == 2 * len(KEYS) + 6
    for request in requests:
        signed = verify(request, region=REGION)
        assert (signed.access_key, signed.region, signed.service) == (ACCESS_KEY, REGION, "s3")
        assert not signed.presigned


def test_botocore_unsigned_payload_and_virtual_host_style_verify() -> None:
    requests = botocore_requests(
        lambda c: c.put_object(Bucket="bkt", Key="a b", Body=b"x"),
        endpoint="https://s3.test",
        s3={"payload_signing_enabled": False, "addressing_style": "virtual"},
        request_checksum_calculation="when_required",
    )
    (request,) = requests
    assert request.headers["Host"] == "bkt.s3.test" and request.raw_path == "/a%20b"
    assert verify(request).payload_hash == sigv4.UNSIGNED_PAYLOAD


def test_minio_requests_verify() -> None:
    def calls(client: Any) -> None:
        for key in KEYS:
            client.put_object("bkt", key, io.BytesIO(b"hello"), 5, metadata={"x-amz-meta-a": "b"})
        list(client.list_objects("bkt", prefix="a b+=&é", recursive=False))

    requests = minio_requests(calls)
    assert len(requests) == len(KEYS) + 1
    for request in requests:
        verify(request)


def test_pyarrow_requests_verify(pyarrow_requests: list[Captured]) -> None:
    assert len(pyarrow_requests) == 8  # create, upload part, complete, head; per key
    for request in pyarrow_requests:
        verify(request)


def presigned(url: str) -> Captured:
    parts = urlsplit(url)
    return Captured("GET", parts.path, parts.query, CIMultiDict({"Host": parts.netloc}), b"")


@pytest.mark.parametrize("key", KEYS)
def test_presigned_urls_verify(key: str) -> None:
    urls: list[str] = []
    botocore_requests(
        lambda c: urls.append(
            c.generate_presigned_url("get_object", {"Bucket": "bkt", "Key": key}, ExpiresIn=60)
        ),
        signature_version="s3v4",  # boto3 presigns with SigV2 unless told
    )
    signed = verify(presigned(urls[0]))
    assert signed.presigned and signed.expires == 60 and signed.payload_hash == sigv4.UNSIGNED_PAYLOAD


def test_presigned_url_with_operation_params_and_s3sigv4queryauth() -> None:
    request = AWSRequest(
        "GET", "http://127.0.0.1:9878/bkt/a%20b?response-content-type=text%2Fplain&versionId="
    )
    botocore.auth.S3SigV4QueryAuth(CREDENTIALS, "s3", REGION, expires=600).add_auth(request)
    signed = verify(presigned(request.url))
    assert signed.expires == 600


def test_presigned_expiry_and_bounds() -> None:
    request = AWSRequest("GET", "http://127.0.0.1:9878/bkt/k")
    botocore.auth.S3SigV4QueryAuth(CREDENTIALS, "s3", REGION, expires=60).add_auth(request)
    url = presigned(request.url)
    now = datetime.now(UTC)
    assert (
        refused(url, S3ErrorCode.AccessDenied, now + timedelta(seconds=120)).message == "Request has expired"
    )
    assert (
        refused(url, S3ErrorCode.AccessDenied, now - timedelta(minutes=20)).message
        == "Request is not valid yet"
    )
    for expires in ("0", "604801", "1e3"):
        query = url.raw_query.replace("X-Amz-Expires=60", f"X-Amz-Expires={expires}")
        refused(dataclasses.replace(url, raw_query=query), S3ErrorCode.AuthorizationQueryParametersError)
    without_date = "&".join(p for p in url.raw_query.split("&") if not p.startswith("X-Amz-Date="))
    refused(dataclasses.replace(url, raw_query=without_date), S3ErrorCode.AuthorizationQueryParametersError)
    sha1 = url.raw_query.replace("AWS4-HMAC-SHA256", "AWS4-HMAC-SHA1")
    refused(dataclasses.replace(url, raw_query=sha1), S3ErrorCode.AuthorizationQueryParametersError)
    both = with_headers(url, authorization="AWS4-HMAC-SHA256 Credential=x")
    assert refused(both, S3ErrorCode.InvalidArgument).extra["ArgumentName"] == "Authorization"
    refused(dataclasses.replace(url, raw_query=url.raw_query + "&extra=1"), S3ErrorCode.SignatureDoesNotMatch)
    refused(with_headers(url, x_amz_meta_a="1"), S3ErrorCode.AccessDenied)


def test_generic_sigv4auth_verifies_where_double_encoding_changes_nothing() -> None:
    """SigV4Auth (non-S3 services) encodes the path twice; S3 does not, so only plain paths agree."""
    for path, accepted in [("/bkt/plain-key.txt", True), ("/bkt/a%20b", False)]:
        request = AWSRequest(
            "GET", f"http://127.0.0.1:9878{path}", headers={"X-Amz-Content-SHA256": "UNSIGNED-PAYLOAD"}
        )
        botocore.auth.SigV4Auth(CREDENTIALS, "s3", REGION).add_auth(request)
        captured = Captured("GET", path, "", CIMultiDict(request.headers, Host="127.0.0.1:9878"), b"")
        if accepted:
            verify(captured)
        else:
            refused(captured, S3ErrorCode.SignatureDoesNotMatch)


def signed_put(**headers: str) -> Captured:
    request = AWSRequest("PUT", "http://127.0.0.1:9878/bkt/a%20b?tagging=&x=1", data=b"hi", headers=headers)
    botocore.auth.S3SigV4Auth(CREDENTIALS, "s3", REGION).add_auth(request)
    received = CIMultiDict(request.headers)
    received["Host"] = "127.0.0.1:9878"
    return Captured("PUT", "/bkt/a%20b", "tagging=&x=1", received, b"hi")


def test_date_header_instead_of_x_amz_date() -> None:
    request = signed_put(Date="set by the signer", **{"x-amz-meta-k": " a   b "})
    assert "X-Amz-Date" not in request.headers
    assert verify(request).amz_date.endswith("Z")
    refused(request, S3ErrorCode.RequestTimeTooSkewed, datetime.now(UTC) + timedelta(hours=1))


def test_each_signed_element_tampered_fails() -> None:
    request = signed_put(**{"x-amz-meta-k": "v", "Content-Type": "text/plain"})
    verify(request)
    other_hex = "1" if request.headers["Authorization"].endswith("0") else "0"  # a digit the signature lacks
    mismatches = [
        dataclasses.replace(request, method="POST"),
        dataclasses.replace(request, raw_path="/bkt/a%20c"),
        dataclasses.replace(request, raw_path="/bkt/a%2520b"),
        dataclasses.replace(request, raw_query="tagging=&x=2"),
        dataclasses.replace(request, raw_query="tagging=&x=1&y"),
        with_headers(request, x_amz_meta_k="w"),
        with_headers(request, content_type="text/html"),
        with_headers(request, host="other:9878"),
        with_headers(request, x_amz_content_sha256="0" * 64),
        with_headers(
            request, x_amz_date=(datetime.now(UTC) + timedelta(seconds=1)).strftime("%Y%m%dT%H%M%SZ")
        ),
        with_headers(request, authorization=request.headers["Authorization"][:-1] + other_hex),
        with_headers(request, authorization=request.headers["Authorization"][:-1] + "é"),
    ]
    for tampered in mismatches:
        refused(tampered, S3ErrorCode.SignatureDoesNotMatch)
    error = refused(with_headers(request, x_amz_meta_new="1"), S3ErrorCode.AccessDenied)
    assert error.extra["HeadersNotSigned"] == "x-amz-meta-new"
    signed = sigv4.parse(request.raw_query, request.headers, datetime.now(UTC))
    wrong_key = sigv4.signing_key("not-the-secret", signed.date, signed.region, signed.service)
    with pytest.raises(S3Error) as caught:
        sigv4.verify(signed, wrong_key, request.method, request.raw_path, request.raw_query, request.headers)
    assert caught.value.code is S3ErrorCode.SignatureDoesNotMatch
    assert caught.value.extra["CanonicalRequest"].startswith("PUT\n/bkt/a%20b\ntagging=&x=1\n")


def test_equivalent_wire_encodings_verify() -> None:
    """Clients differ in what they leave raw; S3 canonicalises, so each spelling verifies."""
    request = signed_put()
    verify(dataclasses.replace(request, raw_query="x=1&tagging"))
    verify(dataclasses.replace(request, raw_path="/%62kt/a%20%62"))
    raw = AWSRequest(
        "GET", "http://h/bkt/k%3Dv%40%3A%24%2C%3B%2B", headers={"X-Amz-Content-SHA256": "UNSIGNED-PAYLOAD"}
    )
    botocore.auth.S3SigV4Auth(CREDENTIALS, "s3", REGION).add_auth(raw)
    headers = CIMultiDict(raw.headers, Host="h")
    verify(Captured("GET", "/bkt/k=v@:$,;%2B", "", headers, b""))  # RFC 3986 sub-delims left raw
    verify(dataclasses.replace(request, raw_query="x=%31&tagging="))
    verify(dataclasses.replace(request, raw_query="tagging=&x=1&"))


def test_refusals_of_missing_or_malformed_auth() -> None:
    request = signed_put()
    now = datetime.now(UTC)
    assert (
        refused(with_headers(request, authorization=None), S3ErrorCode.AccessDenied).message
        == "Access Denied"
    )
    refused(with_headers(request, authorization="AWS AK:c2lnbmF0dXJl"), S3ErrorCode.InvalidRequest)
    refused(with_headers(request, authorization="Bearer token"), S3ErrorCode.InvalidArgument)
    refused(
        with_headers(request, authorization="AWS4-ECDSA-P256-SHA256 Credential=x"), S3ErrorCode.NotImplemented
    )
    auth = request.headers["Authorization"]
    for broken in [
        auth.split(", Signature=")[0],
        auth.replace("/aws4_request", "/aws5_request"),
        auth.replace(f"Credential={ACCESS_KEY}/", "Credential="),
        auth.replace("SignedHeaders=", "SignedHeaders=Host;"),
        auth.replace("/s3/", "/iam/"),
        auth.replace(now.strftime("%Y%m%d"), (now - timedelta(days=1)).strftime("%Y%m%d")),
        auth + ", Signature=00",
    ]:
        refused(with_headers(request, authorization=broken), S3ErrorCode.AuthorizationHeaderMalformed)
    for dates in ({"x_amz_date": None}, {"x_amz_date": "yesterday"}, {"x_amz_date": None, "date": "soon"}):
        error = refused(with_headers(request, **dates), S3ErrorCode.AccessDenied)
        assert error.message == "AWS authentication requires a valid Date or x-amz-date header"
    error = refused(with_headers(request, x_amz_content_sha256=None), S3ErrorCode.InvalidRequest)
    assert error.message == "Missing required header for this request: x-amz-content-sha256"
    refused(with_headers(request, x_amz_content_sha256="abc"), S3ErrorCode.InvalidArgument)
    skewed = refused(request, S3ErrorCode.RequestTimeTooSkewed, now + timedelta(minutes=16))
    assert skewed.extra["MaxAllowedSkewMilliseconds"] == "900000"
    verify(request, now + timedelta(minutes=14))
    with pytest.raises(S3Error) as caught:
        verify(request, region="eu-west-1")
    assert caught.value.code is S3ErrorCode.AuthorizationHeaderMalformed
    assert caught.value.extra["Region"] == "eu-west-1"


def test_undecodable_bytes_are_refused_not_a_traceback() -> None:
    """aiohttp keeps bytes that are not UTF-8 as surrogates; they are signed as the bytes that came."""
    request = signed_put()
    odd = with_headers(request, x_amz_meta_a="\udce9")
    auth = odd.headers["Authorization"].replace("SignedHeaders=host;", "SignedHeaders=host;x-amz-meta-a;")
    odd = with_headers(odd, authorization=auth.replace(f"/{REGION}/", "/us-\udce9/"))
    refused(
        dataclasses.replace(odd, raw_path="/bkt/\udce9", raw_query="a=\udce9"),
        S3ErrorCode.SignatureDoesNotMatch,
    )


# ------------------------------------------------------------------ POST forms (browser uploads)
def botocore_post_fields() -> dict[str, str]:
    """The SigV4 fields botocore's S3SigV4PostAuth (generate_presigned_post's signer) puts in a form."""
    request = AWSRequest("POST", "http://s3.example/bkt")
    request.context["s3-presign-post-fields"] = {"key": "k"}
    request.context["s3-presign-post-policy"] = {"expiration": "2030-01-01T00:00:00Z", "conditions": []}
    botocore.auth.S3SigV4PostAuth(CREDENTIALS, "s3", REGION).add_auth(request)
    return dict(request.context["s3-presign-post-fields"])


def test_a_botocore_post_form_verifies() -> None:
    fields = botocore_post_fields()
    signed = sigv4.parse_post(fields, region=REGION)
    assert (signed.access_key, signed.region, signed.service) == (ACCESS_KEY, REGION, "s3")
    key = sigv4.signing_key(SECRET, signed.date, signed.region, signed.service)
    sigv4.verify_post(signed, key, fields["policy"])
    with pytest.raises(S3Error) as e:
        sigv4.verify_post(signed, key, fields["policy"][:-4] + "AAAA")
    assert e.value.code is S3ErrorCode.SignatureDoesNotMatch
    assert e.value.extra["StringToSign"] == fields["policy"][:-4] + "AAAA"


@pytest.mark.parametrize(
    ("change", "argument"),
    [
        ({"x-amz-credential": None}, "x-amz-credential"),
        ({"x-amz-signature": None}, "x-amz-signature"),
        ({"x-amz-algorithm": "AWS4-ECDSA-P256-SHA256"}, "x-amz-algorithm"),
        ({"x-amz-credential": "only/three/parts"}, "x-amz-credential"),
        ({"x-amz-date": "20300101"}, "x-amz-date"),
        ({"x-amz-date": "20000101T000000Z"}, "x-amz-date"),  # not the credential's date
    ],
)
def test_a_post_form_s_bad_sigv4_fields_are_invalid_arguments(
    change: dict[str, str | None], argument: str
) -> None:
    fields = botocore_post_fields()
    for name, value in change.items():
        if value is None:
            del fields[name]
        else:
            fields[name] = value
    with pytest.raises(S3Error) as e:
        sigv4.parse_post(fields)
    assert (e.value.code, e.value.extra["ArgumentName"]) == (S3ErrorCode.InvalidArgument, argument)


def test_a_post_form_for_another_region_or_service_is_refused() -> None:
    fields = botocore_post_fields()
    with pytest.raises(S3Error) as e:
        sigv4.parse_post(fields, region="eu-west-1")
    assert e.value.code is S3ErrorCode.InvalidArgument
    fields["x-amz-credential"] = fields["x-amz-credential"].replace("/s3/", "/ec2/")
    with pytest.raises(S3Error) as e:
        sigv4.parse_post(fields)
    assert "incorrect service 'ec2'" in e.value.message
