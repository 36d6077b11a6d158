"""ContainerActionsHandler: a datanode's CLOSE action (container full or unhealthy) -> CLOSE_CONTAINER."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.messages import ContainerAction
from pyozone.scm.events import EventQueue, SCMEvent

log = logging.getLogger(__name__)


class ContainerActionsHandler:
    def __init__(self, events: EventQueue) -> None:
        self.events = events

    def process_actions(self, dn: DatanodeID, actions: Sequence[ContainerAction]) -> None:
        for action in actions:
            log.debug(
                "Datanode %s asks to close container %d: %s", dn, action.container_id, action.reason.name
            )
            self.events.fire(SCMEvent.CLOSE_CONTAINER, action.container_id)
