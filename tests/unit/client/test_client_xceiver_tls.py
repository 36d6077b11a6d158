"""A client's streams to a datanode over mutual TLS (pyozone.rpc): a finished stream serves the next block
as without TLS, and one opened before a renewal of the client's certificate serves no next user."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.common.tls import TlsStore
from pyozone.datanode.xceiver import xceiver_server
from pyozone.framework.datanode import ChannelPool
from pyozone.hdds.locations import DatanodeRef
from pyozone.hdds.security import x509 as X
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.rpc.sync import run_sync
from tests.tls_certs import CertAuthority

DN = X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1")
ALICE = X.Identity(X.CertRole.USER, "alice")
TIMEOUT_S = 5.0


class Echo:
    """The datanode's send() answering each request with its type; `streams` counts the streams opened."""

    streams = 0

    async def send(
        self, requests: AsyncIterator[pb.ContainerCommandRequestProto], context: rpc.CallContext
    ) -> AsyncIterator[pb.ContainerCommandResponseProto]:
        Echo.streams += 1
        async for request in requests:
            yield pb.ContainerCommandResponseProto(cmdType=request.cmdType, result=pb.SUCCESS)


@pytest.fixture
def ca(tmp_path: Path) -> CertAuthority:
    return CertAuthority(tmp_path / "ca")


@pytest.fixture
def datanode(ca: CertAuthority) -> Iterator[DatanodeRef]:
    server = xceiver_server()
    server.add_service(rpc.service(pb, "XceiverClientProtocolService"), Echo())
    port = run_sync(server.start("127.0.0.1", 0, ca.store("dn", DN)), 5)
    yield DatanodeRef("00000000-0000-4000-8000-000000000001", "dn", "127.0.0.1", port)
    run_sync(server.stop(0), 5)


def _echo() -> pb.ContainerCommandRequestProto:
    return pb.ContainerCommandRequestProto(cmdType=pb.Echo, echo=pb.EchoRequestProto())


def test_a_finished_stream_serves_the_next_block_until_the_certificate_is_renewed(
    ca: CertAuthority, datanode: DatanodeRef
) -> None:
    alice: TlsStore = ca.store("alice", ALICE)

    async def scenario() -> None:
        pool = ChannelPool(alice)
        first = pool.stream(datanode, TIMEOUT_S)
        assert (await first.call(_echo())).cmdType == pb.Echo
        await first.close()
        assert pool.stream(datanode, TIMEOUT_S) is first  # the first stream is reused too
        await first.close()
        alice.generation += 1  # what reloading renewed files does (TlsStore.material)
        renewed = pool.stream(datanode, TIMEOUT_S)
        assert renewed is not first
        assert (await renewed.call(_echo())).result == pb.SUCCESS  # over a connection of the new generation
        await pool.close()

    Echo.streams = 0
    asyncio.run(scenario())
    assert Echo.streams == 2
