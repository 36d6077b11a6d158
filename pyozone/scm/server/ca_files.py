"""SCM's security files, and `pyozone scm --init`'s part in them.

Under SCM's metadata directory (ozone.metadata.dirs):
  ca/keys/private.pem, ca/certs/certificate.crt   the root CA (key 0600); or the external root CA of
                                                  hdds.x509.rootca.certificate.file / private.key.file
  keys/private.pem, certs/certificate.crt, certs/ca.crt   SCM's own certificate, a sub-CA of the root that
                                                  signs every other (TlsPaths.under; ca.crt: the root)
  (a JOIN credential is written where `scm --init --join-token ROLE[:HOST]=FILE` names, mode 0600)
  ca/users/<name>/                                the administrator's client certificate
  keys/secret_keys.json                           the secret keys (hdds.secret.key.file.name, 0600)
Each is made once; a second --init reuses what is there and still valid.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pyozone.common.fsutil import write_file
from pyozone.common.net import ANY, address, om_address, parse_host_port
from pyozone.common.om_ha import om_service_ids, om_service_nodes
from pyozone.common.scm_ha import local_scm_node, scm_service_nodes
from pyozone.common.tls import TlsPaths
from pyozone.common.tls_mode import service_hosts
from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import Clock, SystemClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.hdds.security.users import Administrators, UserGroups
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.authority import CaMaterial, CertificateAuthority, renewal_due
from pyozone.scm.security.certificates import CertificateStore
from pyozone.scm.security.join_tokens import JoinTokens, join_identity
from pyozone.scm.security.manager import ScmSecurity, mint_join
from pyozone.scm.security.policy import AccessPolicy
from pyozone.scm.security.secret_key_manager import ReplicatedSecretKeys, SecretKeyManager
from pyozone.scm.store import SCMMetadataStore
from pyozone.scm.store.layout import scm_db_dir, scm_metadata_dir
from pyozone.scm.store.metadata_store import TRANSACTION_INFO_KEY
from pyozone.scm.store.scm_db import open_scm_db
from pyozone.scm.store.version import SCMStorageConfig
from pyozone.security.config import SecurityConfig, admin_user
from pyozone.security.join import JoinCredential

log = logging.getLogger(__name__)

CA_DIR = "ca"
ROOT_CA_HOST = "root-ca"
"""The root CA is "scm@root-ca": its subject must differ from SCM's own certificate's ("scm@<host>"),
as Ozone's root (scm@) and SCM's (scm-sub@) do, or OpenSSL takes SCM's certificate, whose subject would
equal its issuer, for a self-signed one and refuses it."""
USERS_DIR = "users"


class SecuritySetupError(Exception):
    """SCM's security files are missing or unusable; the message names the file and the fix."""


@dataclass(frozen=True, slots=True)
class ScmSecurityFiles:
    ca: TlsPaths  # its key and certificate (ca.crt is unused: the root trusts itself)
    scm: TlsPaths
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
    node = local_scm_node(conf)
    if node is not None:  # an SCM of an HA service: its node's host first (ozone.scm.address.SERVICE.NODE)
        hosts.append(node.client_address.host)
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


def configured_service_hosts(conf: OzoneConfiguration) -> dict[CertRole, frozenset[str]]:
    """The host a JOIN credential may obtain an OM or S3 gateway certificate for: the one such a daemon names
    itself by with this configuration (its common name: the host of ozone.om.address or
    ozone.s3g.http-address, 127.0.0.1 for a wildcard; `service_hosts`)."""
    s3g = address(conf, "ozone.s3g.http-address", default_port=0)  # the port is not in the name
    return {
        CertRole.OM: frozenset(service_hosts(om_address(conf).host)[:1]),
        CertRole.S3G: frozenset(service_hosts(s3g.host)[:1]),
    }


def configured_om_nodes(conf: OzoneConfiguration) -> dict[str, str]:
    """The HA OMs a JOIN credential may obtain a certificate for ("SERVICE/NODE" -> the host its common
    name carries: that of ozone.om.address.SERVICE.NODE, as the OM names itself; `service_hosts`)."""
    return {
        X.om_node_name(node.service_id, node.node_id): service_hosts(node.rpc_address.host)[0]
        for service_id in om_service_ids(conf)
        for node in om_service_nodes(conf, service_id)
    }


def configured_scm_nodes(conf: OzoneConfiguration) -> dict[str, str]:
    """The SCMs of this SCM's service a sub-CA may be signed for (node id -> the host its certificate's
    common name carries: that of ozone.scm.address.SERVICE.NODE, `scm_hosts`' first); none for a lone SCM."""
    node = local_scm_node(conf)
    if node is None:
        return {}
    return {n.node_id: n.client_address.host for n in scm_service_nodes(conf, node.service_id)}


# ---------------------------------------------------------------------- loading
def load_root(files: ScmSecurityFiles) -> CaMaterial:
    """The root CA (its key and self-signed or external certificate). One that cannot sign SCM's sub-CA
    (X.signing_problem: not a CA, no keyCertSign, path length 0) is refused: every leaf the sub-CA issued
    would fail OpenSSL's chain check."""
    cert_path, key_path = files.external_root or (files.ca.cert, files.ca.key)
    if not cert_path.exists() or not key_path.exists():
        raise SecuritySetupError(
            f"SCM has no certificate authority ({cert_path} missing): run `pyozone scm --init` with "
            "ozone.security.enabled=true"
        )
    try:
        cert = X.cert_from_pem(cert_path.read_bytes())
        problem = X.signing_problem(cert, 1)
        if problem is None:
            return CaMaterial(X.key_from_pem(key_path.read_bytes()), cert)
    except (OSError, ValueError) as e:
        raise SecuritySetupError(f"the root CA ({cert_path}, {key_path}) is unusable: {e}") from None
    raise SecuritySetupError(
        f"the root CA certificate {cert_path} cannot sign SCM's sub-CA, which signs every other certificate: "
        f"{problem}; set hdds.x509.rootca.certificate.file and hdds.x509.rootca.private.key.file to a CA "
        "with keyCertSign and no path length (or one of at least 1)"
    )


def load_ca(files: ScmSecurityFiles, service: bool = False) -> CaMaterial:
    """The CA SCM issues with: its own certificate, a sub-CA signed by the root, with its key, and the root
    CA's key (Ozone's layout: HASecurityUtils, DefaultCAServer). A data directory made before SCM had a
    sub-CA (its certificate a leaf the root signed) is refused, naming the fix: `scm --init` again makes the
    sub-CA; the certificates the root signed before stay valid (the root is still every holder's ca.crt).
    An SCM of an HA service (`service`) other than the primordial holds the root's certificate alone (its
    ca.crt, from `scm --bootstrap`): it issues with its sub-CA and signs no other SCM's."""
    paths = files.scm
    root_held = files.external_root is not None or files.ca.cert.exists()
    root_key: X.PrivateKey | None = None
    if service and not root_held and paths.ca.exists():
        try:
            root_cert = X.cert_from_pem(paths.ca.read_bytes())
        except (OSError, ValueError) as e:
            raise SecuritySetupError(
                f"SCM's root CA certificate {paths.ca} is unusable ({e}): run `pyozone scm --bootstrap` again"
            ) from None
    else:
        loaded = load_root(files)
        root_cert, root_key = loaded.cert, loaded.key
    if not paths.cert.exists() or not paths.key.exists():
        raise SecuritySetupError(
            f"SCM has no certificate ({paths.cert} missing): run `pyozone scm --init` with "
            "ozone.security.enabled=true"
        )
    try:
        key, cert = X.key_from_pem(paths.key.read_bytes()), X.cert_from_pem(paths.cert.read_bytes())
    except (OSError, ValueError) as e:
        raise SecuritySetupError(f"SCM's certificate ({paths.cert}, {paths.key}) is unusable: {e}") from None
    if not X.is_ca(cert):
        raise SecuritySetupError(
            f"SCM's certificate {paths.cert} is not a sub-CA: it was made before SCM signed with a sub-CA of "
            "its own under the root CA. Run `pyozone scm --init` again (SCM stopped): it issues SCM's sub-CA "
            "and keeps the root CA, so every certificate issued before stays valid"
        )
    try:
        return CaMaterial(key, cert, root_cert, root_key)
    except ValueError as e:
        raise SecuritySetupError(
            f"SCM's certificate {paths.cert}: {e}; run `pyozone scm --init` again"
        ) from None


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
    known_datanode: Callable[[str], bool],
    leads: Callable[[], bool] | None = None,
) -> ScmSecurity:
    """The daemon's ScmSecurity over the CA on disk and the secret key file; `known_datanode`: whether SCM
    saw a datanode UUID (a JOIN credential is for a new one only); `leads`: in an SCM HA service, whether
    this SCM is the ready leader (the secret keys are then scm.db's replicated record, not the file)."""
    certs = CertificateStore(store)
    ca = CertificateAuthority(
        load_ca(files, service=leads is not None),
        certs,
        clock,
        storage.cluster_id,
        storage.scm_uuid,
        settings.default_duration_ms,
    )
    if leads is None:
        key_file = SecretKeyFile(files.secret_keys)
        secret_keys = SecretKeyManager(settings, clock, key_file.load(), key_file.save)
    else:
        replicated = ReplicatedSecretKeys(store)
        secret_keys = SecretKeyManager(settings, clock, (), replicated.save, replicated.load)
    policy = AccessPolicy(Administrators.from_conf(conf), UserGroups.from_conf(conf))
    tokens = JoinTokens(
        store,
        certs,
        configured_service_hosts(conf),
        known_datanode,
        configured_om_nodes(conf),
        configured_scm_nodes(conf),
    )
    return ScmSecurity(settings, ca, secret_keys, policy, tokens, leads)


def renew_scm_certificate(
    ca: CertificateAuthority,
    paths: TlsPaths,
    hosts: tuple[str, ...],
    grace_ms: int,
    lifetime_ms: int,
    service: bool = False,
) -> X.Certificate | None:
    """SCM renews its own certificate, its sub-CA, with the root CA's key inside the grace period (or when it
    was issued before the CA added role-qualified names, X.role_host_name, which the daemons dialling SCM
    verify): same key pair and subject, so every certificate the sub-CA issued still chains
    (docs/security.md); valid `lifetime_ms`, hdds.x509.max.duration as at `scm --init` (_issue_sub_ca), never
    past the root. The CA issues with it from then on; the TlsStore reads the new file at the next handshake.
    The new certificate, or None when not due. In an SCM HA service (`service`) it is signed outside the Raft
    log (an out-of-log serial; the SCM records it when it next leads), and only by the SCM holding the root's
    key: another logs that it is due and keeps its own (valid hdds.x509.max.duration from bootstrap)."""
    material = ca.material
    current = X.cert_from_pem(paths.cert.read_bytes())
    identity = X.identity_of(current)
    named = X.role_host_name(identity.role, identity.host) in X.dns_names(current)
    if named and not renewal_due(current, ca.clock.wall_ms(), grace_ms):
        return None
    if material.root is None or material.root_key is None:
        if service:
            log.warning(
                "SCM's sub-CA %s (expiring %s) is due for renewal, which needs the root CA's key (on the "
                "primordial SCM): stop this SCM, empty its metadata directory and run scm --bootstrap again",
                paths.cert,
                current.not_valid_after_utc.isoformat(),
            )
            return None
        raise SecuritySetupError("SCM's sub-CA is renewed with the root CA's key, which this SCM lacks")
    cert = X.sub_ca_certificate(
        material.key,
        material.root_key,
        material.root,
        identity,
        hosts,
        ca.cluster_id,
        ca.scm_id,
        dt.timedelta(milliseconds=lifetime_ms),
        ca.certs.out_of_log_serial() if service else ca.certs.next_serial(),
        dt.datetime.fromtimestamp(ca.clock.wall_ms() / 1000, dt.UTC),
    )
    if not service:
        ca.certs.add(cert)
    ca.material = material.with_cert(cert)
    write_file(paths.ca, material.pem)
    write_file(paths.cert, X.cert_to_pem(cert))
    return cert


# ---------------------------------------------------------------------- scm --init
@dataclass(frozen=True, slots=True)
class InitReport:
    """What `scm --init` made or reused, for its output."""

    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class JoinRequest:
    """`scm --init --join-token ROLE[:HOST][:SERVICE/NODE]=FILE`: mint a JOIN credential for one daemon into
    FILE (an HA OM's for its node: `om:omservice/om1=FILE`; a host never holds "/"); `scm:NODE=FILE`: for
    the SCM node NODE of this SCM's service, which `scm --bootstrap` presents for its sub-CA."""

    role: CertRole
    name: str
    path: Path
    om_node: str = ""
    scm_node: str = ""

    @classmethod
    def parse(cls, text: str) -> JoinRequest:
        spec, eq, path = text.partition("=")
        role_name, _, name = spec.partition(":")
        if role_name == CertRole.SCM.value:
            if not eq or not path or not name or ":" in name:
                raise ValueError(f"--join-token {text!r}: an SCM's is scm:NODE=FILE, NODE its node id")
            return cls(CertRole.SCM, "", Path(path), scm_node=name)
        om_node = ""
        if "/" in name:
            name, _, om_node = name.rpartition(":")
        roles = {r.value: r for r in (CertRole.OM, CertRole.DATANODE, CertRole.S3G)}
        if not eq or not path or role_name not in roles:
            raise ValueError(
                f"--join-token {text!r}: expected ROLE[:HOST][:SERVICE/NODE]=FILE, ROLE one of om, dn, s3g "
                "(or scm:NODE=FILE)"
            )
        if om_node and roles[role_name] is not CertRole.OM:
            raise ValueError(f"--join-token {text!r}: only an OM's JOIN credential names an OM node")
        return cls(roles[role_name], name, Path(path), om_node)


def init_security(
    conf: OzoneConfiguration, storage: SCMStorageConfig, joins: tuple[JoinRequest, ...] = ()
) -> InitReport:
    """Creates (or reuses) the root CA, SCM's certificate and the administrator's client certificate, and
    mints the JOIN credentials `joins` asks for (one per daemon). scm.db is opened only when a certificate
    has to be issued, so a second --init beside a running SCM changes nothing."""
    settings = SecurityConfig.from_conf(conf)
    files = ScmSecurityFiles.from_conf(conf, settings)
    clock = SystemClock()
    hosts = scm_hosts(conf)
    admin = admin_user(conf)
    lines: list[str] = []

    ca_exists = files.external_root is not None or (files.ca.cert.exists() and files.ca.key.exists())
    root = load_root(files) if ca_exists else None
    scm_ok = root is not None and _valid(files.scm, root.cert, clock, sub_ca=True)
    admin_paths = files.user(admin)
    admin_ok = root is not None and _valid(admin_paths, root.cert, clock)
    if root is not None and scm_ok and admin_ok and not joins:
        lines.append(f"Reusing the root CA certificate {_ca_cert_path(files)}")
    else:
        with _open_store(conf) as store:
            service = _check_service_genesis(conf, store, joins)
            certs = CertificateStore(store)
            if root is None:
                root = _create_root(files, certs, storage, settings, clock)
                lines.append(
                    f"Root CA certificate created: {files.ca.cert} (serial {root.cert.serial_number}), "
                    f"private key {files.ca.key} (mode 0600)"
                )
            else:
                lines.append(f"Reusing the root CA certificate {_ca_cert_path(files)}")
            bits = settings.key_len
            if not scm_ok:
                cert = _issue_sub_ca(root, certs, files.scm, hosts, storage, settings, clock)
                lines.append(
                    f"SCM certificate created: {files.scm.cert} (serial {cert.serial_number}), a sub-CA "
                    "of the root CA: it signs every other certificate"
                )
            ca = CertificateAuthority(
                load_ca(files),
                certs,
                clock,
                storage.cluster_id,
                storage.scm_uuid,
                settings.default_duration_ms,
            )
            if not admin_ok:
                cert = _issue_to(ca, admin_paths, Identity(CertRole.USER, admin), (), bits)
                lines.append(
                    f"Client certificate of administrator {admin} created: {admin_paths.cert} "
                    f"(serial {cert.serial_number})"
                )
            # Only minting reads the token rules' other inputs: nothing here is checked against them.
            tokens = JoinTokens(store, certs, {}, lambda _: False)
            expiry = dt.timedelta(milliseconds=settings.join_token_expiry_ms)
            for join in joins:
                cert = _mint_join_file(ca, tokens, join, expiry, bits)
                node = f" (node {join.om_node})" if join.om_node else ""
                lines.append(
                    f"JOIN credential {cert.serial_number} for one {join.role.name}"
                    f"{f' on {join.name}' if join.name else ''}{node}: {join.path} (mode 0600), valid until "
                    f"{cert.not_valid_after_utc.isoformat()}"
                )
            if service:
                store.transaction_infos.put(TRANSACTION_INFO_KEY, GENESIS)
    if scm_ok:
        lines.append(f"Reusing the SCM certificate {files.scm.cert}")
    if not joins:
        lines.append(
            "A new OM, datanode or S3 gateway joins with a JOIN credential of its own "
            "(ozone.security.join.credentials.file): pyozone admin cert join-token --role om|dn|s3g"
        )
    lines.append(
        f"Administrator {admin}: OZONE_CLIENT_CERT={admin_paths.cert} OZONE_CLIENT_KEY={admin_paths.key} "
        f"OZONE_CA_CERT={admin_paths.ca}"
    )
    return InitReport(tuple(lines))


GENESIS = "0#0"
"""The #TRANSACTIONINFO `scm --init` gives the primordial SCM's scm.db in an HA service: what the CA wrote
there (the root, its sub-CA, the administrator's certificate, the JOIN credentials, the CertificateId
sequence) is the state before the Raft log's first entry, which every other SCM copies at `scm
--bootstrap` (the primordial's /dbCheckpoint), so every SCM's scm.db starts from the same records."""


def _check_service_genesis(
    conf: OzoneConfiguration, store: SCMMetadataStore, joins: tuple[JoinRequest, ...]
) -> bool:
    """Whether this is the primordial SCM of an HA service (its writes are the genesis, GENESIS). Refused:
    when its scm.db already applied log entries (what --init would write now would be in no Raft log: a
    running service mints with `admin cert join-token`), and an SCM JOIN credential for a node the service
    does not name besides this one."""
    node = local_scm_node(conf)
    for join in joins:
        if join.role is not CertRole.SCM:
            continue
        others = (
            () if node is None else [n.node_id for n in scm_service_nodes(conf, node.service_id) if n != node]
        )
        if join.scm_node not in others:
            raise SecuritySetupError(
                f"--join-token scm:{join.scm_node}: the SCM service names no other SCM {join.scm_node} "
                f"(ozone.scm.service.ids, ozone.scm.nodes.SERVICE: {', '.join(others) or 'none'})"
            )
    if node is None:
        return False
    applied = store.transaction_infos.get(TRANSACTION_INFO_KEY)
    if applied not in (None, GENESIS):
        raise SecuritySetupError(
            f"SCM {node.node_id} of service {node.service_id} has applied its Raft log up to {applied}: "
            "scm --init writes no more to its scm.db (the other SCMs would not have it); mint JOIN "
            "credentials with `pyozone admin cert join-token` against the running service"
        )
    return True


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


def _valid(paths: TlsPaths, root: X.Certificate, clock: Clock, sub_ca: bool = False) -> bool:
    """A key and a certificate for it that chains to this root CA (through the sub-CA its file holds), not
    expired, with the root CA certificate beside; `sub_ca`: SCM's own, itself a sub-CA the root signed."""
    try:
        key = X.key_from_pem(paths.key.read_bytes())
        chain = paths.cert.read_bytes()
        cert = X.cert_from_pem(chain)
        ca = X.cert_from_pem(paths.ca.read_bytes())
    except (OSError, ValueError):
        return False
    return (
        cert.public_key().public_numbers() == key.public_key().public_numbers()  # type: ignore[union-attr]
        and X.chain_verifies(chain, root)
        and (not sub_ca or (X.is_ca(cert) and X.is_signed_by(cert, root)))
        and ca == root
        and _now(clock) < cert.not_valid_after_utc
    )


def _issue_sub_ca(
    root: CaMaterial,
    certs: CertificateStore,
    paths: TlsPaths,
    hosts: tuple[str, ...],
    storage: SCMStorageConfig,
    settings: SecurityConfig,
    clock: Clock,
) -> X.Certificate:
    """SCM's own certificate: a sub-CA the root signs (CN scm@HOST, its hosts), with a new key pair, valid
    hdds.x509.max.duration as Ozone's DefaultCAServer.expiryFor gives a sub-CA ("similar to self-signed
    root certificate"), never past the root: the leaves it signs (hdds.x509.default.duration, capped at
    their issuer's expiry) keep their whole lifetime."""
    key = X.generate_private_key(settings.key_len)
    cert = X.sub_ca_certificate(
        key,
        root.key,
        root.cert,
        Identity(CertRole.SCM, CertRole.SCM.value, hosts[0]),
        hosts,
        storage.cluster_id,
        storage.scm_uuid,
        dt.timedelta(milliseconds=settings.max_duration_ms),
        certs.next_serial(),
        _now(clock),
    )
    write_file(paths.key, X.key_to_pem(key), private=True)
    write_file(paths.ca, root.pem)
    write_file(paths.cert, X.cert_to_pem(cert))
    certs.add(cert)
    return cert


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
    write_file(paths.cert, ca.file_pem(cert))
    return cert


def _mint_join_file(
    ca: CertificateAuthority, tokens: JoinTokens, join: JoinRequest, lifetime: dt.timedelta, bits: int
) -> X.Certificate:
    key = X.generate_private_key(bits)
    csr = X.build_csr(key, join_identity(join.role))
    cert = mint_join(
        ca, tokens, join.role, join.name, csr, lifetime, om_node=join.om_node, scm_node=join.scm_node
    )
    JoinCredential(X.key_to_pem(key), ca.file_pem(cert), ca.material.pem).write(join.path)
    return cert
