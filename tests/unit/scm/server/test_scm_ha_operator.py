"""SCM HA's operator surface (issue 31 item 5) on three SCM daemons of one service in one process
(test_scm_ha.py's `service`): `pyozone admin scm roles` prints each SCM in Ozone's `HOST:RATIS_PORT:ROLE:
NODE_ID:IP` shape, an SCM that does not answer as UNREACHABLE; a follower refuses transferLeadership naming
the leader, and `admin scm transfer -n NODE | -r | -o HOST:PORT` reaches the leader, which hands over;
/prom shows the Raft gauges and /api/v1/ratis each member's role. Without daemons: a lone SCM's roles and
transfer, and targets that are no SCM."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pyozone import rpc
from pyozone.cli.main import main
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb
from tests.polling import wait_for_async
from tests.unit.scm.server.scm_server_helpers import admin_stub, channel, http_get
from tests.unit.scm.server.test_scm_ha import NODES, Service, planned, run, service


def defines(svc: Service) -> list[str]:
    """The service's keys as -D flags: what an operator's ozone-site.xml holds."""
    return [arg for key, value in svc.values.items() for arg in ("-D", f"{key}={value}")]


async def admin(svc: Service, *args: str) -> int:
    return await asyncio.to_thread(main, ["admin", "scm", *args, *defines(svc)])


def prom(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/prom", timeout=5) as answer:
        return answer.read().decode()


def test_roles_show_each_scm_and_transfer_hands_the_leadership_to_the_named_scm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            leader = await svc.leader(writable=False)
            current = svc.node_of(leader)

            async def followed() -> bool:  # the leader heard from both followers
                return len(leader.ha.report()["followers"]) == 2  # type: ignore[union-attr]

            await wait_for_async(followed, 20, "the leader's followers", 0.05)
            capsys.readouterr()
            assert await admin(svc, "roles") == 0
            lines = capsys.readouterr().out.splitlines()
            assert lines == [
                f"127.0.0.1:{svc.port(node, 'ratis')}:{'LEADER' if node == current else 'FOLLOWER'}:"
                f"{node}:127.0.0.1"
                for node in NODES
            ]
            assert await admin(svc, "roles", "--json") == 0
            shown = json.loads(capsys.readouterr().out)
            assert shown[current]["raftPeerRole"] == "LEADER" and shown[current]["ID"] == current
            assert shown[current]["address"] == f"127.0.0.1:{svc.port(current, 'ratis')}"
            assert shown[current]["InetAddress"] == "127.0.0.1" and shown[current]["term"] >= 1

            text = await asyncio.to_thread(prom, leader.http_port)
            assert (
                f'scmha_metrics_scmha_leader_state{{leadernodeid="{current}",nodeid="{current}"}} 1.0' in text
            )
            assert 'scm_ratis_role{role="LEADER"} 1.0' in text and "scm_ratis_commit_index " in text
            follower_lag = [line for line in text.splitlines() if line.startswith("scm_ratis_follower_lag{")]
            assert len(follower_lag) == 2
            _, ratis = await http_get(leader.http_port, "/api/v1/ratis")
            assert {m["nodeId"]: m["role"] for m in ratis["members"]} == {
                node: "LEADER" if node == current else "FOLLOWER" for node in NODES
            }
            assert {m["rpcAddress"] for m in ratis["members"]} == {
                f"127.0.0.1:{svc.port(node, 'client')}" for node in NODES
            }

            target = next(node for node in NODES if node != current)
            async with channel(svc.port(target, "client")) as ch:  # a follower names the leader
                with pytest.raises(rpc.RpcError) as refused:
                    await admin_stub(ch).transferLeadership(admin_pb.TransferLeadershipRequestProto())
            assert refused.value.code() is rpc.StatusCode.UNAVAILABLE
            assert (
                f"Server:{target} is not the leader. Suggested leader is "
                f"Server:127.0.0.1:{svc.port(current, 'client')}."
            ) in refused.value.details()
            assert await admin(svc, "transfer", "-n", target) == 0
            assert capsys.readouterr().out == "Transfer leadership success\n"
            successor = await svc.leader(writable=False)
            assert svc.node_of(successor) == target
            assert leader.ha.report()["role"] == "FOLLOWER"  # type: ignore[union-attr]
            text = await asyncio.to_thread(prom, leader.http_port)
            assert (
                'scm_ratis_role{role="FOLLOWER"} 1.0' in text and "scmha_metrics_scmha_leader_state{" in text
            )
            assert not [line for line in text.splitlines() if line.startswith("scm_ratis_follower_lag{")]

            # -r: another SCM, the leader's pick; -o: by Ratis address
            assert await admin(svc, "transferleadership", "-r") == 0
            third = svc.node_of(await svc.leader(writable=False))
            assert third != target
            assert await admin(svc, "transfer", "-o", f"127.0.0.1:{svc.port(target, 'ratis')}") == 0
            assert svc.node_of(await svc.leader(writable=False)) == target
            capsys.readouterr()
            assert await admin(svc, "transfer", "-n", "scm9") == 1
            assert "-n: 'scm9' is no SCM of service scmservice (scm1, scm2, scm3)" in capsys.readouterr().err

            stopped = next(node for node in NODES if node != target)
            await svc.stop(stopped)
            assert await admin(svc, "roles") == 0
            roles = {line.split(":")[3]: line.split(":")[2] for line in capsys.readouterr().out.splitlines()}
            assert roles == {
                node: "UNREACHABLE" if node == stopped else "LEADER" if node == target else "FOLLOWER"
                for node in NODES
            }

    run(scenario())


def test_ratislogparser_scm_decodes_the_pipelines_the_leader_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            leader = await svc.leader()  # out of safe mode with an OPEN pipeline: the leader wrote it
            pipeline = leader.core.pipelines.pipelines()[0]
            segments = sorted((tmp_path / svc.node_of(leader)).rglob("current/log_*"))
            capsys.readouterr()
            assert (
                await asyncio.to_thread(main, ["debug", "ratislogparser", "scm", "-s", str(segments[0])]) == 0
            )
            out = capsys.readouterr().out
            assert f"put pipelines {pipeline.id} {{" in out, out
            entries = int(out.rpartition("Num StateMachineEntries Entries: ")[2])
            assert entries >= 1 and out.count("State Machine: SCMRatisRequest epoch: ") == entries, out

    run(scenario())


def test_a_lone_scm_has_no_roles_nor_a_leadership_to_transfer(capsys: pytest.CaptureFixture[str]) -> None:
    lone = ["-D", "ozone.scm.client.address=scm.example:9860"]
    assert main(["admin", "scm", "roles", *lone]) == 0
    captured = capsys.readouterr()
    assert captured.out == "scm.example:9894\n"  # Ozone's line for an SCM without Ratis: HOST:RATIS_PORT
    assert "SCM scm.example is not an HA service (ozone.scm.service.ids is not set)" in captured.err
    assert main(["admin", "scm", "roles", "--json", *lone]) == 0
    assert json.loads(capsys.readouterr().out) == {"scm.example": {"address": "scm.example:9894"}}
    assert main(["admin", "scm", "transfer", "-r", *lone]) == 1
    assert "this SCM runs alone (ozone.scm.service.ids is not set)" in capsys.readouterr().err


def test_transfer_refuses_a_target_no_scm_of_the_service_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    svc = planned(tmp_path)
    flags: Any = defines(svc)
    assert main(["admin", "scm", "transfer", "-o", "10.1.1.1", *flags]) == 1
    assert "-o: '10.1.1.1' is the Ratis address of no SCM of the service" in capsys.readouterr().err
    assert main(["admin", "scm", "transfer", "-o", "127.0.0.1", *flags]) == 1
    assert "more than one SCM (add its Ratis port)" in capsys.readouterr().err
    assert main(["admin", "scm", "roles", "-id", "other", *flags]) == 1
    assert "SCM service 'other' is not one of ozone.scm.service.ids" in capsys.readouterr().err
