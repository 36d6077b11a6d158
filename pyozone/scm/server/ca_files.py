"""SCM's security files, and `pyozone scm --init`'s part in them.

Under SCM's metadata directory (ozone.metadata.dirs):
  ca/keys/private.pem, ca/certs/certificate.crt   the root CA (key 0600); or the external root CA of
                                                  hdds.x509.rootca.certificate.file / private.key.file
  keys/private.pem, certs/certificate.crt, certs/ca.crt   SCM's own certificate (TlsPaths.under)
  ca/join.pem                                     the JOIN credential (0600) daemons make their first CSR with
  ca/users/<name>/                                the administrator's client certificate
  keys/secret_keys.json                           the secret keys (hdds.secret.key.file.name, 0600)
Each is made once; a second --init reuses what is there and still valid.
"""

from __future__ import annotations

import datetime as dt
import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pyozone.common.fsutil import write_file
from pyozone.common.net import ANY, address, parse_host_port
from pyozone.common.tls import TlsPaths
from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import Clock, SystemClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.hdds.security.users import Administrators, UserGroups
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.authority import CaMaterial, CertificateAuthority, renewal_due
from pyozone.scm.security.certificates import CertificateStore
from pyozone.scm.security.manager import ScmSecurity
from pyozone.scm.security.policy import AccessPolicy
from pyozone.scm.security.secret_key_manager import SecretKeyManager
from pyozone.scm.store import SCMMetadataStore
from pyozone.scm.store.layout import scm_db_dir, scm_metadata_dir
from pyozone.scm.store.scm_db import open_scm_db
from pyozone.scm.store.version import SCMStorageConfig
from pyozone.security.config import SecurityConfig, admin_user
from pyozone.security.join import JoinCredential

CA_DIR = "ca"
ROOT_CA_HOST = "root-ca"
"""The root CA is "scm@root-ca": its subject must differ from SCM's own certificate's ("scm@<host>"),
as Ozone's root (scm@) and SCM's (scm-sub@) do, or OpenSSL takes SCM's certificate, whose subject would
equal its issuer, for a self-signed one and refuses it."""
JOIN_FILE = "join.pem"
USERS_DIR = "users"


class SecuritySetupError(Exception):
    """SCM's security files are missing or unusable; the message names the file and the fix."""


@dataclass(frozen=True, slots=True)
class ScmSecurityFiles:
    ca: TlsPaths  # its key and certificate (ca.crt is unused: the root trusts itself)
    scm: TlsPaths
    join: Path
    users: Path
    secret_keys: Path
    external_root: tuple[Path, Path] | None  # (certificate, private key)

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration, settings: SecurityConfig) -> ScmSecurityFiles:
        metadata = scm_metadata_dir(conf)
        external = None
        if settings.rootca_cert_file is not None and settings.rootca_key_file is not None:
            external = (settings.rootca_cert_file, settings.rootca_key_file)
        return cls(
            ca=TlsPaths.under(metadata / CA_DIR, conf),
            scm=TlsPaths.under(metadata, conf),
            join=metadata / CA_DIR / JOIN_FILE,
            users=metadata / CA_DIR / USERS_DIR,
            secret_keys=metadata / conf.get("hdds.key.dir.name") / settings.secret_key_file_name,
            external_root=external,
        )

    def user(self, name: str) -> TlsPaths:
        directory = self.users / X.check_user_name(name)
        return TlsPaths(directory / "private.pem", directory / "certificate.crt", directory / "ca.crt")


# ---------------------------------------------------------------------- names
def scm_hosts(conf: OzoneConfiguration) -> tuple[str, ...]:
    """The names SCM's certificate holds: its configured hosts, this machine's names, and loopback, so any
    address a client dials it by verifies. The first names the certificate (scm@host)."""
    hosts: list[str] = []
    for raw in str(conf.get("ozone.scm.names") or "").split(","):
        if raw.strip():
            hosts.append(parse_host_port(raw, 0, "ozone.scm.names").host)
    for key, port_key in (
        ("ozone.scm.security.service.address", "ozone.scm.security.service.port"),
        ("ozone.scm.client.address", "ozone.scm.client.port"),
        ("ozone.scm.datanode.address", "ozone.scm.datanode.port"),
        ("ozone.scm.block.client.address", "ozone.scm.block.client.port"),
    ):
        hosts.append(address(conf, key, port_key).host)
    hosts += [socket.gethostname(), socket.getfqdn(), "127.0.0.1", "localhost"]
    return tuple(dict.fromkeys(h for h in hosts if h and h != ANY))


# ---------------------------------------------------------------------- loading
def load_ca(files: ScmSecurityFiles) -> CaMaterial:
    cert_path, key_path = files.external_root or (files.ca.cert, files.ca.key)
    if not cert_path.exists() or not key_path.exists():
        raise SecuritySetupError(
            f"SCM has no certificate authority ({cert_path} missing): run `pyozone scm --init` with "
            "ozone.security.enabled=true"
        )
    try:
        return CaMaterial(X.key_from_pem(key_path.read_bytes()), X.cert_from_pem(cert_path.read_bytes()))
    except (OSError, ValueError) as e:
        raise SecuritySetupError(f"the root CA ({cert_path}, {key_path}) is unusable: {e}") from None


class SecretKeyFile:
    """The secret keys as a JSON list (Ozone's field names), written atomically at mode 0600."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> list[ManagedSecretKey]:
        if not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_bytes())
            if not isinstance(data, list):
                raise ValueError("not a JSON list")
            return [ManagedSecretKey.from_json(item) for item in data]
        except (OSError, ValueError) as e:
            raise SecuritySetupError(f"the secret key file {self.path} is unusable: {e}") from None

    def save(self, keys: tuple[ManagedSecretKey, ...]) -> None:
        write_file(self.path, json.dumps([k.to_json() for k in keys], indent=1).encode(), private=True)


def build_security(
    conf: OzoneConfiguration,
    settings: SecurityConfig,
    files: ScmSecurityFiles,
    storage: SCMStorageConfig,
    store: SCMMetadataStore,
    clock: Clock,
) -> ScmSecurity:
    """The daemon's ScmSecurity over the CA on disk and the secret key file."""
    ca = CertificateAuthority(
        load_ca(files),
        CertificateStore(store),
        clock,
        storage.cluster_id,
        storage.scm_uuid,
        settings.default_duration_ms,
    )
    if not files.scm.cert.exists() or not files.scm.key.exists():
        raise SecuritySetupError(
            f"SCM has no certificate ({files.scm.cert} missing): run `pyozone scm --init` with "
            "ozone.security.enabled=true"
        )
    key_file = SecretKeyFile(files.secret_keys)
    secret_keys = SecretKeyManager(settings, clock, key_file.load(), key_file.save)
    policy = AccessPolicy(Administrators.from_conf(conf), UserGroups.from_conf(conf))
    return ScmSecurity(settings, ca, secret_keys, policy)


def renew_scm_certificate(
    ca: CertificateAuthority, paths: TlsPaths, hosts: tuple[str, ...], grace_ms: int
) -> X.Certificate | None:
    """SCM renews its own certificate (signs its own CSR, same key pair) inside the grace period; the
    TlsStore reads the new file at the next handshake. The new certificate, or None when not due."""
    current = X.cert_from_pem(paths.cert.read_bytes())
    if not renewal_due(current, ca.clock.wall_ms(), grace_ms):
        return None
    key = X.key_from_pem(paths.key.read_bytes())
    cert = ca.issue(X.build_csr(key, X.identity_of(current), hosts))
    write_file(paths.ca, ca.material.pem)
    write_file(paths.cert, X.cert_to_pem(cert))
    return cert


# ---------------------------------------------------------------------- scm --init
@dataclass(frozen=True, slots=True)
class InitReport:
    """What `scm --init` made or reused, for its output."""

    lines: tuple[str, ...]


def init_security(conf: OzoneConfiguration, storage: SCMStorageConfig) -> InitReport:
    """Creates (or reuses) the root CA, SCM's certificate, the JOIN credential and the administrator's
    client certificate. scm.db is opened only when a certificate has to be issued, so a second --init
    beside a running SCM changes nothing."""
    settings = SecurityConfig.from_conf(conf)
    files = ScmSecurityFiles.from_conf(conf, settings)
    clock = SystemClock()
    hosts = scm_hosts(conf)
    admin = admin_user(conf)
    max_lifetime = dt.timedelta(milliseconds=settings.max_duration_ms)
    lines: list[str] = []

    ca_exists = files.external_root is not None or (files.ca.cert.exists() and files.ca.key.exists())
    material = load_ca(files) if ca_exists else None
    scm_ok = material is not None and _valid(files.scm, material, clock)
    join_ok = material is not None and _valid_join(files.join, material, clock)
    admin_paths = files.user(admin)
    admin_ok = material is not None and _valid(admin_paths, material, clock)
    if material is not None and scm_ok and join_ok and admin_ok:
        lines.append(f"Reusing the root CA certificate {_ca_cert_path(files)}")
    else:
        with _open_store(conf) as store:
            certs = CertificateStore(store)
            if material is None:
                material = _create_root(files, certs, storage, settings, clock)
                lines.append(
                    f"Root CA certificate created: {files.ca.cert} (serial {material.cert.serial_number}), "
                    f"private key {files.ca.key} (mode 0600)"
                )
            else:
                lines.append(f"Reusing the root CA certificate {_ca_cert_path(files)}")
            ca = CertificateAuthority(
                material, certs, clock, storage.cluster_id, storage.scm_uuid, settings.default_duration_ms
            )
            bits = settings.key_len
            if not scm_ok:
                scm = Identity(CertRole.SCM, CertRole.SCM.value, hosts[0])
                cert = _issue_to(ca, files.scm, scm, hosts, bits)
                lines.append(f"SCM certificate created: {files.scm.cert} (serial {cert.serial_number})")
            if not join_ok:
                _issue_join(ca, files.join, hosts[0], max_lifetime, bits)
            if not admin_ok:
                cert = _issue_to(ca, admin_paths, Identity(CertRole.USER, admin), (), bits)
                lines.append(
                    f"Client certificate of administrator {admin} created: {admin_paths.cert} "
                    f"(serial {cert.serial_number})"
                )
    if scm_ok:
        lines.append(f"Reusing the SCM certificate {files.scm.cert}")
    lines.append(
        f"JOIN credential: {files.join} (mode 0600); every OM, datanode and S3 gateway names it in "
        "ozone.security.join.credentials.file"
    )
    lines.append(
        f"Administrator {admin}: OZONE_CLIENT_CERT={admin_paths.cert} OZONE_CLIENT_KEY={admin_paths.key} "
        f"OZONE_CA_CERT={admin_paths.ca}"
    )
    return InitReport(tuple(lines))


def _ca_cert_path(files: ScmSecurityFiles) -> Path:
    return files.external_root[0] if files.external_root else files.ca.cert


@contextmanager
def _open_store(conf: OzoneConfiguration) -> Iterator[SCMMetadataStore]:
    store = open_scm_db(scm_db_dir(conf))
    try:
        yield store
    finally:
        store.close()


def _now(clock: Clock) -> dt.datetime:
    return dt.datetime.fromtimestamp(clock.wall_ms() / 1000, dt.UTC)


def _valid(paths: TlsPaths, material: CaMaterial, clock: Clock) -> bool:
    """A key and a certificate for it, signed by this CA, not expired, with the CA certificate beside."""
    try:
        key = X.key_from_pem(paths.key.read_bytes())
        cert = X.cert_from_pem(paths.cert.read_bytes())
        ca = X.cert_from_pem(paths.ca.read_bytes())
    except (OSError, ValueError):
        return False
    return (
        cert.public_key().public_numbers() == key.public_key().public_numbers()  # type: ignore[union-attr]
        and X.is_signed_by(cert, material.cert)
        and ca == material.cert
        and _now(clock) < cert.not_valid_after_utc
    )


def _valid_join(path: Path, material: CaMaterial, clock: Clock) -> bool:
    try:
        join = JoinCredential.read(path)
    except ValueError:
        return False
    cert = X.cert_from_pem(join.cert_pem)
    return X.cert_from_pem(join.ca_pem) == material.cert and _now(clock) < cert.not_valid_after_utc


def _create_root(
    files: ScmSecurityFiles,
    certs: CertificateStore,
    storage: SCMStorageConfig,
    settings: SecurityConfig,
    clock: Clock,
) -> CaMaterial:
    """The root CA: hdds.key.len bits, valid hdds.x509.max.duration."""
    key = X.generate_private_key(settings.key_len)
    lifetime = dt.timedelta(milliseconds=settings.max_duration_ms)
    cert = X.self_signed_root(
        key, storage.cluster_id, storage.scm_uuid, ROOT_CA_HOST, lifetime, certs.next_serial(), _now(clock)
    )
    write_file(files.ca.key, X.key_to_pem(key), private=True)
    write_file(files.ca.cert, X.cert_to_pem(cert))
    certs.add(cert)
    return CaMaterial(key, cert)


def _issue_to(
    ca: CertificateAuthority, paths: TlsPaths, identity: Identity, hosts: tuple[str, ...], bits: int
) -> X.Certificate:
    key = X.generate_private_key(bits)
    cert = ca.issue(X.build_csr(key, identity, hosts))
    write_file(paths.key, X.key_to_pem(key), private=True)
    write_file(paths.ca, ca.material.pem)
    write_file(paths.cert, X.cert_to_pem(cert))
    return cert


def _issue_join(ca: CertificateAuthority, path: Path, host: str, lifetime: dt.timedelta, bits: int) -> None:
    """The JOIN credential lives as long as the CA may make it (hdds.x509.max.duration): daemons join
    at any time."""
    key = X.generate_private_key(bits)
    cert = ca.issue(X.build_csr(key, Identity(CertRole.JOIN, CertRole.JOIN.value, host)), lifetime)
    JoinCredential(X.key_to_pem(key), X.cert_to_pem(cert), ca.material.pem).write(path)
