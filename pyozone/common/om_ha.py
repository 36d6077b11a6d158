"""An OM service's nodes from configuration, resolved as Ozone's OMHANodeDetails and OmUtils do.

An HA service is named in `ozone.om.service.ids`; its OMs in `ozone.om.nodes.SERVICE`; each OM's addresses in
the keys suffixed with the service and node (`ozone.om.address.SERVICE.NODE`, `ozone.om.ratis.port.SERVICE
.NODE`, `ozone.om.http-address.SERVICE.NODE`). An OM finds itself by `ozone.om.node.id`, or as the one node
whose address is on this machine (common/ha_nodes.py, shared with SCM).

`OmAddresses.from_conf` is where a client, daemon or command finds where the OMs listen: the OMs of a
service, or the lone OM at `ozone.om.address` (SCM's CA, scm/server/ca_files.py, still reads the OM keys
itself to name the OMs it may sign for).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.common.ha_nodes import id_list, local_node, name_uuid_from_bytes
from pyozone.common.net import OM_PORT_DEFAULT, HostPort, lone_om_address, parse_host_port
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.config.keys import suffixed

OM_HTTP_PORT_DEFAULT = 9874
"""Ozone's OZONE_OM_HTTP_BIND_PORT_DEFAULT."""


@dataclass(frozen=True, slots=True)
class OmNodeDetails:
    """One OM of a service (Ozone's OMNodeDetails)."""

    service_id: str
    node_id: str
    rpc_address: HostPort
    ratis_address: HostPort
    http_address: HostPort


@dataclass(frozen=True, slots=True)
class OmAddresses:
    """The OMs a configuration names (Ozone's OmUtils.getOmHAAddressesById and OMNodeDetails): the OMs of
    its service (`nodes`, `decommissioned` naming those removed from it), or a lone OM (`service_id` None)
    at `address`. Built once at a daemon's, command's or client's edge."""

    service_id: str | None
    nodes: tuple[OmNodeDetails, ...] = ()
    decommissioned: tuple[str, ...] = ()
    address: str = ""
    """The lone OM's host[:port] as written: a client's `authority`, else ozone.om.address."""

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration, authority: str | None = None) -> OmAddresses:
        """The OMs a client or daemon of this configuration talks to (`client_om_service`): the service
        `authority` names, else the configured one; without a service, the lone OM at `authority`
        (host[:port]) or ozone.om.address."""
        service = client_om_service(conf, authority)
        if service is None:
            return cls(None, address=authority or str(conf.get("ozone.om.address") or ""))
        return cls.of_service(conf, service)

    @classmethod
    def of_service(cls, conf: OzoneConfiguration, service_id: str) -> OmAddresses:
        """The OMs of `service_id`, which must be one of ozone.om.service.ids (a ConfigError otherwise)."""
        return cls(service_id, om_service_nodes(conf, service_id), om_decommissioned_ids(conf, service_id))

    @property
    def active(self) -> tuple[OmNodeDetails, ...]:
        """The service's OMs less the decommissioned ones (Ozone's OmUtils.getAllOMHAAddresses without
        them): a new service's Raft group, and every OM's address book."""
        removed = set(self.decommissioned)
        return tuple(node for node in self.nodes if node.node_id not in removed)

    def lone_address(self) -> HostPort:
        """The lone OM's RPC address as OM itself reads it (unset: 0.0.0.0:9862, where it binds)."""
        return lone_om_address(self.address)

    def client_address(self) -> HostPort:
        """Where a client reaches the lone OM: a ConfigError when no address is given; 0.0.0.0 (a bind
        address in a shared ozone-site.xml) is this host's OM."""
        if not self.address:
            raise ConfigError(
                "ozone.om.address: not set: give the OM address as -D ozone.om.address=HOST:PORT"
            )
        address = parse_host_port(self.address, OM_PORT_DEFAULT, "ozone.om.address")
        return HostPort("127.0.0.1", address.port) if address.host == "0.0.0.0" else address


def om_service_ids(conf: OzoneConfiguration) -> tuple[str, ...]:
    """`ozone.om.service.ids`: empty when OM runs alone (`ozone.om.address`)."""
    return id_list(conf, "ozone.om.service.ids")


def om_service_nodes(conf: OzoneConfiguration, service_id: str) -> tuple[OmNodeDetails, ...]:
    """The OMs of `service_id`, in the order `ozone.om.nodes.SERVICE` names them."""
    if service_id not in om_service_ids(conf):
        raise ConfigError(
            f"OM service {service_id!r} is not one of ozone.om.service.ids "
            f"({conf.get('ozone.om.service.ids')})"
        )
    nodes_key = suffixed("ozone.om.nodes", service_id)
    node_ids = id_list(conf, nodes_key)
    if not node_ids:
        raise ConfigError(f"{nodes_key}: not set: OM service {service_id} names no OM")
    nodes = []
    for node_id in node_ids:
        address_key = suffixed("ozone.om.address", service_id, node_id)
        raw = conf.get(address_key)
        if not raw:
            raise ConfigError(f"{address_key}: not set: OM {node_id} of service {service_id} has no address")
        rpc = parse_host_port(str(raw), OM_PORT_DEFAULT, address_key)
        ratis_port = conf.get(suffixed("ozone.om.ratis.port", service_id, node_id))
        if ratis_port is None:
            ratis_port = conf.get("ozone.om.ratis.port")
        http_key = suffixed("ozone.om.http-address", service_id, node_id)
        http_raw = conf.get(http_key)
        http = (
            parse_host_port(str(http_raw), OM_HTTP_PORT_DEFAULT, http_key)
            if http_raw
            else HostPort(rpc.host, OM_HTTP_PORT_DEFAULT)
        )
        nodes.append(OmNodeDetails(service_id, node_id, rpc, HostPort(rpc.host, ratis_port), http))
    return tuple(nodes)


def om_decommissioned_ids(conf: OzoneConfiguration, service_id: str) -> tuple[str, ...]:
    """`ozone.om.decommissioned.nodes.SERVICE` (Ozone's OZONE_OM_DECOMMISSIONED_NODES_KEY): OMs removed from
    the service (`admin om decommission`), still named in ozone.om.nodes.SERVICE but members no more."""
    return id_list(conf, suffixed("ozone.om.decommissioned.nodes", service_id))


def client_om_service(conf: OzoneConfiguration, authority: str | None = None) -> str | None:
    """The OM service a client talks to: `authority` when it names a configured service (`ofs://SERVICE/`),
    else the one of `ozone.om.service.ids` (`ozone.om.internal.service.id` choosing among several); None
    when OM runs alone (the client uses `ozone.om.address`, or `authority` as host[:port])."""
    ids = om_service_ids(conf)
    if authority is not None:
        return authority if authority in ids else None
    if not ids:
        return None
    internal = conf.get("ozone.om.internal.service.id")
    if internal:
        if internal not in ids:
            raise ConfigError(
                f"ozone.om.internal.service.id: {internal!r} is not one of ozone.om.service.ids"
            )
        return str(internal)
    if len(ids) > 1:
        raise ConfigError(
            f"ozone.om.service.ids names {len(ids)} services ({', '.join(ids)}): set "
            "ozone.om.internal.service.id, or name the service in the path (ofs://SERVICE/...)"
        )
    return ids[0]


def local_om_node(conf: OzoneConfiguration) -> OmNodeDetails | None:
    """This OM's node of its service (Ozone's OMHANodeDetails.loadOMHAConfig), or None when OM runs alone."""
    oms = OmAddresses.from_conf(conf)
    if oms.service_id is None:
        return None
    return local_node(
        conf,
        oms.nodes,
        lambda node: node.rpc_address.host,
        role="OM",
        service_id=oms.service_id,
        node_id_key="ozone.om.node.id",
        nodes_key=suffixed("ozone.om.nodes", oms.service_id),
    )


def om_raft_group_id(service_id: str) -> str:
    """The Raft group of an OM service: Java's UUID.nameUUIDFromBytes of the service id's UTF-8 bytes (an
    MD5, version 3 UUID), as Ozone's OzoneManagerRatisServer derives its RaftGroupId."""
    return str(name_uuid_from_bytes(service_id.encode()))
