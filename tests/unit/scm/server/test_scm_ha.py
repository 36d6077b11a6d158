"""SCM HA in one process (issue 31): three SCM daemons of one service (ozone.scm.service.ids) on
real sockets, their Raft group on the shell, fake datanodes heartbeating every SCM. A follower refuses the
block protocol naming the leader at its block port; an allocation the leader answered is in every SCM's
scm.db; when the leader stops another leads and allocations go on, never reusing an id; the service
restarted resumes from each scm.db's transaction info."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pyozone import rpc
from pyozone.cli.main import main
from pyozone.config import OzoneConfiguration
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.states import PipelineState
from pyozone.hdds.store.codec import IntKeyCodec
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb
from pyozone.proto import ScmBlockLocationProtocol_pb2 as pb
from pyozone.proto import hdds_pb2
from pyozone.scm.server import ScmDaemon, ServerStartError
from pyozone.scm.server.ha import ScmRaft, scm_raft_settings
from pyozone.scm.store.layout import scm_metadata_dir, version_file
from pyozone.scm.store.version import open_scm_store
from tests.polling import wait_for_async
from tests.unit.ratis_server.shell_support import ports_of
from tests.unit.scm.server.scm_server_helpers import (
    FAST,
    FakeDatanode,
    admin_stub,
    channel,
    http_get,
    running_scm,
    scm_conf,
)
from tests.unit.scm.server.test_scm_server_block import block_stub

NODES = ("scm1", "scm2", "scm3")
PORTS = ("client", "block.client", "datanode", "ratis")


@dataclass
class ServiceDatanode:
    """One datanode heartbeating every SCM of the service (Ozone's datanodes report to all SCMs), with
    one view of the pipelines it runs."""

    views: dict[str, FakeDatanode]
    leads: dict[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for view in self.views.values():
            view.leads = self.leads

    async def heartbeat(self, scms: dict[str, ScmDaemon]) -> None:
        for node, view in self.views.items():
            if node not in scms:
                continue
            try:
                if scms[node].core.nodes.get(view.uuid) is None:
                    await view.register()
                await view.heartbeat()
            except rpc.RpcError:
                continue


@dataclass
class Service:
    tmp_path: Path
    values: dict[str, str]
    daemons: dict[str, ScmDaemon] = field(default_factory=dict)
    datanodes: list[ServiceDatanode] = field(default_factory=list)

    def node_values(self, node: str) -> dict[str, str]:
        return {**self.values, "ozone.scm.node.id": node, "ozone.metadata.dirs": str(self.tmp_path / node)}

    def conf(self, node: str) -> OzoneConfiguration:
        return OzoneConfiguration(self.node_values(node))

    def cli(self, node: str, *flags: str, extra: dict[str, str] | None = None) -> int:
        """`pyozone scm FLAGS` on `node` (`extra`: keys over the node's)."""
        values = {**self.node_values(node), **(extra or {})}
        return main(["scm", *flags, *(a for k, v in values.items() for a in ("-D", f"{k}={v}"))])

    def port(self, node: str, key: str) -> int:
        return int(self.values[f"ozone.scm.{key}.port.scmservice.{node}"])

    async def start(self, node: str) -> ScmDaemon:
        storage, store = open_scm_store(self.conf(node))
        daemon = ScmDaemon(self.conf(node), storage, store)
        try:
            await daemon.start()
        except BaseException:
            await daemon.stop(0.2)
            raise
        self.daemons[node] = daemon
        return daemon

    async def stop(self, node: str) -> None:
        await self.daemons.pop(node).stop(0.2)

    async def restart(self) -> None:
        for node in list(self.daemons):
            await self.stop(node)
        await asyncio.gather(*(self.start(node) for node in NODES))

    async def beat(self) -> None:
        for dn in self.datanodes:
            await dn.heartbeat(self.daemons)

    async def leader(self, *, writable: bool = True) -> ScmDaemon:
        """The ready leader, heartbeats going on; `writable`: out of safe mode with an OPEN pipeline."""

        async def found() -> ScmDaemon | None:
            await self.beat()
            for daemon in self.daemons.values():
                assert daemon.ha is not None
                if not daemon.ha.context.is_leader_ready():
                    continue
                core = daemon.core
                if not writable or (
                    not core.safe_mode.in_safe_mode()
                    and core.pipelines.pipelines(RATIS_THREE, PipelineState.OPEN)
                ):
                    return daemon
            return None

        return await wait_for_async(found, 30, "a ready leader", 0.05)

    def node_of(self, daemon: ScmDaemon) -> str:
        assert daemon.node is not None
        return daemon.node.node_id


def planned(tmp_path: Path, **extra: str) -> Service:
    ports = iter(ports_of(5 * len(NODES)))
    values = {
        **FAST,
        **extra,
        "ozone.scm.service.ids": "scmservice",
        "ozone.scm.nodes.scmservice": ",".join(NODES),
        "ozone.scm.primordial.node.id": "scm1",
        "ozone.scm.ha.ratis.leader.election.timeout": "300ms",
        "ozone.scm.ha.ratis.request.timeout": "5s",
    }
    for node in NODES:
        values[f"ozone.scm.address.scmservice.{node}"] = "127.0.0.1"
        values[f"ozone.scm.http-address.scmservice.{node}"] = f"127.0.0.1:{next(ports)}"
        for key in PORTS:
            values[f"ozone.scm.{key}.port.scmservice.{node}"] = str(next(ports))
    return Service(tmp_path, values)


@asynccontextmanager
async def service(tmp_path: Path, **extra: str) -> AsyncIterator[Service]:
    """`scm --init` on every SCM (the primordial alone initialises), the primordial started, then `scm
    --bootstrap` and start on the others, as an operator does."""
    running = planned(tmp_path, **extra)
    for node in NODES:
        assert running.cli(node, "--init") == 0
    assert [version_file(scm_metadata_dir(running.conf(n))).exists() for n in NODES] == [True, False, False]
    try:
        await running.start("scm1")
        async with channel(running.port("scm1", "datanode")) as ch:
            with pytest.raises(rpc.RpcError) as refused:  # no leader without a second SCM
                await FakeDatanode(1, ch).register()
        assert "UNAVAILABLE" in str(refused.value) and "scm1 knows no leader" in refused.value.details()
        for node in NODES[1:]:
            assert await asyncio.to_thread(running.cli, node, "--bootstrap") == 0
            await running.start(node)
        assert len({d.core.cluster_id for d in running.daemons.values()}) == 1
        assert len({d.storage.scm_uuid for d in running.daemons.values()}) == 3
        async with AsyncExitStack() as stack:
            channels = [await stack.enter_async_context(channel(running.port(n, "datanode"))) for n in NODES]
            for i in range(1, 4):
                views = {node: FakeDatanode(i, ch) for node, ch in zip(NODES, channels, strict=True)}
                running.datanodes.append(ServiceDatanode(views))
            yield running
    finally:
        for node in list(running.daemons):
            await running.stop(node)


def run(coro: Any) -> None:
    asyncio.run(asyncio.wait_for(coro, 90))


def allocate_request() -> pb.AllocateScmBlockRequestProto:
    return pb.AllocateScmBlockRequestProto(
        size=1 << 20, numBlocks=1, type=hdds_pb2.RATIS, factor=hdds_pb2.THREE, owner="om1"
    )


async def allocate(svc: Service, node: str) -> pb.AllocateScmBlockResponseProto:
    async with channel(svc.port(node, "block.client")) as ch:
        return await block_stub(ch).allocateScmBlock(allocate_request())


def container_record(daemon: ScmDaemon, container_id: int) -> bytes | None:
    """The container's record in the SCM's scm.db (committed: not the leader's overlay)."""
    return daemon.store.backend.get("containers", IntKeyCodec().encode(container_id))


def test_a_follower_refuses_block_calls_naming_the_leader_and_answers_its_identity(
    tmp_path: Path, capsys: Any
) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            leader = await svc.leader(writable=False)
            leader_node = svc.node_of(leader)
            follower = next(n for n in NODES if n != leader_node)
            async with channel(svc.port(follower, "block.client")) as ch:
                with pytest.raises(rpc.RpcError) as refused:
                    await block_stub(ch).allocateScmBlock(allocate_request())
                info = await block_stub(ch).getScmInfo(admin_pb.GetScmInfoRequestProto())
            assert refused.value.code() is rpc.StatusCode.UNAVAILABLE
            assert (
                f"Server:{follower} is not the leader. Suggested leader is "
                f"Server:127.0.0.1:{svc.port(leader_node, 'block.client')}."
            ) in refused.value.details()
            assert info.clusterId == leader.core.cluster_id
            status, ratis = await http_get(leader.http_port, "/api/v1/ratis")
            assert status == 200 and ratis["ha"] and ratis["role"] == "LEADER" and ratis["ready"]
            assert ratis["nodeId"] == leader_node and {f["nodeId"] for f in ratis["followers"]} == (
                set(NODES) - {leader_node}
            )
            _, ratis = await http_get(svc.daemons[follower].http_port, "/api/v1/ratis")
            assert (ratis["role"], ratis["leader"], ratis["ready"]) == ("FOLLOWER", leader_node, False)
            async with channel(svc.port(follower, "client")) as ch:  # the admin protocol alike
                with pytest.raises(rpc.RpcError) as refused:
                    await admin_stub(ch).inSafeMode(admin_pb.InSafeModeRequestProto())
                # but Ozone's ADMIN_COMMAND_TYPE acts on the SCM called, leader or not
                await admin_stub(ch).stopReplicationManager(admin_pb.StopReplicationManagerRequestProto())
            assert not svc.daemons[follower].core.replication.is_running()
            assert f"Suggested leader is Server:127.0.0.1:{svc.port(leader_node, 'client')}." in (
                refused.value.details()
            )
            # a bootstrap again is a no-op; one over an SCM of another cluster is refused
            joined = next(n for n in NODES[1:] if n != leader_node)
            assert await asyncio.to_thread(svc.cli, joined, "--bootstrap") == 0
            other = {"ozone.metadata.dirs": str(tmp_path / "other")}
            assert svc.cli(joined, "--init", extra={**other, "ozone.scm.primordial.node.id": joined}) == 0
            capsys.readouterr()
            assert await asyncio.to_thread(svc.cli, joined, "--bootstrap", extra=other) != 0
            assert f"SCM {joined} cannot bootstrap: it is already initialized with cluster id" in (
                capsys.readouterr().err
            )

    run(scenario())


def test_an_allocation_is_in_every_scm_db_and_goes_on_after_the_leader_stops(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            leader = await svc.leader()
            first = await allocate(svc, svc.node_of(leader))
            block = first.blocks[0].containerBlockID

            async def everywhere() -> bool:
                await svc.beat()
                return all(container_record(d, block.containerID) is not None for d in svc.daemons.values())

            await wait_for_async(everywhere, 10, "the container in every scm.db", 0.05)

            await svc.stop(svc.node_of(leader))
            successor = await svc.leader()
            assert svc.node_of(successor) != svc.node_of(leader)
            second = await allocate(svc, svc.node_of(successor))
            local_ids = {block.localID, second.blocks[0].containerBlockID.localID}
            assert len(local_ids) == 2, "a local id handed out twice across the failover"

    run(scenario())


def test_a_leader_cut_off_from_its_followers_answers_no_call_from_its_own_state(tmp_path: Path) -> None:
    """A leader runs a call only after a ReadIndex round (issue 31's Jepsen test caught a deposed leader
    answering getContainer from a stale state): with both followers gone it still thinks it leads until
    it steps down, and refuses the call rather than answer it."""

    async def scenario() -> None:
        async with service(tmp_path) as svc:
            leader = await svc.leader()
            node = svc.node_of(leader)
            container = (await allocate(svc, node)).blocks[0].containerBlockID.containerID
            assert leader.ha is not None
            rounds = leader.ha.read_rounds
            request = admin_pb.GetContainerRequestProto(containerID=container)
            async with channel(svc.port(node, "client")) as ch:
                await admin_stub(ch).getContainer(request)
                assert leader.ha.read_rounds > rounds
                for follower in [n for n in NODES if n != node]:
                    await svc.stop(follower)
                assert leader.ha.context.is_leader_ready()  # it does not know yet
                with pytest.raises(rpc.RpcError) as refused:
                    await admin_stub(ch).getContainer(request)
            assert refused.value.code() is rpc.StatusCode.UNAVAILABLE
            assert f"Server:{node} is not the leader" in refused.value.details()

    run(scenario())


def test_bootstrap_is_for_the_other_scms_of_an_insecure_service(tmp_path: Path, capsys: Any) -> None:
    svc = planned(tmp_path)
    assert svc.cli("scm1", "--bootstrap") == 0
    assert "scm1 is the primordial SCM: bootstrap skipped" in capsys.readouterr().out
    lone = ["scm", "--bootstrap", "-D", f"ozone.metadata.dirs={tmp_path / 'lone'}"]
    assert main(lone) != 0
    assert "--bootstrap is for an SCM of an HA service: set ozone.scm.service.ids" in capsys.readouterr().err
    assert svc.cli("scm2", "--bootstrap") != 0  # the primordial is not running
    assert "SCM scm2 cannot bootstrap: no other SCM of service scmservice answered" in capsys.readouterr().err
    assert not version_file(scm_metadata_dir(svc.conf("scm2"))).exists()


def test_a_restarted_service_resumes_from_each_scm_db_and_allocates_new_ids(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            first = (await allocate(svc, svc.node_of(await svc.leader()))).blocks[0].containerBlockID

            async def everywhere() -> bool:  # a loaded follower may apply it after the answer
                await svc.beat()
                return all(container_record(d, first.containerID) is not None for d in svc.daemons.values())

            await wait_for_async(everywhere, 10, "the container in every scm.db", 0.05)
            await svc.restart()
            assert all(d.ha is not None and d.ha.db_applied.index > 0 for d in svc.daemons.values())
            leader = await svc.leader()
            assert container_record(leader, first.containerID) is not None
            second = (await allocate(svc, svc.node_of(leader))).blocks[0].containerBlockID
            assert second.localID != first.localID

    run(scenario())


def test_scm_raft_settings_come_from_ozone_scm_ha_ratis_keys() -> None:
    defaults = scm_raft_settings(OzoneConfiguration())
    assert (defaults.rpc_timeout_min_ms, defaults.rpc_timeout_max_ms) == (5000, 5200)
    assert defaults.pre_vote and defaults.purge_gap > 10**15  # purge.enabled false: never purged
    assert defaults.append_byte_limit == 32 * 1024 * 1024 and defaults.retry_cache_expiry_ms == 60_000
    tuned = scm_raft_settings(
        OzoneConfiguration(
            {
                "ozone.scm.ha.ratis.leader.election.timeout": "1s",
                "ozone.scm.ha.ratis.server.leaderelection.pre-vote": "false",
            }
        )
    )
    assert (tuned.rpc_timeout_min_ms, tuned.rpc_timeout_max_ms, tuned.pre_vote) == (1000, 1200, False)
    with pytest.raises(ValueError, match=r"ozone.scm.ha.ratis.log.purge.gap must be positive"):
        scm_raft_settings(OzoneConfiguration({"ozone.scm.ha.ratis.log.purge.gap": "0"}))


def test_a_lone_scm_runs_no_raft_member(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_scm(scm_conf(tmp_path)) as scm:
            assert scm.node is None and scm.ha is None and scm.raft is None
            assert scm.core.context.is_leader_ready() and not scm.core.context.ha
            assert await http_get(scm.http_port, "/api/v1/ratis") == (200, {"ha": False})

    run(scenario())


def test_a_follower_down_while_the_leader_allocates_catches_up_from_the_log(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            leader = await svc.leader()
            follower = next(n for n in NODES if n != svc.node_of(leader))
            await svc.stop(follower)
            blocks = [(await allocate(svc, svc.node_of(leader))).blocks[0].containerBlockID for _ in range(3)]
            await svc.start(follower)

            async def caught_up() -> bool:
                await svc.beat()
                daemon = svc.daemons[follower]
                assert daemon.ha is not None
                return daemon.ha.context.state_machine_ready() and all(
                    container_record(daemon, b.containerID) is not None for b in blocks
                )

            await wait_for_async(caught_up, 20, "the restarted follower caught up", 0.05)
            assert len({b.localID for b in blocks}) == 3

    run(scenario())


def test_a_restarted_follower_serves_datanodes_only_once_it_applied_the_leaders_commit_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review R19 D3: a restarted follower took its own commit index (0, or its stale one) as its catch-up
    target when it learned the leader, so it said caught up at once and took datanode calls on a
    half-replayed table (StateMachineReadyRule). The target is the leader's commit index its last append
    carried."""
    passed: list[int] = []
    gate = ScmRaft.check_caught_up

    def counted(self: ScmRaft) -> None:
        gate(self)
        if self.node.node_id == follower and self.member.running:
            passed.append(self.member.status().applied_index)

    async def scenario() -> None:
        nonlocal follower
        # a container per block (each allocation an entry), appends of a few entries (a catch-up of many)
        small = {
            "ozone.scm.container.size": "1MB",
            "ozone.scm.block.size": "1MB",
            "ozone.scm.ha.ratis.log.appender.queue.byte-limit": "16KB",
        }
        async with service(tmp_path, **small) as svc:
            leader = await svc.leader()
            follower = next(n for n in NODES if n != svc.node_of(leader))
            await svc.stop(follower)
            for _ in range(60):
                await allocate(svc, svc.node_of(leader))
            assert leader.raft is not None
            committed = leader.raft.status().commit_index
            monkeypatch.setattr(ScmRaft, "check_caught_up", counted)
            daemon = await svc.start(follower)
            assert daemon.ha is not None

            async def caught_up() -> bool:
                await svc.beat()  # datanodes call it meanwhile: each call passes its gate or is refused
                return daemon.ha.context.state_machine_ready()  # type: ignore[union-attr]

            await wait_for_async(caught_up, 20, "the restarted follower caught up", 0.01)
            for _ in range(5):
                await svc.beat()
            assert passed, "no datanode call reached the restarted follower"
            assert min(passed) >= committed, (committed, passed[:5])

    follower = ""
    run(scenario())


def test_an_scm_db_a_lone_scm_wrote_is_refused_in_a_service(tmp_path: Path) -> None:
    svc = planned(tmp_path)
    assert svc.cli("scm1", "--init") == 0
    _, store = open_scm_store(svc.conf("scm1"))
    store.apply(("validCerts", IntKeyCodec().encode(7), b"{}"))  # a certificate a lone CA issued
    store.close()

    async def scenario() -> None:
        with pytest.raises(ServerStartError, match=r"holds records a lone SCM wrote \(no #TRANSACTIONINFO\)"):
            await svc.start("scm1")

    run(scenario())
