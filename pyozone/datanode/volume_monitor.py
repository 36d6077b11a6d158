"""Periodic disk checks: a data volume that fails is reported failed and its containers are given up.

Ozone's StorageVolumeChecker: the datanode keeps running on its remaining disks. The containers of the
failed volume leave the ContainerSet, so the next full container report omits them and SCM re-replicates
them from the other replicas; the node report (sent at once) shows the volume as failed. The pipelines
still writing to a lost container have lost this member: it fails them, so SCM closes them and the other
replicas close or quasi-close instead of taking writes this one can never have.

A full volume is not failed (see storage.volume): its containers stay and are reported. When a volume
becomes full or has space again, the node report goes at once, so SCM's placement stops (or resumes)
choosing this node without waiting for the report interval.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from pathlib import Path

from pyozone.datanode.reports import PendingReports, Periodic
from pyozone.datanode.scm_endpoint import wait_or_stop
from pyozone.datanode.storage import ContainerSet, VolumeSet

log = logging.getLogger(__name__)


class VolumeMonitor:
    def __init__(
        self,
        volumes: VolumeSet,
        containers: ContainerSet,
        reports: PendingReports,
        executor: Executor,
        interval_s: float,
        fail_pipelines: Callable[[Iterable[str], str], None],
    ) -> None:
        """`fail_pipelines(pipeline_ids, reason)`: this member has failed them (PipelineGroups.fail)."""
        self.volumes = volumes
        self.fail_pipelines = fail_pipelines
        self.containers = containers
        self.reports = reports
        self.executor = executor
        self.interval_s = interval_s
        self._full: set[Path] = set()
        self._failed = {v.root for v in volumes.data_volumes if v.is_failed}  # at start: nothing loaded

    async def check(self) -> list[int]:
        """One round of checks; the ids of containers lost with newly failed volumes."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self.executor, self.volumes.check_volumes)
        full = await loop.run_in_executor(self.executor, self.volumes.full_volumes)
        self._note_full({v.root for v in full})
        # every volume failed since the last round: by this check, or by an I/O error or a failed stat
        # between rounds (those are failed already, so check_volumes does not count them)
        failed = [v for v in self.volumes.data_volumes if v.is_failed and v.root not in self._failed]
        self._failed.update(v.root for v in failed)
        if not failed:
            return []
        lost = self.containers.remove_failed_volume_containers()
        log.error(
            "%d data volume(s) failed (%s); %d of %d remain; %d containers lost",
            len(failed), ", ".join(str(v.root) for v in failed), len(self.volumes.healthy_volumes()),
            len(self.volumes.data_volumes), len(lost),
        )  # fmt: skip
        self.fail_pipelines(
            self.containers.pipelines_losing(lost),
            "a container of this pipeline was lost with a failed volume",
        )
        self.reports.request(Periodic.CONTAINERS)
        self.reports.request(Periodic.NODE, urgent=True)
        return lost

    def _note_full(self, full: set[Path]) -> None:
        if full == self._full:
            return
        for root in sorted(full - self._full):
            log.warning(
                "volume %s is full (down to its free-space floor, counting open containers' committed "
                "bytes): it takes no new containers, and no write crosses the floor, until space returns",
                root,
            )
        for root in sorted(self._full - full):
            log.info("volume %s has space again: it takes new containers", root)
        self._full = full
        self.reports.request(Periodic.NODE, urgent=True)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await wait_or_stop(stop, self.interval_s)
            if stop.is_set():
                return
            try:
                await self.check()
            except Exception:  # a broken check must not end the checks
                log.exception("volume check failed")
