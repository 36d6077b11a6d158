"""Decommission, maintenance and recommission by host: resolve each host to one datanode, then change its
operational state through the NodeManager (which refuses invalid transitions).

Each host succeeds or fails on its own, as `ozone admin datanode decommission h1 h2` reports per host.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyozone.hdds.datanode import DatanodeInfo
from pyozone.hdds.exceptions import SCMException
from pyozone.hdds.states import NodeOperationalState
from pyozone.scm.node.node_manager import NodeManager


class HostError(Exception):
    """Why one host of an admin request could not be acted on."""


def find_datanode(nodes: NodeManager, host: str) -> DatanodeInfo:
    """The datanode `host` names: a host name, IP address or uuid, optionally with ":port" to tell apart
    datanodes sharing a host (the port is any of the datanode's ports)."""
    name, port = host.strip(), None
    head, sep, tail = name.rpartition(":")
    if sep and tail.isdigit() and (head.count(":") == 0 or head.endswith("]")):
        name, port = head, int(tail)
    name = name.removeprefix("[").removesuffix("]")
    if not name:
        raise HostError("no host name given")
    matches = [
        info
        for info in nodes.nodes()
        if name in (info.details.hostname, info.details.ip_address, info.uuid)
        and (port is None or port in {number for _, number in info.details.ports})
    ]
    if not matches:
        raise HostError(f"no registered datanode {host}")
    if len(matches) > 1:
        raise HostError(f"{len(matches)} datanodes match {host}; add the port (host:port) or use the uuid")
    return matches[0]


def set_state(
    nodes: NodeManager, hosts: Iterable[str], state: NodeOperationalState, expiry_epoch_sec: int = 0
) -> list[tuple[str, str]]:
    """Moves every host's datanode to `state`; returns (host, error) for those that could not move."""
    failed: list[tuple[str, str]] = []
    for host in hosts:
        try:
            info = find_datanode(nodes, host)
            nodes.set_operational_state(info.uuid, state, expiry_epoch_sec)
        except (HostError, SCMException) as e:
            failed.append((host, str(e)))
    return failed
