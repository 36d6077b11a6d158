"""A request that says `Expect: 100-continue` and is answered without its body being asked for (issue 28,
the review of defect 14): the client never sends the body, so the connection must end with the answer,
whatever its status; kept alive, aiohttp would read the next request as the rest of this one's body."""

from __future__ import annotations

import socket

import pytest

from tests.unit.s3g.gateway_thread import GatewayOnThread

BUCKET = "expecting"


@pytest.fixture(scope="module")
def bucket(gateway: GatewayOnThread) -> str:
    s3 = gateway.boto3()
    s3.create_bucket(Bucket=BUCKET)
    s3.put_object(Bucket=BUCKET, Key="source", Body=b"")
    return BUCKET


def _answer_without_body(gateway: GatewayOnThread, method: str, target: str, extra: dict[str, str]) -> bytes:
    """Sends the head with Expect and a 10-byte Content-Length, never the body; the answer's head."""
    headers = gateway.signed_headers(method, target, b"x" * 10, extra)
    headers.pop("Content-Length", None)
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    answer = b""
    with socket.create_connection(("127.0.0.1", gateway.gateway.port), timeout=5) as sock:
        sock.sendall(
            f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{gateway.gateway.port}\r\nContent-Length: 10\r\n"
            f"Expect: 100-continue\r\n{head}\r\n".encode()
        )
        while b"\r\n\r\n" not in answer:
            answer += sock.recv(65536)
    return answer.partition(b"\r\n\r\n")[0]


@pytest.mark.parametrize(
    ("method", "target", "extra", "status"),
    [
        ("PUT", f"/{BUCKET}/copy", {"x-amz-copy-source": f"/{BUCKET}/source"}, b"200"),
        ("DELETE", f"/{BUCKET}/copy", {}, b"204"),
        ("GET", f"/{BUCKET}/source", {"If-None-Match": "*"}, b"304"),
        ("PUT", f"/{BUCKET}/k", {"x-amz-server-side-encryption": "aws:kms"}, b"501"),
    ],
)
def test_an_unread_body_ends_the_connection_whatever_the_status(
    gateway: GatewayOnThread, bucket: str, method: str, target: str, extra: dict[str, str], status: bytes
) -> None:
    answer = _answer_without_body(gateway, method, target, extra)
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:200]
    assert b"HTTP/1.1 100" not in answer
    assert b"Connection: close" in answer
