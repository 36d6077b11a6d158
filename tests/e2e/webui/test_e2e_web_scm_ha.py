"""Acceptance (issue 31 item 5: "the SCM web UI ... showing each SCM's role, term, commit index and lag"):
SCM's overview page in headless Chromium shows its place in its HA service, as OM's shows Ozone's "OM
Roles" (ozone.js raftRoles). Three `pyozone scm` of one service (scm_ha_support.py): the leader's page
shows its role, term, indexes, each SCM's role and each follower's match index and lag; a follower's page
the leader it follows. Screenshots: scm-ha-leader.png, scm-ha-follower.png."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import browser, field, needs_chromium, open_page, screenshot
from tests.e2e.scm_ha_support import NODES, scm_service

pytestmark = needs_chromium

_ROWS = """
const rows = document.querySelectorAll(`main#main [data-table="${arguments[0]}"] tbody tr[data-id]`);
return [...rows].map((tr) => [tr.dataset.id, [...tr.children].map((td) => td.textContent)]);
"""


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    with browser() as d:
        yield d


def rows(driver: Any, table: str) -> dict[str, list[str]]:
    """data-id -> the cells' texts, of the table data-table=`table` on the current page."""
    return {row_id: cells for row_id, cells in driver.execute_script(_ROWS, table)}


def test_the_overview_shows_scm_roles_on_the_leader_and_on_a_follower(
    tmp_path_factory: pytest.TempPathFactory, driver: Any
) -> None:
    with scm_service(tmp_path_factory.mktemp("web-scm-ha")) as scms:
        leader = scms.leader()
        view = scms.raft_view(leader)
        assert view is not None
        open_page(driver, f"http://127.0.0.1:{scms.http_port(leader)}", "overview")
        screenshot(driver, "scm-ha-leader")
        assert field(driver, "ha") == f"yes: SCM {leader} in Raft group {view['groupId']}"
        assert (field(driver, "role"), field(driver, "leader"), field(driver, "ready")) == (
            "LEADER",
            leader,
            "yes",
        )
        assert int(field(driver, "term")) >= 1
        assert int(field(driver, "commitIndex")) >= int(field(driver, "appliedIndex")) >= 1
        shown = rows(driver, "scmRoles")
        assert sorted(shown) == sorted(NODES)
        for node, (node_id, rpc_address, ratis_address, role, match, lag) in shown.items():
            assert node_id == node and rpc_address == f"127.0.0.1:{scms.port(node, 'client')}"
            assert ratis_address == f"127.0.0.1:{scms.port(node, 'ratis')}"
            if node == leader:
                assert (role, match, lag) == ("LEADER", "-", "-")
            else:  # a follower's match index and lag, on the leader's page
                assert role == "FOLLOWER" and int(match) >= 0 and int(lag) >= 0

        follower = next(node for node in NODES if node != leader)
        open_page(driver, f"http://127.0.0.1:{scms.http_port(follower)}", "overview")
        screenshot(driver, "scm-ha-follower")
        assert (field(driver, "role"), field(driver, "leader"), field(driver, "ready")) == (
            "FOLLOWER",
            leader,
            "no",
        )
        roles = {node: cells[3] for node, cells in rows(driver, "scmRoles").items()}
        assert roles == {node: "LEADER" if node == leader else "FOLLOWER" for node in NODES}
