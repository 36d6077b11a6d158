"""Rules counting registered datanodes: the pre-check, and the EC-default minimum."""

from __future__ import annotations

import logging

from pyozone.hdds.ids import DatanodeID, ReplicationConfig
from pyozone.scm.events import SCMEvent
from pyozone.scm.safemode.rule import SafeModeExitRule

log = logging.getLogger(__name__)


class DataNodeSafeModeRule(SafeModeExitRule):
    """The only pre-check: until enough datanodes registered, no Ratis/THREE pipeline can be placed."""

    event = SCMEvent.NODE_REGISTRATION_CONT_REPORT
    pre_check = True

    def __init__(self, required_dns: int) -> None:
        self.required_dns = required_dns
        self._registered: set[DatanodeID] = set()

    @property
    def registered_dns(self) -> int:
        return len(self._registered)

    def validate(self) -> bool:
        return self.registered_dns >= self.required_dns

    def process(self, payload: DatanodeID) -> None:
        # A set, because a datanode that re-registers (e.g. after a restart) must not count twice.
        self._registered.add(payload)
        log.info(
            "SCM in safe mode. %d DataNodes registered, %d required.", self.registered_dns, self.required_dns
        )

    def status_text(self) -> str:
        return f"registered datanodes (={self.registered_dns}) >= required datanodes (={self.required_dns})"


class ECMinDataNodeSafeModeRule(SafeModeExitRule):
    """With EC as the default, writes need data+parity nodes: EC pipelines are made on demand, so
    no pipeline rule would otherwise hold SCM in safe mode until enough nodes are there."""

    event = SCMEvent.NODE_REGISTRATION_CONT_REPORT

    def __init__(self, default_ec: ReplicationConfig | None) -> None:
        """`default_ec` is the default EC replication config, or None when the default is not EC."""
        self.default_ec = default_ec
        self.required_dns = default_ec.required_nodes if default_ec else 0
        self._registered: set[DatanodeID] = set()

    @property
    def registered_dns(self) -> int:
        return len(self._registered)

    def validate(self) -> bool:
        return self.default_ec is None or self.registered_dns >= self.required_dns

    def process(self, payload: DatanodeID) -> None:
        if self.default_ec is not None:
            self._registered.add(payload)

    def status_text(self) -> str:
        if self.default_ec is None:
            return "ECMinDataNodeSafeModeRule is not applicable (default replication is not EC)"
        return (
            f"EC ({self.default_ec}) safemode: registered datanodes (={self.registered_dns}) "
            f">= required datanodes (={self.required_dns})"
        )
