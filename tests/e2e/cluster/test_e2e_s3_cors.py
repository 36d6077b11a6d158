"""A bucket's CORS configuration through the S3 gateway of a live cluster (issue 33, item 3), tested from
Amazon's reference and S3's recorded answers: boto3's put/get/delete_bucket_cors and their refusals (an
empty configuration, 101 rules, a method S3 does not allow, two wildcards in an origin, no Content-MD5 or
checksum, a user who does not own the bucket, a missing bucket, over 64 KB, a negative MaxAgeSeconds),
raw HTTP preflights (matching rules, wildcard origins and headers, a header not allowed, no
configuration, no Origin or method, 101 headers asked), the CORS headers of actual requests
and errors, and the rules kept across a restart of OM and the gateway."""

from __future__ import annotations

import http.client
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from tests.e2e.cluster.s3_cluster import S3Endpoint, getsecret, s3_cluster
from tests.e2e.cluster.s3_raw import before_sign, strip_digests

BUCKET = "web"
APP = "https://app.example"
RULES: dict[str, Any] = {
    "CORSRules": [
        {"ID": "app", "AllowedOrigins": [APP, "https://*.app.example"], "AllowedMethods": ["GET", "PUT"],
         "AllowedHeaders": ["x-amz-*", "Content-Type"], "ExposeHeaders": ["ETag", "x-amz-request-id"],
         "MaxAgeSeconds": 3000},
        {"AllowedOrigins": ["*"], "AllowedMethods": ["GET", "HEAD"]},
    ]
}  # fmt: skip
VARY = "Origin, Access-Control-Request-Headers, Access-Control-Request-Method"


@pytest.fixture(scope="module")
def s3(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    with s3_cluster(request, tmp_path_factory, "s3-cors") as endpoint:
        endpoint.boto3().create_bucket(Bucket=BUCKET)
        endpoint.boto3().put_object(Bucket=BUCKET, Key="page.html", Body=b"<html/>")
        yield endpoint


@pytest.fixture
def client(s3: S3Endpoint):  # type: ignore[no-untyped-def]
    """The owner's boto3, with the bucket's RULES set."""
    c = s3.boto3()
    c.put_bucket_cors(Bucket=BUCKET, CORSConfiguration=RULES)
    return c


def refusal(call: Any, **kwargs: Any) -> tuple[int, str, str]:
    with pytest.raises(ClientError) as e:
        call(**kwargs)
    error = e.value.response
    return error["ResponseMetadata"]["HTTPStatusCode"], error["Error"]["Code"], error["Error"]["Message"]


def raw(s3: S3Endpoint, method: str, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """An unsigned request, as a browser sends a preflight: (status, headers, body)."""
    url = urlsplit(s3.url)
    connection = http.client.HTTPConnection(url.hostname or "", url.port, timeout=30)
    try:
        connection.request(method, path, headers={k.replace("_", "-"): v for k, v in headers.items()})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def preflight(s3: S3Endpoint, path: str, origin: str, method: str, headers: str | None = None):  # type: ignore[no-untyped-def]
    extra = {"Access-Control-Request-Headers": headers} if headers is not None else {}
    return raw(s3, "OPTIONS", path, Origin=origin, Access_Control_Request_Method=method, **extra)


def cors_headers(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.startswith("Access-Control-") or k == "Vary"}


# ------------------------------------------------------------------ Put, Get and DeleteBucketCors
def test_a_configuration_is_put_read_back_and_deleted(client) -> None:  # type: ignore[no-untyped-def]
    assert client.get_bucket_cors(Bucket=BUCKET)["CORSRules"] == RULES["CORSRules"]
    replaced = {"CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["GET"]}]}
    client.put_bucket_cors(Bucket=BUCKET, CORSConfiguration=replaced)
    assert client.get_bucket_cors(Bucket=BUCKET)["CORSRules"] == replaced["CORSRules"]
    deleted = client.delete_bucket_cors(Bucket=BUCKET)
    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
    status, code, message = refusal(client.get_bucket_cors, Bucket=BUCKET)
    assert (status, code, message) == (
        404,
        "NoSuchCORSConfiguration",
        "The CORS configuration does not exist",
    )
    assert client.delete_bucket_cors(Bucket=BUCKET)["ResponseMetadata"]["HTTPStatusCode"] == 204  # none: 204


def test_bad_configurations_are_refused_with_amazon_s_codes(client) -> None:  # type: ignore[no-untyped-def]
    def put(rules: list[dict[str, Any]]) -> tuple[int, str, str]:
        return refusal(client.put_bucket_cors, Bucket=BUCKET, CORSConfiguration={"CORSRules": rules})

    assert put([])[:2] == (400, "MalformedXML")
    one = {"AllowedOrigins": ["*"], "AllowedMethods": ["GET"]}
    assert put([one] * 101) == (
        400, "InvalidRequest", "The number of CORS rules should not exceed allowed limit of 100 rules."
    )  # fmt: skip
    client.put_bucket_cors(Bucket=BUCKET, CORSConfiguration={"CORSRules": [one] * 100})
    assert put([{"AllowedOrigins": ["*"], "AllowedMethods": ["PATCH"]}]) == (
        400, "InvalidRequest", "Found unsupported HTTP method in CORS config. Unsupported method is PATCH"
    )  # fmt: skip
    assert put([{"AllowedOrigins": ["http://*.*.example"], "AllowedMethods": ["GET"]}]) == (
        400, "InvalidRequest", 'AllowedOrigin "http://*.*.example" can not have more than one wildcard.'
    )  # fmt: skip
    assert put([{"AllowedOrigins": ["*"], "AllowedMethods": ["GET"], "ExposeHeaders": ["x-amz-meta-*"]}]) == (
        400, "InvalidRequest",
        'ExposeHeader "x-amz-meta-*" contains wildcard. '
        "We currently do not support wildcard for ExposeHeader.",
    )  # fmt: skip
    for bad in ("ETag\r\nSet-Cookie: pwned=1", "ET\nag", "caf\u00e9"):  # echoed as a header: refused
        refused = put([{"AllowedOrigins": ["*"], "AllowedMethods": ["GET"], "ExposeHeaders": [bad]}])
        assert refused[:2] == (400, "InvalidRequest"), (bad, refused)
    assert len(client.get_bucket_cors(Bucket=BUCKET)["CORSRules"]) == 100  # nothing refused was kept


def test_a_configuration_without_a_digest_is_refused(s3: S3Endpoint) -> None:
    c = s3.boto3()

    rules = {"CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["GET"]}]}
    with before_sign(c, "PutBucketCors", strip_digests):
        assert refusal(c.put_bucket_cors, Bucket=BUCKET, CORSConfiguration=rules) == (
            400, "InvalidRequest", "Missing required header for this request: Content-MD5 OR x-amz-checksum-*"
        )  # fmt: skip


def test_only_the_owner_reads_or_changes_the_configuration(s3: S3Endpoint, client) -> None:  # type: ignore[no-untyped-def]
    bob = S3Endpoint(s3.cluster, s3.url, *getsecret(s3.cluster, "bob")).boto3()
    rules = {"CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["DELETE"]}]}
    for call, kwargs in [
        (bob.get_bucket_cors, {}),
        (bob.put_bucket_cors, {"CORSConfiguration": rules}),
        (bob.delete_bucket_cors, {}),
    ]:
        assert refusal(call, Bucket=BUCKET, **kwargs)[:2] == (403, "AccessDenied")
    assert client.get_bucket_cors(Bucket=BUCKET)["CORSRules"] == RULES["CORSRules"]
    assert refusal(bob.get_bucket_cors, Bucket="no-such-bucket")[:2] == (404, "NoSuchBucket")


# ------------------------------------------------------------------ preflights
@pytest.mark.usefixtures("client")
def test_a_preflight_the_first_rule_allows_is_answered_with_its_headers(s3: S3Endpoint) -> None:
    status, headers, body = preflight(s3, f"/{BUCKET}/page.html", APP, "PUT", "X-Amz-Date,content-type")
    assert (status, body) == (200, b"")
    assert cors_headers(headers) == {
        "Access-Control-Allow-Origin": APP,
        "Access-Control-Allow-Credentials": "true",
        "Access-Control-Allow-Methods": "GET, PUT",
        "Access-Control-Allow-Headers": "x-amz-date, content-type",
        "Access-Control-Expose-Headers": "ETag, x-amz-request-id",
        "Access-Control-Max-Age": "3000",
        "Vary": VARY,
    }
    status, headers, _ = preflight(s3, f"/{BUCKET}/a/key/not/written", "https://eu.app.example", "GET")
    assert status == 200 and headers["Access-Control-Allow-Origin"] == "https://eu.app.example"
    status, headers, _ = preflight(s3, f"/{BUCKET}", APP, "GET")  # a bucket's URL too
    assert status == 200 and headers["Access-Control-Allow-Methods"] == "GET, PUT"


@pytest.mark.usefixtures("client")
def test_any_origin_falls_to_the_wildcard_rule(s3: S3Endpoint) -> None:
    status, headers, _ = preflight(s3, f"/{BUCKET}/page.html", "http://random:1234", "HEAD")
    assert status == 200
    assert cors_headers(headers) == {
        "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, HEAD", "Vary": VARY
    }  # fmt: skip


@pytest.mark.usefixtures("client")
@pytest.mark.parametrize(
    ("origin", "method", "asked", "resource"),
    [
        ("http://random:1234", "PUT", None, "OBJECT"),  # PUT: only the first rule, not this origin
        (APP, "DELETE", None, "OBJECT"),
        (APP, "PUT", "authorization", "OBJECT"),  # a header the rule does not allow
        ("http://random:1234", "GET", "x-amz-date", "OBJECT"),  # the wildcard rule allows no header
        (APP + "/", "PUT", None, "OBJECT"),
    ],
)
def test_a_preflight_no_rule_allows_is_403(
    s3: S3Endpoint, origin: str, method: str, asked: str | None, resource: str
) -> None:
    status, headers, body = preflight(s3, f"/{BUCKET}/page.html", origin, method, asked)
    assert status == 403 and cors_headers(headers) == {}
    assert b"<Code>AccessForbidden</Code>" in body
    assert b"CORSResponse: This CORS request is not allowed." in body
    assert f"<Method>{method}</Method><ResourceType>{resource}</ResourceType>".encode() in body


def test_a_preflight_to_a_bucket_without_rules_or_without_the_bucket_is_403(s3: S3Endpoint) -> None:
    s3.boto3().create_bucket(Bucket="plain")
    status, _, body = preflight(s3, "/plain/x", APP, "GET")
    assert status == 403 and b"CORSResponse: CORS is not enabled for this bucket." in body
    status, _, body = preflight(s3, "/no-such-bucket/x", APP, "GET")
    assert status == 403 and b"CORSResponse: Bucket not found" in body


@pytest.mark.usefixtures("client")
def test_a_preflight_without_origin_or_method_is_400(s3: S3Endpoint) -> None:
    status, _, body = raw(s3, "OPTIONS", f"/{BUCKET}/page.html", Access_Control_Request_Method="GET")
    assert status == 400 and b"<Code>BadRequest</Code>" in body
    assert b"Insufficient information. Origin request header needed." in body
    status, _, body = raw(s3, "OPTIONS", f"/{BUCKET}/page.html", Origin=APP)
    assert status == 400 and b"<Code>BadRequest</Code>" in body


def test_a_long_origin_against_many_mid_wildcard_origins_is_answered_at_once(s3: S3Endpoint) -> None:
    """R29 N0: 279 x `h*` + 200 x `y` + `q` (64 KB) against an 7,901-character Origin held the gateway's
    loop ~1 s per anonymous request, the owner's GET 6 s behind two such loops."""
    c = s3.boto3()
    c.create_bucket(Bucket="wild")
    pattern = "h*" + "y" * 200 + "q"
    copies = (65536 - 400) // (len(pattern) + 31)
    rules = {"CORSRules": [{"AllowedOrigins": [pattern] * copies, "AllowedMethods": ["GET"]}]}
    c.put_bucket_cors(Bucket="wild", CORSConfiguration=rules)
    for origin in ("h" + "y" * 2000, "h" + "y" * 7900):
        started = time.monotonic()
        for _ in range(5):
            assert preflight(s3, "/wild/k", origin, "GET")[0] == 403
            assert raw(s3, "GET", "/wild/k", Origin=origin)[0] == 403  # anonymous
        assert time.monotonic() - started < 2.0  # 10 requests; ~10 s before
    assert preflight(s3, "/wild/k", "h" + "y" * 300 + "q", "GET")[0] == 200


# ------------------------------------------------------------------ actual requests
@pytest.mark.usefixtures("client")
def test_an_actual_request_gets_its_rule_s_headers_errors_included(s3: S3Endpoint) -> None:
    c = s3.boto3()
    seen: list[dict[str, str]] = []
    c.meta.events.register("before-sign.s3.*", lambda request, **_: request.headers.add_header("Origin", APP))
    c.meta.events.register(
        "after-call.s3.*", lambda http_response, **_: seen.append(dict(http_response.headers))
    )
    assert c.get_object(Bucket=BUCKET, Key="page.html")["Body"].read() == b"<html/>"
    assert seen[-1]["Access-Control-Allow-Origin"] == APP
    assert seen[-1]["Access-Control-Expose-Headers"] == "ETag, x-amz-request-id"
    assert seen[-1]["Vary"] == VARY
    assert "Access-Control-Allow-Headers" not in seen[-1]
    status, headers, _ = raw(s3, "GET", f"/{BUCKET}/page.html", Origin=APP)  # anonymous: AccessDenied
    assert status == 403 and headers["Access-Control-Allow-Origin"] == APP
    status, headers, _ = raw(s3, "DELETE", f"/{BUCKET}/page.html", Origin=APP)  # DELETE: no rule
    assert status == 403 and cors_headers(headers) == {}
    status, headers, _ = raw(s3, "GET", f"/{BUCKET}/page.html")  # no Origin: not a CORS request
    assert cors_headers(headers) == {}


# ------------------------------------------------------------------ a restart
@pytest.mark.usefixtures("client")
def test_the_rules_outlive_a_restart_of_om_and_the_gateway(s3: S3Endpoint) -> None:
    for daemon in ("s3g", "om"):
        s3.cluster.kill(daemon)
    for daemon in ("om", "s3g"):
        s3.cluster.start(daemon)
    deadline = time.monotonic() + 60
    while True:
        try:
            rules = s3.boto3().get_bucket_cors(Bucket=BUCKET)["CORSRules"]
            break
        except (ClientError, EndpointConnectionError):  # OM or the gateway not serving yet
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    assert rules == RULES["CORSRules"]
    assert preflight(s3, f"/{BUCKET}/page.html", APP, "PUT")[0] == 200


# ------------------------------------------------------------------ edges
def test_configuration_edges(client) -> None:  # type: ignore[no-untyped-def]
    """PutBucketCors on a missing bucket is NoSuchBucket; a configuration over 64 KB is
    MaxMessageLengthExceeded; a negative MaxAgeSeconds is MalformedXML; none is kept."""
    one = {"AllowedOrigins": ["*"], "AllowedMethods": ["GET"]}
    assert refusal(client.put_bucket_cors, Bucket="no-such-bucket", CORSConfiguration={"CORSRules": [one]})[
        :2
    ] == (404, "NoSuchBucket")
    origins = [f"https://{n:03}." + "o" * 188 + ".example" for n in range(340)]
    big = {"CORSRules": [{"AllowedOrigins": origins, "AllowedMethods": ["GET"]}]}
    assert refusal(client.put_bucket_cors, Bucket=BUCKET, CORSConfiguration=big)[:2] == (
        400, "MaxMessageLengthExceeded",
    )  # fmt: skip
    negative = {"CORSRules": [{**one, "MaxAgeSeconds": -1}]}
    assert refusal(client.put_bucket_cors, Bucket=BUCKET, CORSConfiguration=negative)[:2] == (
        400,
        "MalformedXML",
    )
    assert client.get_bucket_cors(Bucket=BUCKET)["CORSRules"] == RULES["CORSRules"]


@pytest.mark.usefixtures("client")
def test_a_preflight_asking_for_101_headers_is_400(s3: S3Endpoint) -> None:
    asked = ",".join(f"x-amz-h{n}" for n in range(101))
    status, headers, body = preflight(s3, f"/{BUCKET}/page.html", APP, "PUT", asked)
    assert status == 400 and b"<Code>BadRequest</Code>" in body and cors_headers(headers) == {}
    assert preflight(s3, f"/{BUCKET}/page.html", APP, "PUT", asked.rsplit(",", 1)[0])[0] == 200
