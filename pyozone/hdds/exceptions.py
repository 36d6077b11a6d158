"""SCMException with Ozone's result codes, so callers and CLIs can tell failures apart."""

from __future__ import annotations

from enum import Enum, auto


class ResultCode(Enum):
    SAFE_MODE_EXCEPTION = auto()
    FAILED_TO_FIND_HEALTHY_NODES = auto()
    FAILED_TO_FIND_NODES_WITH_SPACE = auto()
    FAILED_TO_FIND_SUITABLE_NODE = auto()
    INVALID_CAPACITY = auto()
    DUPLICATE_DATANODE = auto()
    NO_SUCH_DATANODE = auto()
    PIPELINE_NOT_FOUND = auto()
    DUPLICATED_PIPELINE_ID = auto()
    PIPELINE_STATE_CHANGE_NOT_ALLOWED = auto()
    CONTAINER_NOT_FOUND = auto()
    INVALID_CONTAINER_STATE = auto()
    FAILED_TO_CHANGE_CONTAINER_STATE = auto()
    FAILED_TO_ALLOCATE_CONTAINER = auto()
    FAILED_TO_FIND_ACTIVE_PIPELINE = auto()
    INVALID_BLOCK_SIZE = auto()
    INVALID_OPERATIONAL_STATE_TRANSITION = auto()
    INTERNAL_ERROR = auto()
    # pyozone's stand-in for Ratis' NotLeaderException: a leader-only call reached a follower SCM
    SCM_NOT_LEADER = auto()


class SCMException(Exception):
    def __init__(self, message: str, code: ResultCode) -> None:
        super().__init__(message)
        self.code = code

    def __str__(self) -> str:
        return f"{self.code.name}: {super().__str__()}"
