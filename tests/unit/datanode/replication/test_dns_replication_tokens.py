"""Replication with container tokens required: a push carries the source's container token for the replica
and the target checks it; a call without one, or with one for another container, is refused; over mutual
TLS only a datanode's certificate may call at all."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.datanode.replication import ReplicationError, push_container
from pyozone.datanode.replication.service import INTRA_DATANODE
from pyozone.datanode.xceiver.tokens import TOKEN_METADATA, TokenSigner, TokenVerifier, intra_datanode_refusal
from pyozone.hdds.security import x509 as X
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.tls_certs import CertAuthority
from tests.unit.datanode.dns_helpers import DATA_CHANNEL_SETTINGS, Node
from tests.unit.datanode.replication.replication_helpers import serve_replication
from tests.unit.datanode.replication.test_dns_replication import CID, blocks_of, make_closed
from tests.unit.datanode.xceiver.test_dns_tokens import CLOCK, DAY, FakeKeys


@asynccontextmanager
async def target(node: Node, executor: ThreadPoolExecutor, keys: FakeKeys) -> AsyncIterator[HostPort]:
    verifier = TokenVerifier(keys, block_tokens=True, container_tokens=True, clock=CLOCK)
    async with serve_replication(node, executor, tokens=verifier) as served:
        yield served.address


def signer(keys: FakeKeys, container_tokens: bool = True) -> TokenSigner:
    return TokenSigner(keys, "dn", DAY, block_tokens=True, container_tokens=container_tokens, clock=CLOCK)


def test_a_push_carries_the_sources_container_token(
    node_a: Node, node_b: Node, executor: ThreadPoolExecutor
) -> None:
    make_closed(node_a)
    keys = FakeKeys()

    async def scenario() -> None:
        async with target(node_b, executor, keys) as address:
            with pytest.raises(ReplicationError, match=r"PERMISSION_DENIED.*missing"):
                await push_container(node_a.containers, CID, address, executor)
            with pytest.raises(ReplicationError, match=r"PERMISSION_DENIED.*missing"):
                await push_container(node_a.containers, CID, address, executor, tokens=signer(keys, False))
            await push_container(node_a.containers, CID, address, executor, tokens=signer(keys))

    asyncio.run(scenario())
    assert blocks_of(node_b) == blocks_of(node_a)


def test_a_download_needs_a_token_for_its_container(node_a: Node, executor: ThreadPoolExecutor) -> None:
    make_closed(node_a)
    keys = FakeKeys()

    async def pieces(address: HostPort, token: str) -> int:
        async with rpc.Channel(address, DATA_CHANNEL_SETTINGS) as ch:
            call = rpc.Stub(ch, INTRA_DATANODE).download(
                pb.CopyContainerRequestProto(containerID=CID),
                metadata=((TOKEN_METADATA, token),) if token else None,
            )
            return len([p async for p in call])

    async def scenario() -> None:
        async with target(node_a, executor, keys) as address:
            for token, why in (
                ("", "missing"),
                (signer(keys).container_token(CID + 1), "for another container"),
            ):
                with pytest.raises(rpc.RpcError) as e:
                    await pieces(address, token)
                assert e.value.code() is rpc.StatusCode.PERMISSION_DENIED and why in (e.value.details() or "")
            assert await pieces(address, signer(keys).container_token(CID)) > 0

    asyncio.run(scenario())


class _Context:
    def __init__(self, common_name: str | None) -> None:
        self.names = [common_name.encode()] if common_name else []

    def auth_context(self) -> dict[str, list[bytes]]:
        return {"x509_common_name": self.names} if self.names else {}


def test_only_datanode_certificates_call_datanode_to_datanode_services() -> None:
    assert intra_datanode_refusal(_Context(None)) is None  # plaintext: as in Ozone
    assert intra_datanode_refusal(_Context("dn@127.0.0.1")) is None
    assert "om@127.0.0.1 is not a datanode" in (intra_datanode_refusal(_Context("om@127.0.0.1")) or "")
    assert "alice is not a datanode" in (intra_datanode_refusal(_Context("alice")) or "")
    assert "names no datanode" in (intra_datanode_refusal(_Context("bogus@x")) or "")


def test_over_mutual_tls_only_a_datanode_replicates(
    node_a: Node, node_b: Node, executor: ThreadPoolExecutor, tmp_path: Path
) -> None:
    """The REPLICATION port with the datanode's certificate: another datanode's push is served; a user's
    certificate is refused (it would read replicas without a token's check)."""
    make_closed(node_a)
    ca = CertAuthority(tmp_path / "ca")
    dn = X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1")
    alice = ca.store("alice", X.Identity(X.CertRole.USER, "alice"))

    async def scenario() -> rpc.RpcError:
        async with serve_replication(node_b, executor, tls=ca.store("dn-b", dn)) as target:
            await push_container(node_a.containers, CID, target.address, executor, tls=ca.store("dn-a", dn))
            async with rpc.Channel(target.address, DATA_CHANNEL_SETTINGS, alice, X.CertRole.DATANODE) as ch:
                call = rpc.Stub(ch, INTRA_DATANODE).download(pb.CopyContainerRequestProto(containerID=CID))
                with pytest.raises(rpc.RpcError) as e:
                    _ = [p async for p in call]
                return e.value

    error = asyncio.run(scenario())
    assert blocks_of(node_b) == blocks_of(node_a)
    assert error.code() is rpc.StatusCode.PERMISSION_DENIED and "alice is not a datanode" in error.details()
