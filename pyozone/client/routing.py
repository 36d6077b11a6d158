"""The order of a datastream's chain: nearest first (Ozone's RatisHelper.getRoutingTable, HDDS-4454).

The client sends to the member nearest to it; each member then sends to the member nearest to *itself*
among those left, so a pipeline spread over two racks carries each byte across racks once. Near means
the same host, then the same rack (SCM's network location of each member, the client's from the mapping
file, ClientConfig.rack); ties keep the pipeline's order.
"""

from __future__ import annotations

from pyozone.hdds.locations import DatanodeRef
from pyozone.hdds.topology import DEFAULT_RACK


def chain_order(members: tuple[DatanodeRef, ...], host: str, rack: str) -> tuple[DatanodeRef, ...]:
    left, chain = list(members), []
    here_host, here_rack = host, rack
    while left:
        nearest = min(left, key=lambda m: _distance(m, here_host, here_rack))
        left.remove(nearest)
        chain.append(nearest)
        here_host, here_rack = nearest.host, nearest.rack or DEFAULT_RACK
    return tuple(chain)


def _distance(member: DatanodeRef, host: str, rack: str) -> int:
    if host and member.host == host:
        return 0
    if rack and (member.rack or DEFAULT_RACK) == rack:
        return 1
    return 2
