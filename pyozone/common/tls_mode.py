"""Whether a process speaks mutual TLS, and the certificate a client presents: hdds.grpc.tls.enabled is
refused without ozone.security.enabled (there are no certificates then), and a TLS client without a
certificate is refused before it dials anything."""

from __future__ import annotations

import socket

from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.config import ConfigError, OzoneConfiguration

CLIENT_CERT_HINT = "set ozone.client.tls.* or OZONE_CLIENT_CERT/OZONE_CLIENT_KEY/OZONE_CA_CERT"


def security_enabled(conf: OzoneConfiguration) -> bool:
    return bool(conf.get("ozone.security.enabled"))


def mtls_enabled(conf: OzoneConfiguration) -> bool:
    """hdds.grpc.tls.enabled; ConfigError when it is set without ozone.security.enabled."""
    if not conf.get("hdds.grpc.tls.enabled"):
        return False
    if not security_enabled(conf):
        raise ConfigError(
            "hdds.grpc.tls.enabled is true but ozone.security.enabled is false: mutual TLS needs the "
            "certificates SCM's CA issues (set ozone.security.enabled=true, or hdds.grpc.tls.enabled=false)"
        )
    return True


def client_tls(conf: OzoneConfiguration) -> TlsStore | None:
    """The user's certificate when hdds.grpc.tls.enabled (None without TLS). The files are read and
    checked now, so a missing or wrong one is named before any connection is tried."""
    if not mtls_enabled(conf):
        return None
    try:
        paths = TlsPaths.for_client(conf)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    if paths is None:
        raise ConfigError(
            "hdds.grpc.tls.enabled is true but no client certificate is configured: "
            f"{CLIENT_CERT_HINT} (an administrator makes one with: pyozone admin cert issue-user NAME)"
        )
    store = TlsStore(paths)
    try:
        store.check()
    except OSError as e:
        raise ConfigError(f"the client certificate cannot be read: {e}") from None
    except ValueError as e:
        raise ConfigError(f"the client certificate is unusable: {e}") from None
    return store


def service_hosts(*primary: str) -> tuple[str, ...]:
    """The names a service's certificate carries, so every name a peer may dial verifies: the host it
    advertises or is configured with first (its common name), then 127.0.0.1, localhost and this host's
    name. A wildcard bind address names no host and is left out."""
    names = [*primary, "127.0.0.1", "localhost", socket.gethostname()]
    hosts: list[str] = []
    for name in names:
        if name and name not in ("0.0.0.0", "::") and name not in hosts:
            hosts.append(name)
    return tuple(hosts)
