"""Acceptance (issue 30: "the web UI ... show role, term, commit index and lag"): OM's overview page in
headless Chromium shows its place in its HA service, Ozone's "OM Roles". The cluster's lone OM (`cluster
up`) says it is not HA; then three `pyozone om` of one service take its place (benchmarks/om_ha.py's HaOms)
and the leader's page shows its role, term, indexes, each OM's role and each follower's match index and lag,
a follower's page the leader it follows. Screenshots: om-ha-lone.png, om-ha-leader.png, om-ha-follower.png."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from benchmarks.om_ha import NODES, SERVICE, HaOms
from pyozone.cluster.layout import HOST
from tests.browser import browser, field, needs_chromium, open_page, screenshot
from tests.e2e.cluster.cluster_helpers import LiveCluster
from tests.polling import wait_for

pytestmark = needs_chromium

_ROWS = """
const rows = document.querySelectorAll(`main#main [data-table="${arguments[0]}"] tbody tr[data-id]`);
return [...rows].map((tr) => [tr.dataset.id, [...tr.children].map((td) => td.textContent)]);
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCluster]:
    cluster = LiveCluster(tmp_path_factory.mktemp("web-om-ha"))
    try:
        cluster.up(1)
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with browser() as d:
        yield d


def rows(driver: Any, table: str) -> dict[str, list[str]]:
    """data-id -> the cells' texts, of the table data-table=`table` on the current page."""
    return {row_id: cells for row_id, cells in driver.execute_script(_ROWS, table)}


def http_base(oms: HaOms, node: str) -> str:
    return f"http://{oms.values[f'ozone.om.http-address.{SERVICE}.{node}']}"


def test_the_overview_shows_om_roles_on_a_lone_om_and_on_each_om_of_a_service(
    cluster: LiveCluster, driver: Any
) -> None:
    open_page(driver, f"http://{HOST}:{cluster.port('om', 'http')}", "overview")
    screenshot(driver, "om-ha-lone")
    assert field(driver, "ha").startswith("no: a lone OM")
    assert rows(driver, "omRoles") == {}

    cluster.kill("om")  # the service takes the lone OM's place
    oms = HaOms.plan(cluster.data_dir, cluster.conf_dir)
    try:
        oms.start_all(timeout_s=120)

        def leader_with_followers() -> tuple[str, dict[str, Any]] | None:
            for node in NODES:
                view = oms.raft_view(node)
                # each follower's match index counts once its first append is answered (0 until then)
                if (
                    view
                    and view.get("role") == "LEADER"
                    and len(view["followers"]) == len(NODES) - 1
                    and all(f["matchIndex"] >= 1 for f in view["followers"])
                ):
                    return node, view
            return None

        leader, view = wait_for(leader_with_followers, 60, "a leader with its followers", interval_s=0.5)
        open_page(driver, http_base(oms, leader), "overview")
        screenshot(driver, "om-ha-leader")
        assert field(driver, "ha") == f"yes: OM {leader} in Raft group {view['groupId']}"
        assert (field(driver, "role"), field(driver, "leader")) == ("LEADER", leader)
        assert int(field(driver, "term")) >= 1
        assert int(field(driver, "commitIndex")) >= int(field(driver, "appliedIndex")) >= 1
        shown = rows(driver, "omRoles")
        assert sorted(shown) == sorted(NODES)
        for node, (node_id, rpc_address, ratis_address, role, match, lag) in shown.items():
            assert node_id == node and rpc_address == oms.values[f"ozone.om.address.{SERVICE}.{node}"]
            assert ratis_address.endswith(":" + oms.values[f"ozone.om.ratis.port.{SERVICE}.{node}"])
            if node == leader:
                assert (role, match, lag) == ("LEADER", "-", "-")
            else:  # a follower's match index and lag, on the leader's page
                assert role == "FOLLOWER" and int(match) >= 1 and int(lag) >= 0

        follower = next(node for node in NODES if node != leader)
        open_page(driver, http_base(oms, follower), "overview")
        screenshot(driver, "om-ha-follower")
        assert (field(driver, "role"), field(driver, "leader"), field(driver, "ready")) == (
            "FOLLOWER",
            leader,
            "no",
        )
        roles = {node: cells[3] for node, cells in rows(driver, "omRoles").items()}
        assert roles == {node: "LEADER" if node == leader else "FOLLOWER" for node in NODES}
        assert {cells[4] for cells in rows(driver, "omRoles").values()} == {"-"}  # lag: the leader's to show
    finally:
        oms.stop_all()
