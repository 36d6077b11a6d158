"""Errors of the datanode storage layer, named as Ozone's ContainerCommandResponseProto results.

The daemon turns a ContainerError into a protobuf response by result name, so the names here are
exactly Ozone's (a subset of ContainerProtos.Result) and must not be renamed.
"""

from __future__ import annotations

from enum import StrEnum


class Result(StrEnum):
    CONTAINER_NOT_FOUND = "CONTAINER_NOT_FOUND"
    CONTAINER_EXISTS = "CONTAINER_EXISTS"
    CLOSED_CONTAINER_IO = "CLOSED_CONTAINER_IO"
    INVALID_CONTAINER_STATE = "INVALID_CONTAINER_STATE"
    CONTAINER_UNHEALTHY = "CONTAINER_UNHEALTHY"
    CONTAINER_MISSING = "CONTAINER_MISSING"
    NO_SUCH_BLOCK = "NO_SUCH_BLOCK"
    OVERWRITE_FLAG_REQUIRED = "OVERWRITE_FLAG_REQUIRED"
    UNABLE_TO_FIND_CHUNK = "UNABLE_TO_FIND_CHUNK"
    CHECKSUM_MISMATCH = "CHECKSUM_MISMATCH"
    IO_EXCEPTION = "IO_EXCEPTION"
    DISK_OUT_OF_SPACE = "DISK_OUT_OF_SPACE"
    UNKNOWN_BCSID = "UNKNOWN_BCSID"
    BCSID_MISMATCH = "BCSID_MISMATCH"
    DELETE_ON_OPEN_CONTAINER = "DELETE_ON_OPEN_CONTAINER"
    DELETE_ON_NON_EMPTY_CONTAINER = "DELETE_ON_NON_EMPTY_CONTAINER"
    MALFORMED_REQUEST = "MALFORMED_REQUEST"
    CONTAINER_INTERNAL_ERROR = "CONTAINER_INTERNAL_ERROR"
    BLOCK_ALREADY_FINALIZED = "BLOCK_ALREADY_FINALIZED"


class ContainerError(Exception):
    """A failed container operation; `result` is what the datanode answers the client with."""

    def __init__(self, result: Result, message: str) -> None:
        super().__init__(message)
        self.result = result

    def __str__(self) -> str:
        return f"{self.result.value}: {self.args[0]}"
