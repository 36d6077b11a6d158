"""JOIN credentials: one certificate for one new daemon, once (pyozone; Ozone's daemons send their first CSR
over Kerberos instead).

A JOIN credential is a certificate `join@<role>` of its own key pair that SCM minted for one role (OM,
DATANODE, S3G, or SCM below) and optionally one host, valid `hdds.x509.join.token.expiry` (1 day). SCM
keeps what each may obtain in `joinTokens`, keyed by the credential's serial. Presented on the security
port, it obtains one certificate, for that role, for an identity that does not exist yet:
- a datanode: a UUID SCM never saw (not registered, in no pipeline) and never named in a certificate
  (valid, revoked, or obtained with another JOIN credential);
- OM or the S3 gateway: a host the configuration names for that service (`ozone.om.address`,
  `ozone.s3g.http-address`), with no valid certificate for that name yet;
- an OM of an HA service (`ozone.om.service.ids`): the node the credential was minted for (`--node
  SERVICE/NODE`: a credential for no node obtains no HA OM's certificate, so one OM's credential cannot take
  another's node), a node the configuration names (`ozone.om.nodes.SERVICE`), on the host of its
  `ozone.om.address.SERVICE.NODE`, with no valid certificate for that node yet, whatever host that one names
  (one valid certificate per OM node: a moved OM's old certificate is revoked first); its certificate names
  no host of another configured OM (`om_host_refusal`). Each OM of the service holds a certificate of its
  own, the OMs of one host included (Ozone's OMCertificateClient, one per OM).
The token is then used: a second CSR with it is refused, as is an expired or revoked one
(`pyozone admin cert revoke SERIAL`). A lost daemon's certificate is revoked before a new token replaces it.
A datanode that lost its key or certificate rejoins with its data by a token naming its UUID (`rejoin`),
which an administrator mints once every certificate of that UUID is revoked; it obtains that datanode's
certificate only.
An SCM's token (role SCM, `scm --init --join-token scm:NODE=FILE` on the primordial SCM of an HA service) is
bound to one SCM node and obtains that node's sub-CA at its `scm --bootstrap` (`check_scm`); it is not used
up, as the primordial answers before any quorum could record the use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace

from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.certificates import CertificateStore
from pyozone.scm.store import SCMMetadataStore

JOIN_ROLES = (CertRole.OM, CertRole.DATANODE, CertRole.S3G, CertRole.SCM)
"""The roles a JOIN credential may be minted for."""

LOOPBACK_NAMES = frozenset({"127.0.0.1", "::1", "localhost"})
"""Names every daemon's certificate may carry (`service_hosts`): each machine's own."""


def join_identity(role: CertRole) -> Identity:
    """The common name of a JOIN credential for `role`: "join@dn", "join@om", "join@s3g", "join@scm"."""
    if role not in JOIN_ROLES:
        raise ValueError(
            f"a JOIN credential is for an OM, a datanode, an S3 gateway or an SCM, not {role.name}"
        )
    return Identity(CertRole.JOIN, CertRole.JOIN.value, role.value)


@dataclass(frozen=True, slots=True)
class JoinToken:
    """What the JOIN credential `serial` may obtain (`role`, on host `name` when set, as HA OM node `om_node`
    when set) until `expiry_ms`, and, once used, the certificate it obtained (`issued`, its common name and
    datanode UUID)."""

    serial: int
    role: CertRole
    name: str
    expiry_ms: int
    issued: int = 0
    issued_name: str = ""
    datanode: str = ""
    rejoin: str = ""
    """The UUID of the known datanode it brings back ("" for a new daemon)."""
    om_node: str = ""
    """The HA OM node ("SERVICE/NODE") it obtains the certificate of ("": none)."""
    scm_node: str = ""
    """The SCM node of the service whose sub-CA it obtains at `scm --bootstrap` (role SCM only)."""

    def to_json(self) -> dict[str, object]:
        return {**asdict(self), "role": self.role.value}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> JoinToken:
        return cls(**{**data, "role": CertRole(data["role"])})  # type: ignore[arg-type]


def _denied(message: str) -> SecurityError:
    return SecurityError(SecurityResult.PERMISSION_DENIED, message)


class JoinTokens:
    """The `joinTokens` table and the rule of what a JOIN credential may obtain.

    `service_hosts`: the hosts the configuration names for OM and the S3 gateway; `known_datanode`: whether
    SCM saw a datanode UUID (registered, or a member of a pipeline); `om_nodes`: the HA OMs the
    configuration names ("SERVICE/NODE" -> the host of its address); `scm_nodes`: the SCMs of this SCM's
    service (node id -> the host of `ozone.scm.address.SERVICE.NODE`)."""

    def __init__(
        self,
        store: SCMMetadataStore,
        certs: CertificateStore,
        service_hosts: Mapping[CertRole, frozenset[str]],
        known_datanode: Callable[[str], bool],
        om_nodes: Mapping[str, str] | None = None,
        scm_nodes: Mapping[str, str] | None = None,
    ) -> None:
        self._store = store
        self._table = store.join_tokens
        self._certs = certs
        self._service_hosts = service_hosts
        self._known_datanode = known_datanode
        self._om_nodes = dict(om_nodes or {})
        self._scm_nodes = dict(scm_nodes or {})

    def check_rejoin(self, datanode: str) -> None:
        """A token may bring back datanode `datanode` once every certificate naming it is revoked."""
        if not X.is_datanode_uuid(datanode):
            raise SecurityError(SecurityResult.INVALID_CSR, f"{datanode!r} is not a datanode UUID")
        valid = [r.serial for r in self._certs.records() if X.datanode_id(X.cert_from_pem(r.pem)) == datanode]
        if valid:
            raise _denied(
                f"datanode {datanode} still has valid certificate(s) {', '.join(map(str, valid))}: revoke "
                "them (pyozone admin cert revoke) before it rejoins"
            )

    def add(
        self,
        cert: X.Certificate,
        role: CertRole,
        name: str,
        rejoin: str = "",
        om_node: str = "",
        scm_node: str = "",
    ) -> JoinToken:
        """Records a JOIN credential SCM's CA just issued, bound to `role` and host `name` ("": any), to
        the known datanode `rejoin` brings back, to the HA OM node `om_node`, or to the SCM node
        `scm_node`."""
        expiry = int(cert.not_valid_after_utc.timestamp() * 1000)
        token = JoinToken(
            cert.serial_number, role, name, expiry, rejoin=rejoin, om_node=om_node, scm_node=scm_node
        )
        self._table.put(token.serial, token.to_json())
        return token

    def get(self, serial: int) -> JoinToken | None:
        data = self._table.get(serial) if 0 <= serial < 1 << 64 else None
        return None if data is None else JoinToken.from_json(data)

    def check_om_node(self, om_node: str) -> None:
        """A credential may be minted for HA OM node `om_node` when the configuration names it."""
        if om_node not in self._om_nodes:
            raise _denied(self._unknown_om_node(om_node))

    def check(
        self,
        serial: int,
        requested: Identity,
        datanode: str | None,
        now_ms: int,
        om_node: str | None = None,
        hosts: tuple[str, ...] = (),
    ) -> JoinToken:
        """The token of JOIN credential `serial` when it may obtain a certificate for `requested` (and
        `datanode`, or the HA OM node `om_node`, naming `hosts`); else PERMISSION_DENIED naming why."""
        token = self.get(serial)
        if token is None:
            raise _denied(f"JOIN credential {serial} is not one SCM minted (or it was revoked)")
        if self._certs.revoked(serial) is not None:
            raise _denied(f"JOIN credential {serial} was revoked")
        if token.issued:
            raise _denied(
                f"JOIN credential {serial} was already used (certificate {token.issued} for "
                f"{token.issued_name}): each obtains one certificate"
            )
        if now_ms >= token.expiry_ms:
            raise _denied(f"JOIN credential {serial} expired (hdds.x509.join.token.expiry)")
        if requested.role is not token.role:
            raise _denied(
                f"JOIN credential {serial} is for a {token.role.name} certificate, not "
                f"{requested.role.name} ({requested.common_name})"
            )
        if token.name and requested.host != token.name:
            raise _denied(f"JOIN credential {serial} is for {token.role.value}@{token.name} only")
        if token.om_node and om_node != token.om_node:
            raise _denied(
                f"JOIN credential {serial} is for OM node {token.om_node} only, not {om_node or 'none'}"
            )
        if om_node is not None and not token.om_node:
            raise _denied(
                f"JOIN credential {serial} names no OM node: the certificate of HA OM {om_node} is obtained "
                f"with a credential minted for it (admin cert join-token --role om --node {om_node})"
            )
        if token.rejoin:
            if datanode != token.rejoin:
                raise _denied(f"JOIN credential {serial} is for datanode {token.rejoin} only")
            self.check_rejoin(token.rejoin)
        elif requested.role is CertRole.DATANODE:
            self._check_new_datanode(datanode or "")
        elif om_node is not None:
            self._check_new_om_node(requested, om_node, hosts)
        else:
            self._check_new_service(requested)
        return token

    def check_scm(self, serial: int, scm_node: str, host: str, now_ms: int) -> JoinToken:
        """The token of JOIN credential `serial` when it may obtain the sub-CA of SCM node `scm_node` on
        `host` (`scm --bootstrap`, answered by the primordial SCM without a quorum: it is not used up, as
        Ozone's SCM identity, its Kerberos principal, is not; it stays bound to one node and expires);
        else PERMISSION_DENIED naming why."""
        token = self.get(serial)
        if token is None:
            raise _denied(f"JOIN credential {serial} is not one this SCM knows (minted by scm --init)")
        if self._certs.revoked(serial) is not None:
            raise _denied(f"JOIN credential {serial} was revoked")
        if now_ms >= token.expiry_ms:
            raise _denied(f"JOIN credential {serial} expired (hdds.x509.join.token.expiry)")
        if token.role is not CertRole.SCM:
            raise _denied(f"JOIN credential {serial} is for a {token.role.name} certificate, not an SCM's")
        if token.scm_node != scm_node:
            raise _denied(f"JOIN credential {serial} is for SCM node {token.scm_node} only, not {scm_node}")
        if token.name and host != token.name:
            raise _denied(f"JOIN credential {serial} is for scm@{token.name} only")
        configured = self._scm_nodes.get(scm_node)
        if configured is None:
            raise _denied(
                f"the configuration names no SCM {scm_node} of this service (ozone.scm.nodes.SERVICE name "
                f"{', '.join(sorted(self._scm_nodes)) or 'none'})"
            )
        if host != configured:
            raise _denied(
                f"scm@{host}: SCM {scm_node} is on {configured!r} (ozone.scm.address of its node), not "
                f"{host!r}"
            )
        return token

    def redeem(self, token: JoinToken, cert: X.Certificate) -> None:
        """Marks the token used by the certificate it obtained (in the caller's batch with the issue)."""
        used = replace(
            token,
            issued=cert.serial_number,
            issued_name=X.common_name(cert),
            datanode=X.datanode_id(cert) or "",
        )
        self._table.put(token.serial, used.to_json())

    def _check_new_datanode(self, datanode: str) -> None:
        if self._known_datanode(datanode):
            raise _denied(f"datanode {datanode} is known to SCM: a JOIN credential is for a new datanode")
        pems = [r.pem for r in self._certs.records()] + [r.cert.pem for r in self._certs.all_revoked()]
        named = any(X.datanode_id(X.cert_from_pem(p)) == datanode for p in pems)
        if named or any(JoinToken.from_json(d).datanode == datanode for _, d in self._table.items()):
            raise _denied(
                f"datanode {datanode} already had a certificate: a JOIN credential is for a new datanode "
                "(a datanode renews its own certificate)"
            )

    def _unknown_om_node(self, om_node: str) -> str:
        return (
            f"the configuration names no OM {om_node} (ozone.om.service.ids, ozone.om.nodes.SERVICE name "
            f"{', '.join(sorted(self._om_nodes)) or 'none'})"
        )

    def _check_new_om_node(self, requested: Identity, om_node: str, hosts: tuple[str, ...]) -> None:
        host = self._om_nodes.get(om_node)
        if host is None:
            raise _denied(f"{requested.common_name} of node {om_node}: {self._unknown_om_node(om_node)}")
        if requested.host != host:
            raise _denied(
                f"{requested.common_name}: OM {om_node} is on {host!r} (ozone.om.address of its node), "
                f"not {requested.host!r}"
            )
        why = self.om_host_refusal(om_node, hosts)
        if why:
            raise _denied(f"{requested.common_name} of node {om_node}: {why}")
        held = [r for r in self._certs.records() if X.om_node(X.cert_from_pem(r.pem)) == om_node]
        if held:
            raise _denied(
                f"OM {om_node} already has a valid certificate ({held[0].serial}, "
                f"{X.common_name(X.cert_from_pem(held[0].pem))}): it renews its own; revoke it "
                "(pyozone admin cert revoke --om-node) before a new one joins"
            )

    def om_host_refusal(self, om_node: str, hosts: tuple[str, ...] | list[str]) -> str | None:
        """Why a certificate of HA OM `om_node` may not name `hosts`, or None: it names no host the
        configuration gives another OM (another node of any service, or a lone OM's ozone.om.address), so
        it never verifies as that OM (`HOST.om.role.invalid`) to whoever dials it. Its own host, the
        loopback names and the names of its machine SCM cannot know (`service_hosts`) are its own."""
        own = self._om_nodes.get(om_node)
        others = {h for n, h in self._om_nodes.items() if n != om_node}
        others |= self._service_hosts.get(CertRole.OM, frozenset())
        taken = sorted(h for h in hosts if h in others and h != own and h not in LOOPBACK_NAMES)
        if not taken:
            return None
        return (
            f"{', '.join(taken)} is the host of another OM (ozone.om.address): an OM's certificate names "
            "its own host only"
        )

    def _check_new_service(self, requested: Identity) -> None:
        if requested.role is CertRole.OM and self._om_nodes:
            raise _denied(
                f"{requested.common_name}: the configuration names the OMs of a service "
                f"({', '.join(sorted(self._om_nodes))}): an OM's certificate names its node (SERVICE/NODE)"
            )
        hosts = self._service_hosts.get(requested.role, frozenset())
        if requested.host not in hosts:
            raise _denied(
                f"{requested.common_name}: the configuration names no {requested.role.name} on "
                f"{requested.host!r} (it names {', '.join(sorted(hosts)) or 'none'})"
            )
        for record in self._certs.held_by((requested.common_name, None)):
            if record.role is requested.role:
                raise _denied(
                    f"{requested.common_name} already has a valid certificate ({record.serial}): it renews "
                    "its own; revoke it (pyozone admin cert revoke) before a new one joins"
                )
