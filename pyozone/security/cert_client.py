"""A daemon's own certificate: obtained from SCM's CA on first start, renewed before it expires.

`daemon_tls` runs once at start. It makes the key pair if there is none (mode 0600) and, unless the
certificate on disk is valid for this daemon, sends a CSR over mutual TLS presenting the JOIN credential
(`ozone.security.join.credentials.file`), then stores the certificate and the CA's. A datanode's CSR names
its datanode UUID too (SCM lets its certificate speak for that datanode alone), an HA OM's its service and
node ("SERVICE/NODE": each OM of a service holds its own, as Ozone's OMCertificateClient is one per OM).
`CertRenewer` asks for a new certificate once the current one is within `hdds.x509.renew.grace.duration`
of expiry, presenting the current one. Renewal keeps the key pair, so replacing the certificate file
(atomically) is the whole change: no handshake can see a new certificate with an old key. The TlsStore
re-reads the file on the next handshake. The renewer also fetches SCM's certificate revocation list every
hdds.x509.crl.refresh.interval (and at start), so the daemon's ports refuse a revoked peer
(TlsStore.update_crl).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pyozone.common.fsutil import write_file
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.framework.scm_security import SCMSecurityClient, scm_security_nodes
from pyozone.hdds.clock import Clock, SystemClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.security.config import SecurityConfig
from pyozone.security.join import JoinCredential

log = logging.getLogger(__name__)

JOIN_RETRY_S = 1.0
"""How often a daemon starting before SCM asks again for its first certificate."""


def daemon_identity(role: CertRole, hosts: tuple[str, ...]) -> Identity:
    if not role.is_service or role in (CertRole.JOIN, CertRole.SCM):
        raise ValueError(f"{role.name} is not a role a daemon requests a certificate for")
    if not hosts:
        raise ValueError("a daemon's certificate names at least one host")
    return Identity(role, role.value, hosts[0])


def daemon_tls(
    conf: OzoneConfiguration,
    role: CertRole,
    directory: Path,
    hosts: tuple[str, ...],
    wait_s: float = 120.0,
    datanode: str | None = None,
    om_node: str | None = None,
) -> TlsStore:
    """The daemon's TlsStore under `directory` (TlsPaths.under), with a CA-signed certificate for
    `role@hosts[0]` naming every host of `hosts` (and a datanode's UUID, `datanode`, or an HA OM's
    "SERVICE/NODE", `om_node`). Waits up to `wait_s` for an SCM that is not up yet."""
    settings = SecurityConfig.from_conf(conf)
    identity = daemon_identity(role, hosts)
    paths = TlsPaths.under(directory, conf)
    key = _load_or_create_key(paths.key, settings.key_len)
    # A daemon whose host dropped the JOIN file after its first start keeps running on its certificate.
    present = settings.join_credentials_file is not None and settings.join_credentials_file.exists()
    join = _join_credential(settings) if present else None
    node = datanode or om_node
    why = _invalid_reason(paths, key, identity, hosts, node, SystemClock(), join.ca_pem if join else None)
    if why is None:
        log.info("Using the certificate %s of %s", paths.cert, identity.common_name)
        return TlsStore(paths)
    named = f"{identity.common_name} ({node})" if node else identity.common_name
    log.info("Requesting a certificate for %s from SCM (%s)", named, why)
    join = join or _join_credential(settings)
    csr = X.csr_to_pem(X.build_csr(key, identity, hosts, datanode, om_node))
    with tempfile.TemporaryDirectory(prefix="pyozone-join-") as tmp:
        join_paths = TlsPaths(Path(tmp) / "join.key", Path(tmp) / "join.crt", Path(tmp) / "ca.crt")
        write_file(join_paths.key, join.key_pem, private=True)
        write_file(join_paths.cert, join.cert_pem)
        write_file(join_paths.ca, join.ca_pem)
        cert_pem, ca_pem = _sign_waiting(conf, TlsStore(join_paths), csr, wait_s)
    _check_issued(cert_pem, ca_pem, key, identity, node, trusted_ca=join.ca_pem)
    write_file(paths.ca, ca_pem)
    write_file(paths.cert, cert_pem)
    log.info(
        "Certificate %s of %s stored at %s",
        X.cert_from_pem(cert_pem).serial_number,
        identity.common_name,
        paths.cert,
    )
    return TlsStore(paths)


class CertRenewer:
    """Renews a daemon's certificate inside the grace period; `run` checks every
    hdds.x509.ca.rotation.check.interval until stopped. `datanode`: a datanode's UUID; `om_node`: an HA
    OM's "SERVICE/NODE"."""

    def __init__(
        self,
        conf: OzoneConfiguration,
        store: TlsStore,
        role: CertRole,
        hosts: tuple[str, ...],
        clock: Clock | None = None,
        datanode: str | None = None,
        om_node: str | None = None,
    ) -> None:
        self.conf = conf
        self.settings = SecurityConfig.from_conf(conf)
        self.store = store
        self.identity = daemon_identity(role, hosts)
        self.hosts = hosts
        self.datanode = datanode
        self.om_node = om_node
        self.clock = clock or SystemClock()

    def due(self) -> bool:
        """Inside the grace period, or a certificate issued before SCM's CA added the role-qualified names
        the clients dialling this daemon verify (X.role_host_name): renewed at the first check."""
        cert = X.cert_from_pem(self.store.paths.cert.read_bytes())
        unchecked = X.role_host_name(self.identity.role, self.identity.host) not in X.dns_names(cert)
        return unchecked or _renewal_due(cert, self.clock.wall_ms(), self.settings.renew_grace_ms)

    def check(self) -> bool:
        """Renews when due; True when a new certificate was stored. Raises SecurityError when SCM refuses
        or cannot be reached (the next check tries again)."""
        if not self.due():
            return False
        key = X.key_from_pem(self.store.paths.key.read_bytes())
        csr = X.csr_to_pem(X.build_csr(key, self.identity, self.hosts, self.datanode, self.om_node))
        with SCMSecurityClient(scm_security_nodes(self.conf), self.store) as client:
            cert_pem, ca_pem = client.sign_csr(csr)
        trusted = self.store.paths.ca.read_bytes()
        node = self.datanode or self.om_node
        _check_issued(cert_pem, ca_pem, key, self.identity, node, trusted_ca=trusted)
        write_file(self.store.paths.cert, cert_pem)
        self.store.reload()
        log.info(
            "Renewed the certificate of %s: serial %d, valid until %s",
            self.identity.common_name,
            X.cert_from_pem(cert_pem).serial_number,
            X.cert_from_pem(cert_pem).not_valid_after_utc.isoformat(),
        )
        return True

    def refresh_crl(self) -> bool:
        """Fetches SCM's CRL; True when it was newer than the one the store holds (now enforced)."""
        with SCMSecurityClient(scm_security_nodes(self.conf), self.store) as client:
            number, pem = client.get_crl()
        if not self.store.update_crl(number, pem):
            return False
        log.info(
            "Certificate revocation list %d loaded: %d revoked certificate(s)",
            number,
            len(self.store.revoked),
        )
        return True

    async def run(self, stop_event: asyncio.Event) -> None:
        """Checks for renewal every hdds.x509.ca.rotation.check.interval and fetches the CRL every
        hdds.x509.crl.refresh.interval until `stop_event` is set."""
        await asyncio.gather(
            self._every(stop_event, self.settings.rotation_check_ms, self.check, "Renewing the certificate"),
            self._every(stop_event, self.settings.crl_refresh_ms, self.refresh_crl, "Fetching SCM's CRL"),
        )

    async def _every(
        self, stop_event: asyncio.Event, interval_ms: int, work: Callable[[], bool], what: str
    ) -> None:
        while not stop_event.is_set():
            try:
                await asyncio.to_thread(work)
            except (SecurityError, OSError, ValueError) as e:
                log.warning("%s of %s failed: %s", what, self.identity.common_name, e)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop_event.wait(), interval_ms / 1000)


def _renewal_due(cert: X.Certificate, now_ms: int, grace_ms: int) -> bool:
    expiry_ms = int(cert.not_valid_after_utc.timestamp() * 1000)
    return now_ms >= expiry_ms - grace_ms


def _load_or_create_key(path: Path, bits: int) -> X.PrivateKey:
    if path.exists():
        try:
            return X.key_from_pem(path.read_bytes())
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
    key = X.generate_private_key(bits)
    write_file(path, X.key_to_pem(key), private=True)
    log.info("Created a key pair at %s", path)
    return key


def _invalid_reason(
    paths: TlsPaths,
    key: X.PrivateKey,
    identity: Identity,
    hosts: tuple[str, ...],
    node: str | None,
    clock: Clock,
    cluster_ca: bytes | None,
) -> str | None:
    """Why the certificate on disk cannot serve this daemon (`node`: the datanode UUID or OM node it
    names, X.node_of), or None when it can. `cluster_ca` is the CA
    certificate of the JOIN credential, when there is one: a certificate of an earlier CA (SCM was
    initialised again) is replaced."""
    if not paths.cert.exists() or not paths.ca.exists():
        return "no certificate yet"
    try:
        cert = X.cert_from_pem(paths.cert.read_bytes())
        ca = X.cert_from_pem(paths.ca.read_bytes())
    except ValueError as e:
        return f"the stored certificate is unreadable: {e}"
    if cert.public_key().public_numbers() != key.public_key().public_numbers():  # type: ignore[union-attr]
        return "the stored certificate is not for this key pair"
    if not X.chain_verifies(paths.cert.read_bytes(), ca):
        return "the stored certificate does not chain to the stored CA certificate"
    if cluster_ca is not None and ca != X.cert_from_pem(cluster_ca):
        return "the stored CA certificate is not the cluster's (the JOIN credential's)"
    if X.common_name(cert) != identity.common_name or set(certificate_hosts(cert)) != set(hosts):
        return f"the stored certificate names {X.common_name(cert)} {sorted(certificate_hosts(cert))}"
    if X.node_of(cert) != node:
        return f"the stored certificate names node {X.node_of(cert)}, not {node}"
    if clock.wall_ms() >= int(cert.not_valid_after_utc.timestamp() * 1000):
        return "the stored certificate has expired"
    return None


def certificate_hosts(cert: X.Certificate) -> list[str]:
    """The host names and addresses a certificate's subjectAltName lists (X.host_names)."""
    return X.host_names(cert)


def _join_credential(settings: SecurityConfig) -> JoinCredential:
    """The JOIN credential the configuration names; a file that cannot be read is an error."""
    if settings.join_credentials_file is None:
        raise ConfigError(
            "ozone.security.join.credentials.file is not set: a daemon's first certificate is requested "
            "with a JOIN credential of its own (an administrator mints one: pyozone admin cert join-token)"
        )
    return JoinCredential.read(settings.join_credentials_file)


def _sign_waiting(
    conf: OzoneConfiguration, store: TlsStore, csr: bytes, wait_s: float
) -> tuple[bytes, bytes]:
    deadline = time.monotonic() + wait_s
    address = scm_security_nodes(conf)
    while True:
        try:
            with SCMSecurityClient(address, store) as client:
                return client.sign_csr(csr)
        except SecurityError as e:
            if e.code != SecurityResult.UNAVAILABLE or time.monotonic() >= deadline:
                raise
            log.info("Waiting for SCM's certificate authority: %s", e.message)
            time.sleep(JOIN_RETRY_S)


def _check_issued(
    cert_pem: bytes,
    ca_pem: bytes,
    key: X.PrivateKey,
    identity: Identity,
    node: str | None,
    trusted_ca: bytes,
) -> None:
    """SCM's answer is a certificate for this key, name and node (a datanode's UUID, an HA OM's
    "SERVICE/NODE"), followed by its issuing sub-CA, chaining to the CA this daemon already trusts."""
    cert, ca = X.cert_from_pem(cert_pem), X.cert_from_pem(ca_pem)
    if X.cert_to_pem(ca) != X.cert_to_pem(X.cert_from_pem(trusted_ca)):
        raise SecurityError(SecurityResult.INTERNAL_ERROR, "SCM answered with another CA certificate")
    if not X.chain_verifies(cert_pem, ca):
        raise SecurityError(SecurityResult.INTERNAL_ERROR, "SCM's certificate does not chain to its CA")
    if cert.public_key().public_numbers() != key.public_key().public_numbers():  # type: ignore[union-attr]
        raise SecurityError(SecurityResult.INTERNAL_ERROR, "SCM's certificate is not for this key pair")
    if X.common_name(cert) != identity.common_name:
        raise SecurityError(
            SecurityResult.INTERNAL_ERROR, f"SCM's certificate names {X.common_name(cert)!r}, not {identity}"
        )
    if X.node_of(cert) != node:
        raise SecurityError(
            SecurityResult.INTERNAL_ERROR, f"SCM's certificate names node {X.node_of(cert)}, not {node}"
        )
    if dt.datetime.now(dt.UTC) >= cert.not_valid_after_utc:
        raise SecurityError(SecurityResult.INTERNAL_ERROR, "SCM's certificate has already expired")
