"""SafeModeRuleFactory: which exit rules an SCM has, given its configuration (Ozone's SafeModeRuleFactory)."""

from __future__ import annotations

from collections.abc import Callable

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import ReplicationType
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
from pyozone.scm.safemode.rule import SafeModeExitRule, fraction


def default_ec_config(conf: OzoneConfiguration) -> ReplicationConfig | None:
    """The default EC replication config (ozone.replication, e.g. rs-3-2-1024k), or None when the
    default replication type is not EC."""
    if conf.get("ozone.replication.type").upper() != ReplicationType.EC.name:
        return None
    text = conf.get("ozone.replication")
    try:
        return ReplicationConfig.parse(f"EC/{text}")
    except ValueError as e:
        raise ConfigError(
            f"ozone.replication: {text!r} is not an EC config while ozone.replication.type is EC ({e})"
        ) from None


def create_rules(
    conf: OzoneConfiguration,
    node_manager: NodeSource,
    pipeline_manager: PipelineSource | None,
    container_manager: ContainerSource,
    state_machine_ready: Callable[[], bool] | None = None,
) -> list[SafeModeExitRule]:
    """Builds the rules in Ozone's order; totals and thresholds come from the managers' current state.
    `state_machine_ready`: an SCM of an HA service (ScmContext) gets StateMachineReadyRule, a lone one not."""
    min_datanodes: int = conf.get("hdds.scm.safemode.min.datanode")
    container_cutoff = fraction(conf, "hdds.scm.safemode.threshold.pct")
    healthy_pct = fraction(conf, "hdds.scm.safemode.healthy.pipeline.pct")
    one_replica_pct = fraction(conf, "hdds.scm.safemode.atleast.one.node.reported.pipeline.pct")
    default_ec = default_ec_config(conf)
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
    if pipeline_manager is not None and (
        default_ec is None or conf.get("ozone.scm.pipeline.creation.ratis.three")
    ):
        rules.append(HealthyPipelineSafeModeRule(pipeline_manager, node_manager, healthy_pct, min_datanodes))
        rules.append(OneReplicaPipelineSafeModeRule(pipeline_manager, one_replica_pct))
    return rules
