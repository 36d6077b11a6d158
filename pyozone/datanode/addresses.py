"""Where the datanode's servers bind and which address it advertises to SCM.

Ozone's datanode data ports listen on every interface. pyozone's follow from where SCM is: when every
configured SCM address (every SCM of an HA service) is loopback the whole cluster is on this machine
(`pyozone cluster up`, tests) and the datanode binds to 127.0.0.1 only, never exposing an unauthenticated
data port; otherwise it binds to 0.0.0.0 and advertises the address it reaches SCM from.
hdds.datanode.http-bind-host, when set, overrides this for the web server.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence

from pyozone.common.net import ANY, HostPort, is_loopback

LOOPBACK = "127.0.0.1"


def bind_host(scm_hosts: Sequence[str]) -> str:
    """127.0.0.1 when every configured SCM host (the daemon's `scm_hosts`) is loopback, else 0.0.0.0."""
    return LOOPBACK if scm_hosts and all(is_loopback(h) for h in scm_hosts) else ANY


def advertised_ip(scms: Sequence[HostPort], bound_host: str) -> str:
    """The IP SCM and clients should use: the loopback address, or this host's address on the route to the
    first SCM (of a service's, in its order) a route is found to: an SCM whose host no longer resolves
    must not leave the datanode advertising loopback while the others are reachable."""
    if bound_host == LOOPBACK:
        return LOOPBACK
    for scm in scms:
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.connect((scm.host, scm.port or 9))  # UDP connect sends nothing; it only picks a route
                return str(probe.getsockname()[0])
        except OSError:
            continue
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return LOOPBACK
