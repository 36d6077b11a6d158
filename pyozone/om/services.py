"""The OM's background services, as run-once steps the daemon calls on timers (and tests call directly).

KeyDeletingService hands the blocks of deleted, replaced and abandoned keys to SCM (deleteScmKeyBlocks)
and forgets an entry once SCM has taken every block of it (success, or errorNotFound: nothing left to
delete). OpenKeyCleanupService abandons open keys older than ozone.om.open.key.expire.threshold (a
client that died mid-write): their blocks go to deletedTable.

Each service keeps its progress since the start as one frozen value it replaces after every run, so a
reader in another thread (the metrics scrape, the web UI) sees one run's totals whole.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pyozone.framework.scm_errors import ScmClientError
from pyozone.hdds.ids import BlockID
from pyozone.om.core import OzoneManager
from pyozone.om.metadata import DELETED_TABLE, OPEN_KEY_TABLE, Op
from pyozone.protocol import om_records
from pyozone.protocol.block import MAX_BLOCK_MESSAGE_BYTES, DeleteResult, KeyBlocks

log = logging.getLogger(__name__)

_DONE = (DeleteResult.success, DeleteResult.errorNotFound)


@dataclass(frozen=True, slots=True)
class DeletingRun:
    sent: int  # deletedTable entries handed to SCM
    purged: int  # entries SCM took in full, removed from deletedTable
    error: str = ""  # SCM could not be asked at all


@dataclass(frozen=True, slots=True)
class DeletingProgress:
    """KeyDeletingService's totals since OM started (Ozone's DeletingServiceMetrics: keys processed and
    purged)."""

    runs: int = 0
    failed_runs: int = 0  # runs SCM could not be asked in
    keys_processed: int = 0  # deletedTable entries handed to SCM
    keys_purged: int = 0  # entries SCM took in full, removed from deletedTable
    last_run_ms: int = 0  # wall clock; 0: no run yet
    last_error: str = ""

    def after(self, run: DeletingRun, now_ms: int) -> DeletingProgress:
        return DeletingProgress(
            self.runs + 1,
            self.failed_runs + bool(run.error),
            self.keys_processed + run.sent,
            self.keys_purged + run.purged,
            now_ms,
            run.error or self.last_error,
        )


@dataclass(frozen=True, slots=True)
class CleanupProgress:
    """OpenKeyCleanupService's totals since OM started."""

    runs: int = 0
    keys_expired: int = 0  # open keys abandoned, their blocks sent to deletedTable
    last_run_ms: int = 0


MAX_DELETE_REQUEST_BYTES = MAX_BLOCK_MESSAGE_BYTES // 2
"""What one deleteScmKeyBlocks may carry: its answer names every block again, with a result, so half the
protocol's limit leaves room for both."""

_BLOCK_BYTES = 32
"""A BlockID in the request, at most: two varints of up to 10 bytes and their framing."""


def _size(entry: KeyBlocks) -> int:
    return len(entry.key.encode()) + 16 + _BLOCK_BYTES * len(entry.blocks)


def _pieces(name: str, blocks: tuple[BlockID, ...]) -> list[KeyBlocks]:
    """The entry as one KeyBlocks, or several when its blocks alone would not fit in one request."""
    per = max(1, (MAX_DELETE_REQUEST_BYTES - _size(KeyBlocks(name, ()))) // _BLOCK_BYTES)
    return [KeyBlocks(name, blocks[i : i + per]) for i in range(0, max(1, len(blocks)), per)]


class KeyDeletingService:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om
        self.progress = DeletingProgress()

    def _batches(self) -> tuple[list[str], list[list[KeyBlocks]]]:
        """Up to the per-task limit of deletedTable entries om.db holds, in requests of at most
        MAX_DELETE_REQUEST_BYTES: however long the names or many the blocks, every request can be sent.

        Only what om.db holds: the table cache also shows transactions not durable yet and, on an HA
        leader, not committed (a deleteKey a step-down drops); SCM must never delete the blocks of a key
        whose deletion may not happen. What is applied is synced first, so a lone OM's rows are all there."""
        store = self.om.store
        store.sync_applied()
        names: list[str] = []
        batches: list[list[KeyBlocks]] = []
        size = MAX_DELETE_REQUEST_BYTES
        for name, _ in store.scan(DELETED_TABLE):
            if len(names) >= self.om.settings.key_deleting_limit:
                break
            value = store.stored_value(DELETED_TABLE, name)
            if value is None:
                continue  # not committed yet: a later run takes it
            names.append(name)
            for piece in _pieces(name, om_records.decode_key_block_ids(value)):
                if size + _size(piece) > MAX_DELETE_REQUEST_BYTES:
                    batches.append([])
                    size = 0
                batches[-1].append(piece)
                size += _size(piece)
        return names, batches

    def run_once(self) -> DeletingRun:
        run = self._run()
        self.progress = self.progress.after(run, self.om.clock.wall_ms())
        return run

    def _run(self) -> DeletingRun:
        names, batches = self._batches()
        if not names:
            return DeletingRun(0, 0)
        # an entry is purged once SCM took every piece of it in full
        pending = dict.fromkeys(names, 0)
        for piece in (p for batch in batches for p in batch):
            pending[piece.key] += 1
        error = ""
        for batch in batches:
            try:
                results = self.om.scm.delete_key_blocks(batch)
            except ScmClientError as e:
                error = str(e)
                log.warning("key deleting service: SCM did not take %d entries: %s", len(batch), e)
                break
            for r in results:
                if r.key in pending and all(x in _DONE for _, x in r.results):
                    pending[r.key] -= 1
        done = [name for name in names if pending[name] <= 0]
        with self.om.lock:
            self.om.store.write([(DELETED_TABLE, key, None) for key in done])
        log.info("key deleting service: %d of %d entries taken by SCM", len(done), len(names))
        return DeletingRun(len(names), len(done), error)


class OpenKeyCleanupService:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om
        self.progress = CleanupProgress()

    def run_once(self) -> int:
        """Moves up to the per-task limit of expired open keys to deletedTable; returns how many."""
        expired = self._run()
        progress = self.progress
        self.progress = CleanupProgress(
            progress.runs + 1, progress.keys_expired + expired, self.om.clock.wall_ms()
        )
        return expired

    def _run(self) -> int:
        settings = self.om.settings
        with self.om.lock:
            deadline = self.om.clock.wall_ms() - settings.open_key_expire_ms
            ops: list[Op] = []
            expired = 0
            for name, value in self.om.store.scan(OPEN_KEY_TABLE):
                if expired >= settings.open_key_cleanup_limit:
                    break
                record = om_records.decode_key(value)
                if record.creation_ms > deadline:
                    continue
                ops.append((OPEN_KEY_TABLE, name, None))
                self.om.keys.orphan(record, ops)
                expired += 1
            if ops:
                self.om.commit(ops)
        if expired:
            log.info("open key cleanup: %d open key(s) expired, their blocks go to deletion", expired)
        return expired
