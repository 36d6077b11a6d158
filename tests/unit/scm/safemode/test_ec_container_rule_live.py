"""ECContainerSafeModeRule in the real SCM core: after a restart, an EC container holding keys
counts once `data` distinct datanodes registered with a replica of it; the rule holds SCM in safe mode
until the threshold fraction of them does."""

from __future__ import annotations

from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import LifeCycleState, ReplicaState
from pyozone.scm.safemode.container_rules import ECContainerSafeModeRule
from tests.unit.scm.block.ec_harness import EcScm


def closed(cid: int, index: int) -> ContainerReplicaReport:
    return ContainerReplicaReport(
        cid, ReplicaState.CLOSED, replica_index=index, key_count=2, used_bytes=1 << 20
    )


def ec_rule(h: EcScm) -> ECContainerSafeModeRule:
    (rule,) = [r for r in h.scm.safe_mode.rules() if isinstance(r, ECContainerSafeModeRule)]
    return rule


def test_restarted_scm_waits_for_data_count_datanodes_per_ec_container() -> None:
    first = EcScm(6)
    block = first.allocate()
    cid, nodes = block.container_id, block.pipeline.nodes
    first.scm.pipelines.close_pipeline(block.pipeline.id)
    first.report(nodes[0], closed(cid, 1))
    assert first.scm.containers.get(cid).state is LifeCycleState.CLOSED

    h = EcScm(6, store=first.store, register=False, out_of_safe_mode=False)
    rule = ec_rule(h)
    assert (rule.total, rule.with_min_replicas) == (1, 0)
    assert h.scm.safe_mode.in_safe_mode()
    h.register(nodes[0], closed(cid, 1))
    h.register(nodes[0], closed(cid, 1))  # a second registration of the same node counts once
    h.register(nodes[3], closed(cid, 4))
    assert not rule.validate()
    assert "ECContainerSafeModeRule" in {s.name for s in h.scm.safe_mode.rule_statuses() if not s.validated}
    h.register(nodes[4], closed(cid, 5))
    assert rule.validate() and rule.with_min_replicas == 1
    assert "ECContainerSafeModeRule" in {s.name for s in h.scm.safe_mode.rule_statuses() if s.validated}


def test_empty_and_open_ec_containers_do_not_hold_safe_mode() -> None:
    first = EcScm(6)
    first.allocate()  # OPEN
    h = EcScm(6, store=first.store, register=False, out_of_safe_mode=False)
    assert ec_rule(h).total == 0 and ec_rule(h).validate()
