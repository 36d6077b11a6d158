"""Throttling formulas of Ozone's "Replication Manager" doc (ReplicationManager), defined once for the
processors, simulator and tests."""

from __future__ import annotations

import math

from pyozone.hdds.replication_limits import out_of_service_limit
from pyozone.hdds.states import NodeOperationalState


def replication_load(replicate_count: int, reconstruct_count: int, weight: int) -> int:
    """A datanode's replication queue: replicate and reconstruct commands share one worker pool on the
    datanode, and a reconstruction costs `weight` replications."""
    return replicate_count + weight * reconstruct_count


def replication_limit(base_limit: int, op_state: NodeOperationalState, factor: float) -> int:
    """A node leaving service grows its replication pool (pyozone/hdds/replication_limits.py), so SCM
    may queue as many more commands on it."""
    if op_state is NodeOperationalState.IN_SERVICE:
        return base_limit
    return out_of_service_limit(base_limit, factor)


def is_overloaded(load: int, limit: int) -> bool:
    """At or over its limit, a node gets no more commands (it joins the excluded set)."""
    return load >= limit


def fills_up(load: int, added_weight: int, limit: int) -> bool:
    """Whether sending a command of `added_weight` (1, or the reconstruction weight) brings the chosen
    node to its limit, so it is excluded until its next command-count update (as Ozone's
    ReplicationManager)."""
    return load + added_weight >= limit


def inflight_limit(healthy_nodes: int, base_limit: int, factor: float) -> int:
    """The cluster-wide cap on pending ADDs: 0 (no cap) when factor <= 0, else
    ceil(healthy nodes x per-node limit x factor), e.g. 10 nodes x 20 x 0.75 = 150."""
    if factor <= 0:
        return 0
    return math.ceil(healthy_nodes * base_limit * factor)


def inflight_limit_reached(pending_adds: int, limit: int) -> bool:
    """The under-replication processor stops its pass here; a 0 limit never stops it."""
    return limit > 0 and pending_adds >= limit


def scm_deadline(now_epoch_ms: int, event_timeout_ms: int) -> int:
    return now_epoch_ms + event_timeout_ms


def datanode_deadline(scm_deadline_ms: int, offset_ms: int) -> int:
    """The datanode gives up `offset` before SCM does, so SCM never replaces a command that might
    still run and create a duplicate replica."""
    return scm_deadline_ms - offset_ms
