"""SafeModeExitRule: the contract every safe-mode exit rule implements (Ozone's SafeModeExitRule)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from pyozone.scm.events import SCMEvent


class SafeModeExitRule(ABC):
    """Counts what one event type reports until a threshold is met.

    The manager drives it: `process` only while in safe mode and not yet validated, `refresh` only
    while it fails; so a rule never has to guard against being called after it passed.
    """

    event: ClassVar[SCMEvent]
    pre_check: ClassVar[bool] = False

    @property
    def name(self) -> str:
        """Ozone's class name, which is what operators and the admin CLI see."""
        return type(self).__name__

    @abstractmethod
    def validate(self) -> bool:
        """True when the rule's exit condition holds on what has been counted so far."""

    @abstractmethod
    def process(self, payload: Any) -> None:
        """Counts one event's payload."""

    def refresh(self) -> None:  # noqa: B027 - most rules count events only and have no SCM state to re-read
        """Re-reads SCM state (totals, thresholds) so a rule stuck on stale totals can still pass."""

    def reinitialize(self) -> None:
        """HA: the records changed under the rule (a checkpoint installed, the log replayed up to the
        leader's): re-read them, and count what this SCM already recorded from the datanodes' reports
        for what newly joined the totals (those reports came before the rule looked for them)."""
        self.refresh()

    @abstractmethod
    def status_text(self) -> str:
        """Progress as "counted (=n) >= required (=m)", in the spirit of Ozone's getStatusText()."""
