"""SafeModeRuleFactory: which exit rules an SCM has, given its configuration (Ozone's SafeModeRuleFactory)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pyozone.scm.safemode.container_rules import (
    ContainerSource,
    ECContainerSafeModeRule,
    RatisContainerSafeModeRule,
)
from pyozone.scm.safemode.datanode_rules import DataNodeSafeModeRule, ECMinDataNodeSafeModeRule
from pyozone.scm.safemode.pipeline_rules import (
    HealthyPipelineSafeModeRule,
    NodeSource,
    OneReplicaPipelineSafeModeRule,
    PipelineSource,
)
from pyozone.scm.safemode.ready_rule import StateMachineReadyRule
from pyozone.scm.safemode.rule import SafeModeExitRule

if TYPE_CHECKING:
    from pyozone.scm.settings import ScmSettings


def create_rules(
    settings: ScmSettings,
    node_manager: NodeSource,
    pipeline_manager: PipelineSource | None,
    container_manager: ContainerSource,
    state_machine_ready: Callable[[], bool] | None = None,
) -> list[SafeModeExitRule]:
    """Builds the rules in Ozone's order; totals and thresholds come from the managers' current state.
    `state_machine_ready`: an SCM of an HA service (ScmContext) gets StateMachineReadyRule, a lone one not."""
    safe_mode = settings.safe_mode
    min_datanodes = safe_mode.min_datanodes
    container_cutoff = safe_mode.container_threshold
    default_ec = settings.pipeline.default_ec
    rules: list[SafeModeExitRule] = [
        DataNodeSafeModeRule(min_datanodes),
        ECMinDataNodeSafeModeRule(default_ec),
        RatisContainerSafeModeRule(container_manager, container_cutoff),
        ECContainerSafeModeRule(container_manager, container_cutoff),
    ]
    if state_machine_ready is not None:
        rules.append(StateMachineReadyRule(state_machine_ready))
    # With EC as the default, RATIS/THREE pipelines may not be created at all; waiting for them would
    # keep SCM in safe mode for ever.
    if pipeline_manager is not None and (default_ec is None or settings.pipeline.creation_ratis_three):
        healthy_pct = safe_mode.healthy_pipeline_threshold
        rules.append(HealthyPipelineSafeModeRule(pipeline_manager, node_manager, healthy_pct, min_datanodes))
        rules.append(
            OneReplicaPipelineSafeModeRule(pipeline_manager, safe_mode.one_replica_pipeline_threshold)
        )
    return rules
