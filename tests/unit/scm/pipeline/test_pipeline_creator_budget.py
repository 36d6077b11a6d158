"""A creator budget spreads the same fill over several calls (the daemon's event loop keeps serving)."""

from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE
from pyozone.scm.pipeline.creator import BackgroundPipelineCreator
from pyozone.scm.settings import ScmSettings


def test_budget_reaches_the_same_pipelines_over_several_calls(make_cluster) -> None:
    unlimited, budgeted = make_cluster(), make_cluster()
    for c in (unlimited, budgeted):
        c.add_nodes(12)
    BackgroundPipelineCreator(ScmSettings.from_conf(unlimited.conf).pipeline, unlimited.pm).create_pipelines()
    creator = BackgroundPipelineCreator(ScmSettings.from_conf(budgeted.conf).pipeline, budgeted.pm, budget=5)
    calls = 0
    creator.trigger()
    while creator.one_shot:
        run = creator.create_pipelines()
        assert sum(run.created.values()) <= 5
        calls += 1
    assert calls > 1
    for config in (RATIS_ONE, RATIS_THREE):
        assert budgeted.pm.count(config) == unlimited.pm.count(config) > 0
