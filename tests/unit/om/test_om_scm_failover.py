"""OM's gateway to an SCM service (om/scm.py GrpcScm, framework/scm_failover.py) against three in-process SCM
daemons (tests/unit/scm/server/test_scm_ha.py's service): its first call goes to a follower, which refuses
naming the leader, and lands on the leader; once the leader stops, calls go on at the next leader. A
datanode's container lookup and the admin CLI reach the service from its keys alike (`-id` pins the
service)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pyozone.cli.main import main
from pyozone.common.net import HostPort
from pyozone.common.scm_ha import ScmAddresses
from pyozone.config import OzoneConfiguration
from pyozone.datanode.daemon import scm_lookup_nodes
from pyozone.datanode.xceiver.allocations import ScmContainerLookup
from pyozone.framework.scm_failover import ScmFailoverPolicy
from pyozone.hdds.block import ExcludeList
from pyozone.hdds.ids import RATIS_THREE, BlockID
from pyozone.om.scm import GrpcScm
from tests.unit.scm.server.test_scm_ha import NODES, Service, run, service

CLIENT_KEYS = {
    "hdds.scmclient.failover.retry.interval": "200ms",
    "hdds.scmclient.max.retry.timeout": "20s",
}


def client_values(svc: Service, first: str) -> dict[str, str]:
    """The service's keys as a client (no node id, no metadata dir) that names `first` first."""
    order = [first, *(n for n in NODES if n != first)]
    return {**svc.values, **CLIENT_KEYS, "ozone.scm.nodes.scmservice": ",".join(order)}


def test_oms_gateway_lands_on_the_leader_through_a_follower_and_follows_the_next_leader(
    tmp_path: Path, capsys: Any
) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            leader = svc.node_of(await svc.leader())
            follower = next(n for n in NODES if n != leader)
            conf = OzoneConfiguration(client_values(svc, follower))
            gateway = GrpcScm(ScmAddresses.from_conf(conf), ScmFailoverPolicy.from_conf(conf), timeout_s=5)
            try:

                def allocate() -> BlockID:
                    blocks = gateway.allocate_blocks(1 << 20, RATIS_THREE, 1, ExcludeList(), "om1")
                    return blocks[0].block_id

                first = await asyncio.to_thread(allocate)
                assert gateway._blocks.address == HostPort("127.0.0.1", svc.port(leader, "block.client"))
                info = await asyncio.to_thread(gateway.scm_info)
                assert info.cluster_id == svc.daemons[leader].core.cluster_id

                await svc.stop(leader)
                successor = svc.node_of(await svc.leader())
                second = await asyncio.to_thread(allocate)
                assert second.local_id != first.local_id, "a local id handed out twice across the failover"
                assert gateway._blocks.address == HostPort("127.0.0.1", svc.port(successor, "block.client"))
                # the admin protocol too: getContainer lands on the new leader
                located = await asyncio.to_thread(gateway.container_location, second.container_id)
                assert gateway._admin.address == HostPort("127.0.0.1", svc.port(successor, "client"))
                assert located.state is not None and located.pipeline is not None
                # a datanode's container lookup alike, the stopped SCM named first
                lookup = ScmContainerLookup(scm_lookup_nodes(OzoneConfiguration(client_values(svc, leader))))
                found = await asyncio.to_thread(lookup, second.container_id)
                await asyncio.to_thread(lookup.close)
                assert found is not None and found.info.container_id == second.container_id
            finally:
                gateway.close()

            # the admin CLI: the service from its keys (-id), the stopped SCM named first
            flags = [a for k, v in client_values(svc, leader).items() for a in ("-D", f"{k}={v}")]
            capsys.readouterr()
            code = await asyncio.to_thread(main, ["admin", "safemode", "status", "-id", "scmservice", *flags])
            assert code == 0
            assert "SCM is out of safe mode." in capsys.readouterr().out

    run(scenario())


def test_an_admin_command_for_every_scm_reaches_each_of_them(tmp_path: Path, capsys: Any) -> None:
    """Review R21 D3: `replicationmanager stop|start` (Ozone's ADMIN_COMMAND_TYPE, each SCM's own) went to
    the SCM named first only, a follower, and exited 0 while the leader's Replication Manager ran on. It goes
    to every SCM of the service, and fails naming the SCM it did not reach."""

    async def scenario() -> None:
        async with service(tmp_path) as svc:
            leader = svc.node_of(await svc.leader())
            follower = next(n for n in NODES if n != leader)
            flags = [a for k, v in client_values(svc, follower).items() for a in ("-D", f"{k}={v}")]

            def running() -> dict[str, bool]:
                return {n: d.core.replication.is_running() for n, d in svc.daemons.items()}

            code = await asyncio.to_thread(
                main, ["admin", "replicationmanager", "stop", "-id", "scmservice", *flags]
            )
            assert code == 0
            assert not any(running().values()), running()
            code = await asyncio.to_thread(
                main, ["admin", "replicationmanager", "start", "-id", "scmservice", *flags]
            )
            assert code == 0
            assert all(running().values()), running()
            await svc.stop(follower)
            capsys.readouterr()
            code = await asyncio.to_thread(
                main, ["admin", "replicationmanager", "stop", "-id", "scmservice", *flags]
            )
            assert code != 0
            assert f"did not reach every SCM of the service: {follower}" in capsys.readouterr().err

    run(scenario())
