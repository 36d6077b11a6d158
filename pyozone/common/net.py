"""Addresses from configuration, resolved the way Ozone resolves its `*.address` / `*.port` keys."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from pyozone.config import ConfigError, OzoneConfiguration


@dataclass(frozen=True, slots=True)
class HostPort:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def parse_host_port(text: str, default_port: int | None, key: str) -> HostPort:
    host, sep, port_text = text.strip().rpartition(":")
    if not sep:
        host, port_text = text.strip(), ""
    if not host:
        raise ConfigError(f"{key}: {text!r} has no host")
    if not port_text:
        if default_port is None:
            raise ConfigError(f"{key}: {text!r} needs a port (host:port)")
        return HostPort(host, default_port)
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ConfigError(f"{key}: {text!r} has an invalid port")
    return HostPort(host, int(port_text))


ANY = "0.0.0.0"
OM_PORT_DEFAULT = 9862
"""Ozone's OZONE_OM_PORT_DEFAULT: ozone.om.address has no port key, a bare host means this port."""


def address(
    conf: OzoneConfiguration,
    address_key: str,
    port_key: str | None = None,
    default_host: str = ANY,
    default_port: int | None = None,
) -> HostPort:
    """`address_key` as host[:port]; a missing port comes from `port_key` (or `default_port`), a missing
    address from `default_host` (bind addresses) — as Ozone's getSCMAddress / getHostPort helpers do."""
    port = conf.get(port_key) if port_key else default_port
    raw = conf.get(address_key)
    if raw is None or not str(raw).strip():
        if port is None:
            raise ConfigError(f"{address_key}: not set")
        return HostPort(default_host, port)
    return parse_host_port(str(raw), port, address_key)


def scm_datanode_address(conf: OzoneConfiguration) -> HostPort:
    """Where a datanode reaches SCM: ozone.scm.datanode.address, else the first of ozone.scm.names."""
    if conf.get("ozone.scm.datanode.address"):
        return address(conf, "ozone.scm.datanode.address", "ozone.scm.datanode.port")
    names = conf.get("ozone.scm.names")
    if not names:
        raise ConfigError(
            "ozone.scm.names: not set, and ozone.scm.datanode.address neither: "
            "a datanode needs one of them to find SCM"
        )
    return parse_host_port(str(names).split(",")[0], conf.get("ozone.scm.datanode.port"), "ozone.scm.names")


def scm_client_address(conf: OzoneConfiguration) -> HostPort:
    """Where admin tools reach SCM: ozone.scm.client.address, else the first of ozone.scm.names."""
    if conf.get("ozone.scm.client.address"):
        return address(conf, "ozone.scm.client.address", "ozone.scm.client.port")
    names = conf.get("ozone.scm.names")
    if not names:
        raise ConfigError(
            "ozone.scm.client.address: not set, and ozone.scm.names neither: "
            "give the SCM address with --conf or -D ozone.scm.client.address=HOST:PORT"
        )
    return parse_host_port(str(names).split(",")[0], conf.get("ozone.scm.client.port"), "ozone.scm.names")


def scm_block_address(conf: OzoneConfiguration) -> HostPort:
    """Where block clients reach SCM: ozone.scm.block.client.address, else the first of ozone.scm.names
    with ozone.scm.block.client.port (Ozone's getScmAddressForBlockClients)."""
    if conf.get("ozone.scm.block.client.address"):
        return address(conf, "ozone.scm.block.client.address", "ozone.scm.block.client.port")
    names = conf.get("ozone.scm.names")
    if not names:
        raise ConfigError("ozone.scm.block.client.address: not set, and ozone.scm.names neither")
    port = conf.get("ozone.scm.block.client.port")
    return parse_host_port(str(names).split(",")[0], port, "ozone.scm.names")


def scm_security_address(conf: OzoneConfiguration) -> HostPort:
    """Where daemons and admin tools reach SCM's security protocol: ozone.scm.security.service.address,
    else the host of the first of ozone.scm.names with ozone.scm.security.service.port (a port written in
    ozone.scm.names is another protocol's)."""
    if conf.get("ozone.scm.security.service.address"):
        return address(conf, "ozone.scm.security.service.address", "ozone.scm.security.service.port")
    names = conf.get("ozone.scm.names")
    if not names:
        raise ConfigError(
            "ozone.scm.security.service.address: not set, and ozone.scm.names neither: "
            "a secure daemon or admin tool needs one of them to find SCM's certificate authority"
        )
    host = parse_host_port(str(names).split(",")[0], 0, "ozone.scm.names").host
    return HostPort(host, conf.get("ozone.scm.security.service.port"))


def om_address(conf: OzoneConfiguration) -> HostPort:
    """ozone.om.address; `om` alone (as Ozone's docker-compose writes it) means om:9862."""
    return lone_om_address(str(conf.get("ozone.om.address") or ""))


def lone_om_address(text: str) -> HostPort:
    """A lone OM's RPC address from ozone.om.address's `text`: a bare host means port 9862, nothing
    0.0.0.0:9862 (where OM binds)."""
    if not text.strip():
        return HostPort(ANY, OM_PORT_DEFAULT)
    return parse_host_port(text, OM_PORT_DEFAULT, "ozone.om.address")


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve anywhere


def bind_address(conf: OzoneConfiguration, where: HostPort, bind_key: str | None) -> HostPort:
    """Where a server listens for the address `where`: the port of `where` on the host of `bind_key`
    (Ozone's *.bind.host / *.http-bind-host, 0.0.0.0 by default), so clients on the server's own host reach
    it through 127.0.0.1 as well. A loopback `where` keeps its host unless `bind_key` is set explicitly:
    a one-machine cluster never listens beyond this machine."""
    if bind_key is not None and conf.source(bind_key) != "default":
        return HostPort(str(conf.get(bind_key)), where.port)
    if is_loopback(where.host):
        return where
    return HostPort(str(conf.get(bind_key)) if bind_key else ANY, where.port)
