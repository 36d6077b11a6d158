"""The datanode's JSON APIs (docs/web.md), read by its web UI (static/datanode.js).

    /api/v1/overview                  who and where the datanode is, its phase, SCM and heartbeats, counts
    /api/v1/volumes                   data volumes with capacity and usage (paginated)
    /api/v1/containers?state=S        replicas by id, optionally of one state (paginated)
    /api/v1/containers/{id}           one replica
    /api/v1/pipelines                 each pipeline: this datanode's role, members, term, log (paginated)
    /api/v1/commands                  SCM's commands: queued now, received and ended, per type
    /api/v1/commands/recent?type=T&result=R   how the last commands ended, newest first (paginated)
    /api/v1/scanner                   the data scanner: configuration, totals, the current or last pass
    /api/v1/latency                   chunk read and write latency percentiles per volume (paginated)

Every handler but overview answers 503 until the datanode has its storage (phase "running"): before that
there are no volumes, containers or queue to show, and the page says why.

Every page says where data lives (its volumes' directories, each replica with its BCSID and origin, the
pipelines' members and addresses, SCM's commands, the data ports): over mutual TLS each answers 403 unless
the certificate may read SCM's containers, by the same rule as SCM's web API (common/web/ops.py
readers_only: administrators, read-only administrators, OM and the datanodes). /ready and /health stay
open for probes.

The latency percentiles are estimated from the datanode_chunk_*_seconds histograms (as Prometheus's
histogram_quantile does: linear within a bucket), over every chunk since the datanode started; no sample
is kept for them on the data path.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from pyozone.common.web.api import ApiHandler, NotFound, Query, Unavailable, guarded, paginate
from pyozone.common.web.metrics import LATENCY_BUCKETS_S
from pyozone.common.web.ops import ReadCheck
from pyozone.datanode.command_queue import DROPPED, FAILED, SUCCEEDED, CommandOutcome
from pyozone.datanode.metrics import KINDS, NO_LATENCY, Latency
from pyozone.datanode.pipelines import Membership
from pyozone.datanode.storage import HddsVolume, KeyValueContainer
from pyozone.hdds.states import ReplicaState, SCMCommandType
from pyozone.ratis.roles import RaftPeerRole

if TYPE_CHECKING:
    from pyozone.datanode.daemon import Datanode

STATES = tuple(s.name for s in ReplicaState if s is not ReplicaState.DELETED)
RESULTS = (SUCCEEDED, FAILED, DROPPED)
QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))
READERS_ONLY = (
    "only administrators and read-only administrators may read a datanode's volumes, containers, "
    "pipelines and commands"
)


def datanode_api(daemon: Datanode, may_read: ReadCheck) -> dict[str, ApiHandler]:
    """`may_read`: who may read (the daemon's readers_only, from ozone.administrators and its kin)."""
    api = _Api(daemon)
    handlers = {
        "/api/v1/overview": api.overview,
        "/api/v1/volumes": api.volumes,
        "/api/v1/containers": api.containers,
        "/api/v1/containers/{id}": api.container,
        "/api/v1/pipelines": api.pipelines,
        "/api/v1/commands": api.commands,
        "/api/v1/commands/recent": api.recent_commands,
        "/api/v1/scanner": api.scanner,
        "/api/v1/latency": api.latency,
    }
    return guarded(handlers, may_read, READERS_ONLY)


class _Api:
    def __init__(self, daemon: Datanode) -> None:
        self.dn = daemon

    def _storage(self) -> None:
        """Raises 503 until the datanode has its volumes, containers and queue."""
        if not self.dn.started.is_set():
            raise Unavailable(f"datanode {self.dn.uuid} has no storage yet ({self.dn.phase})")

    def overview(self, q: Query) -> dict[str, Any]:
        dn = self.dn
        identity = dn.identity.identity
        scms = dn.scm_connections
        answer: dict[str, Any] = {
            "uuid": dn.uuid,
            "hostname": identity.hostname,
            "ipAddress": identity.ip_address,
            "clusterId": identity.cluster_id,
            "scm": ",".join(map(str, dn.scm_addresses)),
            "scms": scms.status() if scms is not None else [],
            "phase": dn.phase,
            "registered": dn.registered,
            "operationalState": identity.persisted_op_state.name,
            "ports": dict(identity.ports),
            "lastHeartbeat": (scms.last_heartbeat_ms or None) if scms is not None else None,
            "heartbeats": scms.heartbeats if scms is not None else 0,
            "storage": dn.started.is_set(),
        }
        if dn.started.is_set():
            volumes = dn.volumes.data_volumes
            states = Counter(c.state.name for c in dn.containers)
            roles = Counter("LEADER" if r.is_leader else "FOLLOWER" for r in dn.pipelines.reports())
            answer |= {
                "volumes": {
                    "total": len(volumes),
                    "failed": sum(v.is_failed for v in volumes),
                    "full": len(dn.volumes.full_volumes()),
                },
                "containers": {"total": sum(states.values()), "byState": dict(sorted(states.items()))},
                "pipelines": {"leader": roles["LEADER"], "follower": roles["FOLLOWER"]},
                "queuedCommands": sum(dn.queue.counts().values()),
            }
        return answer

    def volumes(self, q: Query) -> dict[str, Any]:
        page = q.page()
        self._storage()
        per_volume = Counter(str(c.volume.root) for c in self.dn.containers)
        return paginate(self.dn.volumes.data_volumes, page, lambda v: _volume(v, per_volume[str(v.root)]))

    def containers(self, q: Query) -> dict[str, Any]:
        state = q.str("state", choices=STATES)
        page = q.page()
        self._storage()
        chosen = [c for c in self.dn.containers if state is None or c.state.name == state]
        chosen.sort(key=lambda c: c.container_id)
        return paginate(chosen, page, _container)

    def container(self, q: Query) -> dict[str, Any]:
        cid = q.path_int("id", 1)
        self._storage()
        found = self.dn.containers.get(cid)
        if found is None:
            raise NotFound(f"no container {cid} on datanode {self.dn.uuid}")
        return _container(found)

    def pipelines(self, q: Query) -> dict[str, Any]:
        page = q.page()
        self._storage()
        pipelines = sorted(self.dn.pipelines.all(), key=lambda m: m.pipeline_id)
        return paginate(pipelines, page, self._pipeline)

    def _pipeline(self, m: Membership) -> dict[str, Any]:
        group = self.dn.groups.get(m.pipeline_id)
        status = group.member.status() if group is not None and group.member.running else None
        leads = status is not None and status.role is RaftPeerRole.LEADER
        matches = {f.peer.id: f.match_index for f in status.followers} if status is not None else {}
        if status is not None and leads:
            matches[status.me.id] = status.last_index
        leader = status.leader.id if status is not None and status.leader is not None else None
        members = [
            {
                "uuid": member,
                "address": m.address(member),
                "leader": member == leader,
                "matchIndex": matches.get(member) if leads else None,
                "failed": group.failure if group is not None and member == self.dn.uuid else None,
            }
            for member in m.members
        ]
        return {
            "pipelineId": m.pipeline_id,
            "role": status.role.name if status is not None else "FAILED",
            "leader": leader,
            "term": status.term if status is not None else None,
            "members": members,
            "lastIndex": status.last_index if status is not None else None,
            "commitIndex": status.commit_index if status is not None else None,
            "appliedIndex": status.applied_index if status is not None else None,
        }

    def commands(self, q: Query) -> dict[str, Any]:
        self._storage()
        queue = self.dn.queue
        outcomes: dict[str, dict[str, int]] = {}
        for (kind, result), n in sorted(queue.outcomes.items(), key=lambda o: (o[0][0].name, o[0][1])):
            outcomes.setdefault(kind.name, {})[result] = n
        return {
            "pending": {k.name: n for k, n in sorted(queue.counts().items(), key=lambda kv: kv[0].name)},
            "received": {k.name: n for k, n in sorted(queue.received.items(), key=lambda kv: kv[0].name)},
            "outcomes": outcomes,
            "replicationWorkers": queue.replication_workers,
            "replicationQueueLimit": queue.replication_queue_limit,
            "maxTerm": queue.max_term,
        }

    def recent_commands(self, q: Query) -> dict[str, Any]:
        kind = q.str("type", choices=[t.name for t in SCMCommandType])
        result = q.str("result", choices=RESULTS)
        page = q.page()
        self._storage()
        recent = [
            o
            for o in reversed(self.dn.queue.recent)
            if (kind is None or o.type.name == kind) and (result is None or o.result == result)
        ]
        return paginate(recent, page, _outcome)

    def scanner(self, q: Query) -> dict[str, Any]:
        self._storage()
        service, p = self.dn.scanner, self.dn.scanner.progress
        return {
            "enabled": service.enabled,
            "intervalSeconds": service.interval_s,
            "bandwidthBytesPerSecond": service.bytes_per_second,
            "passes": p.passes,
            "containersScanned": p.containers_scanned,
            "unhealthyFound": p.unhealthy_found,
            "bytesScanned": p.bytes_scanned,
            "scanning": bool(p.pass_started_ms) and not p.pass_ended_ms,
            "passStarted": p.pass_started_ms or None,
            "passEnded": p.pass_ended_ms or None,
            "passContainers": p.pass_containers,
            "passScanned": p.pass_scanned,
            "passUnhealthy": list(p.pass_unhealthy),
            "nextPass": p.next_pass_ms or None,
        }

    def latency(self, q: Query) -> dict[str, Any]:
        page = q.page()
        self._storage()
        found = self.dn.dn_metrics.latency()
        rows = [{"volume": str(v.root), **found.get(str(v.root), {})} for v in self.dn.volumes.data_volumes]
        total = {kind: sum((r.get(kind, NO_LATENCY) for r in rows), NO_LATENCY) for kind in KINDS}
        return {
            "source": "histograms since start",
            "buckets": list(LATENCY_BUCKETS_S),
            "all": {kind: _latency(total[kind]) for kind in KINDS},
            **paginate(rows, page, _volume_latency),
        }


def _volume(v: HddsVolume, containers: int) -> dict[str, Any]:
    report = v.report()
    return {
        "directory": str(v.root),
        "storageId": v.storage_id,
        "storageType": v.storage_type,
        "state": v.state.name,
        "failureReason": v.failure_reason or None,
        "full": not v.is_failed and report.usable <= 0,
        "capacity": report.capacity,
        "used": report.used,
        "available": report.remaining,
        "reserved": v.reserved_bytes,
        "committed": report.committed,
        "freeSpaceToSpare": report.free_space_to_spare,
        "containers": containers,
    }


def _container(c: KeyValueContainer) -> dict[str, Any]:
    return {
        "containerId": c.container_id,
        "state": c.state.name,
        "replicaIndex": c.data.replica_index,
        "volume": str(c.volume.root),
        "usedBytes": c.used_bytes,
        "maxSize": c.data.max_size,
        "blockCount": c.key_count,
        "bcsid": c.bcsid,
        "originPipelineId": c.data.origin_pipeline_id,
        "originNodeId": c.data.origin_node_id,
        "unhealthyReason": c.unhealthy_reason or None,
    }


def _outcome(o: CommandOutcome) -> dict[str, Any]:
    return {
        "type": o.type.name,
        "id": o.command_id,
        "result": o.result,
        "at": o.at_ms,
        "seconds": round(o.seconds, 6),
        "reason": o.reason or None,
    }


def _latency(latency: Latency) -> dict[str, Any]:
    answer: dict[str, Any] = {"count": latency.count, "sumSeconds": round(latency.sum_s, 6)}
    for name, q in QUANTILES:
        value = latency.quantile(q)
        answer[name] = None if value is None else round(value, 6)
    return answer


def _volume_latency(row: dict[str, Any]) -> dict[str, Any]:
    return {"volume": row["volume"], **{kind: _latency(row.get(kind, NO_LATENCY)) for kind in KINDS}}
