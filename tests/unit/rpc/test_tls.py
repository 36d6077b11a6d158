"""Mutual TLS with certificates as SCM's CA issues them (tests/tls_certs.py): a call between parties of
one CA goes through and the handler sees the caller's certificate; plaintext, a self-signed or foreign
certificate, an expired one and a server of the wrong role are refused in the handshake; a certificate
revoked while its connection is open is refused per call (TlsStore.update_crl)."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from pyozone import rpc
from pyozone.common.tls import TlsStore
from pyozone.hdds.security import x509 as X
from pyozone.proto.OmClientProtocol_pb2 import EchoRPCResponse
from pyozone.rpc.metadata import peer_identity
from pyozone.security.service_access import peer_datanode
from tests.tls_certs import CertAuthority, crl, self_signed, serial
from tests.unit.rpc.rpc_support import MB, SPEC, Echo, channel, request, scenario, serve

OM = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
DN = X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1")
ALICE, BOB = X.Identity(X.CertRole.USER, "alice"), X.Identity(X.CertRole.USER, "bob")
DN_UUID = "0b7c62a4-3c9a-4a35-9a5c-2f6f2f0a9a11"
Code = rpc.StatusCode
FAST = rpc.ChannelSettings(4 * MB, connect_timeout_s=3, backoff_initial_s=0.01, backoff_max_s=0.01)


class Whoami(Echo):
    async def metadata(self, req: object, context: rpc.CallContext) -> object:
        identity = peer_identity(context)
        shown = f"{identity.common_name if identity else None} {peer_datanode(context)}"
        return await self.echo(request(shown.encode()), context)  # type: ignore[arg-type]


def outcome(server_tls: TlsStore, client: TlsStore | None, peer: X.CertRole | None = X.CertRole.OM) -> str:
    """The caller's identity as the handler saw it, or the status the call ended with."""

    async def test() -> str:
        server, port = await serve(servicer=Whoami(), tls=server_tls)
        try:
            async with channel(port, FAST, tls=client, peer=peer) as ch:
                return (await rpc.Stub(ch, SPEC).metadata(request(), timeout=5)).payload.decode()
        except rpc.RpcError as e:
            return e.code().name
        finally:
            await server.stop(None)

    return scenario(test)


def test_a_call_between_parties_of_one_ca_goes_through_and_names_its_caller(tmp_path: Path) -> None:
    ca = CertAuthority(tmp_path)
    om = ca.store("om", OM)
    assert outcome(om, ca.store("alice", ALICE)) == f"{ALICE.common_name} None"
    assert outcome(om, ca.store("dn", DN, datanode=DN_UUID)) == f"{DN.common_name} {DN_UUID}"


def test_plaintext_self_signed_foreign_and_expired_callers_are_refused(tmp_path: Path) -> None:
    ca, other = CertAuthority(tmp_path / "ca"), CertAuthority(tmp_path / "other", cluster_id="CID-other")
    om = ca.store("om", OM)
    assert outcome(om, None, None) == "UNAVAILABLE"  # plaintext to a TLS port
    assert outcome(om, self_signed(tmp_path, "forger", ALICE, ca.cert)) == "UNAVAILABLE"
    assert outcome(om, other.store("foreign", ALICE, trust=ca.cert)) == "UNAVAILABLE"
    expired = ca.store("expired", ALICE, lifetime=dt.timedelta(seconds=-30))
    assert outcome(om, expired) == "UNAVAILABLE"
    assert outcome(om, ca.store("alice", ALICE)) == f"{ALICE.common_name} None"


def test_a_server_that_is_not_what_the_caller_dials_is_refused(tmp_path: Path) -> None:
    ca, other = CertAuthority(tmp_path / "ca"), CertAuthority(tmp_path / "other", cluster_id="CID-other")
    alice = ca.store("alice", ALICE)
    dn = ca.store("dn", DN, datanode=DN_UUID)
    assert outcome(dn, alice, X.CertRole.DATANODE) == f"{ALICE.common_name} None"
    assert outcome(dn, alice, X.CertRole.OM) == "UNAVAILABLE"  # a datanode's certificate for OM's host
    assert outcome(ca.store("om", OM), alice, X.CertRole.SCM) == "UNAVAILABLE"
    assert outcome(self_signed(tmp_path, "fake-om", OM, ca.cert), alice) == "UNAVAILABLE"
    assert outcome(other.store("om", OM, trust=ca.cert), alice) == "UNAVAILABLE"


def test_a_certificate_revoked_while_its_connection_is_open_is_refused_per_call(tmp_path: Path) -> None:
    ca = CertAuthority(tmp_path)
    om, alice, bob = ca.store("om", OM), ca.store("alice", ALICE), ca.store("bob", BOB)

    async def test() -> None:
        server, port = await serve(tls=om)
        async with (
            channel(port, tls=alice, peer=X.CertRole.OM) as a,
            channel(port, tls=bob, peer=X.CertRole.OM) as b,
        ):
            stub_a, stub_b = rpc.Stub(a, SPEC), rpc.Stub(b, SPEC)
            await stub_a.echo(request())
            chat = stub_a.chat()
            await chat.write(request(b"x"))
            assert (await chat.read()).payload == b"X"
            count = stub_a.count(request(b"100000"))
            await count.read()
            assert om.update_crl(1, crl(ca, [serial(alice)], 1))
            with pytest.raises(rpc.RpcError) as e:
                await stub_a.echo(request())
            assert (e.value.code(), e.value.details()) == (
                Code.PERMISSION_DENIED,
                f"certificate {serial(alice)} was revoked",
            )
            await chat.write(request(b"y"))  # a stream opened before the revocation ends at its next message
            with pytest.raises(rpc.RpcError) as e:
                while True:
                    await asyncio.wait_for(chat.read(), 5)
            assert e.value.code() is Code.PERMISSION_DENIED
            with pytest.raises(rpc.RpcError) as e:  # a server stream ends at its next answer
                async for _ in count:
                    pass
            assert e.value.code() is Code.PERMISSION_DENIED
            assert (await stub_b.echo(request(b"bob"))).payload == b"bob"
        await server.stop(None)

    scenario(test)


class Gated(Echo):
    """`gather` takes its first request, then waits for `gate` before it takes the rest."""

    def __init__(self) -> None:
        super().__init__()
        self.first, self.gate = asyncio.Event(), asyncio.Event()

    async def gather(self, requests: Any, context: rpc.CallContext) -> Any:
        taken = [await anext(requests)]
        self.first.set()
        await self.gate.wait()
        taken += [r async for r in requests]
        return EchoRPCResponse(payload=b"".join(r.payloadReq for r in taken))


def test_stream_requests_queued_before_the_callers_revocation_are_refused_when_taken(
    tmp_path: Path,
) -> None:
    ca = CertAuthority(tmp_path)
    om, alice = ca.store("om", OM), ca.store("alice", ALICE)
    servicer = Gated()

    async def test() -> None:
        server, port = await serve(servicer=servicer, tls=om)
        async with channel(port, tls=alice, peer=X.CertRole.OM) as a:
            stub = rpc.Stub(a, SPEC)
            upload = stub.gather()
            await upload.write(request(b"a"))
            await servicer.first.wait()
            await upload.write(request(b"b"))  # read and queued by the server, not yet taken
            await stub.echo(request())  # one connection, frames in order: "b" was read before this call
            assert om.update_crl(1, crl(ca, [serial(alice)], 1))
            servicer.gate.set()
            with pytest.raises(rpc.RpcError) as e:
                await upload
            assert (e.value.code(), e.value.details()) == (
                Code.PERMISSION_DENIED,
                f"certificate {serial(alice)} was revoked",
            )
        await server.stop(None)

    scenario(test)


def test_a_connection_to_a_server_revoked_since_its_handshake_takes_no_call(tmp_path: Path) -> None:
    """The client's CRL is checked per call on an open connection, as the server checks its callers: the
    call is refused, the connection closed, and a new dial is refused in its handshake."""
    ca = CertAuthority(tmp_path)
    om, alice = ca.store("om", OM), ca.store("alice", ALICE)

    async def test() -> None:
        server, port = await serve(tls=om)
        async with channel(port, FAST, tls=alice, peer=X.CertRole.OM) as a:
            stub = rpc.Stub(a, SPEC)
            assert (await stub.echo(request(b"before"))).payload == b"before"
            assert alice.update_crl(1, crl(ca, [serial(om)], 1))
            for _ in range(2):  # the open connection, then a new dial
                with pytest.raises(rpc.RpcError) as e:
                    await stub.echo(request(b"after"), timeout=5)
                assert e.value.code() is Code.UNAVAILABLE
        await server.stop(None)

    scenario(test)
