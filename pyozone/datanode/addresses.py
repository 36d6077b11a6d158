"""Where the datanode's servers bind and which address it advertises to SCM.

Ozone's datanode data ports listen on every interface. pyozone's follow from where SCM is: when every
configured SCM address (every SCM of an HA service) is loopback the whole cluster is on this machine
(`pyozone cluster up`, tests) and the datanode binds to 127.0.0.1 only, never exposing an unauthenticated
data port; otherwise it binds to 0.0.0.0 and advertises the address it reaches SCM from.
hdds.datanode.http-bind-host, when set, overrides this for the web server.
"""

from __future__ import annotations

import socket

from pyozone.common.net import ANY, HostPort, is_loopback, parse_host_port, scm_datanode_address
from pyozone.common.scm_ha import scm_service_id, scm_service_nodes
from pyozone.config import OzoneConfiguration

LOOPBACK = "127.0.0.1"


def _scm_hosts(conf: OzoneConfiguration) -> list[str]:
    service = scm_service_id(conf)
    if service is not None:
        return [node.host for node in scm_service_nodes(conf, service)]
    hosts = []
    if conf.get("ozone.scm.datanode.address"):
        hosts.append(scm_datanode_address(conf).host)
    for name in str(conf.get("ozone.scm.names") or "").split(","):
        if name.strip():
            hosts.append(parse_host_port(name, 0, "ozone.scm.names").host)
    return hosts


def bind_host(conf: OzoneConfiguration) -> str:
    """127.0.0.1 when every configured SCM address is loopback, else 0.0.0.0."""
    hosts = _scm_hosts(conf)
    return LOOPBACK if hosts and all(is_loopback(h) for h in hosts) else ANY


def advertised_ip(scm: HostPort, bound_host: str) -> str:
    """The IP SCM and clients should use: the loopback address, or this host's address on the route to SCM."""
    if bound_host == LOOPBACK:
        return LOOPBACK
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((scm.host, scm.port or 9))  # UDP connect sends nothing; it only picks a route
            return str(probe.getsockname()[0])
    except OSError:
        try:
            return socket.gethostbyname(socket.gethostname())
        except OSError:
            return LOOPBACK
