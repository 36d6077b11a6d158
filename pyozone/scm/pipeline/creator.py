"""The background pipeline creator (Ozone's BackgroundPipelineCreator): fills every replication config up to
its limits.

The SCM core decides when it runs (its interval, one-shot triggers, safe mode); one `create_pipelines`
call is one run: round-robin over the configs, each dropped at its first refusal.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, ReplicationConfig
from pyozone.scm.pipeline.manager import PipelineManager

if TYPE_CHECKING:
    from pyozone.scm.settings import PipelineSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CreatorRun:
    created: dict[ReplicationConfig, int] = field(default_factory=dict)
    refusals: dict[ReplicationConfig, str] = field(default_factory=dict)


def replication_configs(settings: PipelineSettings) -> list[ReplicationConfig]:
    """In Ozone's order: RATIS/ONE (when auto.factor.one) before RATIS/THREE; EC default: THREE only."""
    if settings.default_ec is not None:
        return [RATIS_THREE] if settings.creation_ratis_three else []
    configs = [RATIS_ONE] if settings.creation_auto_factor_one else []
    return [*configs, RATIS_THREE]


class BackgroundPipelineCreator:
    def __init__(
        self, settings: PipelineSettings, pipeline_manager: PipelineManager, budget: int | None = None
    ) -> None:
        """`budget` caps the pipelines one call creates: a daemon spreads a big fill over several ticks
        (its event loop keeps serving heartbeats), the simulator and the planner fill in one call."""
        self.pipelines = pipeline_manager
        self.configs = replication_configs(settings)
        self.budget = budget
        self.one_shot = False

    def trigger(self) -> None:
        """New nodes, changed addresses, recovered nodes and the safe-mode pre-check ask for a run."""
        self.one_shot = True

    def create_pipelines(self) -> CreatorRun:
        self.one_shot = False
        run = CreatorRun()
        active = list(self.configs)
        made = 0
        while active:
            for config in list(active):
                if self.budget is not None and made >= self.budget:
                    self.one_shot = True  # not done: the next tick goes on where this one stopped
                    active.clear()
                    break
                try:
                    self.pipelines.create_pipeline(config)
                except SCMException as e:
                    run.refusals[config] = str(e)
                    active.remove(config)
                else:
                    made += 1
                    run.created[config] = run.created.get(config, 0) + 1
        if run.created:
            log.info(
                "Background pipeline creator made %s", ", ".join(f"{n} {c}" for c, n in run.created.items())
            )
        return run
