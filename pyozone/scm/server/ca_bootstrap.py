"""`scm --bootstrap` of a secure SCM HA service: this SCM's sub-CA from the primordial SCM's root, and the
genesis of its scm.db (Ozone's HASecurityUtils.initializeSecurity for a non-primordial SCM).

1. The certificate: a new key pair and a CSR for `scm@HOST` (its hosts, `scm_hosts`), sent to the primordial
   SCM's security port (`ozone.scm.primordial.node.id`, the holder of the root CA's key) as Ozone's
   getSCMCertificate, over mutual TLS with the JOIN credential `scm --init --join-token scm:NODE=FILE`
   minted for this node (`ozone.security.join.credentials.file`; Ozone's SCM presents its Kerberos
   identity). The answer must be a sub-CA for this key, of this cluster, chaining to the credential's root:
   a primordial of another CA fails the handshake, and this SCM already holding another CA's root or
   another cluster's certificate is refused, each naming what differs.
2. The genesis: the primordial's scm.db at `/dbCheckpoint` (what `scm --init` wrote there — the root, its
   sub-CA, the administrator's certificate, the JOIN credentials, the CertificateId sequence — and what its
   log applied since), fetched with the new certificate and swapped in as this SCM's scm.db; its Raft log
   starts after the checkpoint's #TRANSACTIONINFO, as after an installed snapshot, so the leader sends it
   the entries that follow.
Each step is skipped when done, so a bootstrap cut short is run again.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from pyozone.common.fsutil import write_file
from pyozone.common.net import HostPort
from pyozone.common.scm_ha import ScmNodeDetails, scm_raft_group_id
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.config import OzoneConfiguration
from pyozone.framework.scm_security import SCMSecurityClient
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.ratis.messages import TermIndex
from pyozone.ratis_server.db_checkpoint import CHECKPOINT_PATH, CheckpointError, fetch_and_install
from pyozone.ratis_server.raft_meta import RaftMeta, write_meta
from pyozone.ratis_server.segmented_log import CURRENT_DIR
from pyozone.scm.server.ca_files import ScmSecurityFiles, SecuritySetupError, scm_hosts
from pyozone.scm.server.ha import scm_ratis_dir
from pyozone.scm.store import scm_db
from pyozone.scm.store.layout import scm_db_dir
from pyozone.scm.store.metadata_store import TRANSACTION_INFO_KEY
from pyozone.scm.store.version import SCMStorageConfig
from pyozone.security.config import SecurityConfig
from pyozone.security.join import JoinCredential


@dataclass(frozen=True, slots=True)
class BootstrapReport:
    lines: tuple[str, ...]


def bootstrap_security(
    conf: OzoneConfiguration, storage: SCMStorageConfig, node: ScmNodeDetails, primordial: ScmNodeDetails
) -> BootstrapReport:
    """This SCM's sub-CA certificate and its scm.db's genesis from the `primordial` SCM (module doc)."""
    settings = SecurityConfig.from_conf(conf)
    files = ScmSecurityFiles.from_conf(conf, settings)
    lines = []
    if _held_certificate(files.scm, storage) is None:
        join = _join_credential(settings)
        cert = _obtain_certificate(files.scm, join, storage, node, primordial, scm_hosts(conf))
        lines.append(
            f"SCM certificate created: {files.scm.cert} (serial {cert.serial_number}), a sub-CA of the root "
            f"CA signed by the primordial SCM {primordial.node_id}: it signs what this SCM issues"
        )
    else:
        lines.append(f"Reusing the SCM certificate {files.scm.cert}")
    lines.extend(_copy_genesis(conf, files.scm if settings.mtls else None, storage, primordial))
    return BootstrapReport(tuple(lines))


def _held_certificate(paths: TlsPaths, storage: SCMStorageConfig) -> X.Certificate | None:
    """This SCM's sub-CA from an earlier bootstrap, None when there is none; refused when it is not a sub-CA
    of this cluster for the key beside it chaining to the root beside it."""
    if not paths.cert.exists():
        return None
    try:
        key, cert = X.key_from_pem(paths.key.read_bytes()), X.cert_from_pem(paths.cert.read_bytes())
        root = X.cert_from_pem(paths.ca.read_bytes())
    except (OSError, ValueError) as e:
        raise SecuritySetupError(f"SCM's certificate ({paths.cert}) is unusable: {e}") from None
    if cert.public_key().public_numbers() != key.public_key().public_numbers():  # type: ignore[union-attr]
        raise SecuritySetupError(f"SCM's certificate {paths.cert} is not for its key {paths.key}")
    if not (X.is_ca(cert) and X.verifies_to(cert, (), root)):
        raise SecuritySetupError(
            f"SCM's certificate {paths.cert} is not a sub-CA of the root CA {paths.ca}: remove both and "
            "bootstrap again"
        )
    if X.cluster_of(cert) != storage.cluster_id:
        raise SecuritySetupError(
            f"SCM's certificate {paths.cert} is of cluster {X.cluster_of(cert)}, this SCM's is "
            f"{storage.cluster_id}: remove it and bootstrap again"
        )
    return cert


@contextmanager
def join_tls(join: JoinCredential) -> Iterator[TlsStore]:
    """TLS material presenting the JOIN credential (its files in a private temporary directory)."""
    with tempfile.TemporaryDirectory(prefix="pyozone-join-") as tmp:
        paths = TlsPaths(Path(tmp) / "join.key", Path(tmp) / "join.crt", Path(tmp) / "ca.crt")
        write_file(paths.key, join.key_pem, private=True)
        write_file(paths.cert, join.cert_pem)
        write_file(paths.ca, join.ca_pem)
        yield TlsStore(paths)


def bootstrap_tls(conf: OzoneConfiguration) -> AbstractContextManager[TlsStore | None]:
    """What a bootstrapping SCM presents to the running SCMs' ports before it has a certificate of its own
    (getScmInfo: its cluster id): with hdds.grpc.tls.enabled its JOIN credential, or its certificate from an
    earlier run; None without mutual TLS."""
    settings = SecurityConfig.from_conf(conf)
    if not settings.mtls:
        return nullcontext(None)
    own = ScmSecurityFiles.from_conf(conf, settings).scm
    if own.cert.exists() and own.key.exists() and own.ca.exists():
        return nullcontext(TlsStore(own))
    return join_tls(_join_credential(settings))


def _join_credential(settings: SecurityConfig) -> JoinCredential:
    path = settings.join_credentials_file
    if path is None:
        raise SecuritySetupError(
            "ozone.security.join.credentials.file is not set: a secure SCM bootstraps with a JOIN credential "
            "minted for its node on the primordial SCM (scm --init --join-token scm:NODE=FILE)"
        )
    try:
        join = JoinCredential.read(path)
    except ValueError as e:
        raise SecuritySetupError(str(e)) from None
    issued_for = X.identity_of(X.cert_from_pem(join.cert_pem)).host
    if issued_for != CertRole.SCM.value:
        raise SecuritySetupError(
            f"{path} is a JOIN credential for a {issued_for} daemon, not an SCM (scm --init --join-token "
            "scm:NODE=FILE)"
        )
    return join


def _obtain_certificate(
    paths: TlsPaths,
    join: JoinCredential,
    storage: SCMStorageConfig,
    node: ScmNodeDetails,
    primordial: ScmNodeDetails,
    hosts: tuple[str, ...],
) -> X.Certificate:
    root = X.cert_from_pem(join.ca_pem)
    if paths.ca.exists() and paths.ca.read_bytes() and X.cert_from_pem(paths.ca.read_bytes()) != root:
        raise SecuritySetupError(
            f"this SCM holds the root CA certificate {paths.ca} of another CA than its JOIN credential's "
            f"({root.subject.rfc4514_string()}): it belongs to another cluster; remove it and bootstrap again"
        )
    key = X.generate_private_key(root.public_key().key_size)  # type: ignore[union-attr]
    csr = X.build_csr(key, Identity(CertRole.SCM, CertRole.SCM.value, hosts[0]), hosts)
    where = primordial.security_address
    with join_tls(join) as store:
        try:
            with SCMSecurityClient(where, store) as client:
                cert_pem, root_pem = client.get_scm_certificate(
                    X.csr_to_pem(csr), node.node_id, storage.cluster_id, storage.scm_uuid
                )
        except SecurityError as e:
            if e.code == SecurityResult.UNAVAILABLE:
                raise SecuritySetupError(
                    f"SCM {node.node_id} cannot bootstrap: the primordial SCM {primordial.node_id} at "
                    f"{where} was not reached over mutual TLS with the JOIN credential ({e.message}); it "
                    "is down, or one of the two belongs to another CA (the credential's root CA is "
                    f"{root.subject.rfc4514_string()})"
                ) from None
            raise SecuritySetupError(
                f"SCM {node.node_id} cannot bootstrap: the primordial SCM {primordial.node_id} refused its "
                f"certificate: {e}"
            ) from None
    cert = X.cert_from_pem(cert_pem)
    problem = _answer_problem(cert, X.cert_from_pem(root_pem), root, key, storage)
    if problem:
        raise SecuritySetupError(
            f"SCM {node.node_id} cannot bootstrap: the primordial SCM {primordial.node_id} answered {problem}"
        )
    write_file(paths.key, X.key_to_pem(key), private=True)
    write_file(paths.ca, join.ca_pem)
    write_file(paths.cert, cert_pem)
    _keep_crl(paths, where)
    return cert


def _keep_crl(paths: TlsPaths, primordial: HostPort) -> None:
    """The primordial's CRL bundle (the root's list, its sub-CA's, the other SCMs' it holds), kept beside
    ca.crt: this SCM starts holding a list for every issuer a peer's certificate may have, as OpenSSL's
    check asks (it signs only its own sub-CA's)."""
    store = TlsStore(paths)
    try:
        with SCMSecurityClient(primordial, store) as client:
            store.update_crl(*client.get_crl())
    except (SecurityError, ValueError) as e:
        raise SecuritySetupError(
            f"the primordial SCM's CRL at {primordial} could not be fetched: {e}"
        ) from None


def _answer_problem(
    cert: X.Certificate,
    answered_root: X.Certificate,
    root: X.Certificate,
    key: X.PrivateKey,
    storage: SCMStorageConfig,
) -> str | None:
    if answered_root != root:
        return f"with another root CA ({answered_root.subject.rfc4514_string()}) than the JOIN credential's"
    if cert.public_key().public_numbers() != key.public_key().public_numbers():  # type: ignore[union-attr]
        return "a certificate for another key"
    if not (X.is_ca(cert) and X.verifies_to(cert, (), root)):
        return "a certificate that is not a sub-CA of the root CA"
    if X.cluster_of(cert) != storage.cluster_id:
        return f"a certificate of cluster {X.cluster_of(cert)}, not {storage.cluster_id}"
    return None


def _copy_genesis(
    conf: OzoneConfiguration, tls: TlsPaths | None, storage: SCMStorageConfig, primordial: ScmNodeDetails
) -> list[str]:
    """The primordial's scm.db in place of this SCM's empty one, and a Raft log starting after it."""
    store = scm_db.open_scm_db(scm_db_dir(conf))
    try:
        if store.transaction_infos.get(TRANSACTION_INFO_KEY) is not None:
            return [f"Reusing scm.db ({scm_db_dir(conf)}): it holds the service's records"]
        if any(next(store.items(cf), None) is not None for cf in ("validCerts", "joinTokens", "sequenceId")):
            raise SecuritySetupError(
                f"{scm_db_dir(conf)} holds records of its own: a bootstrapping SCM starts on an empty scm.db"
            )
        where = primordial.http_address
        url = f"{'https' if tls else 'http'}://{where.host}:{where.port}{CHECKPOINT_PATH}"
        context = TlsStore(tls).client_context() if tls else None
        try:
            installed = fetch_and_install(
                scm_db.SCM_CHECKPOINT,
                url,
                context,
                scm_db.db_path(store),
                lambda unpacked, _: scm_db.install(store, unpacked),
                0,
            )
        except CheckpointError as e:
            raise SecuritySetupError(
                f"the scm.db of the primordial SCM {primordial.node_id} could not be copied: {e}"
            ) from None
    finally:
        store.close()
    if installed.index:
        _start_log_after(conf, storage, installed)
    at = f"{installed.term}#{installed.index}"
    return [f"scm.db copied from the primordial SCM {primordial.node_id} at {url} (log entry {at})"]


def _start_log_after(conf: OzoneConfiguration, storage: SCMStorageConfig, at: TermIndex) -> None:
    """This SCM's Raft log begins after the copied scm.db's last entry, as after an installed snapshot."""
    current = scm_ratis_dir(conf) / scm_raft_group_id(storage.cluster_id) / CURRENT_DIR
    if current.exists() and any(current.iterdir()):
        raise SecuritySetupError(
            f"SCM's Raft log {current} is not empty: a bootstrapping SCM starts without one (remove it)"
        )
    current.mkdir(parents=True, exist_ok=True)
    write_meta(current, RaftMeta(at.term, None, at, ()))
