"""ProtocolError: what a converter raises for a message it cannot accept."""

from __future__ import annotations


class ProtocolError(ValueError):
    """A protobuf message (or a value bound for one) breaks the protocol: a required field is missing, an
    enum value is unknown, a number is out of range.

    `field` names the offending field as a path from the converted message (for example
    "containerReport.reports[3].containerID"). Servers answer it with INVALID_ARGUMENT.
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem
