"""A member's messages to one peer (PeerSender): queued without waiting for the peer, the oldest append
dropped when the queue is full (Raft resends what is lost), and a dead peer costs a failing call, not a
stuck loop."""

from __future__ import annotations

import asyncio

import pytest

from pyozone.common.net import HostPort
from pyozone.hdds.security.x509 import CertRole
from pyozone.ratis.messages import AppendEntriesRequest, RaftPeerId, RequestVoteReply
from pyozone.ratis_server.transport import PeerSender, RaftGroup, RaftPeer
from tests.polling import wait_for_async
from tests.unit.ratis_server.shell_support import ports_of

ME = RaftPeerId("om1")


def append(call_id: int) -> AppendEntriesRequest:
    return AppendEntriesRequest(ME, 1, 0, 0, (), 0, call_id)


def test_a_full_queue_drops_its_oldest_append_first() -> None:
    async def scenario() -> None:
        (port,) = ports_of(1)  # nobody listens there: every call fails
        peer = RaftPeer(RaftPeerId("om2"), HostPort("127.0.0.1", port))
        sender = PeerSender("g", peer, None, CertRole.OM, 1 << 20, queue_messages=3)
        vote = RequestVoteReply(ME, 1, True, False)
        for message in (vote, append(1), append(2), append(3)):
            sender.send(message)  # never waits for the peer
        assert sender.queued == (vote, append(2), append(3))
        assert sender.dropped == 1
        # The call fails (the peer is dead): what it carried is dropped, and the sender waits for more.
        await wait_for_async(lambda: not sender.queued and sender.dropped == 4, 10, "the failed call dropped")
        sender.send(append(4))
        await wait_for_async(lambda: sender.dropped == 5, 10, "the next call failed too")
        await sender.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_a_group_lists_each_member_once() -> None:
    address = HostPort("127.0.0.1", 9872)
    group = RaftGroup("g", (RaftPeer(ME, address), RaftPeer(RaftPeerId("om2"), address)))
    assert group.address(RaftPeerId("om2")) == address and group.address(RaftPeerId("om3")) is None
    with pytest.raises(ValueError, match="listed twice"):
        RaftGroup("g", (RaftPeer(ME, address), RaftPeer(ME, address)))
