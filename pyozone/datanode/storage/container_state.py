"""ContainerReplica: a replica's identity, counters and lifecycle state machine (Ozone's DN rules).

Every state change is persisted to the .container file (atomically) before memory changes, then the
listener is told, so an incremental report never announces a state a restart would not come back with.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from pyozone.common.fsutil import atomic_write
from pyozone.datanode.storage.container_data import ContainerData
from pyozone.datanode.storage.container_files import descriptor_path, io_error
from pyozone.datanode.storage.errors import ContainerError, Result
from pyozone.datanode.storage.volume import HddsVolume
from pyozone.datanode.storage.volume_db import BCSID, BLOCK_COUNT, BYTES_USED, ContainerDB
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import ReplicaState

log = logging.getLogger(__name__)


def _state_error(state: ReplicaState) -> Result:
    return (
        Result.INVALID_CONTAINER_STATE if state is ReplicaState.INVALID else Result.CONTAINER_INTERNAL_ERROR
    )


class ContainerReplica:
    """State shared by every container type: descriptor, volume, counters and the lifecycle rules."""

    def __init__(
        self, data: ContainerData, volume: HddsVolume, directory: Path, trusted: bool = True
    ) -> None:
        self.data = data
        self.volume = volume
        self.directory = directory
        self.unhealthy_reason = ""
        self.listener: Callable[[ContainerReplica], None] | None = None
        self._trusted = trusted  # False: the descriptor did not load; never overwrite the evidence
        self._lock = threading.Lock()
        self.db = ContainerDB(volume.db, data.container_id)
        self.bcsid = max(data.bcsid, self.db.counter(BCSID))
        self.key_count = self.db.counter(BLOCK_COUNT)
        self.used_bytes = self.db.counter(BYTES_USED)
        self._committed = 0
        self._sync_committed()

    @property
    def container_id(self) -> int:
        return self.data.container_id

    @property
    def state(self) -> ReplicaState:
        return self.data.state

    @property
    def deleted(self) -> bool:
        """Whether the replica was deleted, once a deletion in progress has ended (under the lock that
        `delete` holds from moving the directory away until the state says DELETED): a reader that finds
        its files gone asks this, not `state`, which still says what it was in between."""
        with self._lock:
            return self.data.state is ReplicaState.DELETED

    @property
    def chunks_dir(self) -> Path:
        return self.directory / "chunks"

    @property
    def container_file(self) -> Path:
        return descriptor_path(self.directory, self.container_id)

    # --- lifecycle (Ozone's KeyValueHandler rules); each change persists, then notifies the listener

    def mark_closing(self) -> bool:
        with self._lock:
            if self.state is not ReplicaState.OPEN:
                return False
            self._set_state(ReplicaState.CLOSING)
        return self._notify()

    def quasi_close(self) -> bool:
        with self._lock:
            if self.state is ReplicaState.QUASI_CLOSED:
                return False
            if self.state is not ReplicaState.CLOSING:
                raise ContainerError(_state_error(self.state), f"cannot quasi-close {self._describe()}")
            self._set_state(ReplicaState.QUASI_CLOSED)
        return self._notify()

    def close(self, force: bool = False) -> bool:
        """CLOSING -> CLOSED; QUASI_CLOSED -> CLOSED only with force; never an UNHEALTHY replica.
        RECOVERING -> CLOSED at once: the reconstruction that wrote it declares it whole, and it has no
        pipeline whose last writes a CLOSING step would wait for."""
        with self._lock:
            state = self.state
            if state is ReplicaState.CLOSED:
                return False
            if state is ReplicaState.UNHEALTHY:
                raise ContainerError(Result.CONTAINER_UNHEALTHY, f"cannot close {self._describe()}")
            closable = state in (ReplicaState.CLOSING, ReplicaState.RECOVERING)
            if not (closable or (state is ReplicaState.QUASI_CLOSED and force)):
                raise ContainerError(_state_error(state), f"cannot close {self._describe()} (force={force})")
            self._set_state(ReplicaState.CLOSED)
        return self._notify()

    def mark_unhealthy(self, reason: str) -> bool:
        """Not once DELETED: a delete wins over a late scan or read result (its report would revive the
        replica in SCM)."""
        with self._lock:
            if self.state in (ReplicaState.UNHEALTHY, ReplicaState.DELETED):
                return False
            log.error("container %d marked UNHEALTHY: %s", self.container_id, reason)
            self.unhealthy_reason = reason
            self._set_state(ReplicaState.UNHEALTHY)
        return self._notify()

    def replica_report(self) -> ContainerReplicaReport:
        return ContainerReplicaReport(
            self.container_id, self.state, self.bcsid, self.data.origin_node_id, self.key_count,
            self.used_bytes, self.data.replica_index, is_empty=self.key_count == 0,
        )  # fmt: skip

    def _describe(self) -> str:
        return f"container {self.container_id} in state {self.state.name}"

    def _set_state(self, state: ReplicaState) -> None:
        """Persists first, so memory never claims a state the disk would not come back with."""
        new = replace(self.data, state=state, bcsid=self.bcsid)
        if self._trusted:
            try:
                atomic_write(self.container_file, new.to_file_bytes())
            except OSError as e:
                if state is not ReplicaState.UNHEALTHY:  # an unhealthy mark stands even if unpersisted
                    raise io_error(self.volume, f"update {self.container_file}", e) from None
                log.error("container %d: cannot persist UNHEALTHY: %s", self.container_id, e)
        self.data = new
        self._sync_committed()

    def _sync_committed(self) -> None:
        """Holds on the volume's committed bytes what this replica may still write while OPEN (or
        RECOVERING: an EC reconstruction writes it like an open one), and nothing once it leaves that
        state (Ozone's ContainerData commitSpace / releaseCommitSpace): a new container, an import or
        another reconstruction must not take space this one was promised. Called after every change of
        state or size, under the container's lock (or before anyone else sees the replica)."""
        promised = self.state in (ReplicaState.OPEN, ReplicaState.RECOVERING)
        wanted = max(0, self.data.max_size - self.used_bytes) if promised else 0
        if wanted != self._committed:
            self.volume.add_committed(wanted - self._committed)
            self._committed = wanted

    def release_committed(self) -> None:
        """A replica dropped without a state change (a duplicate ignored at start) gives its space back."""
        with self._lock:
            self.volume.add_committed(-self._committed)
            self._committed = 0

    def _notify(self) -> bool:
        if self.listener is not None:
            self.listener(self)
        return True
