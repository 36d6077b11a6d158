"""Is the local cluster ready, and what it looks like now (the live table `cluster up` prints)."""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from typing import Any

from pyozone.common.output import age, print_table
from pyozone.framework.scm_admin import ScmAdminClient
from pyozone.framework.scm_errors import ScmClientError
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE
from pyozone.hdds.states import NodeState, PipelineState


def scm_ready(http_port: int, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None) -> bool:
    """A daemon's /ready answers 200 with "ready": true (SCM's, OM's and datanodes' have the same shape).
    `tls`: the caller's client context on a secure cluster (its endpoints are https with client
    certificates required)."""
    scheme = "https" if tls is not None else "http"
    try:
        with urllib.request.urlopen(
            f"{scheme}://{host}:{http_port}/ready", timeout=2, context=tls
        ) as response:
            return response.status == 200 and json.loads(response.read()).get("ready") is True
    except (OSError, urllib.error.URLError, ValueError):
        return False


om_ready = scm_ready
s3g_ready = scm_ready  # the gateway's web admin port


def raft_view(
    http_port: int, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None
) -> dict[str, Any] | None:
    """An HA OM's or SCM's /api/v1/ratis (role, ready, term, leader, indexes; both have that shape); None
    while it does not answer."""
    scheme = "https" if tls is not None else "http"
    try:
        with urllib.request.urlopen(
            f"{scheme}://{host}:{http_port}/api/v1/ratis", timeout=2, context=tls
        ) as response:
            view = json.loads(response.read())
    except (OSError, urllib.error.URLError, ValueError):
        return None
    return view if isinstance(view, dict) else None


def raft_leader(http_ports: dict[str, int], tls: ssl.SSLContext | None = None) -> str | None:
    """The OM or SCM (by node id) that leads its service and executes calls (its term's first entry
    applied), or None while none does."""
    for node, port in http_ports.items():
        view = raft_view(port, tls=tls)
        if view is not None and view.get("role") == "LEADER" and view.get("ready"):
            return node
    return None


def cluster_ready(scm: ScmAdminClient, datanodes: int) -> bool:
    """Out of safe mode, every datanode HEALTHY, and the open pipelines writes need."""
    try:
        if scm.in_safe_mode():
            return False
        nodes = scm.datanodes()
        pipelines = scm.pipelines()
    except ScmClientError:
        return False
    healthy = sum(1 for n in nodes if n.health is NodeState.HEALTHY)
    config = RATIS_THREE if datanodes >= 3 else RATIS_ONE
    open_ = sum(
        1
        for p in pipelines
        if p.pipeline.replication_config == config and p.pipeline.state is PipelineState.OPEN
    )
    return healthy >= datanodes and open_ >= 1


def wait_until(
    predicate: Callable[[], bool], timeout_s: float, what: str, on_wait: Callable[[], None] | None = None
) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what} not reached within {timeout_s:.0f} s")
        if on_wait:
            on_wait()
        time.sleep(0.5)


def print_status(scm: ScmAdminClient, names: dict[str, str]) -> None:
    """One screen: safe mode, datanodes, pipelines by state. `names` maps uuid -> daemon name."""
    in_safe_mode = scm.in_safe_mode()
    nodes = sorted(scm.datanodes(), key=lambda n: n.details.hostname)
    pipelines = scm.pipelines()
    print(f"SCM: {'in' if in_safe_mode else 'out of'} safe mode   ({time.strftime('%H:%M:%S')})")
    rows = [
        (
            names.get(n.details.uuid, n.details.hostname),
            n.details.uuid[:8],
            n.details.network_location,
            n.health.name,
            n.operational_state.name,
            age(n.last_heartbeat_wall_ms),
            n.pipeline_count,
            n.container_count,
        )
        for n in nodes
    ]
    print_table(
        ("DATANODE", "UUID", "RACK", "HEALTH", "OPERATIONAL STATE", "HEARTBEAT", "PIPELINES", "CONTAINERS"),
        rows,
    )
    counts = Counter((str(p.pipeline.replication_config), p.pipeline.state.name) for p in pipelines)
    summary = ", ".join(f"{n} {cfg} {state}" for (cfg, state), n in sorted(counts.items()))
    print(f"Pipelines: {summary or 'none'}")
