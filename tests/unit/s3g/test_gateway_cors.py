"""A bucket's CORS configuration through the gateway and a real OM (issue 33, item 3; review R29): a document
OM keeps longer than it was sent still answers browsers (N1), a bucket deleted and made again by another
user does not answer with the old owner's rules (N2), and a body the XML parser cannot decode is 400
MalformedXML, not 500 (N7)."""

from __future__ import annotations

import base64
import hashlib
import http.client

import pytest

from pyozone.hdds.s3_cors import MAX_CONFIGURATION_BYTES
from tests.unit.s3g.gateway_thread import GatewayOnThread

APP = "https://app.example"


def put_cors(gateway: GatewayOnThread, bucket: str, body: bytes, user: str = "tester") -> tuple[int, str]:
    """PutBucketCors with `body` as is (no SDK sends a declaration it cannot encode)."""
    digest = base64.b64encode(hashlib.md5(body).digest()).decode()
    return gateway.signed_request("PUT", f"/{bucket}?cors", body, {"Content-MD5": digest}, user=user)


def preflight(gateway: GatewayOnThread, bucket: str, origin: str, method: str) -> tuple[int, dict[str, str]]:
    status, headers, _ = preflight_answer(gateway, bucket, origin, method)
    return status, headers


def preflight_answer(
    gateway: GatewayOnThread, bucket: str, origin: str, method: str, path: str | None = None
) -> tuple[int, dict[str, str], str]:
    """OPTIONS of `path` (default: a key in `bucket`)."""
    connection = http.client.HTTPConnection("127.0.0.1", gateway.gateway.port, timeout=20)
    try:
        connection.request(
            "OPTIONS",
            path or f"/{bucket}/k",
            headers={"Origin": origin, "Access-Control-Request-Method": method},
        )
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()
    finally:
        connection.close()


def test_a_document_kept_longer_than_sent_still_answers_browsers(gateway: GatewayOnThread) -> None:
    """R29 N1: `>` is kept as `&gt;`; the 64 KB limit is of the body as sent, never of what OM keeps."""
    gateway.boto3().create_bucket(Bucket="grown")
    origins = "".join(f"<AllowedOrigin>https://a{'>' * 200}{i}.example</AllowedOrigin>" for i in range(199))
    body = (
        "<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod>"
        f"<AllowedOrigin>{APP}</AllowedOrigin>{origins}</CORSRule></CORSConfiguration>"
    ).encode()
    assert len(body) <= MAX_CONFIGURATION_BYTES
    assert put_cors(gateway, "grown", body) == (200, "")
    kept = gateway.boto3().get_bucket_cors(Bucket="grown")["CORSRules"][0]["AllowedOrigins"]
    assert len(kept) == 200 and kept[0] == APP
    status, headers = preflight(gateway, "grown", APP, "GET")
    assert status == 200 and headers["Access-Control-Allow-Origin"] == APP


def test_a_bucket_made_again_by_another_user_has_none_of_the_old_rules(gateway: GatewayOnThread) -> None:
    """R29 N2: the gateway remembered the deleted bucket's rules (credentials included) for its period."""
    alice, bob = gateway.boto3("alice"), gateway.boto3("bob")
    alice.create_bucket(Bucket="reborn")
    rules = [{"AllowedOrigins": [APP], "AllowedMethods": ["GET", "PUT"], "AllowedHeaders": ["*"]}]
    alice.put_bucket_cors(Bucket="reborn", CORSConfiguration={"CORSRules": rules})
    status, headers = preflight(gateway, "reborn", APP, "PUT")  # now remembered by the gateway
    assert status == 200 and headers["Access-Control-Allow-Credentials"] == "true"
    alice.delete_bucket(Bucket="reborn")
    bob.create_bucket(Bucket="reborn")
    status, headers = preflight(gateway, "reborn", APP, "PUT")
    assert status == 403 and "Access-Control-Allow-Origin" not in headers


def test_this_gateway_s_own_changes_show_within_the_cache_period(gateway: GatewayOnThread) -> None:
    """Reread B4: PutBucketCors and DeleteBucketCors forget the bucket here at once (each forget pinned:
    every preflight below is within the cache's period of the one before)."""
    s3 = gateway.boto3()
    s3.create_bucket(Bucket="changing")
    rules = [{"AllowedOrigins": [APP], "AllowedMethods": ["GET", "PUT"]}]
    s3.put_bucket_cors(Bucket="changing", CORSConfiguration={"CORSRules": rules})
    assert preflight(gateway, "changing", APP, "PUT")[0] == 200  # remembered now
    rules[0]["AllowedMethods"] = ["GET"]
    s3.put_bucket_cors(Bucket="changing", CORSConfiguration={"CORSRules": rules})
    assert preflight(gateway, "changing", APP, "PUT")[0] == 403
    assert preflight(gateway, "changing", APP, "GET")[0] == 200
    s3.delete_bucket_cors(Bucket="changing")
    status, _, body = preflight_answer(gateway, "changing", APP, "GET")
    assert status == 403 and "CORS is not enabled for this bucket" in body


def test_deleting_and_making_a_bucket_here_show_at_once(gateway: GatewayOnThread) -> None:
    """Reread B4: DeleteBucket and CreateBucket forget the bucket here: a preflight answers "Bucket not
    found" right after the delete (where the old rules were remembered), and "CORS is not enabled" right
    after the create (where the missing bucket was)."""
    s3 = gateway.boto3()
    s3.create_bucket(Bucket="gone")
    rules = [{"AllowedOrigins": [APP], "AllowedMethods": ["GET"]}]
    s3.put_bucket_cors(Bucket="gone", CORSConfiguration={"CORSRules": rules})
    assert preflight(gateway, "gone", APP, "GET")[0] == 200
    s3.delete_bucket(Bucket="gone")
    status, _, body = preflight_answer(gateway, "gone", APP, "GET")
    assert status == 403 and "Bucket not found" in body
    s3.create_bucket(Bucket="gone")
    status, _, body = preflight_answer(gateway, "gone", APP, "GET")
    assert status == 403 and "CORS is not enabled for this bucket" in body


def test_a_preflight_is_answered_whatever_the_query_names(gateway: GatewayOnThread) -> None:
    """A preflight is the browser's question about the request it names, subresources included (a
    `?lifecycle` the gateway does not serve); one with no bucket in its URL finds none."""
    s3 = gateway.boto3()
    s3.create_bucket(Bucket="queried")
    rules = [{"AllowedOrigins": [APP], "AllowedMethods": ["GET"]}]
    s3.put_bucket_cors(Bucket="queried", CORSConfiguration={"CORSRules": rules})
    assert preflight_answer(gateway, "queried", APP, "GET", "/queried?lifecycle")[0] == 200
    status, _, body = preflight_answer(gateway, "", APP, "GET", "/")
    assert status == 403 and "Bucket not found" in body


RULE = (
    b"<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
    b"</CORSRule></CORSConfiguration>"
)


@pytest.mark.parametrize(
    "body",
    [
        b'<?xml version="1.0" encoding="x-bogus"?>' + RULE,
        b'<?xml version="1.0" encoding="Shift_JIS"?>' + RULE,
        RULE.replace(b"</CORSRule>", b"<MaxAgeSeconds>" + b"9" * 5000 + b"</MaxAgeSeconds></CORSRule>"),
    ],
    ids=["unknown encoding", "multi-byte encoding", "5000 digits"],
)
def test_a_body_the_parser_cannot_decode_is_malformed_xml(gateway: GatewayOnThread, body: bytes) -> None:
    """R29 N7: these were 500 InternalError (and INTERNAL from OM's putBucketCors)."""
    client = gateway.boto3()
    client.create_bucket(Bucket="undecodable")
    status, text = put_cors(gateway, "undecodable", body)
    assert status == 400 and "<Code>MalformedXML</Code>" in text
