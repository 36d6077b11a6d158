"""A call's outcome: gRPC's status codes (the names every error mapping in the house already speaks), and
the exceptions a failed call raises on either side."""

from __future__ import annotations

import enum


class StatusCode(enum.IntEnum):
    """gRPC's codes and numbers (grpc/status.proto), so a status reads the same as it did over gRPC."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16

    @classmethod
    def of(cls, number: int) -> StatusCode:
        """A code from the wire; one this side does not know reads as UNKNOWN."""
        try:
            return cls(number)
        except ValueError:
            return cls.UNKNOWN


class RpcError(Exception):
    """A call that ended in a status other than OK, as its caller sees it. `code()` and `details()` are
    methods, as on grpc.aio.AioRpcError, so error mappings read one way for every client."""

    def __init__(self, code: StatusCode, details: str = "") -> None:
        super().__init__(f"{code.name}: {details}")
        self._code = code
        self._details = details

    def code(self) -> StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


class AbortError(Exception):
    """Raised in a handler by `CallContext.abort`: the call ends with this status, nothing is logged."""

    def __init__(self, code: StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details
