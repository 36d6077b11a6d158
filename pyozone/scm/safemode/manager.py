"""SafeModeManager: drives the exit rules from SCM events and moves the status one way
(SCMSafeModeManager)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from pyozone.hdds.clock import Clock
from pyozone.hdds.exceptions import ResultCode, SCMException
from pyozone.hdds.safemode_status import RuleStatus, SafeModeStatus
from pyozone.scm.events import EventQueue, SCMEvent
from pyozone.scm.safemode.container_rules import ContainerSource
from pyozone.scm.safemode.factory import create_rules
from pyozone.scm.safemode.pipeline_rules import NodeSource, PipelineSource
from pyozone.scm.safemode.rule import SafeModeExitRule

if TYPE_CHECKING:
    from pyozone.scm.settings import ScmSettings

log = logging.getLogger(__name__)


class SafeModeManager:
    """SCM starts in safe mode so that it neither allocates blocks nor creates Ratis/THREE pipelines
    on a partial view of the cluster; it leaves once every rule saw enough of the cluster report in.

    Build it after the other managers reloaded their state from the store: the container and
    pipeline rules take their totals from them.
    """

    def __init__(
        self,
        settings: ScmSettings,
        clock: Clock,
        events: EventQueue,
        node_manager: NodeSource,
        pipeline_manager: PipelineSource | None,
        container_manager: ContainerSource,
        state_machine_ready: Callable[[], bool] | None = None,
    ) -> None:
        self.clock = clock
        self.events = events
        self._rules = create_rules(
            settings, node_manager, pipeline_manager, container_manager, state_machine_ready
        )
        self._validated: set[str] = set()
        # HA: the records change under the rules (applied from the leader's log, installed)
        self._ha = state_machine_ready is not None
        self.exited_at_ms: int | None = None
        self._status = SafeModeStatus.INITIAL
        if not settings.safe_mode.enabled:
            log.info("Safemode is disabled, skipping Safemode rule validation and force exiting Safemode.")
            self._status = SafeModeStatus.OUT_OF_SAFE_MODE
            self.exited_at_ms = clock.now_ms()
        for rule in self._rules:
            events.add_handler(rule.event, self._handler(rule))

    # ------------------------------------------------------------------ queries
    @property
    def status(self) -> SafeModeStatus:
        return self._status

    def in_safe_mode(self) -> bool:
        return self.status.in_safe_mode

    def precheck_passed(self) -> bool:
        return self.status.precheck_passed

    def rules(self) -> list[SafeModeExitRule]:
        return list(self._rules)

    def rule_statuses(self) -> list[RuleStatus]:
        """A rule shows as validated once recorded so (validation is sticky) or when it holds now."""
        return [
            RuleStatus(
                rule.name, rule.name in self._validated or rule.validate(), rule.pre_check, rule.status_text()
            )
            for rule in self._rules
        ]

    # ------------------------------------------------------------------ inputs
    def start(self) -> None:
        """Tells listeners registered after construction the current status (Ozone's start())."""
        self.events.fire(SCMEvent.SAFE_MODE_STATUS, self.status)

    def force_exit(self) -> None:
        """`ozone admin safemode --force-exit`: leaves safe mode whatever the rules say."""
        if self.in_safe_mode():
            log.info("SCM force-exiting safe mode.")
            self._set_status(SafeModeStatus.OUT_OF_SAFE_MODE)

    def refresh(self) -> None:
        """The periodic refresh (every hdds.scm.safemode.rule.refresh.interval while in safe mode):
        failing rules re-read SCM state, e.g. containers deleted since start, then all re-validate."""
        for rule in self._rules:
            if not self.in_safe_mode():
                return
            if rule.name in self._validated:
                continue
            if not rule.validate():
                rule.refresh()
            if rule.validate():
                self._mark_validated(rule)

    def reinitialize(self) -> None:
        """HA (Ozone's SCMStateMachine refreshes the rules at reinitialize and once the state machine is
        ready, SafeModeExitRule.refresh(forceRefresh)): every rule re-reads the applied records, those
        validated on the records read before too (an SCM restarted behind the log, or that installed a
        checkpoint, read a stale or empty scm.db: 0 eligible containers pass at once); a rule that no
        longer holds counts as not validated until it holds again (review R17 D1)."""
        if not self.in_safe_mode():
            return
        self._rejudge()
        for rule in self._rules:
            if self.in_safe_mode() and rule.name not in self._validated and rule.validate():
                self._mark_validated(rule)

    def _rejudge(self) -> None:
        for rule in self._rules:
            rule.reinitialize()
            if not rule.validate():
                self._validated.discard(rule.name)

    def _handler(self, rule: SafeModeExitRule) -> Callable[[Any], None]:
        def on_event(payload: Any) -> None:
            if not self.in_safe_mode() or rule.name in self._validated:
                return
            if not rule.validate():
                rule.process(payload)
                if not rule.validate():
                    return
            self._mark_validated(rule)

        return on_event

    # ------------------------------------------------------------------ status progression
    def _mark_validated(self, rule: SafeModeExitRule) -> None:
        self._validated.add(rule.name)
        log.info("%s rule is successfully validated", rule.name)
        # Compare-and-set order: the exit step starts from PRE_CHECKS_PASSED, so it can never skip it.
        if self.status is SafeModeStatus.INITIAL and all(
            r.name in self._validated for r in self._rules if r.pre_check
        ):
            log.info("All SCM safe mode pre check rules have passed")
            self._set_status(SafeModeStatus.PRE_CHECKS_PASSED)
        if self.status is SafeModeStatus.PRE_CHECKS_PASSED and len(self._validated) == len(self._rules):
            if self._ha:
                # the records may have changed since a rule was validated: the exit is judged on them
                self._rejudge()
                if len(self._validated) < len(self._rules):
                    return
            log.info("All SCM safe mode rules are validated; SCM exiting safe mode.")
            self._set_status(SafeModeStatus.OUT_OF_SAFE_MODE)

    def _set_status(self, status: SafeModeStatus) -> None:
        self._status = status
        if status is SafeModeStatus.OUT_OF_SAFE_MODE:
            self.exited_at_ms = self.clock.now_ms()
        self.events.fire(SCMEvent.SAFE_MODE_STATUS, status)
        if status is SafeModeStatus.PRE_CHECKS_PASSED:
            self.events.fire(SCMEvent.PRE_CHECK_COMPLETED, None)


class SafeModeView(Protocol):
    def in_safe_mode(self) -> bool: ...


def check_not_in_safe_mode(manager: SafeModeView, operation: str) -> None:
    """The one place the refusal text lives; block and pipeline managers call it for gated operations."""
    if manager.in_safe_mode():
        raise SCMException(f"{operation} is not allowed in safe mode", ResultCode.SAFE_MODE_EXCEPTION)
