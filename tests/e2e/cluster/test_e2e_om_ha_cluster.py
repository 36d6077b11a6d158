"""`pyozone cluster up --om-ha`: three OMs of one service (om1..om3 of omservice) under the cluster's
supervisor. `up` prints each OM and the leader; `pyozone sh` with the generated configuration writes and
reads a key and goes on after the leader's kill -9; `admin om roles` lists three OMs, one LEADER; `cluster
down` leaves no process. `--om-ha` with what it cannot combine with is refused before anything starts."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone.cluster import supervisor
from pyozone.cluster.layout import OM_HA_NODES, OM_SERVICE_ID, plan_cluster
from tests.e2e.cluster.cluster_helpers import LiveCluster, Result, all_running, sh
from tests.polling import wait_for

VOLUME, BUCKET = "havol", "habucket"


@pytest.fixture(scope="module")
def started(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
    tuple[LiveCluster, Result]
]:  # fmt: skip
    cluster = LiveCluster(tmp_path_factory.mktemp("om-ha-cluster"))
    request.addfinalizer(cluster.stop)
    yield cluster, cluster.up(3, 1, None, "--om-ha")


def roles(cluster: LiveCluster) -> dict[str, str]:
    result = cluster.admin("om", "roles")
    assert result.code == 0, result
    return {line.split(" : ")[0]: line.split(" : ")[1].split(" ")[0] for line in result.out.splitlines()}


def test_up_prints_each_om_and_the_leader(started: tuple[LiveCluster, Result]) -> None:
    cluster, up = started
    state = cluster.state
    assert [d.name for d in state.oms()] == list(OM_HA_NODES)
    assert f"3 OMs of {OM_SERVICE_ID}" in up.out
    for om in state.oms():
        line = next(line for line in up.out.splitlines() if line.strip().startswith(f"{om.name}:"))
        for port in (om.ports["rpc"], om.ports["ratis"], om.ports["http"]):
            assert f"127.0.0.1:{port}" in line, line
    leader_line = next(line for line in up.out.splitlines() if "OM leader:" in line)
    assert leader_line.split()[2] in OM_HA_NODES
    all_running(cluster)


def test_sh_writes_and_reads_a_key_through_the_service_and_fails_over(
    started: tuple[LiveCluster, Result], tmp_path: Path
) -> None:
    cluster, _ = started
    data = os.urandom(50_000)
    source = tmp_path / "data"
    source.write_bytes(data)
    assert sh(cluster, "volume", "create", f"/{VOLUME}").code == 0
    assert sh(cluster, "bucket", "create", f"/{VOLUME}/{BUCKET}").code == 0
    assert sh(cluster, "key", "put", f"/{VOLUME}/{BUCKET}/before", str(source)).code == 0
    got = tmp_path / "got"
    assert sh(cluster, "key", "get", f"/{VOLUME}/{BUCKET}/before", str(got)).code == 0
    assert got.read_bytes() == data
    leader = next(node for node, role in roles(cluster).items() if role == "LEADER")
    cluster.kill(leader)
    # the client fails over to the next leader on its own; no error reaches the command
    assert sh(cluster, "key", "put", f"/{VOLUME}/{BUCKET}/after", str(source)).code == 0
    listed = sh(cluster, "key", "list", f"/{VOLUME}/{BUCKET}")
    assert listed.code == 0 and "before" in listed.out and "after" in listed.out, listed
    cluster.start(leader)  # back as a follower: three OMs, one LEADER again
    wait_for(
        lambda: sorted(roles(cluster).values()) == ["FOLLOWER", "FOLLOWER", "LEADER"],
        60,
        f"{leader} back as a follower",
        interval_s=1,
    )


def test_admin_om_roles_lists_three_oms_one_leader(started: tuple[LiveCluster, Result]) -> None:
    cluster, _ = started
    shown = roles(cluster)
    assert set(shown) == set(OM_HA_NODES)
    assert sorted(shown.values()) == ["FOLLOWER", "FOLLOWER", "LEADER"]
    status = cluster.cluster("status")
    assert (
        status.code == 0 and f"OM leader: {next(n for n, r in shown.items() if r == 'LEADER')}" in status.out
    )


def test_cluster_down_leaves_no_process(started: tuple[LiveCluster, Result]) -> None:
    cluster, _ = started
    state = cluster.state
    down = cluster.cluster("down", timeout_s=90)
    assert down.code == 0, down
    assert [n for n, pid in state.pids.items() if supervisor.is_running(pid)] == []


@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (
            ("-D", "ozone.om.service.ids=other"),
            "--om-ha plans the OM service itself: drop -D ozone.om.service.ids",
        ),
        (("-D", "ozone.om.address=127.0.0.1:9862"), "drop -D ozone.om.address"),
        (("-D", "ozone.om.ratis.port.omservice.om2=9872"), "drop -D ozone.om.ratis.port.omservice.om2"),
    ],
)
def test_om_ha_with_what_it_cannot_combine_with_is_refused(
    tmp_path: Path, flags: tuple[str, ...], error: str
) -> None:
    cluster = LiveCluster(tmp_path / "refused")
    result = cluster.cluster("up", "--om-ha", "--background", *flags)
    assert result.code == 1 and error in result.err, result
    assert not (tmp_path / "refused" / "cluster.json").exists()  # nothing planned, nothing started


def test_om_ha_on_a_cluster_made_with_one_om_is_refused(tmp_path: Path) -> None:
    plan_cluster(tmp_path / "lone", 1, 1, {}).save()
    result = LiveCluster(tmp_path / "lone").cluster("up", "--om-ha", "--background")
    assert result.code == 1 and "was made with one OM; start it without --om-ha" in result.err, result
