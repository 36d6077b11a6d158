"""StateMachineReadyRule: an SCM of an HA service stays in safe mode until its state is the service's."""

from __future__ import annotations

from collections.abc import Callable

from pyozone.scm.events import SCMEvent
from pyozone.scm.safemode.rule import SafeModeExitRule


class StateMachineReadyRule(SafeModeExitRule):
    """Ozone's StateMachineReadyRule, present only when SCM runs on Raft: it passes once
    this SCM is the ready leader, or a follower that applied the log up to the leader's commit index seen
    when it learned the leader (ScmContext.state_machine_ready), so no rule counts reports against a
    half-replayed container table. STATEMACHINE_READY (fired by the context) validates it at once; the
    periodic refresh would too."""

    event = SCMEvent.STATEMACHINE_READY

    def __init__(self, ready: Callable[[], bool]) -> None:
        self._ready = ready

    def validate(self) -> bool:
        return self._ready()

    def process(self, payload: object) -> None:
        """Nothing to count: the context holds the state."""

    def status_text(self) -> str:
        return f"SCM state machine ready (={str(self._ready()).lower()})"
