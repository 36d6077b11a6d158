"""The Pipeline Statistics target: the planner's result per inventory, inline for a small cluster and on a
worker thread for a large one, made again only when the inventory changes."""

from __future__ import annotations

import threading

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.scm.pipeline.planner import InventoryNode, plan_pipelines
from pyozone.scm.server.web import planning
from pyozone.scm.server.web.planning import PlanCache
from pyozone.scm.settings import ScmSettings
from tests.polling import wait_for

SETTINGS = ScmSettings()


def inventory(n: int, metadata_disks: int = 1) -> tuple[InventoryNode, ...]:
    return tuple(InventoryNode(f"dn{i}", f"/rack{i % 2}", 1, metadata_disks) for i in range(n))


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many datanodes each plan the cache made was for."""
    made: list[int] = []

    def counting(settings, nodes, seed=0):
        made.append(len(nodes))
        return plan_pipelines(settings, nodes, seed)

    monkeypatch.setattr(planning, "plan_pipelines", counting)
    return made


def test_a_small_cluster_is_planned_inline_once_per_inventory(runs: list[int]) -> None:
    cache = PlanCache(SETTINGS)
    first = cache.plan(inventory(6))
    assert first["current"] and not first["computing"]
    assert first["plan"] == plan_pipelines(SETTINGS, list(inventory(6))).to_dict()
    assert cache.plan(inventory(6))["plan"] == first["plan"]
    assert runs == [6]
    assert cache.plan(inventory(5))["plan"]["datanodes"] == 5
    assert runs == [6, 5]


def test_the_planners_work_not_the_node_count_decides_inline_or_thread() -> None:
    """Work is the pipelines the nodes' limits allow times the nodes (placement scans each per pipeline)."""
    nodes = tuple(InventoryNode(f"dn{i}", "/rack1", 1, 1) for i in range(20))
    assert PlanCache(SETTINGS)._work(nodes) == 20 * 2 // 3 * 20  # the default: 2 pipelines per metadata disk
    wide = OzoneConfiguration({"ozone.scm.datanode.pipeline.limit": "50"})
    assert PlanCache(ScmSettings.from_conf(wide))._work(nodes) == 20 * 50 // 3 * 20 > planning.INLINE_MAX_WORK


def test_a_large_cluster_is_planned_on_a_thread_while_the_last_plan_is_shown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    release = threading.Event()  # the planner thread finishes only when the test says so

    def held(settings, nodes, seed=0):
        assert release.wait(10)
        return plan_pipelines(settings, nodes, seed)

    monkeypatch.setattr(planning, "plan_pipelines", held)
    cache = PlanCache(SETTINGS, inline_max=0)
    started = cache.plan(inventory(6))
    assert started["plan"] is None and started["computing"] and not started["current"]
    release.set()
    done = wait_for(lambda: (answer := cache.plan(inventory(6)))["current"] and answer, 10, "the first plan")
    assert done["plan"]["ratis_three"] == 4 and not done["computing"]
    release.clear()
    changed = cache.plan(inventory(9))
    assert changed["plan"]["datanodes"] == 6 and changed["computing"] and not changed["current"]
    release.set()
    wait_for(lambda: cache.plan(inventory(9))["current"], 10, "the plan for nine datanodes")
    assert cache.plan(inventory(9))["plan"]["datanodes"] == 9


def test_a_failed_plan_is_shown_and_tried_again_for_other_datanodes(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    tries: list[int] = []

    def broken(conf, nodes, seed=0):
        tries.append(len(nodes))
        raise RuntimeError("planner bug")

    monkeypatch.setattr(planning, "plan_pipelines", broken)
    cache = PlanCache(SETTINGS, inline_max=0)
    cache.plan(inventory(3))
    answer = wait_for(lambda: (a := cache.plan(inventory(3)))["error"] and a, 10, "the failed plan")
    assert (
        answer["error"] == "RuntimeError: planner bug" and answer["plan"] is None and not answer["computing"]
    )
    assert "The pipeline plan for 3 datanodes failed" in caplog.text
    assert cache.plan(inventory(3))["error"] and tries == [3]  # not again for the same datanodes
    cache.plan(inventory(4))
    wait_for(lambda: cache.plan(inventory(4))["error"], 10, "the second failed plan")
    assert tries == [3, 4]
