"""The JSON form of the admin records: what `pyozone admin ... --json` prints and what SCM's web APIs answer.

One renderer per record, below both the CLI and the SCM daemon, so the two cannot drift apart: a list item
of `/api/v1/datanodes` is the dict `admin datanode list --json` prints for the same node, and so on for
pipelines, containers and the safe-mode rules. (The Replication Manager's report renders itself:
`ReplicationManagerReport.to_dict`.)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pyozone.hdds.container import ContainerInfo
from pyozone.hdds.safemode_status import RuleStatus
from pyozone.protocol.admin_records import ContainerView, DatanodeAdminProgress, DatanodeListing, PipelineView


def listing_dict(node: DatanodeListing) -> dict[str, Any]:
    """One datanode of `admin datanode list --json`."""
    d = node.details
    return {
        "uuid": d.uuid,
        "hostname": d.hostname,
        "ipAddress": d.ip_address,
        "networkLocation": d.network_location,
        "healthState": node.health.name,
        "operationalState": node.operational_state.name,
        "opStateExpiryEpochSeconds": node.op_state_expiry_epoch_sec,
        "lastHeartbeat": node.last_heartbeat_wall_ms,
        "pipelines": node.pipeline_count,
        "containers": node.container_count,
        "capacity": node.capacity,
        "used": node.used,
        "remaining": node.remaining,
        "healthyVolumes": node.healthy_volumes,
        "failedVolumes": node.failed_volumes,
        "ports": dict(d.ports),
        "adminProgress": None if node.admin_progress is None else progress_dict(node.admin_progress),
    }


def progress_dict(progress: DatanodeAdminProgress) -> dict[str, int]:
    """How far a node leaving service has got (decommission or maintenance)."""
    return {
        "containersLeft": progress.containers_left,
        "underReplicated": progress.under_replicated,
        "unclosed": progress.unclosed,
        "sufficientlyReplicated": progress.sufficiently_replicated,
        "pipelinesWaitingToClose": progress.pipelines_waiting_to_close,
    }


def pipeline_dict(view: PipelineView) -> dict[str, Any]:
    """One pipeline of `admin pipeline list --json`; an EC pipeline's members carry their replica index."""
    p = view.pipeline
    return {
        "id": p.id,
        "replicationConfig": str(p.replication_config),
        "state": p.state.name,
        "leaderId": p.leader,
        "suggestedLeaderId": p.suggested_leader,
        "nodes": [
            {
                "uuid": dn,
                "hostname": view.members[dn].hostname if dn in view.members else None,
                **({"replicaIndex": i + 1} if view.is_ec else {}),
            }
            for i, dn in enumerate(p.nodes)
        ],
        "creationTimestamp": p.created_ms,
    }


def container_dict(info: ContainerInfo) -> dict[str, Any]:
    """One container of `admin container list --json`."""
    return {
        "containerID": info.container_id,
        "state": info.state.name,
        "replicationConfig": str(info.replication_config),
        "pipelineID": info.pipeline_id,
        "usedBytes": info.used_bytes,
        "numberOfKeys": info.number_of_keys,
        "sequenceId": info.sequence_id,
        "owner": info.owner,
        "stateEnterTime": info.state_entered_ms,
    }


def view_dict(view: ContainerView) -> dict[str, Any]:
    """`admin container info --json`: the container, its replicas and its write pipeline."""
    data = container_dict(view.info)
    data["replicas"] = [
        {
            "datanode": r.datanode,
            "state": r.state.name,
            "bcsid": r.sequence_id,
            "origin": r.origin_node_id,
            "keyCount": r.key_count,
            "bytesUsed": r.bytes_used,
            "replicaIndex": r.replica_index,
            "isEmpty": r.is_empty,
        }
        for r in view.replicas
    ]
    data["pipeline"] = (
        None
        if view.pipeline is None
        else {
            "id": view.pipeline.pipeline.id,
            "state": view.pipeline.pipeline.state.name,
            "nodes": list(view.pipeline.pipeline.nodes),
        }
    )
    return data


def safemode_dict(in_safe_mode: bool, rules: Iterable[RuleStatus]) -> dict[str, Any]:
    """`admin safemode status --json` (with --verbose, every exit rule and its progress)."""
    return {
        "inSafeMode": in_safe_mode,
        "rules": [
            {"name": r.name, "validated": r.validated, "preCheck": r.pre_check, "status": r.status_text}
            for r in rules
        ],
    }
