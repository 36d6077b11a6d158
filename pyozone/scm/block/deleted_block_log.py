"""DeletedBlockLog: persisted block-deletion transactions, which of them to send where, and their ACKs
(Ozone's DeletedBlockLogImpl; HEAD semantics: unlimited retries, retry counter in memory only).

A transaction leaves the log only once every current replica's datanode has ACKed it, or when its
container is DELETED or unknown. Commands, statuses and ACK sets are in memory: after a restart
everything still in the log is simply sent again.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING

from pyozone.hdds.commands import DeletedBlocksTransaction, SCMCommand
from pyozone.hdds.ids import ContainerID, DatanodeID
from pyozone.hdds.messages import CommandStatusReport, DeleteBlockTransactionResult
from pyozone.hdds.states import CommandStatus, LifeCycleState, SCMCommandType
from pyozone.scm.block.command_status import CommandRecord, DeleteBlocksCommandStatusManager
from pyozone.scm.block.sequence_id import DEL_TXN_ID, SequenceIdGenerator
from pyozone.scm.store import RecordCodec, SCMMetadataStore

if TYPE_CHECKING:
    from pyozone.scm.container.manager import ContainerManager
    from pyozone.scm.settings import BlockDeletionSettings

log = logging.getLogger(__name__)


class DatanodeDeletedBlockTransactions:
    """One run's selection: transactions per datanode, and blocks counted once per datanode they go to."""

    def __init__(self) -> None:
        self.by_datanode: dict[DatanodeID, list[DeletedBlocksTransaction]] = {}
        self.blocks_added = 0
        self._blocks: dict[DatanodeID, int] = {}

    def add(self, dn: DatanodeID, tx: DeletedBlocksTransaction) -> None:
        self.by_datanode.setdefault(dn, []).append(tx)
        self._blocks[dn] = self._blocks.get(dn, 0) + len(tx.local_ids)
        self.blocks_added += len(tx.local_ids)

    def blocks_for(self, dn: DatanodeID) -> int:
        return self._blocks.get(dn, 0)

    def __bool__(self) -> bool:
        return bool(self.by_datanode)


class DeletedBlockLog:
    def __init__(
        self,
        settings: BlockDeletionSettings,
        clock,
        store: SCMMetadataStore,
        container_manager: ContainerManager,
        sequence_ids: SequenceIdGenerator,
        container_health_ok: Callable[[ContainerID], bool] = lambda container_id: True,
    ) -> None:
        self.clock = clock
        self.container_health_ok = container_health_ok
        self._store = store
        self._containers = container_manager
        self._sequence_ids = sequence_ids
        self._codec = RecordCodec(DeletedBlocksTransaction)
        self._table = store.int_table("deletedBlocks", self._codec)
        self._batch_bytes = int(settings.batch_byte_limit * 0.9)
        self._per_dn_factor = max(1, settings.per_datanode_factor)
        self._status = DeleteBlocksCommandStatusManager(clock, settings.timeout_ms)
        self._committed: dict[int, set[DatanodeID]] = {}
        self._retries: dict[int, int] = {}
        self._last_processed = -1
        # Only the keys stay in memory, in order: the scan resumes after the last processed id.
        decode = self._table.key_codec.decode
        self._tx_ids: list[int] = [decode(key) for key, _ in store.items(self._table.name)]

    # ------------------------------------------------------------------ the log
    def add_transactions(self, container_blocks: Mapping[ContainerID, Sequence[int]]) -> list[int]:
        """One transaction per container; written in batches of at most ~90% of the Ratis appender limit
        (a batch is written before a transaction would take it past, so one SCM HA log entry carries it;
        a single transaction above the limit is refused by the HA glue, `SCMMetadataStore.admit`)."""
        added: list[int] = []
        batch: list[DeletedBlocksTransaction] = []
        batch_bytes = 0
        for container_id, local_ids in container_blocks.items():
            tx = DeletedBlocksTransaction(
                self._sequence_ids.next_id(DEL_TXN_ID), container_id, tuple(local_ids)
            )
            size = len(self._codec.encode(tx))
            if batch and batch_bytes + size > self._batch_bytes:
                self._write(batch)
                batch, batch_bytes = [], 0
            batch.append(tx)
            added.append(tx.tx_id)
            batch_bytes += size
        if batch:
            self._write(batch)
        return added

    def _write(self, batch: list[DeletedBlocksTransaction]) -> None:
        with self._store.batch():
            for tx in batch:
                self._table.put(tx.tx_id, tx)
        for tx in batch:
            bisect.insort(self._tx_ids, tx.tx_id)

    def _remove(self, tx_ids: Iterable[int]) -> None:
        tx_ids = list(tx_ids)
        with self._store.batch():
            for tx_id in tx_ids:
                self._table.delete(tx_id)
        for tx_id in tx_ids:
            self._forget(tx_id)

    def _forget(self, tx_id: int) -> None:
        i = bisect.bisect_left(self._tx_ids, tx_id)
        if i < len(self._tx_ids) and self._tx_ids[i] == tx_id:
            del self._tx_ids[i]
        self._committed.pop(tx_id, None)
        self._retries.pop(tx_id, None)

    def record_changed(self, key: bytes, value: bytes | None) -> None:
        """A `deletedBlocks` record as it now stands (SCM HA's record listener): a follower applying the
        leader's, or a deposed leader's undo; only the id is kept in memory."""
        tx_id = self._table.key_codec.decode(key)
        if value is None:
            self._forget(tx_id)
            return
        i = bisect.bisect_left(self._tx_ids, tx_id)
        if i == len(self._tx_ids) or self._tx_ids[i] != tx_id:
            self._tx_ids.insert(i, tx_id)

    def record_keys(self) -> list[bytes]:
        """The keys of the records in memory, as stored (`ScmReplication.reload_all`)."""
        return [self._table.key_codec.encode(tx_id) for tx_id in self._tx_ids]

    def clear_leader_state(self) -> None:
        """What a leader alone keeps (SCMDeleteBlocksCommandStatusManager): commands' statuses,
        ACK sets, retry counts and where the scan stopped; the next leader sends every logged transaction
        again."""
        self._status = DeleteBlocksCommandStatusManager(self.clock, self._status.timeout_ms)
        self._committed.clear()
        self._retries.clear()
        self._last_processed = -1

    def get(self, tx_id: int) -> DeletedBlocksTransaction | None:
        return self._table.get(tx_id)

    def transaction_ids(self) -> list[int]:
        return list(self._tx_ids)

    def __len__(self) -> int:
        return len(self._tx_ids)

    # ------------------------------------------------------------------ choosing what to send
    def get_transactions(self, limit: int, dn_set: set[DatanodeID]) -> DatanodeDeletedBlockTransactions:
        """DeletedBlockLogImpl.getTransactions: resume after the last processed id, wrap once, stop at `limit`
        blocks."""
        self._status.clean_timeouts()
        result = DatanodeDeletedBlockTransactions()
        outstanding = self._status.outstanding(dn_set)
        factor = len(dn_set) // self._per_dn_factor
        max_per_dn = min(limit, limit // factor) if factor > 0 else limit
        purge: list[int] = []
        last = -1
        for tx_id in self._scan_order():
            if result.blocks_added >= limit:
                break
            last = tx_id
            tx = self._table.get(tx_id)
            info = self._containers.find(tx.container_id) if tx is not None else None
            if tx is None or info is None or info.state is LifeCycleState.DELETED:
                log.warning("Purging delete transaction %d: container gone or DELETED", tx_id)
                purge.append(tx_id)
            elif info.state is not LifeCycleState.OPEN:
                self._select(tx, dn_set, outstanding, max_per_dn, result)
        self._last_processed = last
        if purge:
            self._remove(purge)
        return result

    def _scan_order(self) -> Iterator[int]:
        ids, n = self._tx_ids, len(self._tx_ids)
        pivot = bisect.bisect_left(ids, self._last_processed) if self._last_processed != -1 else n
        indexes = range(n) if pivot >= n - 1 else chain(range(pivot + 1, n), range(pivot + 1))
        return (ids[i] for i in indexes)

    def _select(
        self,
        tx: DeletedBlocksTransaction,
        dn_set: set[DatanodeID],
        outstanding: dict[DatanodeID, set[int]],
        max_per_dn: int,
        result: DatanodeDeletedBlockTransactions,
    ) -> None:
        """All replicas' datanodes must be eligible and under their share, and the container healthy."""
        replicas = self._containers.replicas(tx.container_id)
        if any(r.datanode not in dn_set for r in replicas) or not self.container_health_ok(tx.container_id):
            log.debug("Skipping delete transaction %d of container %d", tx.tx_id, tx.container_id)
            return
        if any(result.blocks_for(r.datanode) >= max_per_dn for r in replicas):
            return
        for replica in replicas:
            dn = replica.datanode
            if dn not in self._committed.get(tx.tx_id, ()) and tx.tx_id not in outstanding.get(dn, ()):
                result.add(dn, tx)

    def record_transaction_created(self, dn: DatanodeID, command_id: int, tx_ids: Iterable[int]) -> None:
        tx_ids = frozenset(tx_ids)
        self._status.record(dn, command_id, tx_ids)
        for tx_id in tx_ids:
            self._committed.setdefault(tx_id, set())

    def increment_retry_count(self, tx_ids: Iterable[int]) -> None:
        for tx_id in tx_ids:
            self._retries[tx_id] = self._retries.get(tx_id, 0) + 1

    def retry_count(self, tx_id: int) -> int:
        return self._retries.get(tx_id, 0)

    @property
    def commit_map_size(self) -> int:
        return len(self._committed)

    # ------------------------------------------------------------------ command status and ACKs
    def on_sent(self, dn: DatanodeID, command: SCMCommand) -> None:
        """Called when a heartbeat response carries the command to the datanode: TO_BE_SENT -> SENT."""
        if command.type is SCMCommandType.deleteBlocksCommand:
            self._status.update(dn, command.id, CommandStatus.PENDING)

    def process_command_status(self, dn: DatanodeID, reports: Sequence[CommandStatusReport]) -> None:
        reports = [r for r in reports if r.type is SCMCommandType.deleteBlocksCommand]
        for report in reports:
            if report.status is CommandStatus.EXECUTED:
                self.commit_transactions(report.block_deletion_results, dn)
            elif report.status is CommandStatus.FAILED:
                log.warning("deleteBlocks command %d failed on %s", report.command_id, dn)
        latest = {report.command_id: report.status for report in reports}
        for command_id, status in latest.items():
            self._status.update(dn, command_id, status)
        self._status.clean_timeouts(dn)

    def commit_transactions(
        self, results: Sequence[DeleteBlockTransactionResult], dn: DatanodeID
    ) -> list[int]:
        """DeletedBlockLogImpl.commitTransactions: a transaction goes once all current replica datanodes, and
        enough of them, ACKed it."""
        done: list[int] = []
        for result in results:
            if not result.success:
                log.warning(
                    "Failed ACK for delete transaction %d from %s; it will be resent", result.tx_id, dn
                )
                continue
            committed = self._committed.get(result.tx_id)
            if committed is None:
                log.debug("Stale ACK for delete transaction %d from %s", result.tx_id, dn)
                continue
            committed.add(dn)
            info = self._containers.find(result.container_id)
            if info is None:
                log.warning(
                    "ACK for delete transaction %d of unknown container %d", result.tx_id, result.container_id
                )
                continue
            replica_dns = {r.datanode for r in self._containers.replicas(result.container_id)}
            if min(len(replica_dns), len(committed)) >= info.replication_config.required_nodes and (
                committed >= replica_dns
            ):
                done.append(result.tx_id)
        if done:
            self._remove(done)
        return done

    def on_datanode_dead(self, dn: DatanodeID) -> None:
        self._status.on_datanode_dead(dn)

    def command_records(self, dn: DatanodeID) -> tuple[CommandRecord, ...]:
        return self._status.records(dn)
