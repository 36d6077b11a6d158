"""Raw S3 requests for what no SDK sends: signed by botocore's own SigV4 signer (S3SigV4Auth on an
AWSRequest), then sent byte for byte as given over a fresh socket (a tampered body, no Content-Length, a
header boto3 validates away), and S3's XML error read back from the answer."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.client
import re
import socket
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import SimpleNamespace
from typing import Any
from unittest import mock
from urllib.parse import quote, urlsplit

from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from pyozone.cluster.layout import HOST
from tests.e2e.cluster.s3_cluster import REGION, S3Endpoint

ANSWER_TIMEOUT_S = 10.0
"""How long a bad request may take to be answered: anything slower counts as a hang."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: Mapping[str, str]  # names lowercase
    body: bytes

    @property
    def code(self) -> str | None:
        """S3's error code in the XML body, if any."""
        found = re.search(rb"<Code>([^<]*)</Code>", self.body)
        return found.group(1).decode() if found else None

    @property
    def message(self) -> str | None:
        """S3's error message in the XML body, if any."""
        found = re.search(rb"<Message>([^<]*)</Message>", self.body)
        return found.group(1).decode() if found else None

    def is_s3_error(self, status: int, code: str) -> bool:
        return (
            self.status == status
            and self.code == code
            and self.headers.get("content-type", "").startswith("application/xml")
            and b"Traceback" not in self.body
        )


def read_answer(sock: socket.socket, method: str, timeout_s: float = ANSWER_TIMEOUT_S) -> Answer:
    """One HTTP response from `sock`."""
    sock.settimeout(timeout_s)
    response = http.client.HTTPResponse(sock, method=method)
    response.begin()
    body = response.read()
    headers = {k.lower(): v for k, v in response.getheaders()}
    return Answer(response.status, headers, body)


class RawS3:
    """Signs requests as botocore does and sends them over fresh sockets exactly as given."""

    def __init__(self, endpoint: S3Endpoint, bucket: str) -> None:
        self.endpoint = endpoint
        self.bucket = bucket
        parts = urlsplit(endpoint.url)
        self.host, self.port = parts.hostname or HOST, parts.port or 80
        self.netloc = parts.netloc

    def credentials(self) -> Credentials:
        return Credentials(self.endpoint.access_key, self.endpoint.secret_key)

    def signed_headers(
        self,
        method: str,
        target: str,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
        *,
        sign_payload: bool = True,
        credentials: Credentials | None = None,
        trailer: str | None = None,
    ) -> dict[str, str]:
        """The headers of `method target` (path and query) signed for `body` by botocore's SigV4; with a
        `trailer` (x-amz-checksum-crc32, say) the payload is STREAMING-UNSIGNED-PAYLOAD-TRAILER."""
        request = AWSRequest(
            method=method, url=self.endpoint.url + target, data=body, headers=dict(headers or {})
        )
        request.context["client_config"] = SimpleNamespace(s3={"payload_signing_enabled": sign_payload})
        if trailer is not None:
            request.context["checksum"] = {"request_algorithm": {"in": "trailer", "name": trailer}}
        S3SigV4Auth(credentials or self.credentials(), "s3", REGION).add_auth(request)
        return {"Host": self.netloc, **dict(request.headers.items())}

    def presigned_url(self, method: str, target: str, expires_s: int, signed_at: datetime) -> str:
        request = AWSRequest(method=method, url=self.endpoint.url + target)
        with mock.patch("botocore.auth.get_current_datetime", return_value=signed_at.replace(tzinfo=None)):
            S3SigV4QueryAuth(self.credentials(), "s3", REGION, expires=expires_s).add_auth(request)
        return request.url

    def connect(self) -> socket.socket:
        return socket.create_connection((self.host, self.port), timeout=ANSWER_TIMEOUT_S)

    def send(
        self,
        method: str,
        target: str,
        headers: Mapping[str, str],
        body: bytes = b"",
        *,
        content_length: int | None = -1,
    ) -> Answer:
        """`method target` with exactly these headers, a Content-Length (-1: the body's; None: none)."""
        with self.connect() as sock:
            sock.sendall(
                self.head(method, target, headers, len(body) if content_length == -1 else content_length)
            )
            sock.sendall(body)
            return read_answer(sock, method)

    def head(self, method: str, target: str, headers: Mapping[str, str], content_length: int | None) -> bytes:
        lines = [f"{method} {target} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items())]
        if content_length is not None:
            lines.append(f"Content-Length: {content_length}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def request(
        self, method: str, target: str, body: bytes = b"", headers: Mapping[str, str] | None = None
    ) -> Answer:
        """A correctly signed request (payload signed)."""
        return self.send(method, target, self.signed_headers(method, target, body, headers), body)

    def put(self, key: str, body: bytes, headers: Mapping[str, str] | None = None) -> Answer:
        return self.request("PUT", object_path(key, self.bucket), body, headers)

    def exists(self, key: str) -> bool:
        answer = self.request("HEAD", object_path(key, self.bucket))
        assert answer.status in (200, 404), answer
        return answer.status == 200

    def assert_serving(self) -> None:
        """A good request right after the bad one is answered."""
        answer = self.request("GET", f"/{self.bucket}?list-type=2&max-keys=1")
        assert answer.status == 200 and b"<ListBucketResult" in answer.body, answer


def object_path(key: str, bucket: str) -> str:
    return f"/{bucket}/{quote(key, safe='/')}"


def md5_b64(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


@contextlib.contextmanager
def before_sign(client: Any, operation: str, change: Callable[[Any], None]) -> Iterator[None]:
    """`change(request)` on each boto3 `operation` request before botocore signs it: what boto3 would not
    send (a header it validates away, a body without its digests)."""

    def hook(request: Any, **_: Any) -> None:
        change(request)

    event = f"before-sign.s3.{operation}"
    client.meta.events.register(event, hook)
    try:
        yield
    finally:
        client.meta.events.unregister(event, hook)


def strip_digests(request: Any) -> None:
    """Takes Content-MD5 and every checksum botocore computed off a request (for before_sign)."""
    for name in list(request.headers):
        lower = name.lower()
        if lower == "content-md5" or lower.startswith(("x-amz-checksum-", "x-amz-sdk-checksum")):
            del request.headers[name]
