"""ContainerSet: every container replica on the datanode, loaded from disk at start.

Nothing found on disk is dropped silently: a replica whose descriptor cannot be trusted is kept as
UNHEALTHY (so SCM learns of it and re-replicates), and a container found on two volumes keeps the
better copy and records the conflict.

RECOVERING replicas (an EC reconstruction's targets, being written) are SCM's to learn of only once they
close: as in Ozone, they are in no container report, full or incremental. One found at start-up belongs
to a reconstruction the restart cut off, and is loaded UNHEALTHY (Ozone's ContainerReader does so for EC
replicas): SCM then learns of it and deletes it. One left RECOVERING while running (its coordinator died)
is deleted by the recovering-container scrubber (`recovering_older_than`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pyozone.datanode.storage.container import KeyValueContainer
from pyozone.datanode.storage.container_state import ContainerReplica
from pyozone.datanode.storage.errors import ContainerError, Result
from pyozone.datanode.storage.volume_set import VolumeSet
from pyozone.datanode.storage.witnessed import ContainerCreateInfo, WitnessedContainers
from pyozone.hdds.ids import BlockID
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import ReplicaState
from pyozone.hdds.store import StoreError

log = logging.getLogger(__name__)

ChangeListener = Callable[[ContainerReplicaReport], None]


@dataclass(frozen=True, slots=True)
class DuplicateReplica:
    """One container id found on two volumes: the copy kept and the copy ignored (left on disk)."""

    container_id: int
    kept: str
    ignored: str


def _rank(c: KeyValueContainer) -> tuple[bool, int]:
    return c.state is not ReplicaState.UNHEALTHY, c.bcsid


class ContainerSet:
    def __init__(
        self,
        volume_set: VolumeSet,
        witnessed: WitnessedContainers | None = None,
        clock: Callable[[], float] = time.monotonic,
        logged: Callable[[BlockID], bool] = lambda _block: False,
    ) -> None:
        """`witnessed` records every container that arrives (and its state as it changes) and forgets those
        deleted; a container it names that no healthy volume holds is missing from the start. Without it
        (tools, unit tests) only containers lost while running are known to be missing. `clock` times how
        long a replica stays RECOVERING. `logged`: whether a pipeline's log names a block (its uncommitted
        bytes stay, see `KeyValueContainer.discard_orphans`)."""
        self.volume_set = volume_set
        self._clock = clock
        self._recovering_since: dict[int, float] = {}
        self.witnessed = witnessed
        self.duplicates: list[DuplicateReplica] = []
        self._containers: dict[int, KeyValueContainer] = {}
        self._recorded: dict[int, ContainerCreateInfo] = {}
        self.missing: dict[int, ContainerCreateInfo] = {}
        """Containers lost with a volume (Ozone's missingContainerSet): a write must not create them again
        empty, as if their earlier blocks had never been; an import brings one back."""
        self._listeners: list[ChangeListener] = []
        self._lock = threading.Lock()
        self._report_lock = threading.Lock()
        """Reports are taken and delivered one at a time, so listeners get them in the order of the changes
        (a scanner's UNHEALTHY must not overtake the DELETED of a delete that came after it)."""
        for volume in volume_set.healthy_volumes():
            for container_id, directory in volume.container_dirs():
                self._load_one(KeyValueContainer.load(volume, container_id, directory))
        for c in self._containers.values():
            if c.state is ReplicaState.RECOVERING:
                c.mark_unhealthy("still RECOVERING at start-up: the reconstruction writing it was cut off")
            c.discard_orphans(logged)
            c.volume.add_used(c.used_bytes)
            c.listener = self._fire
        log.info("loaded %d containers", len(self._containers))
        failed_volume = any(v.is_failed for v in volume_set.data_volumes)
        self.unrecorded_losses = failed_volume and (witnessed is None or not witnessed.complete)
        """A volume failed and no record says which containers it held: any pipeline may have lost some."""
        if witnessed is not None:
            self._reconcile(witnessed, failed_volume)

    def _reconcile(self, witnessed: WitnessedContainers, failed_volume: bool) -> None:
        """Containers recorded but on no volume are missing; containers on a volume but not recorded (from
        before the record existed, or a crash between creating one and recording it) are recorded now."""
        self._recorded = witnessed.all()
        for cid in [cid for cid, info in self._recorded.items() if info.state == ReplicaState.DELETED.name]:
            self._forget(cid)  # deleted, but forgetting it had failed
        self.missing = {cid: info for cid, info in self._recorded.items() if cid not in self._containers}
        for c in self._containers.values():
            if c.container_id not in self._recorded:
                self._record(c)
        if not failed_volume and not witnessed.complete:
            witnessed.mark_complete()
        if self.missing:
            log.error(
                "%d containers recorded in %s are on no healthy volume, so missing: %s",
                len(self.missing), witnessed.path, sorted(self.missing),
            )  # fmt: skip

    def _record(self, container: ContainerReplica) -> None:
        """Records the container (or its new state); a failure is logged: it weakens only what the next
        start-up can tell about a lost disk."""
        if self.witnessed is None:
            return
        info = _create_info(container)
        try:
            self.witnessed.record(container.container_id, info)
            self._recorded[container.container_id] = info
        except StoreError as e:
            log.error("container %d: not recorded in %s: %s", container.container_id, self.witnessed.path, e)

    def _forget(self, container_id: int) -> None:
        if self.witnessed is None:
            return
        try:
            self.witnessed.forget(container_id)
            self._recorded.pop(container_id, None)
        except StoreError as e:
            log.error("container %d: not forgotten in %s: %s", container_id, self.witnessed.path, e)

    def _load_one(self, container: KeyValueContainer) -> None:
        cid, other = container.container_id, self._containers.get(container.container_id)
        if other is None:
            self._containers[cid] = container
            return
        keep, ignore = (container, other) if _rank(container) > _rank(other) else (other, container)
        self._containers[cid] = keep
        ignore.release_committed()
        self.duplicates.append(DuplicateReplica(cid, str(keep.directory), str(ignore.directory)))
        log.error(
            "container %d is on two volumes: keeping %s (BCSID %d), ignoring %s (BCSID %d)",
            cid, keep.directory, keep.bcsid, ignore.directory, ignore.bcsid,
        )  # fmt: skip

    # --- listeners

    def on_change(self, callback: ChangeListener) -> None:
        """`callback(report)` runs after every replica change (the daemon's incremental report)."""
        self._listeners.append(callback)

    def _fire(self, container: ContainerReplica) -> None:
        with self._lock:
            recorded = self._recorded.get(container.container_id)
            if recorded is not None and recorded.state != container.state.name:
                self._record(container)
            if container.state is not ReplicaState.RECOVERING:
                self._recovering_since.pop(container.container_id, None)
        if container.state is ReplicaState.RECOVERING:
            return  # not reported until it closes (Ozone skips RECOVERING replicas in every report)
        with self._report_lock:
            report = container.replica_report()
            for callback in self._listeners:
                try:
                    callback(report)
                except Exception:
                    log.exception("container change listener failed for container %d", container.container_id)

    # --- lookup

    def get(self, container_id: int) -> KeyValueContainer | None:
        return self._containers.get(container_id)

    def require(self, container_id: int) -> KeyValueContainer:
        container = self._containers.get(container_id)
        if container is None:
            raise ContainerError(Result.CONTAINER_NOT_FOUND, f"no container {container_id} on this datanode")
        return container

    def __contains__(self, container_id: object) -> bool:
        return container_id in self._containers

    def __len__(self) -> int:
        return len(self._containers)

    def __iter__(self) -> Iterator[KeyValueContainer]:
        return iter(list(self._containers.values()))

    def by_state(self, *states: ReplicaState) -> list[KeyValueContainer]:
        return [c for c in self if c.state in states]

    def replica_reports(self) -> list[ContainerReplicaReport]:
        """The full container report: every replica but the RECOVERING ones."""
        return [c.replica_report() for c in self if c.state is not ReplicaState.RECOVERING]

    def recovering_older_than(self, age_s: float) -> list[int]:
        """The RECOVERING replicas created more than `age_s` seconds ago: their reconstruction is given up."""
        deadline = self._clock() - age_s
        with self._lock:
            return sorted(cid for cid, since in self._recovering_since.items() if since <= deadline)

    # --- changes

    def create(
        self,
        container_id: int,
        origin_node_id: str,
        origin_pipeline_id: str,
        max_size: int | None = None,
        replica_index: int = 0,
        state: ReplicaState = ReplicaState.OPEN,
    ) -> KeyValueContainer:
        """A new container on the next volume with room; max_size defaults to the container size.
        OPEN: a write pipeline's. RECOVERING: an EC reconstruction's target, which may bring back a
        container lost here (as an import does); it is timed for the recovering-container scrubber."""
        size = self.volume_set.container_size if max_size is None else max_size
        recovering = state is ReplicaState.RECOVERING
        container = self.install(
            container_id,
            lambda: KeyValueContainer.create(
                self.volume_set.choose_volume(size),
                container_id,
                size,
                origin_node_id,
                origin_pipeline_id,
                replica_index,
                state,
            ),
            restores=recovering,
        )
        if recovering:
            with self._lock:
                if container.state is ReplicaState.RECOVERING:
                    self._recovering_since[container_id] = self._clock()
        return container

    def install(
        self, container_id: int, build: Callable[[], KeyValueContainer], restores: bool = False
    ) -> KeyValueContainer:
        """Runs `build` (which puts the container on disk) and registers the result, then reports it.

        Creates and imports of one id are serialised here, so two of them never share a directory or
        clear each other's DB keys. Only an import (`restores`) brings back a missing container.
        """
        with self._lock:
            if container_id in self._containers:
                raise ContainerError(Result.CONTAINER_EXISTS, f"container {container_id} exists")
            if not restores:
                self.refuse_if_missing(container_id)
            container = build()
            container.listener = self._fire
            self._containers[container_id] = container
            self.missing.pop(container_id, None)
            self._record(container)
        self._fire(container)
        return container

    def lost_from(self, pipeline_id: str) -> list[int]:
        """The missing containers that pipeline created and could still write to."""
        return sorted(
            cid
            for cid, info in self.missing.items()
            if info.pipeline_id == pipeline_id and info.still_written
        )

    def pipelines_losing(self, container_ids: list[int]) -> set[str]:
        """The pipelines that could still write to these missing containers: they lost this member."""
        infos = [self.missing[cid] for cid in container_ids if cid in self.missing]
        return {info.pipeline_id for info in infos if info.still_written}

    def refuse_if_missing(self, container_id: int) -> None:
        """A container lost with a failed volume is not created again: the replica would come back empty
        yet take the pipeline's later writes and report its BCSID (silent loss of the older blocks)."""
        if container_id in self.missing:
            raise ContainerError(
                Result.CONTAINER_MISSING,
                f"container {container_id} was lost with a failed volume and cannot be created again here",
            )

    def delete(self, container_id: int, force: bool = False, only_if: ReplicaState | None = None) -> bool:
        """Deletes the replica's data and reports it DELETED (SCM then forgets this replica); a RECOVERING
        replica, never reported, is not reported deleted either. `only_if`: only a replica in that state
        (False otherwise, and when it was gone already)."""
        container = self.require(container_id)
        if only_if is not None and container.state is not only_if:
            return False
        was_recovering = container.state is ReplicaState.RECOVERING
        # Forgotten before the data goes (as Ozone's removeContainer): a crash in between must not leave a
        # deleted container recorded yet on no volume, i.e. missing. One still on disk at the next start
        # is recorded again.
        with self._lock:
            self._forget(container_id)
        try:
            deleted = container.delete(force, only_if)
        except BaseException:
            with self._lock:
                self._record(container)
            raise
        if not deleted and container.state is not ReplicaState.DELETED:  # it left `only_if` meanwhile
            with self._lock:
                self._record(container)
            return False
        with self._lock:
            if self._containers.get(container_id) is container:
                del self._containers[container_id]
            self._recovering_since.pop(container_id, None)
        if not was_recovering:
            self._fire(container)
        return deleted

    def remove_failed_volume_containers(self) -> list[int]:
        """Forgets the containers of failed volumes, as Ozone does: the next full report omits them (and
        the recovering-container scrubber stops timing a RECOVERING one, which it could no longer delete)."""
        with self._lock:
            lost = [cid for cid, c in self._containers.items() if c.volume.is_failed]
            for cid in lost:
                self.missing[cid] = _create_info(self._containers.pop(cid))
                self._recovering_since.pop(cid, None)
        if lost:
            log.error("lost %d containers on failed volumes: %s", len(lost), lost)
        return lost


def _create_info(c: ContainerReplica) -> ContainerCreateInfo:
    return ContainerCreateInfo(c.state.name, c.data.replica_index, c.data.origin_pipeline_id)
