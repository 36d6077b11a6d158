"""SequenceIdGenerator: cluster-unique, strictly increasing ids handed out from persisted batches.

Each name ("localId", "delTxnId", "containerId") has its own sequence. A batch is reserved by writing
its last id to the `sequenceId` table before any id of it is handed out, so a process killed at any
moment restarts past every id it may have handed out; the unused rest of a batch is skipped. In an HA
service the reservation is the leader's staged record, committed before any answer or command carrying
an id of it leaves (`SCMMetadataStore.write_now`).
"""

from __future__ import annotations

import logging

from pyozone.scm.store import SCMMetadataStore

log = logging.getLogger(__name__)

LOCAL_ID = "localId"
DEL_TXN_ID = "delTxnId"
CONTAINER_ID = "containerId"


class SequenceIdGenerator:
    def __init__(self, store: SCMMetadataStore, batch_size: int = 1000) -> None:
        if batch_size < 1:
            raise ValueError(f"sequence id batch size must be positive, got {batch_size}")
        self._store = store
        self._batch_size = batch_size
        self._next: dict[str, int] = {}
        self._end: dict[str, int] = {}

    def next_id(self, name: str) -> int:
        """The next id of `name`; one store write per batch, a dict increment otherwise."""
        value = self._next.get(name)
        if value is None or value > self._end[name]:
            value = self._reserve(name)
        self._next[name] = value + 1
        return value

    def _reserve(self, name: str) -> int:
        # the stored end too: in HA another SCM may have led (and reserved) since this one's last batch
        last = max(self._end.get(name, 0), self.persisted_end(name))
        start, end = last + 1, last + self._batch_size
        table = self._store.sequence_id
        # At once, not in a caller's store.batch(), whose put would only land when that batch commits,
        # after ids of this batch were already handed out; in HA, a transaction of its own before the
        # caller's
        self._store.write_now((table.name, table.key_codec.encode(name), table.value_codec.encode(end)))
        self._end[name] = end
        log.debug("Reserved %s ids %d..%d", name, start, end)
        return start

    def invalidate(self, name: str | None = None) -> None:
        """Forgets the current batch (of `name`, or of every name): the next id starts after the stored
        end. Ozone's invalidateBatch, at a step-down or step-up, and when a follower applies a leader's
        reservation."""
        if name is None:
            self._next.clear()
            self._end.clear()
        else:
            self._next.pop(name, None)
            self._end.pop(name, None)

    def persisted_end(self, name: str) -> int:
        """The last id of the reserved batch as stored (0 before the first): no id above it was handed out."""
        value = self._store.sequence_id.get(name)
        return 0 if value is None else int(value)
