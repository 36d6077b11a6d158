"""X.509 certificates as SCM's CA issues them, and the identity a certificate names.

Every daemon's certificate names its role and host in the common name ("om@127.0.0.1", "dn@host"), with
the cluster id as organisation and the SCM id as organisational unit, as Ozone's certificate profiles do. A
user's certificate names the user alone ("alice"); a user name never holds "@", so the two cannot be
confused. A service's certificate lists its hosts (subjectAltName) and may serve TLS and call it; a
user's names no host and may only call (clientAuth): no TLS client takes a user for a server. A
datanode's also names its datanode UUID (a `urn:uuid:` URI, pyozone), so SCM can tell which datanode a
datanode certificate speaks for: several datanodes on one host share a common name. An OM of an HA
service names its service and node id (a `urn:ozone-om:SERVICE/NODE` URI; Ozone's OMCertificateClient
names the OM's service in its CSR), so the OMs of one service on one host each hold a certificate of their
own. Keys are RSA of `hdds.key.len` bits (Ozone's `hdds.key.algo` default); certificates are signed with
SHA-256 (SHA256withRSA).

`cryptography` is imported here and nowhere else in the kernel.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
import uuid
from dataclasses import dataclass
from enum import Enum

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PrivateKey = rsa.RSAPrivateKey
Certificate = x509.Certificate
CertificateSigningRequest = x509.CertificateSigningRequest


class CertRole(Enum):
    """Whose certificate it is. The value is the common name's prefix before "@" (Ozone's NodeType)."""

    SCM = "scm"
    OM = "om"
    DATANODE = "dn"
    S3G = "s3g"
    JOIN = "join"  # pyozone: the credential a daemon's first CSR is sent with (docs/differences.md)
    USER = "user"

    @property
    def is_service(self) -> bool:
        return self is not CertRole.USER


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a peer is: a user, or a service (role) on a host. `principal` is what ACLs and
    `ozone.administrators` name: the user name, or the role's prefix ("om", "dn", "scm", "s3g")."""

    role: CertRole
    principal: str
    host: str = ""

    @classmethod
    def from_common_name(cls, common_name: str) -> Identity:
        prefix, at, host = common_name.partition("@")
        if not at:
            if not common_name:
                raise ValueError("a certificate without a common name names nobody")
            return cls(CertRole.USER, common_name)
        try:
            role = CertRole(prefix)
        except ValueError:
            raise ValueError(f"common name {common_name!r}: {prefix!r} is not a service role") from None
        if not role.is_service:
            raise ValueError(f"certificate common name {common_name!r}: a user name holds no '@'")
        return cls(role, prefix, host)

    @property
    def common_name(self) -> str:
        return f"{self.principal}@{self.host}" if self.role.is_service else self.principal


def check_user_name(name: str) -> str:
    """A user name a certificate may carry: printable, no '@', ',' or '/' (they would read as a service,
    a list or a path)."""
    if not name or len(name) > 64 or not name.isprintable() or any(c in name for c in "@,/ \\=+;:"):
        raise ValueError(
            f"{name!r} is not a valid user name (1-64 printable characters, none of '@,/\\=+;: ')"
        )
    return name


def generate_private_key(bits: int = 2048) -> PrivateKey:
    if bits < 2048:
        raise ValueError(f"hdds.key.len {bits} is too short: at least 2048 bits")
    return rsa.generate_private_key(public_exponent=65537, key_size=bits)


def _name(common_name: str, cluster_id: str, scm_id: str) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if scm_id:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, scm_id))
    if cluster_id:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, cluster_id))
    return x509.Name(attrs)


DATANODE_URN = "urn:uuid:"
"""The prefix of the subjectAltName URI that names a datanode certificate's datanode (RFC 4122's URN)."""

ROLE_NAME_SUFFIX = ".role.invalid"
"""The suffix of the role-qualified names the CA adds to a service's certificate (`role_host_name`); .invalid
(RFC 2606) never resolves, so no such name can be dialled, only checked."""


def role_host_name(role: CertRole, host: str) -> str:
    """The name a certificate of `role` carries for each `host` it names (e.g. 10.0.0.5.om.role.invalid):
    only SCM's CA adds them (a CSR naming one is refused), so a TLS client that checks this name in place
    of the host checks the server's role and host at once (a datanode's certificate naming OM's host does
    not verify as OM)."""
    label = host.strip("[]").lower().replace(":", "-")
    return f"{label}.{role.value}{ROLE_NAME_SUFFIX}"


OM_NODE_URN = "urn:ozone-om:"
"""The prefix of the subjectAltName URI naming an HA OM certificate's service and node ("SERVICE/NODE")."""


def om_node_name(service_id: str, node_id: str) -> str:
    """The node an HA OM's certificate names: "SERVICE/NODE" (ozone.om.service.ids, ozone.om.node.id)."""
    for part in (service_id, node_id):
        if not part or not part.isprintable() or any(c in part for c in "/:@, "):
            raise ValueError(f"{part!r} is not an OM service or node id")
    return f"{service_id}/{node_id}"


def is_datanode_uuid(datanode: str) -> bool:
    """Whether `datanode` is a UUID in the canonical form datanodes report it in."""
    try:
        return str(uuid.UUID(datanode)) == datanode
    except ValueError:
        return False


def _datanode_uri(datanode: str) -> str:
    """The URI naming a datanode UUID, which must be in canonical form (as datanodes report it)."""
    try:
        canonical = str(uuid.UUID(datanode))
    except ValueError:
        canonical = ""
    if canonical != datanode:
        raise ValueError(f"{datanode!r} is not a datanode UUID (canonical form, lower case)")
    return DATANODE_URN + datanode


def check_om_node(om_node: str) -> str:
    """`om_node` when it names an HA OM node ("SERVICE/NODE", as `om_node_name` makes it); else ValueError."""
    service_id, slash, node_id = om_node.partition("/")
    try:
        if slash and om_node_name(service_id, node_id) == om_node:
            return om_node
    except ValueError:
        pass
    raise ValueError(f"{om_node!r} is not an OM node (SERVICE/NODE)")


def _om_node_uri(om_node: str) -> str:
    return OM_NODE_URN + check_om_node(om_node)


def _alt_names(hosts: tuple[str, ...], datanode: str | None, om_node: str | None) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    if datanode is not None:
        names.append(x509.UniformResourceIdentifier(_datanode_uri(datanode)))
    if om_node is not None:
        names.append(x509.UniformResourceIdentifier(_om_node_uri(om_node)))
    return names


def build_csr(
    key: PrivateKey,
    identity: Identity,
    hosts: tuple[str, ...] = (),
    datanode: str | None = None,
    om_node: str | None = None,
) -> CertificateSigningRequest:
    """A CSR for `identity`; a service's names its hosts (IPs and DNS names) so TLS clients can check them,
    a datanode's also its datanode UUID, an HA OM's its service and node (`om_node`, "SERVICE/NODE")."""
    builder = x509.CertificateSigningRequestBuilder().subject_name(_name(identity.common_name, "", ""))
    if hosts or datanode is not None or om_node is not None:
        names = _alt_names(hosts, datanode, om_node)
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(key, hashes.SHA256())


def _subject_alt_names(item: Certificate | CertificateSigningRequest) -> list[x509.GeneralName]:
    try:
        return list(item.extensions.get_extension_for_class(x509.SubjectAlternativeName).value)
    except x509.ExtensionNotFound:
        return []


def dns_names(item: Certificate | CertificateSigningRequest) -> list[str]:
    """Every DNS name a certificate's (or CSR's) subjectAltName lists, the role-qualified ones too."""
    return [str(n.value) for n in _subject_alt_names(item) if isinstance(n, x509.DNSName)]


def host_names(item: Certificate | CertificateSigningRequest) -> list[str]:
    """The host names and addresses a certificate's (or CSR's) subjectAltName lists, without the
    role-qualified names the CA adds (`role_host_name`)."""
    hosts = (str(n.value) for n in _subject_alt_names(item) if isinstance(n, (x509.DNSName, x509.IPAddress)))
    return [h for h in hosts if not h.lower().endswith(ROLE_NAME_SUFFIX)]


def datanode_id(item: Certificate | CertificateSigningRequest) -> str | None:
    """The datanode UUID a datanode's certificate (or CSR) names, or None when it names none."""
    for name in _subject_alt_names(item):
        if isinstance(name, x509.UniformResourceIdentifier) and name.value.startswith(DATANODE_URN):
            return name.value.removeprefix(DATANODE_URN)
    return None


def om_node(item: Certificate | CertificateSigningRequest) -> str | None:
    """The OM node ("SERVICE/NODE") an HA OM's certificate (or CSR) names, or None when it names none."""
    for name in _subject_alt_names(item):
        if isinstance(name, x509.UniformResourceIdentifier) and name.value.startswith(OM_NODE_URN):
            return name.value.removeprefix(OM_NODE_URN)
    return None


def node_of(item: Certificate | CertificateSigningRequest) -> str | None:
    """Which one of the daemons sharing a common name a certificate (or CSR) is for: a datanode's UUID, an
    HA OM's "SERVICE/NODE", else None."""
    return datanode_id(item) or om_node(item)


def _checked_alt_names(csr: CertificateSigningRequest, identity: Identity) -> list[x509.GeneralName]:
    """The subjectAltNames a certificate for `identity` keeps from its CSR. A user's names none (a host
    there would let the user serve TLS as a daemon on that host); a service's names hosts, a datanode's
    one datanode UUID besides, an HA OM's one OM node."""
    names = _subject_alt_names(csr)
    if identity.role is CertRole.USER and names:
        raise ValueError(f"a user's certificate names no host or other name ({identity.common_name})")
    uris = []
    for name in names:
        if isinstance(name, x509.UniformResourceIdentifier):
            uris.append(name.value)
        elif not isinstance(name, (x509.DNSName, x509.IPAddress)):
            raise ValueError(f"a certificate names hosts and a datanode UUID only, not {name}")
        elif isinstance(name, x509.DNSName) and (
            "*" in name.value or name.value.lower().endswith(ROLE_NAME_SUFFIX)
        ):
            raise ValueError(
                f"a CSR may not name {name.value!r}: no wildcard, and the CA adds the role names"
            )
    if len(uris) > 1:
        raise ValueError(f"a certificate names one datanode UUID or OM node at most: {uris}")
    for uri in uris:
        if uri.startswith(OM_NODE_URN):
            if identity.role is not CertRole.OM:
                raise ValueError(f"only an OM's certificate names an OM node: {uri}")
            _om_node_uri(uri.removeprefix(OM_NODE_URN))
        elif identity.role is not CertRole.DATANODE:
            raise ValueError(f"only a datanode's certificate names a datanode UUID: {uri}")
        elif _datanode_uri(uri.removeprefix(DATANODE_URN)) != uri:
            raise ValueError(f"{uri!r} is not a datanode UUID URI ({DATANODE_URN}<uuid>)")
    return names


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def self_signed_root(
    key: PrivateKey,
    cluster_id: str,
    scm_id: str,
    host: str,
    lifetime: dt.timedelta,
    serial: int,
    not_before: dt.datetime | None = None,
) -> Certificate:
    """SCM's root CA certificate: "scm@host", CA:true, may sign certificates (path length 1: it signs
    each SCM's sub-CA, which signs the leaves)."""
    start = not_before or _now()
    name = _name(f"scm@{host}", cluster_id, scm_id)
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(start - dt.timedelta(minutes=1))
        .not_valid_after(start + lifetime)
        .add_extension(x509.BasicConstraints(ca=True, path_length=1), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )


def sub_ca_certificate(
    key: PrivateKey | rsa.RSAPublicKey,
    root_key: PrivateKey,
    root_cert: Certificate,
    identity: Identity,
    hosts: tuple[str, ...],
    cluster_id: str,
    scm_id: str,
    lifetime: dt.timedelta,
    serial: int,
    not_before: dt.datetime | None = None,
) -> Certificate:
    """An SCM's own certificate, a sub-CA signed by the root (Ozone's HASecurityUtils / SCMCertificateClient):
    "scm@HOST" naming its hosts (and their role names, X.role_host_name) for TLS both ways, CA:true with path
    length 0 (it signs leaves only), keyCertSign, cRLSign and digitalSignature. Never valid past the root. A
    renewal passes the same key and identity, so what the sub-CA issued still chains. `key`: the sub-CA's
    key pair, or its public key alone (another SCM's, from its CSR at `scm --bootstrap`)."""
    public = key if isinstance(key, rsa.RSAPublicKey) else key.public_key()
    if identity.role is not CertRole.SCM:
        raise ValueError(f"only an SCM's certificate is a sub-CA, not {identity.common_name}")
    start = not_before or _now()
    lifetime = min(lifetime, root_cert.not_valid_after_utc - start)
    names = _alt_names(hosts, None, None)
    names += [x509.DNSName(role_host_name(identity.role, h)) for h in hosts]
    return (
        x509.CertificateBuilder()
        .subject_name(_name(identity.common_name, cluster_id, scm_id))
        .issuer_name(root_cert.subject)
        .public_key(public)
        .serial_number(serial)
        .not_valid_before(start - dt.timedelta(minutes=1))
        .not_valid_after(start + lifetime)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
            critical=False,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(root_cert.public_key()),  # type: ignore[arg-type]
            critical=False,
        )
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(root_key, hashes.SHA256())
    )


def is_ca(cert: Certificate) -> bool:
    """Whether a certificate may sign others (BasicConstraints CA:true)."""
    try:
        return bool(cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
    except x509.ExtensionNotFound:
        return False


def sign_csr(
    csr: CertificateSigningRequest,
    ca_key: PrivateKey,
    ca_cert: Certificate,
    cluster_id: str,
    scm_id: str,
    lifetime: dt.timedelta,
    serial: int,
    not_before: dt.datetime | None = None,
) -> Certificate:
    """A leaf certificate for a CSR whose signature verifies. It keeps the CSR's common name and, for a
    service, its host names (and a datanode's UUID); a service's may serve TLS and authenticate a TLS
    client both (mutual TLS), a user's only the latter. The caller decides whether the requester may have
    that name."""
    if not csr.is_signature_valid:
        raise ValueError("the CSR's signature does not verify")
    common_name = csr_common_name(csr)
    identity = Identity.from_common_name(common_name)  # a name no peer could be is refused here
    alt_names = _checked_alt_names(csr, identity)
    usages = [ExtendedKeyUsageOID.CLIENT_AUTH]
    if identity.role.is_service:
        usages.insert(0, ExtendedKeyUsageOID.SERVER_AUTH)
    if lifetime > ca_cert.not_valid_after_utc - (not_before or _now()):
        lifetime = ca_cert.not_valid_after_utc - (not_before or _now())
    start = not_before or _now()
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name, cluster_id, scm_id))
        .issuer_name(ca_cert.subject)
        .public_key(csr.public_key())
        .serial_number(serial)
        .not_valid_before(start - dt.timedelta(minutes=1))
        .not_valid_after(start + lifetime)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, True, False, False, False, False, False, False), critical=True
        )
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_cert.public_key()),  # type: ignore[arg-type]
            critical=False,
        )
    )
    hosts = [str(n.value) for n in alt_names if isinstance(n, (x509.DNSName, x509.IPAddress))]
    if identity.role.is_service and identity.role is not CertRole.JOIN:
        alt_names = [*alt_names, *(x509.DNSName(role_host_name(identity.role, h)) for h in hosts)]
    if alt_names:
        builder = builder.add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
    return builder.sign(ca_key, hashes.SHA256())


def csr_common_name(csr: CertificateSigningRequest) -> str:
    names = csr.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if len(names) != 1:
        raise ValueError("a CSR names exactly one common name")
    return str(names[0].value)


def common_name(cert: Certificate) -> str:
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if len(names) != 1:
        raise ValueError("a certificate names exactly one common name")
    return str(names[0].value)


def cluster_of(cert: Certificate) -> str:
    """The cluster id a certificate of SCM's CA carries (its organisation), "" when none."""
    names = cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    return str(names[0].value) if names else ""


def identity_of(cert: Certificate) -> Identity:
    return Identity.from_common_name(common_name(cert))


def is_signed_by(cert: Certificate, ca_cert: Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(ca_cert)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


def signing_problem(ca_cert: Certificate, below: int) -> str | None:
    """Why `ca_cert` may not sign a certificate with `below` CA certificates between it and the end of the
    chain, as OpenSSL checks a chain (check_chain_extensions): it is not a CA (BasicConstraints CA:true),
    its KeyUsage lacks keyCertSign, or its path length is under `below`. None when it may."""
    if not is_ca(ca_cert):
        return "it is not a CA certificate (BasicConstraints CA:true)"
    try:
        if not ca_cert.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign:
            return "its KeyUsage lacks keyCertSign"
    except x509.ExtensionNotFound:
        pass
    path_length = ca_cert.extensions.get_extension_for_class(x509.BasicConstraints).value.path_length
    if path_length is not None and path_length < below:
        return (
            f"its BasicConstraints path length {path_length} allows {path_length} CA certificate(s) "
            f"below it, not {below}"
        )
    return None


def verifies_to(
    cert: Certificate, chain: list[Certificate] | tuple[Certificate, ...], root: Certificate
) -> bool:
    """Whether `cert` chains to the trust anchor `root`: signed by it directly (a root-issued certificate, or
    a sub-CA), or by a CA certificate of `chain` (the sub-CAs a certificate file holds after its leaf) that
    itself chains to `root`; each signer may sign what lies below it (`signing_problem`: CA, keyCertSign,
    path length), as OpenSSL requires in the handshake. Validity periods are TLS's to check."""
    current, below = cert, 0
    while below <= len(chain):
        if current.issuer == root.subject and is_signed_by(current, root):
            return signing_problem(root, below) is None
        issuer = next(
            (c for c in chain if c.subject == current.issuer and c != current and is_ca(c)),
            None,
        )
        if issuer is None or not is_signed_by(current, issuer) or signing_problem(issuer, below) is not None:
            return False
        current, below = issuer, below + 1
    return False


def cert_to_pem(cert: Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def chain_to_pem(certs: list[Certificate] | tuple[Certificate, ...]) -> bytes:
    return b"".join(cert_to_pem(c) for c in certs)


def certs_from_pem(pem: bytes) -> list[Certificate]:
    """Every certificate of a PEM file in order (a certificate file: the leaf, then its issuing sub-CA)."""
    try:
        return x509.load_pem_x509_certificates(pem)
    except ValueError as e:
        raise ValueError(f"not a PEM certificate: {e}") from None


def chain_verifies(chain_pem: bytes, root: Certificate) -> bool:
    """Whether a certificate file's first certificate chains to `root` through the others (`verifies_to`)."""
    try:
        certs = certs_from_pem(chain_pem)
    except ValueError:
        return False
    return verifies_to(certs[0], certs[1:], root)


def cert_from_pem(pem: bytes) -> Certificate:
    try:
        return x509.load_pem_x509_certificate(pem)
    except ValueError as e:
        raise ValueError(f"not a PEM certificate: {e}") from None


def cert_from_der(der: bytes) -> Certificate:
    try:
        return x509.load_der_x509_certificate(der)
    except ValueError as e:
        raise ValueError(f"not a DER certificate: {e}") from None


def csr_to_pem(csr: CertificateSigningRequest) -> bytes:
    return csr.public_bytes(serialization.Encoding.PEM)


def csr_from_pem(pem: bytes) -> CertificateSigningRequest:
    try:
        return x509.load_pem_x509_csr(pem)
    except ValueError as e:
        raise ValueError(f"not a PEM certificate signing request: {e}") from None


def key_to_pem(key: PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def public_key_to_pem(key: PrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def key_from_pem(pem: bytes) -> PrivateKey:
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as e:
        raise ValueError(f"not an unencrypted PEM private key: {e}") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ValueError("the private key is not RSA (hdds.key.algo)")
    return key


# ---------------------------------------------------------------------- revocation (RFC 5280 CRLs)
def build_crl(
    ca_key: PrivateKey,
    ca_cert: Certificate,
    revoked: list[tuple[int, int, str]],
    number: int,
    last_update_ms: int,
    next_update_ms: int,
) -> bytes:
    """The CA's signed CRL (PEM) listing `revoked` as (serial, revocation time in ms, reason name of
    x509.ReasonFlags in upper case, e.g. KEY_COMPROMISE), with CRL number `number`. OpenSSL uses the CRL
    of the latest lastUpdate it holds for an issuer, so a newer list must carry a later one; it names its
    signer's key (AuthorityKeyIdentifier, RFC 5280 5.2.1), so OpenSSL passes over a CRL of the same issuer
    name signed by another key (SCM's sub-CA made again by scm --init) for the one of the peer's issuer."""

    def when(ms: int) -> dt.datetime:
        return dt.datetime.fromtimestamp(ms / 1000, dt.UTC)

    builder = (
        x509.CertificateRevocationListBuilder()
        .issuer_name(ca_cert.subject)
        .last_update(when(last_update_ms))
        .next_update(when(next_update_ms))
        .add_extension(x509.CRLNumber(number), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_cert.public_key()),  # type: ignore[arg-type]
            critical=False,
        )
    )
    for serial, revoked_ms, reason in revoked:
        entry = (
            x509.RevokedCertificateBuilder()
            .serial_number(serial)
            .revocation_date(when(revoked_ms))
            .add_extension(x509.CRLReason(x509.ReasonFlags[reason.lower()]), critical=False)
            .build()
        )
        builder = builder.add_revoked_certificate(entry)
    return builder.sign(ca_key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


_CRL_BLOCK = re.compile(rb"-----BEGIN X509 CRL-----.*?-----END X509 CRL-----\r?\n?", re.DOTALL)


def _verified_crls(
    bundle: bytes, root: Certificate
) -> tuple[list[x509.CertificateRevocationList], list[Certificate]]:
    """Every CRL of a bundle (SCM's getCrl answer: a CRL per issuer, then the sub-CA certificates that sign
    them), each verified against `root` or a sub-CA of the bundle that chains to it, and the certificates
    that signed them; ValueError otherwise, or when a certificate of the bundle does not chain to `root`."""
    blocks = _CRL_BLOCK.findall(bundle)
    if not blocks:
        raise ValueError("not a PEM certificate revocation list")
    try:
        crls = [x509.load_pem_x509_crl(b) for b in blocks]
        certs = x509.load_pem_x509_certificates(bundle) if b"-----BEGIN CERTIFICATE-----" in bundle else []
    except ValueError as e:
        raise ValueError(f"not a PEM certificate revocation list: {e}") from None
    for cert in certs:
        if not (is_ca(cert) and verifies_to(cert, certs, root)):
            raise ValueError(
                f"the revocation list carries a certificate the CA did not issue: {cert.subject}"
            )
    signers = []
    for crl in crls:
        signer = next(
            (
                ca
                for ca in (root, *certs)
                if crl.issuer == ca.subject and crl.is_signature_valid(ca.public_key())  # type: ignore[arg-type]
            ),
            None,
        )
        if signer is None:
            raise ValueError("the revocation list is not signed by the CA")
        signers.append(signer)
    return crls, signers


def crl_serials(bundle: bytes, root: Certificate) -> frozenset[int]:
    """The serials the CRLs of a PEM bundle list (`_verified_crls`), once each verifies (ValueError
    otherwise)."""
    return frozenset(entry.serial_number for crl in _verified_crls(bundle, root)[0] for entry in crl)


def crl_issuers(bundle: bytes, root: Certificate) -> frozenset[str]:
    """The issuers (RFC 4514 names) whose CRL a PEM bundle carries, once each verifies (ValueError
    otherwise)."""
    return frozenset(crl.issuer.rfc4514_string() for crl in _verified_crls(bundle, root)[0])


def crl_signers(bundle: bytes, root: Certificate) -> dict[str, tuple[dt.datetime, int]]:
    """The issuers (RFC 4514 names) whose CRL a PEM bundle carries, each with the notBefore and serial of
    the certificate that signed it (the root, SCM's sub-CA), once each verifies (ValueError otherwise): a
    renewed or re-made sub-CA signs with a later one (one serial counter orders two made in a second)."""
    crls, signers = _verified_crls(bundle, root)
    return {
        crl.issuer.rfc4514_string(): (c.not_valid_before_utc, c.serial_number)
        for crl, c in zip(crls, signers, strict=True)
    }


def crl_parts(bundle: bytes, root: Certificate) -> list[tuple[str, dt.datetime, bytes, Certificate]]:
    """Each CRL of a PEM bundle as (issuer's RFC 4514 name, lastUpdate, its PEM, the certificate that
    signed it), once each verifies (ValueError otherwise): what an SCM of an HA service keeps of another's
    bundle, whose sub-CA's list it cannot sign."""
    crls, signers = _verified_crls(bundle, root)
    return [
        (crl.issuer.rfc4514_string(), crl.last_update_utc, crl.public_bytes(serialization.Encoding.PEM), c)
        for crl, c in zip(crls, signers, strict=True)
    ]


def crl_blocks(bundle: bytes) -> bytes:
    """The CRLs of a PEM bundle without its certificates: what a party hands OpenSSL, which checks each
    CRL with the issuer in the peer's chain (a certificate loaded beside it would become a trust anchor)."""
    return b"".join(_CRL_BLOCK.findall(bundle))


def crl_number(bundle: bytes, root: Certificate) -> int:
    """The highest CRL number of a PEM bundle's CRLs, once each verifies (ValueError otherwise, or when one
    carries none)."""
    numbers = []
    for crl in _verified_crls(bundle, root)[0]:
        try:
            numbers.append(crl.extensions.get_extension_for_class(x509.CRLNumber).value.crl_number)
        except x509.ExtensionNotFound:
            raise ValueError("the revocation list carries no CRL number") from None
    return max(numbers)
