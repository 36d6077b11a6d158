"""A datanode's REPLICATION service on 127.0.0.1 as the daemon runs it, and a channel to it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from concurrent.futures import Executor
from contextlib import asynccontextmanager
from dataclasses import dataclass

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.datanode.replication import ReplicationService, add_replication_service
from pyozone.datanode.replication.service import INTRA_DATANODE, SERVER_SETTINGS
from pyozone.datanode.xceiver.tokens import TokenVerifier
from tests.unit.datanode.dns_helpers import Node, started


@dataclass
class Served:
    address: HostPort
    channel: rpc.Channel

    @property
    def replication(self) -> rpc.Stub:
        return rpc.Stub(self.channel, INTRA_DATANODE)


@asynccontextmanager
async def serve_replication(
    node: Node,
    executor: Executor,
    max_bytes: int | None = None,
    tokens: TokenVerifier | None = None,
    tls: TlsStore | None = None,
) -> AsyncIterator[Served]:
    """`tls`: the node's certificate (mutual TLS); the channel then presents it too."""
    server = rpc.Server(SERVER_SETTINGS)
    add_replication_service(server, ReplicationService(node.containers, executor, max_bytes, tokens))
    async with started(server, tls) as (address, channel):
        yield Served(address, channel)
