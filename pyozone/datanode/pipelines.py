"""The pipelines this datanode is a member of, as createPipeline/closePipeline left them.

Membership is who the members are, where their pipeline-log (RATIS) ports are and whether SCM suggested
this datanode as leader; the log itself, and who leads it now (elected), is pyozone.datanode.ratis. It is
kept in pipelines.json next to datanode.id
because Ozone's Ratis groups survive a restart: a restarted datanode still reports its pipelines, and a
closeContainer for one of them still closes (rather than quasi-closes) the replica.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pyozone.common.fsutil import atomic_write
from pyozone.datanode.errors import DatanodeError
from pyozone.hdds.messages import PipelineReport

log = logging.getLogger(__name__)

PIPELINES_FILE = "pipelines.json"


@dataclass(frozen=True, slots=True)
class StreamAddress:
    """Where a member's datastream port listens, as SCM sent it with createPipeline: the only address a
    datastream is forwarded to for that member (issue 28 defect 5)."""

    ip: str
    hostname: str
    port: int

    def names(self, host: str, port: int) -> bool:
        """True if `host:port` is this address (by IP or host name, as a client reaches it)."""
        return port == self.port and host in {self.ip, self.hostname} - {""}


@dataclass(frozen=True, slots=True)
class Membership:
    pipeline_id: str
    members: tuple[str, ...]
    suggested_leader: str | None
    is_leader: bool
    addresses: tuple[tuple[str, str], ...] = ()
    """(member uuid, "host:port" of its RATIS port), for the members whose address SCM sent."""
    streams: tuple[tuple[str, StreamAddress], ...] = ()
    """(member uuid, its datastream port), for the members that serve one and whose address SCM sent."""

    @property
    def leader(self) -> str | None:
        """The member that orders the pipeline's log: the suggested leader, or the only member."""
        if self.suggested_leader in self.members:
            return self.suggested_leader
        return self.members[0] if len(self.members) == 1 else None

    def address(self, member: str) -> str | None:
        return dict(self.addresses).get(member)

    def stream_address(self, member: str) -> StreamAddress | None:
        return dict(self.streams).get(member)


class PipelineSet:
    def __init__(self, directory: Path, datanode_uuid: str) -> None:
        self.path = directory / PIPELINES_FILE
        self.datanode_uuid = datanode_uuid
        self._lock = threading.Lock()
        self._pipelines: dict[str, Membership] = self._load()
        self.leading: Callable[[str], bool | None] | None = None
        """Whether this datanode leads a pipeline now (its Raft member's role; None: not known), for the
        reports; without it, or when unknown, the suggested leader reports itself as leader."""

    def _load(self) -> dict[str, Membership]:
        try:
            doc = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            raise DatanodeError(f"cannot read {self.path}: {e}") from None
        try:
            return {
                pid: Membership(
                    pid,
                    tuple(p["members"]),
                    p.get("suggestedLeader"),
                    bool(p["leader"]),
                    tuple(sorted(p.get("addresses", {}).items())),
                    tuple(sorted((uuid, StreamAddress(*a)) for uuid, a in p.get("datastreams", {}).items())),
                )
                for pid, p in doc.items()
            }
        except (KeyError, TypeError, AttributeError) as e:
            raise DatanodeError(f"{self.path}: corrupt pipeline list ({e!r})") from None

    def _save(self, pipelines: dict[str, Membership]) -> None:
        """Writes `pipelines` and only then makes them the memberships in memory: a save that fails (a
        full metadata disk) leaves memory as the disk is, so the datanode never reports a pipeline it
        would not come back with, nor one it has no group for."""
        doc = {
            m.pipeline_id: {
                "members": list(m.members),
                "suggestedLeader": m.suggested_leader,
                "leader": m.is_leader,
                "addresses": dict(m.addresses),
                "datastreams": {uuid: [a.ip, a.hostname, a.port] for uuid, a in m.streams},
            }
            for m in pipelines.values()
        }
        atomic_write(self.path, (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode())
        self._pipelines = pipelines

    def add(
        self,
        pipeline_id: str,
        members: tuple[str, ...],
        suggested_leader: str | None,
        addresses: dict[str, str] | None = None,
        streams: dict[str, StreamAddress] | None = None,
    ) -> Membership:
        """Joins a pipeline (idempotent: SCM may resend createPipeline). Leader iff suggested or alone."""
        leader = suggested_leader == self.datanode_uuid or members == (self.datanode_uuid,)
        membership = Membership(
            pipeline_id,
            members,
            suggested_leader,
            leader,
            tuple(sorted((addresses or {}).items())),
            tuple(sorted((streams or {}).items())),
        )
        with self._lock:
            if self._pipelines.get(pipeline_id) != membership:
                self._save(self._pipelines | {pipeline_id: membership})
                log.info(
                    "joined pipeline %s %s%s", pipeline_id, list(members), " as leader" if leader else ""
                )
        return membership

    def remove(self, pipeline_id: str) -> bool:
        with self._lock:
            if pipeline_id not in self._pipelines:
                return False
            self._save({pid: m for pid, m in self._pipelines.items() if pid != pipeline_id})
        log.info("left pipeline %s", pipeline_id)
        return True

    def __contains__(self, pipeline_id: object) -> bool:
        return pipeline_id in self._pipelines

    def get(self, pipeline_id: str) -> Membership | None:
        return self._pipelines.get(pipeline_id)

    def all(self) -> list[Membership]:
        with self._lock:
            return list(self._pipelines.values())

    def reports(self) -> tuple[PipelineReport, ...]:
        with self._lock:
            pipelines = sorted(self._pipelines.values(), key=lambda m: m.pipeline_id)
        leading = self.leading
        return tuple(
            PipelineReport(m.pipeline_id, _leads(m, leading(m.pipeline_id) if leading else None))
            for m in pipelines
        )


def _leads(membership: Membership, elected: bool | None) -> bool:
    return membership.is_leader if elected is None else elected
