"""An SCM service's nodes from configuration, as Ozone's SCMNodeInfo, SCMHANodeDetails and HddsUtils do.

An HA service is named in `ozone.scm.service.ids` (`ozone.scm.default.service.id` choosing among several);
its SCMs in `ozone.scm.nodes.SERVICE`; each SCM's host in `ozone.scm.address.SERVICE.NODE` and each of its
ports in the port key suffixed with the service and node (`ozone.scm.client.port.SERVICE.NODE`,
`...block.client.port`, `...datanode.port`, `...security.service.port`, `...ratis.port`, `...grpc.port`),
else the unsuffixed port key, else Ozone's default; its web server in `ozone.scm.http-address.SERVICE.NODE`.
An SCM finds itself by `ozone.scm.node.id`, or as the one node whose host is on this machine
(common/ha_nodes.py, shared with OM). Without `ozone.scm.service.ids` SCM runs alone (`ozone.scm.names`,
`ozone.scm.*.address`), as before.

`ScmAddresses.from_conf` is where a client or daemon outside SCM finds where the SCMs listen: every SCM of
the service at one protocol's port, or the lone SCM's address for it. The datanode's container
lookups (datanode/daemon.py) still take `ScmNodes.from_conf`, for their own lone-SCM fallback.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from enum import Enum

from pyozone.common.ha_nodes import id_list, local_node, name_uuid_from_bytes
from pyozone.common.net import (
    HostPort,
    parse_host_port,
    scm_block_address,
    scm_client_address,
    scm_datanode_address,
    scm_security_address,
)
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.config.keys import suffixed

CLUSTER_ID_PREFIX = "CID-"
"""Ozone's OzoneConsts.CLUSTER_ID_PREFIX."""
SCM_HTTP_PORT_DEFAULT = 9876
"""Ozone's OZONE_SCM_HTTP_BIND_PORT_DEFAULT."""


class ScmProtocol(Enum):
    """The SCM protocols other components call, each at its own port (Ozone's SCMNodeInfo fields)."""

    CLIENT = "client"
    """The admin/location protocol (`ozone.scm.client.port`, `ozone.scm.client.address`)."""
    BLOCK = "block"
    """The block protocol OM calls (`ozone.scm.block.client.port`, `ozone.scm.block.client.address`)."""
    DATANODE = "datanode"
    """Where datanodes heartbeat (`ozone.scm.datanode.port`, `ozone.scm.datanode.address`)."""
    SECURITY = "security"
    """The certificate authority (`ozone.scm.security.service.port`, `...security.service.address`)."""


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.ASCII | re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ScmNodeDetails:
    """One SCM of a service (Ozone's SCMNodeDetails): its host and the address of each of its ports."""

    service_id: str
    node_id: str
    host: str
    client_address: HostPort
    """The admin/client protocol (`ozone.scm.client.port`)."""
    block_client_address: HostPort
    """The block protocol OM calls (`ozone.scm.block.client.port`)."""
    datanode_address: HostPort
    """Where datanodes heartbeat (`ozone.scm.datanode.port`)."""
    security_address: HostPort
    """The certificate authority (`ozone.scm.security.service.port`)."""
    ratis_address: HostPort
    grpc_address: HostPort
    """Ozone's InterSCMGrpc checkpoint download (`ozone.scm.grpc.port`)."""
    http_address: HostPort

    def address(self, protocol: ScmProtocol) -> HostPort:
        """This SCM's address for `protocol`."""
        if protocol is ScmProtocol.CLIENT:
            return self.client_address
        if protocol is ScmProtocol.BLOCK:
            return self.block_client_address
        if protocol is ScmProtocol.DATANODE:
            return self.datanode_address
        return self.security_address


_LONE = {
    ScmProtocol.CLIENT: scm_client_address,
    ScmProtocol.BLOCK: scm_block_address,
    ScmProtocol.DATANODE: scm_datanode_address,
    ScmProtocol.SECURITY: scm_security_address,
}
"""A lone SCM's address per protocol: its `*.address` key, else the first of ozone.scm.names (common/net.py;
Ozone's HddsUtils.getScmAddressForClients, getScmAddressForBlockClients, getSCMAddressForDatanodes and
getScmAddressForSecurityProtocol)."""


@dataclass(frozen=True, slots=True)
class ScmAddresses:
    """Where the SCMs of a configuration listen, per protocol (Ozone's SCMNodeInfo.buildNodeInfo): the SCMs
    of its service (`nodes`), or a lone SCM (`service_id` None). Built once at a daemon's or command's edge,
    so the clients it makes take addresses, not the configuration. A lone SCM's protocol the configuration
    gives no address for is a ConfigError when that protocol is asked for, not before: an OM without
    security never needs the certificate authority's address."""

    service_id: str | None
    nodes: tuple[ScmNodeDetails, ...] = ()
    lone: tuple[tuple[ScmProtocol, HostPort | str], ...] = ()
    """A lone SCM's address per protocol, or the ConfigError's message when the configuration gives none."""

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration, service_id: str | None = None) -> ScmAddresses:
        """The SCMs of `service_id` (default: this configuration's SCM service, `scm_service_id`), or the
        lone SCM's addresses when there is no service."""
        service = service_id or scm_service_id(conf)
        if service is not None:
            return cls(service, scm_service_nodes(conf, service))
        lone: list[tuple[ScmProtocol, HostPort | str]] = []
        for protocol, resolve in _LONE.items():
            try:
                lone.append((protocol, resolve(conf)))
            except ConfigError as e:
                lone.append((protocol, str(e)))
        return cls(None, lone=tuple(lone))

    def lone_address(self, protocol: ScmProtocol) -> HostPort:
        """The lone SCM's address for `protocol`; a ConfigError naming the key to set when there is none."""
        resolved = dict(self.lone)[protocol]
        if isinstance(resolved, str):
            raise ConfigError(resolved)
        return resolved

    def endpoints(self, protocol: ScmProtocol) -> tuple[tuple[str, HostPort], ...]:
        """(node id, address) of each SCM at `protocol`'s port, in the order the service names them; a lone
        SCM's node id is ""."""
        if self.service_id is None:
            return (("", self.lone_address(protocol)),)
        return tuple((node.node_id, node.address(protocol)) for node in self.nodes)


def scm_service_ids(conf: OzoneConfiguration) -> tuple[str, ...]:
    """`ozone.scm.service.ids`: empty when SCM runs alone."""
    return id_list(conf, "ozone.scm.service.ids")


def scm_service_id(conf: OzoneConfiguration) -> str | None:
    """The SCM service of this daemon or client (Ozone's HddsUtils.getScmServiceId):
    `ozone.scm.default.service.id`, else the one of `ozone.scm.service.ids`; None when SCM runs alone."""
    ids = scm_service_ids(conf)
    default = conf.get("ozone.scm.default.service.id")
    if default:
        if default not in ids:
            raise ConfigError(
                f"ozone.scm.default.service.id: {default!r} is not one of ozone.scm.service.ids "
                f"({conf.get('ozone.scm.service.ids')})"
            )
        return str(default)
    if len(ids) > 1:
        raise ConfigError(
            f"ozone.scm.service.ids names {len(ids)} services ({', '.join(ids)}): set "
            "ozone.scm.default.service.id"
        )
    return ids[0] if ids else None


def _at(conf: OzoneConfiguration, host: str, port_key: str, service_id: str, node_id: str) -> HostPort:
    """`host` with the port of `port_key.SERVICE.NODE`, else of `port_key` (Ozone's SCMNodeInfo.getPort,
    without the deprecated ports of `*.address.SERVICE.NODE`)."""
    port = conf.get(suffixed(port_key, service_id, node_id))
    return HostPort(host, int(conf.get(port_key) if port is None else port))


def scm_service_nodes(conf: OzoneConfiguration, service_id: str) -> tuple[ScmNodeDetails, ...]:
    """The SCMs of `service_id`, in the order `ozone.scm.nodes.SERVICE` names them."""
    if service_id not in scm_service_ids(conf):
        raise ConfigError(
            f"SCM service {service_id!r} is not one of ozone.scm.service.ids "
            f"({conf.get('ozone.scm.service.ids')})"
        )
    nodes_key = suffixed("ozone.scm.nodes", service_id)
    node_ids = id_list(conf, nodes_key)
    if not node_ids:
        raise ConfigError(f"{nodes_key}: not set: SCM service {service_id} names no SCM")
    http_base = parse_host_port(
        str(conf.get("ozone.scm.http-address")), SCM_HTTP_PORT_DEFAULT, "ozone.scm.http-address"
    )
    nodes = []
    for node_id in node_ids:
        address_key = suffixed("ozone.scm.address", service_id, node_id)
        raw = conf.get(address_key)
        if not raw:
            raise ConfigError(f"{address_key}: not set: SCM {node_id} of service {service_id} has no address")
        if parse_host_port(str(raw), 0, address_key).port:
            raise ConfigError(
                f"{address_key}: {raw!r} is a host name, without a port: each protocol's port has its own "
                f"key ({suffixed('ozone.scm.client.port', service_id, node_id)} and the like)"
            )
        host = str(raw).strip()
        http_key = suffixed("ozone.scm.http-address", service_id, node_id)
        http_raw = conf.get(http_key)
        http = (
            parse_host_port(str(http_raw), http_base.port, http_key)
            if http_raw
            else HostPort(host, http_base.port)
        )
        nodes.append(
            ScmNodeDetails(
                service_id,
                node_id,
                host,
                client_address=_at(conf, host, "ozone.scm.client.port", service_id, node_id),
                block_client_address=_at(conf, host, "ozone.scm.block.client.port", service_id, node_id),
                datanode_address=_at(conf, host, "ozone.scm.datanode.port", service_id, node_id),
                security_address=_at(conf, host, "ozone.scm.security.service.port", service_id, node_id),
                ratis_address=_at(conf, host, "ozone.scm.ratis.port", service_id, node_id),
                grpc_address=_at(conf, host, "ozone.scm.grpc.port", service_id, node_id),
                http_address=http,
            )
        )
    return tuple(nodes)


def local_scm_node(conf: OzoneConfiguration) -> ScmNodeDetails | None:
    """This SCM's node of its service (Ozone's SCMHANodeDetails.loadSCMHAConfig), or None when SCM runs
    alone."""
    service_id = scm_service_id(conf)
    if service_id is None:
        return None
    return local_node(
        conf,
        scm_service_nodes(conf, service_id),
        lambda node: node.host,
        role="SCM",
        service_id=service_id,
        node_id_key="ozone.scm.node.id",
        nodes_key=suffixed("ozone.scm.nodes", service_id),
    )


def primordial_scm_node(conf: OzoneConfiguration, service_id: str) -> ScmNodeDetails | None:
    """The SCM `ozone.scm.primordial.node.id` names, by node id or by host (Ozone's SCMHAUtils
    .isPrimordialSCM), the only one `scm --init` initializes; None when unset (then `--init` runs where it
    is called). A host shared by several SCMs, or naming none of the service's, is a ConfigError."""
    named = conf.get("ozone.scm.primordial.node.id")
    if not named:
        return None
    nodes = scm_service_nodes(conf, service_id)
    for node in nodes:
        if node.node_id == named:
            return node
    on_host = [node for node in nodes if node.host == named]
    if len(on_host) == 1:
        return on_host[0]
    nodes_key = suffixed("ozone.scm.nodes", service_id)
    if on_host:
        raise ConfigError(
            f"ozone.scm.primordial.node.id: {named!r} is the host of "
            f"{', '.join(n.node_id for n in on_host)}: name one node id"
        )
    raise ConfigError(
        f"ozone.scm.primordial.node.id: {named!r} is neither a node id of {nodes_key} "
        f"({', '.join(n.node_id for n in nodes)}) nor one of their hosts"
    )


def scm_raft_group_id(cluster_id: str) -> str:
    """The Raft group of an SCM service: the UUID of its cluster id (`CID-<uuid>`, Ozone's
    SCMRatisServerImpl.buildRaftGroupId), the same on every SCM of the cluster. Ozone's cluster ids are
    always UUIDs; pyozone's may be any id (`scm --init --clusterid CID-pyozone`), whose group is Java's
    UUID.nameUUIDFromBytes of the whole cluster id (docs/differences.md)."""
    bare = cluster_id.removeprefix(CLUSTER_ID_PREFIX)
    if _UUID.fullmatch(bare):
        return str(uuid.UUID(bare))
    return str(name_uuid_from_bytes(cluster_id.encode()))
