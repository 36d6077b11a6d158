"""One Raft port, many groups (`RaftDivisions`, Ratis's RaftServerProxy): each node's port serves a member of
two groups, messages routed by group id; a group with no member on the port is refused GroupMismatchException;
over mutual TLS only a datanode's certificate for the member's host is taken, and a leader sends only to a
port whose certificate is a datanode's (the checks of the datanode's former RaftServerService, ported from
tests/unit/datanode/ratis/test_raft_service.py)."""

from __future__ import annotations

import asyncio

import pytest

from pyozone import rpc
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.hdds.security import x509 as X
from pyozone.proto import Raft_pb2 as pb
from pyozone.protocol.raft import RaftEnvelope, message_to_proto
from pyozone.ratis.messages import AppendEntriesRequest, LogEntry, RaftPeerId
from pyozone.ratis_server.server import RaftMember
from pyozone.ratis_server.transport import DELIVER, PeerSender, RaftDivisions, RaftGroup, RaftPeer
from tests.polling import wait_for_async
from tests.tls_certs import CertAuthority
from tests.unit.ratis_server.data_support import DataGroups, DataMachine, data_groups
from tests.unit.ratis_server.shell_support import SETTINGS, MemoryStorage, ports_of

G1, G2 = "pipeline-1", "pipeline-2"
EVIL_TERM = 99
DN = X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1")


def evil_append(sender: str, receiver: RaftPeerId, group: str) -> pb.RaftServerMessagesProto:
    """An append of a far higher term committing an entry at once: taken, it would depose the leader."""
    append = AppendEntriesRequest(
        RaftPeerId(sender), EVIL_TERM, 0, 0, (LogEntry(EVIL_TERM, 1, b"evil"),), 1, 1
    )
    return pb.RaftServerMessagesProto(messages=[message_to_proto(group, receiver, append)])


async def refused(
    groups: DataGroups, target: RaftMember, request: pb.RaftServerMessagesProto, tls: TlsStore | None = None
) -> rpc.RpcError:
    """`request` sent to `target`'s port: the error it was refused with; nothing of it was taken (no term
    moved in either group) and both groups still commit."""
    for g in (G1, G2):
        await groups.leader(g)
    terms = {g: [m.status().term for m in groups.members(g)] for g in (G1, G2)}
    settings = rpc.ChannelSettings(max_message_bytes=1 << 20)
    async with rpc.Channel(target.address, settings, tls, X.CertRole.DATANODE if tls else None) as channel:
        with pytest.raises(rpc.RpcError) as error:
            await channel.unary(DELIVER.path, request, None, timeout=10)
    for g in (G1, G2):
        assert [m.status().term for m in groups.members(g)] == terms[g]
        leader = await groups.leader(g)
        await groups.applied_everywhere(g, await leader.submit(b"after", "", 1, data=b"d"))
        assert all(b"evil" not in [p for _, p, _ in groups.machine(n, g).applied] for n in groups.nodes)
    return error.value


def run(scenario: object) -> None:
    asyncio.run(asyncio.wait_for(scenario, 90))  # type: ignore[arg-type]


def test_two_groups_share_each_nodes_port() -> None:
    async def scenario() -> None:
        async with data_groups(group_ids=(G1, G2)) as groups:
            for node in groups.nodes.values():
                assert node.divisions is not None and set(node.divisions.groups) == {G1, G2}
                assert {m.address for m in node.members.values()} == {HostPort("127.0.0.1", node.port)}
            first, second = await groups.leader(G1), await groups.leader(G2)
            a = await first.submit(b"a", "", 1, data=b"A" * 1000)
            b = await second.submit(b"b", "", 1, data=b"B" * 1000)
            await groups.applied_everywhere(G1, a)
            await groups.applied_everywhere(G2, b)
            for peer in groups.nodes:
                assert groups.machine(peer, G1).contents()[a] == (b"a", b"A" * 1000)
                assert groups.machine(peer, G2).contents()[b] == (b"b", b"B" * 1000)

    run(scenario())


def test_a_group_without_a_member_on_the_port_is_refused_group_mismatch() -> None:
    async def scenario() -> None:
        async with data_groups(group_ids=(G1, G2)) as groups:
            leader = await groups.leader(G1)
            target = next(m for m in groups.members(G1) if m is not leader)
            error = await refused(groups, target, evil_append(leader.me.id, target.me, "another-group"))
            assert error.code() is rpc.StatusCode.FAILED_PRECONDITION
            assert "GroupMismatchException" in error.details() and "another-group" in error.details()

    run(scenario())


def test_a_stopped_groups_member_leaves_the_port_to_the_others() -> None:
    """A member that stops (or fails) leaves its group; messages for it are refused as for an unknown
    group, and the other group on the port goes on."""

    async def scenario() -> None:
        async with data_groups(group_ids=(G1, G2)) as groups:
            leader = await groups.leader(G1)
            target = next(m for m in groups.members(G1) if m is not leader)
            await groups.stop(target.me, G1)
            node = groups.nodes[target.me]
            assert node.divisions is not None and node.divisions.groups == (G2,)
            other = node.members[G2]
            settings = rpc.ChannelSettings(max_message_bytes=1 << 20)
            async with rpc.Channel(other.address, settings) as channel:
                with pytest.raises(rpc.RpcError) as error:
                    await channel.unary(
                        DELIVER.path, evil_append(leader.me.id, target.me, G1), None, timeout=10
                    )
            assert error.value.code() is rpc.StatusCode.FAILED_PRECONDITION
            second = await groups.leader(G2)
            await groups.applied_everywhere(G2, await second.submit(b"x", "", 1, data=b"x"))

    run(scenario())


def test_a_port_takes_one_member_per_group_and_of_its_role() -> None:
    async def scenario() -> None:
        port = ports_of(1)[0]
        address = HostPort("127.0.0.1", port)
        divisions = RaftDivisions(address, None, X.CertRole.DATANODE, SETTINGS.append_byte_limit)
        group = RaftGroup(G1, (RaftPeer(RaftPeerId("dn1"), address),))
        first = RaftMember(
            RaftPeerId("dn1"), group, MemoryStorage(), DataMachine(), SETTINGS, server=divisions
        )
        with pytest.raises(ValueError, match="cannot share the Raft port"):
            await first.start()  # an OM member (the default role) on a datanode's port
        member = RaftMember(
            RaftPeerId("dn1"),
            group,
            MemoryStorage(),
            DataMachine(),
            SETTINGS,
            role=X.CertRole.DATANODE,
            server=divisions,
        )
        await member.start()
        twin = RaftMember(
            RaftPeerId("dn1"),
            group,
            MemoryStorage(),
            DataMachine(),
            SETTINGS,
            role=X.CertRole.DATANODE,
            server=divisions,
        )
        with pytest.raises(ValueError, match="already has a member"):
            await twin.start()
        await member.stop()

    run(scenario())


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def dn_stores(ca: CertAuthority) -> dict[str, TlsStore]:
    return {f"dn{i}": ca.store(f"dn{i}", DN) for i in (1, 2, 3)}


@pytest.mark.parametrize(
    ("caller", "why"),
    [
        (X.Identity(X.CertRole.USER, "alice"), "alice may not send Raft messages to group pipeline-1"),
        (X.Identity(X.CertRole.OM, "om", "127.0.0.1"), "om@127.0.0.1 may not send Raft messages"),
        (X.Identity(X.CertRole.DATANODE, "dn", "10.9.9.9"), "dn@10.9.9.9 may not speak for dn1"),
    ],
    ids=["user", "om", "datanode-of-another-host"],
)
def test_over_tls_only_a_datanode_certificate_for_the_members_host_is_taken(
    ca: CertAuthority, dn_stores: dict[str, TlsStore], caller: X.Identity, why: str
) -> None:
    store = ca.store(
        f"caller-{caller.common_name}", caller, hosts=("127.0.0.1",) if caller.role.is_service else None
    )

    async def scenario() -> None:
        async with data_groups(group_ids=(G1, G2), tls=dn_stores) as groups:
            leader = await groups.leader(G1)
            target = next(m for m in groups.members(G1) if m is not leader and m.me.id != "dn1")
            error = await refused(groups, target, evil_append("dn1", target.me, G1), tls=store)
            assert error.code() is rpc.StatusCode.PERMISSION_DENIED
            assert why in error.details()

    run(scenario())


class _Recorder:
    """A division taking every message of group G1 (its checks passed), recording them."""

    me = RaftPeerId("dn2")
    group = RaftGroup(G1, ())
    running = True

    def __init__(self) -> None:
        self.received: list[RaftEnvelope] = []

    def refusal(self, envelopes: list[RaftEnvelope], context: rpc.CallContext) -> tuple[None, str]:
        return None, ""

    def receive(self, envelopes: list[RaftEnvelope]) -> None:
        self.received.extend(envelopes)


@pytest.mark.parametrize("server", ["datanode", "om", "plaintext"])
def test_a_leader_sends_only_to_a_port_with_a_datanodes_certificate(ca: CertAuthority, server: str) -> None:
    """A port presenting OM's certificate does not verify as a datanode's; a plaintext one fails the
    handshake: the sender's message is dropped and none reaches the division behind that port (which
    takes it from a datanode's port)."""

    async def scenario() -> None:
        address = HostPort("127.0.0.1", ports_of(1)[0])
        identity = {"datanode": DN, "om": X.Identity(X.CertRole.OM, "om", "127.0.0.1")}.get(server)
        port_tls = ca.store(f"{server}-port", identity) if identity is not None else None
        divisions = RaftDivisions(address, port_tls, X.CertRole.DATANODE, SETTINGS.append_byte_limit)
        recorder = _Recorder()
        divisions.register(recorder)  # type: ignore[arg-type]
        await divisions.start()
        sender = PeerSender(
            G1,
            RaftPeer(RaftPeerId("dn2"), address),
            ca.store("dn-leader", DN),
            X.CertRole.DATANODE,
            SETTINGS.append_byte_limit,
        )
        try:
            sender.send(AppendEntriesRequest(RaftPeerId("dn1"), 1, 0, 0, (), 0, 1))
            await wait_for_async(lambda: sender.dropped or recorder.received, 15, "the message's fate")
            if server == "datanode":
                assert len(recorder.received) == 1 and sender.dropped == 0
            else:
                assert recorder.received == [] and sender.dropped == 1
        finally:
            await sender.close()
            await divisions.stop()

    run(scenario())
