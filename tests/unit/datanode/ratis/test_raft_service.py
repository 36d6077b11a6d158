"""The pipeline log's transport on real sockets (pyozone.rpc, mutual TLS as hdds.grpc.tls.enabled makes it):
a leader's LogAppender streams entries to a follower's RaftServerService and hears its answers; only a
datanode's certificate may send entries, and a leader sends only to a server whose certificate is a
datanode's; a follower that goes away fails the stream at once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from pyozone import rpc
from pyozone.common.tls import TlsStore
from pyozone.datanode.ratis import RaftServerService, add_raft_service
from pyozone.datanode.ratis.appender import LogAppender
from pyozone.datanode.ratis.service import SERVER_SETTINGS
from pyozone.hdds.security import x509 as X
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.protocol import MAX_DATA_MESSAGE_BYTES
from pyozone.protocol.ratis import APPEND_ENTRIES, AppendReply
from tests.polling import wait_for_async
from tests.tls_certs import CertAuthority

DN = X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1")
OM = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
ALICE = X.Identity(X.CertRole.USER, "alice")
PID = "33333333-0000-4000-8000-000000000001"


class _NoGroups:
    """A follower in no pipeline: every entry is answered GROUP_MISMATCH (and ends the stream)."""

    self_id = "dn-follower"

    def get(self, pipeline_id: str) -> object:
        return None


class _StuckGroups(_NoGroups):
    """A follower whose pipeline never answers an entry (its disk hangs)."""

    def get(self, pipeline_id: str) -> object:
        return self

    def receive(
        self, leader_id: str, index: int, entry: pb.ContainerCommandRequestProto
    ) -> asyncio.Future[AppendReply]:
        return asyncio.get_running_loop().create_future()


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


@asynccontextmanager
async def follower(
    tls: TlsStore | None, groups: _NoGroups | None = None
) -> AsyncIterator[tuple[str, rpc.Server]]:
    server = rpc.Server(SERVER_SETTINGS)
    add_raft_service(server, RaftServerService(groups or _NoGroups()))  # type: ignore[arg-type]
    port = await server.start("127.0.0.1", 0, tls)
    try:
        yield f"127.0.0.1:{port}", server
    finally:
        await server.stop(0)


def entry(index: int) -> bytes:
    return pb.AppendEntriesRequestProto(pipelineID=PID, index=index).SerializeToString()


async def append_one(target: str, tls: TlsStore | None) -> tuple[list[AppendReply], list[str]]:
    """One entry through a LogAppender; its replies and its failure reports."""
    replies: list[AppendReply] = []
    failures: list[str] = []
    failed = asyncio.Event()

    def on_failure(member: str, reason: str) -> None:
        failures.append(reason)
        failed.set()

    appender = LogAppender("dn-follower", target, lambda _, r: replies.append(r), on_failure, 10.0, tls)
    appender.send(1, entry(1))
    await asyncio.wait_for(failed.wait(), 10)
    await appender.wait_closed()
    return replies, failures


def test_a_leader_hears_a_followers_answer_over_mutual_tls(ca: CertAuthority) -> None:
    async def scenario() -> tuple[list[AppendReply], list[str]]:
        async with follower(ca.store("dn-f", DN)) as (target, _):
            return await append_one(target, ca.store("dn-l", DN))

    replies, failures = asyncio.run(scenario())
    assert [(r.index, r.result) for r in replies] == [(1, pb.GROUP_MISMATCH)]
    assert "dn-follower is not in pipeline" in replies[0].message
    assert failures == ["it ended the stream"]


def test_only_a_datanode_certificate_sends_entries(ca: CertAuthority) -> None:
    async def scenario() -> rpc.RpcError:
        async with follower(ca.store("dn-f", DN)) as (target, _):
            settings = rpc.ChannelSettings(max_message_bytes=MAX_DATA_MESSAGE_BYTES)
            alice = ca.store("alice", ALICE)
            async with rpc.Channel(target, settings, alice, X.CertRole.DATANODE) as channel:
                append = channel.stream_stream(APPEND_ENTRIES, pb.AppendEntriesReplyProto.FromString)
                call = append([entry(1)])
                with pytest.raises(rpc.RpcError) as e:
                    _ = [reply async for reply in call]
                return e.value

    error = asyncio.run(scenario())
    assert error.code() is rpc.StatusCode.PERMISSION_DENIED
    assert "alice is not a datanode" in error.details()


@pytest.mark.parametrize("server", ["om", "plaintext"])
def test_a_leader_refuses_a_follower_that_is_no_datanode(ca: CertAuthority, server: str) -> None:
    """A server presenting OM's certificate does not verify as a datanode; a plaintext one fails the
    handshake: the follower fails without an entry reaching it."""

    async def scenario() -> tuple[list[AppendReply], list[str]]:
        async with follower(ca.store("om", OM) if server == "om" else None) as (target, _):
            return await append_one(target, ca.store("dn-l", DN))

    replies, failures = asyncio.run(scenario())
    assert replies == [] and len(failures) == 1 and failures[0].startswith("UNAVAILABLE"), failures


def test_a_follower_that_goes_away_fails_the_stream() -> None:
    """A follower stopped while an entry waits for its answer (a killed datanode's connections reset)
    fails its appender at once, not after the request timeout."""

    async def scenario() -> tuple[list[str], float]:
        failures: list[str] = []
        failed = asyncio.Event()

        def on_failure(member: str, reason: str) -> None:
            failures.append(reason)
            failed.set()

        async with follower(None, _StuckGroups()) as (target, server):
            appender = LogAppender("dn-follower", target, lambda *_: None, on_failure, 60.0)
            appender.send(1, entry(1))
            await wait_for_async(lambda: any(c._calls for c in server.connections), what="the entry received")
            stopped = time.monotonic()
            await server.stop(0)
            await asyncio.wait_for(failed.wait(), 5)
            await appender.wait_closed()
            return failures, time.monotonic() - stopped

    failures, took = asyncio.run(scenario())
    assert len(failures) == 1 and failures[0].startswith("UNAVAILABLE"), failures
    assert took < 5
