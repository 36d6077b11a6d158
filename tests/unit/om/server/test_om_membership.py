"""Adding and removing an OM of an HA service in one process (om/server/membership.py): three OM daemons of
one service on real sockets (test_om_ha's `Service`), a fourth OM bootstrapped into it (`--bootstrap`: the
leader adds it as a learner, it catches up by log, then counts), one decommissioned; the refusals Ozone
gives for a node outside the configuration, the leader, an unknown node, a node not listed as
decommissioned, and two changes at once; an OM that is no member refuses to start without --bootstrap."""

from __future__ import annotations

import argparse
import asyncio
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pyozone import rpc
from pyozone.cli.admin.om import run_decommission
from pyozone.common.cli_options import CLIError
from pyozone.common.net import HostPort
from pyozone.common.om_ha import OmNodeDetails
from pyozone.framework.om_admin import OmAdminError
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.om.metadata import VOLUME_TABLE, volume_key
from pyozone.om.server import OmDaemon, ServerStartError, membership
from pyozone.om.server.retry_cache import AnsweredStatus
from pyozone.protocol.om_admin import (
    ADMIN_SERVICE,
    bootstrap_request,
    configuration_answer,
    decommission_request,
    node_info,
    transfer_request,
)
from pyozone.ratis.messages import RaftPeerId
from pyozone.ratis_server.transport import RaftGroup, RaftPeer
from tests.polling import wait_for_async
from tests.unit.om.server.test_om_ha import Service, create_volumes, run, service
from tests.unit.om.test_om_server import om_channel
from tests.unit.ratis_server.shell_support import ports_of

ADMIN = rpc.ServiceSpec.of(ADMIN_SERVICE)
NODES_KEY = "ozone.om.nodes.omservice"
DECOMMISSIONED_KEY = "ozone.om.decommissioned.nodes.omservice"


def plan_fourth(svc: Service) -> dict[str, str]:
    """om4's keys (not yet in ozone.om.nodes): the caller adds them where an OM should know om4."""
    rpc_port, http_port, ratis_port = ports_of(3)
    return {
        "ozone.om.address.omservice.om4": f"127.0.0.1:{rpc_port}",
        "ozone.om.http-address.omservice.om4": f"127.0.0.1:{http_port}",
        "ozone.om.ratis.port.omservice.om4": str(ratis_port),
    }


async def restart_all(svc: Service, but: str = "") -> None:
    """Each running OM (but `but`) stopped and started again with `svc.values`, one at a time."""
    for node in sorted(set(svc.daemons) - {but}):
        await svc.stop(node)
        await svc.start(node)


async def start_bootstrap(svc: Service, node: str, force: bool = False) -> OmDaemon:
    daemon = OmDaemon(svc.node_conf(node), svc.scm, bootstrap=True, force=force)
    try:
        await daemon.start()
    except BaseException:
        await daemon.stop(0.2)
        raise
    svc.daemons[node] = daemon
    return daemon


async def admin(daemon: OmDaemon, method: str, request: Any) -> Any:
    async with om_channel(daemon.rpc_port) as channel:
        return await getattr(rpc.Stub(channel, ADMIN), method)(request, timeout=30)


async def refused(daemon: OmDaemon, method: str, request: Any) -> rpc.RpcError:
    with pytest.raises(rpc.RpcError) as caught:
        await admin(daemon, method, request)
    return caught.value


def members(daemon: OmDaemon) -> set[str]:
    assert daemon.raft is not None
    return {peer.id for peer in daemon.raft.group.ids}


async def holds(daemon: OmDaemon, volume: str) -> bool:
    assert daemon.store is not None
    return daemon.store.get(VOLUME_TABLE, volume_key(volume)) is not None


def roles(svc: Service, node: str) -> dict[str, Any]:
    port = svc.daemons[node].http_port
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/ratis", timeout=5) as answer:
        return json.loads(answer.read())


def test_a_fourth_om_bootstraps_catches_up_by_log_then_counts_and_serves(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            await create_volumes(svc, "before")
            # Ozone: every OM's configuration names the new OM before it bootstraps
            svc.values.update({**plan_fourth(svc), NODES_KEY: "om1,om2,om3,om4"})
            await restart_all(svc)  # their logs keep the three as the group's members
            leader = await svc.leader()
            assert members(leader) == {"om1", "om2", "om3"}
            om4 = await start_bootstrap(svc, "om4")
            assert members(om4) == {"om1", "om2", "om3", "om4"}  # it knows it counts once start returns
            leader = await svc.leader()
            assert members(leader) == {"om1", "om2", "om3", "om4"}
            assert await holds(om4, "before")  # caught up by log
            await create_volumes(svc, "after")
            await wait_for_async(lambda: holds(om4, "after"), 20, "om4 applies a write made after it joined")
            # reads served by the new OM once it leads
            await admin(leader, "transferLeadership", transfer_request("om4"))
            assert await svc.leader() is om4
            client = svc.client()
            try:
                assert (await client.volume_info("before")).name == "before"
            finally:
                await client.close()
            shown = await asyncio.to_thread(roles, svc, "om4")
            assert sorted(m["nodeId"] for m in shown["members"]) == ["om1", "om2", "om3", "om4"]
            assert shown["role"] == "LEADER"
            # a restart of the bootstrapped OM, without --bootstrap: its log says it is a member
            await svc.stop("om4")
            await svc.start("om4")
            # bootstrapping a member again: Ozone's leader answers that it is one already
            leader = await svc.leader()
            error = await refused(leader, "bootstrap", bootstrap_request("om4", "127.0.0.1", 1))
            assert (
                error.code() is rpc.StatusCode.INVALID_ARGUMENT
            )  # the address differs from its configuration
            ratis = int(svc.values["ozone.om.ratis.port.omservice.om4"])
            error = await refused(leader, "bootstrap", bootstrap_request("om4", "127.0.0.1", ratis))
            assert error.code() is rpc.StatusCode.ALREADY_EXISTS
            assert "already a member" in (error.details() or "")

    run(scenario())


def test_an_om_outside_the_group_is_refused_without_bootstrap_and_a_bootstrap_outside_the_configs(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            await create_volumes(svc, "vol")
            fourth = plan_fourth(svc)
            # om4 knows the service; the three running OMs' configurations do not name it
            svc.values.update({**fourth, NODES_KEY: "om1,om2,om3,om4"})
            running = {node: svc.daemons[node] for node in ("om1", "om2", "om3")}
            with pytest.raises(
                ServerStartError, match=r"om4 is not a member of the Ratis group.*--bootstrap"
            ):
                await svc.start("om4")
            with pytest.raises(
                ServerStartError, match="do not have or have incorrect information of the bootstr"
            ):
                await start_bootstrap(svc, "om4")
            with pytest.raises(
                ServerStartError, match=r"does not have the bootstrapping OM\(om4\) information"
            ):
                await start_bootstrap(svc, "om4", force=True)  # --force skips the check; the leader refuses
            leader = await svc.leader()
            assert members(leader) == {"om1", "om2", "om3"}
            assert set(svc.daemons) == set(running)
            error = await refused(leader, "bootstrap", bootstrap_request("om9", "127.0.0.1", 1))
            assert error.code() is rpc.StatusCode.FAILED_PRECONDITION
            # with mutual TLS only om4's own certificate may ask (checked before the configuration)
            svc.values[NODES_KEY] = "om1,om2,om3,om4"
            await restart_all(svc)
            leader = await svc.leader()
            assert leader.membership is not None
            ratis = int(fourth["ozone.om.ratis.port.omservice.om4"])
            request = bootstrap_request("om4", "127.0.0.1", ratis)
            om_here = Identity(CertRole.OM, "om", "127.0.0.1")
            callers = [
                (Identity(CertRole.USER, "alice"), None),
                (Identity(CertRole.OM, "om", "elsewhere"), "omservice/om4"),
                # R12 D6: om4's host was enough, so these started the change (om1's own certificate, a lone
                # OM's, another service's OM on that host)
                (om_here, "omservice/om1"),
                (om_here, None),
                (om_here, "other/om4"),
            ]
            for caller, node in callers:
                with pytest.raises(AnsweredStatus, match="PERMISSION_DENIED: only OM om4 itself") as denied:
                    await leader.membership.bootstrap(request, caller, node)
                assert denied.value.status == "PERMISSION_DENIED"
                assert "naming node omservice/om4" in str(denied.value)
            # om4's own certificate passes the check: the leader starts the change (om4 is not running)
            with pytest.raises(AnsweredStatus, match="ReconfigurationTimeoutException"):
                await leader.membership.bootstrap(request, om_here, "omservice/om4")
            assert members(leader) == {"om1", "om2", "om3"}

    run(scenario())


def test_decommission_removes_an_om_and_refuses_the_leader_an_unknown_node_and_two_changes_at_once(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            await create_volumes(svc, "vol")
            leader = await svc.leader()
            assert leader.node is not None
            me = leader.node.node_id
            gone = next(node for node in ("om1", "om2", "om3") if node != me)
            stays = next(node for node in ("om1", "om2", "om3") if node not in (me, gone))
            # not listed in ozone.om.decommissioned.nodes on the leader
            error = await refused(leader, "decommission", decommission_request(gone, "127.0.0.1"))
            assert error.code() is rpc.StatusCode.FAILED_PRECONDITION
            assert "Please add the to be decommissioned OM" in (error.details() or "")
            error = await refused(leader, "decommission", decommission_request("om9", ""))
            assert error.code() is rpc.StatusCode.NOT_FOUND
            assert "OM node not present in the OM peer list" in (error.details() or "")
            error = await refused(leader, "decommission", decommission_request(me, ""))
            assert error.code() is rpc.StatusCode.FAILED_PRECONDITION
            assert "admin om transfer" in (error.details() or "")
            # two changes at once: an add whose learner never answers is in progress while a removal comes
            svc.values.update({**plan_fourth(svc), NODES_KEY: "om1,om2,om3,om4", DECOMMISSIONED_KEY: gone})
            await restart_all(svc, but=gone)  # an OM listed as decommissioned does not start (Ozone: stop it)
            leader = await svc.leader()
            if leader is svc.daemons[gone]:  # it did not restart, and may have won an election meanwhile
                await admin(leader, "transferLeadership", transfer_request(me))
                leader = await svc.leader()
            ratis = int(svc.values["ozone.om.ratis.port.omservice.om4"])
            assert leader.membership is not None
            # on the leader's loop: the change is under way once the call reaches its first wait
            adding = asyncio.ensure_future(
                leader.membership.bootstrap(bootstrap_request("om4", "127.0.0.1", ratis), None)
            )
            await asyncio.sleep(0)
            error = await refused(leader, "decommission", decommission_request(gone, "127.0.0.1"))
            assert error.code() is rpc.StatusCode.FAILED_PRECONDITION
            assert "another configuration change is in progress" in (error.details() or "")
            with pytest.raises(AnsweredStatus, match="ReconfigurationTimeoutException"):
                await adding  # om4 never ran: the learner made no progress
            # the removal, through the CLI's checks (every OM lists the node as decommissioned)
            with pytest.raises(CLIError, match=r"OM\(s\) om4 \(UNAVAILABLE\) have not been updated"):
                await asyncio.to_thread(run_decommission, _decommission_args(svc, gone))  # om4 never ran
            svc.values[NODES_KEY] = "om1,om2,om3"
            await asyncio.to_thread(run_decommission, _decommission_args(svc, gone))
            leader = await svc.leader()
            assert members(leader) == {"om1", "om2", "om3"} - {gone}
            await create_volumes(svc, "after-removal")  # two members: both needed, both there
            kept = svc.daemons[stays]
            await wait_for_async(lambda: holds(kept, "after-removal"), 20, "the other member applies it")
            shown = await asyncio.to_thread(roles, svc, me)
            assert gone not in {m["nodeId"] for m in shown["members"]}
            # the removed OM serves no more: it is refused at start
            await svc.stop(gone)
            with pytest.raises(ServerStartError, match=rf"OM {gone} is decommissioned"):
                await svc.start(gone)
            # the CLI refuses an unknown node, and one not listed as decommissioned
            with pytest.raises(CLIError, match="There is no OM corresponding to om9"):
                await asyncio.to_thread(run_decommission, _decommission_args(svc, "om9"))
            svc.values[DECOMMISSIONED_KEY] = ""
            with pytest.raises(CLIError, match="Please add the to be decommissioned OM"):
                await asyncio.to_thread(run_decommission, _decommission_args(svc, stays))

    run(scenario())


def _decommission_args(svc: Service, node: str) -> argparse.Namespace:
    """`pyozone admin om decommission -id omservice -nodeid NODE -hostname 127.0.0.1`, the service's keys."""
    overrides = [f"{k}={v}" for k, v in svc.values.items()]
    return argparse.Namespace(
        service_id="omservice",
        node=node,
        hostname="127.0.0.1",
        force=False,
        conf_dir=None,
        overrides=overrides,
    )


def test_a_fourth_om_bootstraps_from_the_leaders_checkpoint_when_the_log_was_purged(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with service(
            tmp_path,
            **{"ozone.om.ratis.log.purge.gap": "4", "ozone.om.ratis.snapshot.auto.trigger.threshold": "4"},
        ) as svc:
            names = [f"vol{i:02d}" for i in range(20)]
            await create_volumes(svc, *names)
            svc.values.update({**plan_fourth(svc), NODES_KEY: "om1,om2,om3,om4"})
            await restart_all(svc)
            leader = await svc.leader()
            assert leader.raft is not None
            await wait_for_async(
                lambda: _async(leader.raft._running_core().log.snapshot.index > 1),
                20,
                "the leader's log purged",
            )
            om4 = await start_bootstrap(svc, "om4")
            assert om4.replication is not None and om4.replication.installs >= 1  # by checkpoint, not log
            assert members(om4) == {"om1", "om2", "om3", "om4"}
            for name in names:
                assert await holds(om4, name)
            await create_volumes(svc, "after")
            await wait_for_async(lambda: holds(om4, "after"), 20, "om4 applies the log after the checkpoint")

    run(scenario())


async def _async(value: bool) -> bool:
    return value


def test_a_member_behind_a_purged_log_and_a_change_installs_the_checkpoint_with_the_members_in_force(
    tmp_path: Path,
) -> None:
    """The checkpoint holds no configuration: an OM that installs it takes the leader's members in force,
    not the group's first members (which would leave out om4, added while it was down)."""

    async def scenario() -> None:
        async with service(
            tmp_path,
            **{"ozone.om.ratis.log.purge.gap": "4", "ozone.om.ratis.snapshot.auto.trigger.threshold": "4"},
        ) as svc:
            await create_volumes(svc, "first")
            leader = await svc.leader()
            lagging = next(node for node in ("om1", "om2", "om3") if svc.daemons[node] is not leader)
            await svc.stop(lagging)
            svc.values.update({**plan_fourth(svc), NODES_KEY: "om1,om2,om3,om4"})
            await restart_all(svc)
            await start_bootstrap(svc, "om4", force=True)  # the lagging OM is down: its check is skipped
            await create_volumes(svc, *(f"vol{i:02d}" for i in range(20)))
            back = await svc.start(lagging)
            assert back.replication is not None
            await wait_for_async(
                lambda: _async(back.replication.installs >= 1), 30, "the checkpoint installed"
            )  # type: ignore[union-attr]
            # the core takes the members once the leader answered them (after the count above)
            four = {"om1", "om2", "om3", "om4"}
            await wait_for_async(lambda: _async(members(back) == four), 10, "the members in force taken")

    run(scenario())


def _node(node_id: str, port: int) -> OmNodeDetails:
    address = HostPort("127.0.0.1", port)
    return OmNodeDetails("omservice", node_id, address, address, address)


def test_a_bootstrap_the_leader_never_confirmed_leaves_no_members_to_start_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R9: a failed --bootstrap wrote om-service-nodes naming om4 before the leader agreed; restarted without
    --bootstrap, om4 started as a member of a group that did not count it (CANDIDATE forever). The members
    stay pending until the leader added it; without --bootstrap a pending file is refused."""
    nodes = {n: _node(n, 9860 + i) for i, n in enumerate(("om1", "om2", "om3", "om4"))}
    running = ("om1", "om2", "om3")
    monkeypatch.setattr(membership, "_members_per_peers", lambda client: ("om1", running))
    me, group_dir = nodes["om4"], tmp_path / "group"

    def first(bootstrap: bool) -> tuple[str, ...]:
        found = asyncio.run(membership.first_members(me, group_dir, nodes, nodes, None, bootstrap))
        return tuple(n.node_id for n in found)

    assert first(bootstrap=True) == ("om1", "om2", "om3", "om4")  # the bootstrap then fails
    with pytest.raises(membership.MembershipRefused, match=r"did not finish .* --bootstrap"):
        first(bootstrap=False)
    assert first(bootstrap=True) == ("om1", "om2", "om3", "om4")  # again, and the leader adds it
    membership.members_confirmed(group_dir)
    monkeypatch.setattr(membership, "_members_per_peers", lambda client: pytest.fail("peers asked"))
    monkeypatch.setattr(membership, "_peers_not_counting", lambda client, node: {})  # they count it
    assert first(bootstrap=False) == ("om1", "om2", "om3", "om4")


def test_an_om_removed_while_stopped_is_refused_by_the_running_oms_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R9: om3, decommissioned while stopped, restarted with its old configuration (not listing it as
    decommissioned): its own log still counts it, so it started and stood for election for ever. The running
    OMs are asked first; it starts only when one of them counts it (or none answers: a whole service)."""
    nodes = {n: _node(n, 9860 + i) for i, n in enumerate(("om1", "om2", "om3"))}
    views: dict[str, tuple[str, ...] | None] = {}

    class Admin:
        def __init__(self, asked: dict[str, OmNodeDetails], tls: Any = None) -> None:
            self.nodes = asked

        def configuration(self, node: str, timeout_s: float = 10) -> Any:
            members = views.get(node)
            if members is None:
                raise rpc.RpcError(rpc.StatusCode.UNAVAILABLE, f"failed to connect to {node}")
            in_memory = [node_info(m, "127.0.0.1", 0, 0, False) for m in members]
            return configuration_answer(node, in_memory, [], True)

    monkeypatch.setattr(membership, "OmAdminClient", Admin)
    group_dir = tmp_path / "group"
    group_dir.mkdir()
    (group_dir / membership.MEMBERS_FILE).write_text("om1\nom2\nom3\n")

    def first() -> tuple[str, ...]:
        found = asyncio.run(membership.first_members(nodes["om3"], group_dir, nodes, nodes, None, False))
        return tuple(n.node_id for n in found)

    assert first() == ("om1", "om2", "om3")  # no OM answers: a whole service starting
    views.update(om1=("om1", "om2"), om2=("om1", "om2"))
    with pytest.raises(membership.MembershipRefused, match=r"om3 is not a member .* any more"):
        first()
    views["om2"] = ("om1", "om2", "om3")  # one OM counts it (om1 behind): it starts
    assert first() == ("om1", "om2", "om3")


def test_a_member_restarted_with_bootstrap_skips_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """R9: a whole service restarted with --bootstrap kept: each OM asked the leader to add it, waiting 300 s
    for the others' admin service (which opens only after this), then every OM exited. An OM whose confirmed
    members and log count it, and that no running OM says is removed, skips the bootstrap."""
    nodes = {n: _node(n, 9860 + i) for i, n in enumerate(("om1", "om2", "om3"))}

    class Admin:
        def __init__(self, asked: dict[str, OmNodeDetails], tls: Any = None) -> None:
            self.nodes = asked

        def configuration(self, node: str, timeout_s: float = 10) -> Any:
            raise rpc.RpcError(rpc.StatusCode.UNAVAILABLE, f"failed to connect to {node}")

        def call_leader(self, *args: Any, **kwargs: Any) -> Any:
            raise OmAdminError(rpc.StatusCode.UNAVAILABLE, "no OM of the service took the call")

    class Member:
        group = RaftGroup("g", tuple(RaftPeer(RaftPeerId(n), d.ratis_address) for n, d in nodes.items()))

        def status(self) -> Any:
            raise AssertionError("not asked")

    monkeypatch.setattr(membership, "OmAdminClient", Admin)

    def join(counted: bool) -> None:
        member: Any = Member()
        asyncio.run(membership.join_service(nodes["om3"], nodes, member, None, True, True, counted, 0.1))

    join(counted=True)  # no bootstrap asked
    with pytest.raises(membership.MembershipRefused, match="Failed to Bootstrap OM om3"):
        join(counted=False)  # a new OM's members (pending) count it too: it asks the leader
