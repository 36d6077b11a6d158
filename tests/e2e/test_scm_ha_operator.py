"""SCM HA's operator surface on real processes (issue 31 item 5): three `pyozone scm` of one service
(scm_ha_support.py). `pyozone admin scm roles` prints each SCM in Ozone's `HOST:RATIS_PORT:ROLE:NODE_ID:IP`
shape; `admin scm transfer -n NODE` hands the leadership to NODE and prints Ozone's line; each SCM's /prom
shows its Raft role, term, indexes and, on the leader, each follower's lag; `debug ratislogparser scm` decodes
an SCM's own log segment; a killed leader shows UNREACHABLE, another SCM leading."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.scm_ha_support import NODES, HaScms, scm_service

# The default suite has the same in process (tests/unit/scm/server/test_scm_ha_operator.py) and `admin scm
# roles` on real processes (tests/e2e/test_scm_ha.py).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scms(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HaScms]:
    with scm_service(tmp_path_factory.mktemp("scm-ha-operator")) as running:
        yield running


def roles(scms: HaScms) -> dict[str, str]:
    """`admin scm roles`: node id -> role, each line checked for Ozone's shape."""
    result = scms.pyozone("admin", "scm", "roles", *scms.defines())
    assert result.code == 0, result
    shown = {}
    for line in result.out.splitlines():
        host, port, role, node, ip = line.split(":")
        assert (host, ip, int(port)) == ("127.0.0.1", "127.0.0.1", scms.port(node, "ratis")), line
        shown[node] = role
    return shown


def prom(scms: HaScms, node: str) -> list[str]:
    with urllib.request.urlopen(f"http://127.0.0.1:{scms.http_port(node)}/prom", timeout=5) as answer:
        return answer.read().decode().splitlines()


def test_roles_name_the_leader_and_its_followers(scms: HaScms) -> None:
    leader = scms.leader()
    assert roles(scms) == {node: "LEADER" if node == leader else "FOLLOWER" for node in NODES}
    result = scms.pyozone("admin", "scm", "roles", "--json", *scms.defines())
    assert result.code == 0, result
    assert {node: row["raftPeerRole"] for node, row in json.loads(result.out).items()}[leader] == "LEADER"


def test_prom_shows_each_scms_raft_role_term_indexes_and_the_followers_lag(scms: HaScms) -> None:
    leader = scms.leader()
    lines = prom(scms, leader)
    assert f'scmha_metrics_scmha_leader_state{{leadernodeid="{leader}",nodeid="{leader}"}} 1.0' in lines
    assert 'scm_ratis_role{role="LEADER"} 1.0' in lines
    term = next(float(line.split()[1]) for line in lines if line.startswith("scm_ratis_term "))
    assert term >= 1
    assert any(line.startswith("scm_ratis_commit_index ") for line in lines)
    lags = {line.split('"')[1] for line in lines if line.startswith("scm_ratis_follower_lag{")}
    assert lags == set(NODES) - {leader}
    follower = next(node for node in NODES if node != leader)
    lines = prom(scms, follower)
    assert 'scm_ratis_role{role="FOLLOWER"} 1.0' in lines
    assert f'scmha_metrics_scmha_leader_state{{leadernodeid="{leader}",nodeid="{follower}"}} 0.0' in lines


def test_transfer_hands_the_leadership_to_the_named_scm(scms: HaScms) -> None:
    leader = scms.leader()
    target = next(node for node in NODES if node != leader)
    result = scms.pyozone("admin", "scm", "transfer", "-n", target, *scms.defines())
    assert result.code == 0, result
    assert result.out == "Transfer leadership success\n"
    assert scms.leader() == target
    assert roles(scms)[target] == "LEADER"


def test_ratislogparser_scm_decodes_an_scms_log_segment(scms: HaScms) -> None:
    leader = scms.leader()
    segments = sorted((scms.data_dir / leader).rglob("current/log_*"))
    assert segments, f"no Raft log segment under {scms.data_dir / leader}"
    result = scms.pyozone("debug", "ratislogparser", "scm", "-s", str(segments[0]))
    assert result.code == 0, result
    assert result.out.startswith(f"Processing Raft Log file: {Path(segments[0]).resolve()} size:")
    assert "not an SCM entry" not in result.out
    machine = [line for line in result.out.splitlines() if "State Machine:" in line]
    assert all("State Machine: SCMRatisRequest epoch: " in line for line in machine)


def test_a_killed_leader_shows_unreachable_and_another_scm_leads(scms: HaScms) -> None:
    killed = scms.leader()
    scms.kill(killed)
    successor = scms.leader()
    assert successor != killed
    shown = roles(scms)
    assert shown[killed] == "UNREACHABLE" and shown[successor] == "LEADER"
