"""SCMBlockDeletingService: one run sends each eligible datanode one deleteBlocks command.

The SCM core decides when to run it (every hdds.scm.block.deleting.service.interval, out of safe mode,
after the wait time); a run only reads state and queues commands.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pyozone.hdds.commands import DeleteBlocksCommand
from pyozone.hdds.ids import DatanodeID
from pyozone.hdds.states import SCMCommandType
from pyozone.scm.block.deleted_block_log import DeletedBlockLog

if TYPE_CHECKING:
    from pyozone.scm.node.node_manager import NodeManager
    from pyozone.scm.settings import BlockDeletionSettings

log = logging.getLogger(__name__)

_DELETE_BLOCKS = SCMCommandType.deleteBlocksCommand
_SCM_QUEUE_LIMIT = 2  # deleteBlocks commands SCM itself may hold for a datanode


class SCMBlockDeletingService:
    def __init__(
        self, settings: BlockDeletionSettings, deleted_block_log: DeletedBlockLog, node_manager: NodeManager
    ) -> None:
        self.block_deletion_limit = settings.per_interval_max
        if self.block_deletion_limit <= 0:
            raise ValueError("hdds.scm.block.deletion.per-interval.max must be positive")
        self.datanode_queue_limit = settings.datanode_queue_limit
        self.commit_map_limit = settings.commit_map_limit
        self._log = deleted_block_log
        self._nodes = node_manager

    def eligible_datanodes(self) -> set[DatanodeID]:
        """IN_SERVICE+HEALTHY datanodes with room in both their own and SCM's deleteBlocks queues."""
        return {
            info.uuid
            for info in self._nodes.healthy_in_service()
            if self._nodes.total_datanode_command_count(info.uuid, _DELETE_BLOCKS) < self.datanode_queue_limit
            and self._nodes.commands.count(info.uuid, _DELETE_BLOCKS) < _SCM_QUEUE_LIMIT
        }

    def run(self) -> int:
        """One run of the periodic service; returns how many deleteBlocks commands it queued."""
        if self._log.commit_map_size >= self.commit_map_limit:
            log.warning(
                "Skipping block deletion: %d transactions await ACKs (limit %d)",
                self._log.commit_map_size,
                self.commit_map_limit,
            )
            return 0
        term = self._nodes.context.term_of_leader()  # before get_transactions, which purges: leader only
        dn_set = self.eligible_datanodes()
        selected = self._log.get_transactions(self.block_deletion_limit, dn_set)
        processed: set[int] = set()
        for dn, txs in selected.by_datanode.items():
            tx_ids = [tx.tx_id for tx in txs]
            command = DeleteBlocksCommand(transactions=tuple(txs), term=term)
            self._log.record_transaction_created(dn, command.id, tx_ids)
            self._nodes.add_datanode_command(dn, command)
            processed.update(tx_ids)
        self._log.increment_retry_count(sorted(processed))
        if selected:
            log.info(
                "Queued %d blocks for deletion on %d of %d eligible datanodes",
                selected.blocks_added,
                len(selected.by_datanode),
                len(dn_set),
            )
        return len(selected.by_datanode)
