"""The datanode's SCMs (Ozone's SCMConnectionManager): one endpoint and heartbeat loop per SCM.

A datanode of an SCM HA service (`ozone.scm.service.ids`) heartbeats and reports to every SCM of it, as
Ozone's do: each SCM keeps its own view of the datanodes, so a follower that becomes leader already knows
every replica and acts at once. Commands come from the leader alone (a follower's core stamps none); every
answer carries its SCM's term, and the one command queue refuses a command whose term is older than any
term an SCM told of, so a deposed leader still reaching the datanode is not obeyed. A datanode of a lone
SCM has one of each, as before.

The first SCM to answer getVersion gives the cluster id the datanode's storage is checked against; every
other SCM's loop checks its own answer before registering (HeartbeatLoop._check_version).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.datanode.command_queue import CommandQueue
from pyozone.datanode.identity import IdentityStore
from pyozone.datanode.pipelines import PipelineSet
from pyozone.datanode.reports import LONE_SCM, PendingReports
from pyozone.datanode.scm_endpoint import HeartbeatLoop, ScmEndpoint, fetch_version
from pyozone.datanode.settings import HeartbeatSettings
from pyozone.datanode.storage import ContainerSet, VolumeSet
from pyozone.framework.scm_failover import ScmNodes
from pyozone.protocol import VersionResponse


@dataclass(frozen=True, slots=True)
class _Scm:
    name: str
    """The SCM's node id (LONE_SCM for a lone SCM): its outbox in PendingReports."""
    endpoint: ScmEndpoint


class ScmConnections:
    def __init__(self, nodes: ScmNodes, heartbeat: HeartbeatSettings, tls: TlsStore | None = None) -> None:
        """`nodes`: the SCMs the datanode reports to, resolved by the daemon (`scm_datanode_nodes`)."""
        self.heartbeat = heartbeat
        self._scms = tuple(
            _Scm(e.node_id or LONE_SCM, ScmEndpoint(e.address, heartbeat, tls)) for e in nodes.endpoints
        )
        self.loops: tuple[HeartbeatLoop, ...] = ()
        self._versioned: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """One per SCM, in the service's order: the outboxes PendingReports needs."""
        return tuple(s.name for s in self._scms)

    def describe(self) -> str:
        return ", ".join(
            f"{s.name} at {s.endpoint.address}" if s.name else str(s.endpoint.address) for s in self._scms
        )

    async def fetch_version(self, stop: asyncio.Event) -> tuple[HostPort, VersionResponse] | None:
        """The first version answer of any SCM, and who gave it, waiting for one as long as it takes; None
        once `stop` is set. The others are asked no more."""
        asking = {asyncio.ensure_future(fetch_version(s.endpoint, stop)): s for s in self._scms}
        try:
            while asking:
                finished, _ = await asyncio.wait(asking, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    scm = asking.pop(task)
                    version = task.result()
                    if version is not None:
                        self._versioned = scm.name
                        return scm.endpoint.address, version
            return None
        finally:
            for task in asking:
                task.cancel()
            await asyncio.gather(*asking, return_exceptions=True)

    def start(
        self,
        cluster_id: str,
        identity: IdentityStore,
        volumes: VolumeSet,
        containers: ContainerSet,
        pipelines: PipelineSet,
        reports: PendingReports,
        queue: CommandQueue,
        observe: Callable[[float, bool], None],
    ) -> None:
        """One heartbeat loop per SCM, each on its own outbox of `reports` and the shared `queue`; an urgent
        report wakes them all."""
        self.loops = tuple(
            HeartbeatLoop(
                s.endpoint,
                self.heartbeat,
                cluster_id,
                identity,
                volumes,
                containers,
                pipelines,
                reports,
                queue,
                observe,
                scm=s.name,
                version_checked=s.name == self._versioned,
            )
            for s in self._scms
        )
        reports.on_urgent = self.trigger_heartbeat

    async def run(self, stop: asyncio.Event) -> None:
        """Every loop until `stop`; a fatal error of one (an SCM refusing the datanode, or answering for
        another cluster) stops the others and propagates."""
        tasks = [asyncio.ensure_future(loop.run(stop)) for loop in self.loops]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    # ------------------------------------------------------------------ observers (the event loop)
    @property
    def registered(self) -> bool:
        """Registered with at least one SCM: the datanode serves data and takes commands."""
        return any(loop.registered for loop in self.loops)

    @property
    def heartbeats(self) -> int:
        return sum(loop.heartbeats for loop in self.loops)

    @property
    def last_heartbeat_ms(self) -> int:
        """When an SCM last answered a heartbeat (epoch ms; 0: none yet)."""
        return max((loop.last_heartbeat_ms for loop in self.loops), default=0)

    def trigger_heartbeat(self) -> None:
        """Thread-safe: every SCM's next heartbeat goes now."""
        for loop in self.loops:
            loop.trigger_heartbeat()

    def status(self) -> list[dict[str, Any]]:
        """Each SCM as the datanode sees it (the web API's and /health's `scms`)."""
        by_name = {loop.scm: loop for loop in self.loops}
        answer = []
        for s in self._scms:
            loop = by_name.get(s.name)
            answer.append(
                {
                    "node": s.name or None,
                    "address": str(s.endpoint.address),
                    "registered": loop is not None and loop.registered,
                    "heartbeats": loop.heartbeats if loop is not None else 0,
                    "lastHeartbeat": (loop.last_heartbeat_ms or None) if loop is not None else None,
                }
            )
        return answer

    async def close(self) -> None:
        for s in self._scms:
            with contextlib.suppress(Exception):
                await s.endpoint.close()
