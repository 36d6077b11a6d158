"""ScmContext (Ozone's SCMContext) and the safe-mode rule it feeds, StateMachineReadyRule."""

from __future__ import annotations

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.ha.context import ScmContext
from pyozone.scm.scm import StorageContainerManager
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import SCMMetadataStore
from tests.builders import dn_id, node_report


def not_leader(context: ScmContext) -> SCMException:
    with pytest.raises(SCMException) as refused:
        context.term_of_leader()
    assert refused.value.code is ResultCode.SCM_NOT_LEADER
    return refused.value


def test_a_lone_scm_is_the_ready_leader_of_term_0() -> None:
    context = ScmContext.standalone()
    assert (context.ha, context.is_leader(), context.is_leader_ready()) == (False, True, True)
    assert context.term_of_leader() == context.known_term == 0
    assert context.state_machine_ready()


def test_a_follower_names_the_leader_it_knows() -> None:
    context = ScmContext.ha_follower(3, "scm2")
    assert not context.is_leader() and not context.is_leader_ready()
    assert "Suggested leader is SCM:scm2" in str(not_leader(context))
    assert context.known_term == 3
    assert "Suggested leader" not in str(not_leader(ScmContext.ha_follower()))


def test_a_new_leader_stamps_its_term_before_it_is_ready_and_runs_services_after() -> None:
    context = ScmContext.ha_follower(3, "scm2")
    context.lead(4)
    assert context.term_of_leader() == 4 and not context.is_leader_ready()  # as Ozone: isLeader is enough
    context.set_leader_ready()
    assert context.is_leader_ready() and context.state_machine_ready()
    context.follow(5, "scm3", leader_commit=None)
    assert not context.is_leader_ready() and not_leader(context)
    with pytest.raises(SCMException):
        context.set_leader_ready()


def test_terms_only_grow() -> None:
    context = ScmContext.ha_leader(4)
    with pytest.raises(ValueError, match="terms only grow"):
        context.follow(3, "scm1", 0)


def test_a_follower_is_ready_once_it_applied_the_leaders_commit_index() -> None:
    context = ScmContext.ha_follower()
    calls: list[int] = []
    context.add_ready_listener(lambda: calls.append(1))
    context.applied(50)
    assert not context.state_machine_ready()  # no leader learned: nothing to catch up to
    context.follow(2, "scm1", leader_commit=80)
    context.applied(79)
    assert not context.state_machine_ready() and calls == []
    context.applied(80)
    context.applied(81)
    assert context.state_machine_ready() and calls == [1]  # once per becoming ready
    context.follow(3, "scm2", leader_commit=120)  # a new leader: catch up again
    assert not context.state_machine_ready()
    context.applied(120)
    assert calls == [1, 1]


def core(context: ScmContext) -> StorageContainerManager:
    conf = OzoneConfiguration({"hdds.scm.safemode.min.datanode": "1"})
    scm = StorageContainerManager(
        ScmSettings.from_conf(conf), ManualClock(), SCMMetadataStore.in_memory(), context=context
    )
    scm.register(DatanodeDetails(dn_id(0), "dn0.test", "10.0.0.1"), node_report())
    scm.safe_mode.refresh()
    return scm


def test_a_lone_scm_has_no_state_machine_rule() -> None:
    scm = core(ScmContext.standalone())
    assert "StateMachineReadyRule" not in {rule.name for rule in scm.safe_mode.rules()}
    assert not scm.safe_mode.in_safe_mode()


def test_a_follower_leaves_safe_mode_once_caught_up() -> None:
    context = ScmContext.ha_follower()
    scm = core(context)
    failing = [s.name for s in scm.safe_mode.rule_statuses() if not s.validated]
    assert failing == ["StateMachineReadyRule"] and scm.safe_mode.in_safe_mode()
    context.follow(1, "scm1", leader_commit=10)
    context.applied(10)  # STATEMACHINE_READY: no refresh needed
    assert not scm.safe_mode.in_safe_mode()


def test_a_ready_leader_passes_the_rule() -> None:
    scm = core(ScmContext.ha_leader(2))
    assert "StateMachineReadyRule" in {rule.name for rule in scm.safe_mode.rules()}
    assert not scm.safe_mode.in_safe_mode()


def test_an_event_handler_reaching_leader_work_on_a_follower_is_skipped() -> None:
    """EventQueue's net (Ozone's handlers catch NotLeaderException): the other handlers still run; any
    other SCMException still propagates."""
    events = EventQueue()
    follower, ran = ScmContext.ha_follower(2, "scm1"), []
    events.add_handler(SCMEvent.CLOSE_CONTAINER, lambda cid: ran.append(follower.term_of_leader()))
    events.add_handler(SCMEvent.CLOSE_CONTAINER, ran.append)
    events.fire(SCMEvent.CLOSE_CONTAINER, 7)
    assert ran == [7]

    def fails(_: object) -> None:
        raise SCMException("no such container", ResultCode.CONTAINER_NOT_FOUND)

    events.add_handler(SCMEvent.NEW_NODE, fails)
    with pytest.raises(SCMException):
        events.fire(SCMEvent.NEW_NODE, "dn")
