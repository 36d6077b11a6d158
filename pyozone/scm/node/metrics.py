"""SCMNodeMetrics' counters (Ozone's SCMNodeMetrics), and the commands each heartbeat response carried.

Plain ints in the sans-IO core: the NodeManager counts as it processes heartbeats, and the SCM server
exports them (scm/server/metrics.py), so the daemon and the simulator count the same way. Gauges (nodes
by state, capacity) are not kept here: the exporter reads them from the NodeManager when scraped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from pyozone.hdds.commands import SCMCommand
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import SCMCommandType


@dataclass(slots=True)
class NodeMetrics:
    # A heartbeat from a datanode SCM does not know fails (it is told to register again), as in Ozone.
    num_hb_processed: int = 0
    num_hb_processing_failed: int = 0
    num_node_report_processed: int = 0
    num_node_report_processing_failed: int = 0
    num_node_command_queue_report_processed: int = 0
    # (command type, datanode) -> commands handed to that datanode's heartbeat responses
    commands_sent: Counter[tuple[SCMCommandType, DatanodeID]] = field(default_factory=Counter)

    def sent(self, dn: DatanodeID, commands: Sequence[SCMCommand]) -> None:
        for command in commands:
            self.commands_sent[command.type, dn] += 1
