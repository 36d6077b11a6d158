"""What the configuration of every HA service shares, OM's (common/om_ha.py) and SCM's (common/scm_ha.py): the
comma-separated id lists of Ozone's ConfUtils (`ozone.om.service.ids`, `ozone.scm.nodes.SERVICE`) and the rule
by which a daemon finds its own node among its service's (Ozone's OMHANodeDetails / SCMHANodeDetails): the
node `*.node.id` names, else the one node whose address is on this machine (daemons sharing a host must be
told their node id).
"""

from __future__ import annotations

import hashlib
import socket
import uuid
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from pyozone.config import ConfigError, OzoneConfiguration


class HaNode(Protocol):
    @property
    def node_id(self) -> str: ...


NodeT = TypeVar("NodeT", bound=HaNode)


def id_list(conf: OzoneConfiguration, key: str) -> tuple[str, ...]:
    """`key`'s comma-separated ids, trimmed, empty ones dropped (Ozone's getTrimmedStringCollection); an id
    named twice is a ConfigError naming the key."""
    raw = conf.get(key)
    ids = tuple(part.strip() for part in str(raw or "").split(",") if part.strip())
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{key}: {raw!r} names an id twice")
    return ids


def local_addresses() -> set[str]:
    """The names and addresses of this machine."""
    names = {"localhost", "127.0.0.1", "::1", socket.gethostname(), socket.getfqdn()}
    for name in list(names):
        try:
            names.update(info[4][0] for info in socket.getaddrinfo(name, None))
        except OSError:
            continue
    return names


def local_node(
    conf: OzoneConfiguration,
    nodes: Sequence[NodeT],
    host: Callable[[NodeT], str],
    *,
    role: str,
    service_id: str,
    node_id_key: str,
    nodes_key: str,
) -> NodeT:
    """This daemon's node among `nodes` (its service's, named in `nodes_key`): the one `node_id_key` names,
    else the one whose `host` is on this machine; a ConfigError naming the key to set otherwise."""
    node_id = conf.get(node_id_key)
    if node_id:
        for node in nodes:
            if node.node_id == node_id:
                return node
        raise ConfigError(
            f"{node_id_key}: {node_id!r} is not one of {nodes_key} ({', '.join(n.node_id for n in nodes)})"
        )
    here = local_addresses()
    matches = [node for node in nodes if host(node) in here]
    if len(matches) != 1:
        found = "none" if not matches else ", ".join(n.node_id for n in matches)
        raise ConfigError(
            f"{role} service {service_id}: cannot tell which {role} this is "
            f"(nodes on this machine: {found}): set {node_id_key}"
        )
    return matches[0]


def name_uuid_from_bytes(data: bytes) -> uuid.UUID:
    """Java's UUID.nameUUIDFromBytes: the MD5 of `data` as a version 3 UUID, without a namespace (Ozone's
    Raft group ids of OM services, and pyozone's of an SCM service whose cluster id is no UUID)."""
    return uuid.UUID(bytes=hashlib.md5(data).digest(), version=3)
