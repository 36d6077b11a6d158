"""The safe-mode status model (SCMSafeModeManager's SafeModeStatus) and the per-rule status shown to
operators."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class SafeModeStatus(Enum):
    """Ozone's SCMSafeModeManager.SafeModeStatus; the values order the one-way progression."""

    INITIAL = 1
    PRE_CHECKS_PASSED = 2
    OUT_OF_SAFE_MODE = 3

    @property
    def in_safe_mode(self) -> bool:
        return self is not SafeModeStatus.OUT_OF_SAFE_MODE

    @property
    def precheck_passed(self) -> bool:
        """Leaving safe mode (even by force) counts as past the pre-check, so gated work may start."""
        return self is not SafeModeStatus.INITIAL


@dataclass(frozen=True, slots=True)
class RuleStatus:
    """One row of `ozone admin safemode status --verbose`."""

    name: str
    validated: bool
    pre_check: bool
    status_text: str
