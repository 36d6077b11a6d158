"""The OM's background services, as run-once steps the daemon calls on timers (and tests call directly).

KeyDeletingService hands the blocks of deleted, replaced and abandoned keys to SCM (deleteScmKeyBlocks)
and forgets an entry once SCM has taken every block of it (success, or errorNotFound: nothing left to
delete). OpenKeyCleanupService abandons open keys older than ozone.om.open.key.expire.threshold (a
client that died mid-write): their blocks go to deletedTable.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pyozone.om import codec
from pyozone.om.core import OzoneManager
from pyozone.om.metadata import DELETED_TABLE, OPEN_KEY_TABLE, Op
from pyozone.protocol.block import DeleteResult, KeyBlocks
from pyozone.scm.client.block_client import BlockClientError

log = logging.getLogger(__name__)

_DONE = (DeleteResult.success, DeleteResult.errorNotFound)


@dataclass(frozen=True, slots=True)
class DeletingRun:
    sent: int  # deletedTable entries handed to SCM
    purged: int  # entries SCM took in full, removed from deletedTable
    error: str = ""  # SCM could not be asked at all


class KeyDeletingService:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om

    def run_once(self) -> DeletingRun:
        limit = self.om.settings.key_deleting_limit
        entries: list[KeyBlocks] = []
        for name, value in self.om.store.scan(DELETED_TABLE):
            if len(entries) >= limit:
                break
            blocks = tuple(b.block_id for b in codec.decode_key(value).blocks)
            entries.append(KeyBlocks(name, blocks))
        if not entries:
            return DeletingRun(0, 0)
        try:
            results = self.om.scm.delete_key_blocks(entries)
        except BlockClientError as e:
            log.warning("key deleting service: SCM did not take %d entries: %s", len(entries), e)
            return DeletingRun(len(entries), 0, str(e))
        sent = {e.key for e in entries}
        done = [r.key for r in results if r.key in sent and all(x in _DONE for _, x in r.results)]
        with self.om.lock:
            self.om.store.write([(DELETED_TABLE, key, None) for key in done])
        log.info("key deleting service: %d of %d entries taken by SCM", len(done), len(entries))
        return DeletingRun(len(entries), len(done))


class OpenKeyCleanupService:
    def __init__(self, om: OzoneManager) -> None:
        self.om = om

    def run_once(self) -> int:
        """Moves up to the per-task limit of expired open keys to deletedTable; returns how many."""
        settings = self.om.settings
        with self.om.lock:
            deadline = self.om.clock.wall_ms() - settings.open_key_expire_ms
            ops: list[Op] = []
            expired = 0
            for name, value in self.om.store.scan(OPEN_KEY_TABLE):
                if expired >= settings.open_key_cleanup_limit:
                    break
                record = codec.decode_key(value)
                if record.creation_ms > deadline:
                    continue
                ops.append((OPEN_KEY_TABLE, name, None))
                self.om.orphan(record, ops)
                expired += 1
            if ops:
                self.om.commit(ops)
        if expired:
            log.info("open key cleanup: %d open key(s) expired, their blocks go to deletion", expired)
        return expired
