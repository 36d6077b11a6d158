"""What real S3 clients put on the wire, captured without a server (botocore, minio-py) or with a local one
(pyarrow's AWS C++ SDK), so the verifier is checked against their own signing and encoding."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import boto3
import botocore.awsrequest
import botocore.config
import urllib3
from minio import Minio
from multidict import CIMultiDict

ACCESS_KEY = "AKIDEXAMPLE0123"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
REGION = "us-east-1"


@dataclass(frozen=True)
class Captured:
    """One request as a server receives it."""

    method: str
    raw_path: str
    raw_query: str
    headers: CIMultiDict[str]
    body: bytes


def _split_target(method: str, target: str, headers: CIMultiDict[str], body: bytes) -> Captured:
    path, _, query = target.partition("?")
    return Captured(method, path, query, headers, body)


def _text(value: str | bytes) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body

    def read(self, *_: Any) -> bytes:
        return self._body


_REPLIES = {
    "CreateMultipartUpload": b"<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>k</Key>"
    b"<UploadId>u1</UploadId></InitiateMultipartUploadResult>",
    "ListObjectsV2": b"<ListBucketResult><Name>b</Name><KeyCount>0</KeyCount></ListBucketResult>",
}


def botocore_requests(
    calls: Callable[[Any], None], *, endpoint: str = "https://s3.test:9878", **config: Any
) -> list[Captured]:
    """Run `calls(client)` on a boto3 S3 client whose requests are captured instead of sent."""
    captured: list[Captured] = []
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET,
        config=botocore.config.Config(
            **{"s3": {"addressing_style": "path"}, "retries": {"max_attempts": 1}, **config}
        ),
    )

    def capture(request: botocore.awsrequest.AWSPreparedRequest, event_name: str, **_: Any) -> Any:
        parts = urlsplit(request.url)
        headers = CIMultiDict((name, _text(value)) for name, value in request.headers.items())
        headers["Host"] = parts.netloc
        body = request.body
        data = body.read() if hasattr(body, "read") else (body or b"")
        captured.append(_split_target(request.method, request.url.split(parts.netloc, 1)[1], headers, data))
        operation = event_name.rsplit(".", 1)[-1]
        return botocore.awsrequest.AWSResponse(
            request.url, 200, {"ETag": '"0"'}, _Raw(_REPLIES.get(operation, b""))
        )

    client.meta.events.register("before-send.s3", capture)
    calls(client)
    return captured


class _FakePool(urllib3.PoolManager):
    """Stands in for urllib3's PoolManager inside minio-py: records and answers 200."""

    def __init__(self) -> None:
        super().__init__()
        self.captured: list[Captured] = []

    def urlopen(  # type: ignore[override]
        self, method: str, url: str, body: bytes | None = None, headers: Any = None, **_: Any
    ) -> Any:
        parts = urlsplit(url)
        received = CIMultiDict((name, value) for name, value in headers.items())
        received.setdefault("Host", parts.netloc)
        self.captured.append(_split_target(method, url.split(parts.netloc, 1)[1], received, body or b""))
        reply = _REPLIES["ListObjectsV2"] if "list-type=2" in parts.query else b"<Empty/>"
        return urllib3.HTTPResponse(body=reply, status=200, headers={"ETag": '"0"'}, preload_content=True)


def minio_requests(calls: Callable[[Minio], None]) -> list[Captured]:
    pool = _FakePool()
    client = Minio("127.0.0.1:9878", ACCESS_KEY, SECRET, secure=False, region=REGION, http_client=pool)
    calls(client)
    return pool.captured


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _CaptureServer

    def _answer(self) -> None:
        headers = CIMultiDict((name, value) for name, value in self.headers.items())
        body = self._body()
        self.server.captured.append(_split_target(self.command, self.path, headers, body))
        query = self.path.partition("?")[2]
        reply = b""
        if self.command == "POST" and query.startswith("uploads"):
            reply = _REPLIES["CreateMultipartUpload"]
        elif self.command == "POST":
            reply = b'<CompleteMultipartUploadResult><ETag>"0"</ETag></CompleteMultipartUploadResult>'
        elif self.command == "GET" and "list-type=2" in query:
            reply = _REPLIES["ListObjectsV2"]
        self.send_response(200)
        self.send_header("ETag", '"0"')
        self.send_header("Content-Length", str(len(reply)))
        self.send_header("Last-Modified", "Wed, 25 Nov 2026 00:00:00 GMT")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply)

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = bytearray()
            while size := int(self.rfile.readline().split(b";")[0], 16):
                body += self.rfile.read(size)
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b""):
                pass
            return bytes(body)
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _answer

    def log_message(self, *_: Any) -> None:
        pass


class _CaptureServer(http.server.ThreadingHTTPServer):
    captured: list[Captured]


@contextmanager
def capture_server() -> Iterator[_CaptureServer]:
    """A local HTTP server on 127.0.0.1 that records each request and answers 200 with S3-shaped bodies."""
    server = _CaptureServer(("127.0.0.1", 0), _Handler)
    server.captured = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
