"""The HTTP server over mutual TLS (issue 15 item 2): a peer with a certificate of the cluster's CA is
served, a plaintext one, a self-made certificate and another CA's are refused in the handshake, and the
server's guards (head deadline, oversized heads) hold for the decrypted bytes as they do in plaintext."""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web

from pyozone.common.http_json import JsonResponse, json_endpoints
from pyozone.common.http_server import HttpLimits, HttpServer
from pyozone.common.tls import TlsStore
from pyozone.hdds.security import x509 as X
from tests.tls_certs import CertAuthority, self_signed
from tests.unit.common.http_helpers import BOUND_S, async_test, closed_by_server, read_answer

OM = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
ALICE = X.Identity(X.CertRole.USER, "alice")
FAST = HttpLimits(head_timeout_s=0.5, keepalive_timeout_s=30, max_headers=5)
HEALTH = b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n"


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def server_tls(ca: CertAuthority) -> TlsStore:
    return ca.store("om", OM)


@pytest.fixture(scope="module")
def alice(ca: CertAuthority) -> TlsStore:
    return ca.store("alice", ALICE)


def _health() -> web.Application:
    return json_endpoints({"/health": lambda: JsonResponse(200, {"healthy": True})})


@asynccontextmanager
async def serving_tls(tls: TlsStore, limits: HttpLimits = FAST) -> AsyncIterator[int]:
    server = HttpServer(_health(), limits)
    port = await server.start("127.0.0.1", 0, tls.server_context())
    try:
        yield port
    finally:
        await server.stop()


async def _open(port: int, tls: TlsStore) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.wait_for(
        asyncio.open_connection("127.0.0.1", port, ssl=tls.client_context(), server_hostname="127.0.0.1"),
        BOUND_S,
    )


async def _health_over(port: int, tls: TlsStore) -> int | None:
    """The status of GET /health, or None when the server answers nothing (a refused handshake: in TLS
    1.3 the client's side of it ends before the server checks the client's certificate, so the client
    learns at its first read, as an alert or the end of the connection)."""
    reader, writer = await _open(port, tls)
    try:
        writer.write(HEALTH)
        answer = await read_answer(reader)
    except (ssl.SSLError, ConnectionResetError):
        return None
    finally:
        writer.close()
    return None if answer is None else answer.status


@async_test
async def test_a_certificate_of_the_cluster_is_served_and_strangers_are_refused(
    server_tls: TlsStore, alice: TlsStore, ca: CertAuthority, tmp_path: Path
) -> None:
    async with serving_tls(server_tls) as port:
        assert await _health_over(port, alice) == 200
        strangers = {
            "self-made": self_signed(tmp_path, "self", ALICE, trust=ca.cert),
            "other CA": CertAuthority(tmp_path / "other").store("mallory", ALICE, trust=ca.cert),
        }
        for what, tls in strangers.items():
            assert await _health_over(port, tls) is None, what
        reader, writer = await asyncio.open_connection("127.0.0.1", port)  # plaintext
        writer.write(HEALTH)
        try:
            first = await asyncio.wait_for(reader.read(1), BOUND_S)
        except ConnectionResetError:
            first = b""
        assert first in (b"", b"\x15"), first  # no HTTP answer: at most a TLS alert, then the end
        writer.close()
        assert await _health_over(port, alice) == 200


@async_test
async def test_a_silent_peer_is_cut_at_the_handshake_deadline(server_tls: TlsStore) -> None:
    async with serving_tls(server_tls) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        start = time.monotonic()
        assert await closed_by_server(reader)
        waited = time.monotonic() - start  # the handshake's deadline, long before the keep-alive's 30 s
        assert FAST.head_timeout_s * 0.8 < waited < FAST.head_timeout_s + 2, waited
        writer.close()


@async_test
async def test_a_head_dribbled_over_tls_is_cut_off_at_the_head_deadline(
    server_tls: TlsStore, alice: TlsStore
) -> None:
    async with serving_tls(server_tls) as port:
        reader, writer = await _open(port, alice)
        start = time.monotonic()
        writer.write(b"GET /health HTTP/1.1\r\n")  # and never the rest
        assert await closed_by_server(reader)
        waited = time.monotonic() - start
        assert FAST.head_timeout_s * 0.8 < waited < FAST.head_timeout_s + 2, waited
        writer.close()
        assert await _health_over(port, alice) == 200


@async_test
async def test_an_oversized_head_over_tls_is_refused_with_431(server_tls: TlsStore, alice: TlsStore) -> None:
    async with serving_tls(server_tls) as port:
        reader, writer = await _open(port, alice)
        writer.write(b"GET /health HTTP/1.1\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(6)) + b"\r\n")
        answer = await read_answer(reader)
        assert answer is not None and answer.status == 431
        writer.close()


@async_test
async def test_a_keep_alive_connection_is_refused_once_its_peer_is_revoked(tmp_path: Path) -> None:
    """Issue 28 review: an https connection opened before the revocation kept being served; each request
    is checked against the current CRL, and the connection is closed."""
    ca = CertAuthority(tmp_path)
    server_tls, bob = ca.store("om", OM), ca.store("bob", X.Identity(X.CertRole.USER, "bob"))
    async with serving_tls(server_tls) as port:
        reader, writer = await _open(port, bob)
        try:
            writer.write(HEALTH)
            first = await read_answer(reader)
            assert first is not None and first.status == 200
            serial = X.cert_from_pem(bob.paths.cert.read_bytes()).serial_number
            start = int(time.time() * 1000) - 60_000
            crl = X.build_crl(
                ca.key, ca.cert, [(serial, start, "KEY_COMPROMISE")], 1, start, start + 86_400_000
            )
            assert server_tls.update_crl(1, crl)
            writer.write(HEALTH)
            refused = await read_answer(reader)
            assert refused is not None and refused.status == 403
            assert f"certificate {serial} was revoked".encode() in refused.body
            assert await closed_by_server(reader)
        finally:
            writer.close()
