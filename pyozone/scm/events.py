"""SCM's internal events and a deterministic, synchronous event queue.

Ozone's EventQueue hands events to executor threads; here every handler runs to completion in the
order events were fired, so the core behaves identically in a daemon and in the simulator.
"""

from __future__ import annotations

import logging
from collections import defaultdict, deque
from collections.abc import Callable
from enum import Enum, auto
from typing import Any

from pyozone.hdds.exceptions import ResultCode, SCMException

log = logging.getLogger(__name__)

Handler = Callable[[Any], None]


class SCMEvent(Enum):
    PIPELINE_REPORT = auto()
    CLOSE_CONTAINER = auto()
    NEW_NODE = auto()
    NODE_ADDRESS_UPDATE = auto()
    STALE_NODE = auto()
    DEAD_NODE = auto()
    HEALTHY_READONLY_NODE = auto()
    HEALTHY_READONLY_TO_HEALTHY_NODE = auto()
    DATANODE_COMMAND_COUNT_UPDATED = auto()
    REPLICATION_MANAGER_NOTIFY = auto()
    OPEN_PIPELINE = auto()
    NODE_REGISTRATION_CONT_REPORT = auto()
    CONTAINER_REGISTRATION_REPORT = auto()
    SAFE_MODE_STATUS = auto()
    PRE_CHECK_COMPLETED = auto()
    STATEMACHINE_READY = auto()


class EventQueue:
    """Run-to-completion dispatch: an event fired by a handler runs after the current one returns.

    A handler that reaches leader-only work on a follower SCM (SCM_NOT_LEADER) is logged and skipped, as
    Ozone's handlers catch NotLeaderException ("Skip sending ..."): the other handlers still run."""

    def __init__(self) -> None:
        self._handlers: dict[SCMEvent, list[Handler]] = defaultdict(list)
        self._pending: deque[tuple[SCMEvent, Any]] = deque()
        self._dispatching = False
        self.fired: dict[SCMEvent, int] = defaultdict(int)

    def add_handler(self, event: SCMEvent, handler: Handler) -> None:
        self._handlers[event].append(handler)

    def fire(self, event: SCMEvent, payload: Any = None) -> None:
        self.fired[event] += 1
        self._pending.append((event, payload))
        if self._dispatching:
            return
        self._dispatching = True
        try:
            while self._pending:
                ev, data = self._pending.popleft()
                for handler in self._handlers.get(ev, ()):
                    try:
                        handler(data)
                    except SCMException as e:
                        if e.code is not ResultCode.SCM_NOT_LEADER:
                            raise
                        log.info("Skipped %s on a follower SCM: %s", ev.name, e)
        finally:
            self._dispatching = False
            self._pending.clear()
