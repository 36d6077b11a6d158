"""ScmSecurity: the CA, the secret keys, the JOIN credentials, the revocation list and the access policy
behind the security protocol, and their periodic work (key rotation, dropping expired certificates) on the
core's schedule."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Callable

from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.secret_key import ManagedSecretKey
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.periodic import PeriodicTask
from pyozone.scm.security.authority import CertificateAuthority, parse_csr, requested_identity
from pyozone.scm.security.certificates import CertificateRecord, RevocationReason, RevokedRecord, holder_of
from pyozone.scm.security.join_tokens import JoinTokens, join_identity
from pyozone.scm.security.policy import AccessPolicy
from pyozone.scm.security.secret_key_manager import SecretKeyManager
from pyozone.security.config import SecurityConfig

log = logging.getLogger(__name__)


class ScmSecurity:
    def __init__(
        self,
        settings: SecurityConfig,
        ca: CertificateAuthority,
        secret_keys: SecretKeyManager,
        policy: AccessPolicy,
        join_tokens: JoinTokens,
        leads: Callable[[], bool] | None = None,
    ) -> None:
        """`leads`: in an SCM HA service, whether this SCM is the ready leader, the one that writes (rotates
        keys, drops expired certificates; `step_up`); None for a lone SCM, which always does."""
        self.ca = ca
        self.secret_keys = secret_keys
        self.policy = policy
        self.join_tokens = join_tokens
        self.join_expiry = dt.timedelta(milliseconds=settings.join_token_expiry_ms)
        self.sub_ca_lifetime = dt.timedelta(milliseconds=settings.max_duration_ms)
        self.peer_crls: dict[str, tuple[dt.datetime, bytes, X.Certificate]] = {}
        """In an SCM HA service, per issuer this SCM cannot sign for (another SCM's sub-CA, the root on an
        SCM without its key): the newest CRL of it this SCM saw (lastUpdate, PEM, its signer) — recorded by
        that SCM when it led (`record_crls`), fetched from it, or kept from before a restart — which `crl`
        carries, so every party holds a list for every issuer (`take_peer_crls`)."""
        self._service = leads is not None
        self.on_crl: Callable[[int, bytes], None] | None = None
        """Called with each new CRL (number, PEM): SCM's own ports enforce it at once."""
        if leads is None:
            self.secret_keys.check_and_rotate()  # a current key before the first request
        writes = leads or (lambda: True)
        self.tasks = [
            PeriodicTask(
                "SecretKeyRotation", settings.secret_key_check_ms, secret_keys.check_and_rotate, writes
            ),
            PeriodicTask("ExpiredCertificateCleanup", settings.expired_check_ms, self.remove_expired, writes),
        ]

    def step_up(self) -> None:
        """An SCM of an HA service became the ready leader: its own certificates and CRLs recorded, and a
        current secret key (the first leader makes it; a later one rotates one that is due) before it
        answers."""
        self.record_scm_certificates()
        self.record_crls()
        self.secret_keys.check_and_rotate()

    def record_crls(self) -> None:
        """The leader of an HA service records the CRLs it signs (its sub-CA's; the root's on the
        primordial) in scm.db's `meta` record `scmCrls`, so every SCM carries them in its bundle before the
        leader's first certificate reaches anyone (OpenSSL refuses a peer whose issuer has no CRL), and
        the others' lists of what it revoked follow with the entry."""
        if not self._service:
            return
        _, bundle = self.crl(with_peers=False)
        recorded = dict(self.ca.certs.store.meta.get(SCM_CRLS_RECORD) or {})
        for issuer, _, pem, signer in X.crl_parts(bundle, self.ca.material.trust_anchor):
            recorded[issuer] = (pem + X.cert_to_pem(signer)).decode()
        self.ca.certs.store.meta.put(SCM_CRLS_RECORD, recorded)

    def remove_expired(self) -> None:
        removed = self.ca.remove_expired()
        if removed:
            log.info("Removed %d expired certificate(s) from validCerts: %s", len(removed), removed)

    # ------------------------------------------------------------------ certificates
    def check_caller(self, caller: Identity, serial: int | None, node: str | None = None) -> None:
        """Every call on the security port: a revoked certificate (`serial`) is refused, and so is one
        issued before an administrator revoked a certificate of the same holder (`node`: the datanode UUID
        or OM node it names, X.node_of): a user cut off cannot get a new certificate, not even with a spare
        minted before."""
        if serial is None:
            return
        if self.ca.certs.revoked(serial) is not None:
            raise SecurityError(
                SecurityResult.PERMISSION_DENIED,
                f"the certificate {serial} of {caller.common_name} was revoked",
            )
        if caller.role is not CertRole.JOIN and self.ca.certs.cut_off((caller.common_name, node), serial):
            raise SecurityError(
                SecurityResult.PERMISSION_DENIED,
                f"a certificate of {caller.common_name} was revoked after certificate {serial} was issued: "
                "an administrator issues a new one",
            )

    def sign(
        self,
        caller: Identity,
        csr_pem: bytes,
        caller_node: str | None = None,
        caller_serial: int | None = None,
    ) -> tuple[bytes, bytes]:
        """(certificate file PEM: the certificate, then the issuing sub-CA; the root CA's PEM, ca.crt) for
        a CSR the caller may have signed; `caller_node`: the datanode
        UUID or OM node the caller's certificate names (X.node_of); `caller_serial`: its serial (a JOIN
        credential's token)."""
        self.check_caller(caller, caller_serial, caller_node)
        if caller.role is not CertRole.JOIN:
            self._check_renewal_names(csr_pem, caller, caller_serial)
            with self.ca.certs.batch():
                cert = self.ca.sign_request(csr_pem, caller, self.policy, caller_node)
                superseded = self._supersede(cert, caller, caller_serial)
            if superseded:
                log.info("Renewal of %s superseded certificate(s) %s", caller.common_name, superseded)
                self.publish_and_record_crl()
        else:
            csr = parse_csr(csr_pem)
            requested = requested_identity(csr)
            self.policy.check_csr(caller, requested, caller_node, X.node_of(csr))
            token = self.join_tokens.check(
                caller_serial or 0,
                requested,
                X.datanode_id(csr),
                self.ca.clock.wall_ms(),
                X.om_node(csr),
                tuple(X.host_names(csr)),
            )
            with self.ca.certs.batch():
                cert = self.ca.issue(csr)
                self.join_tokens.redeem(token, cert)
        log.info(
            "Issued certificate %d for %s to %s (certificate %s), valid until %s",
            cert.serial_number,
            X.common_name(cert),
            caller.common_name,
            caller_serial,
            cert.not_valid_after_utc.isoformat(),
        )
        return self.ca.file_pem(cert), self.ca.material.pem

    def sign_scm(
        self,
        caller: Identity,
        caller_serial: int | None,
        csr_pem: bytes,
        scm_node: str,
        scm_id: str,
        cluster_id: str,
    ) -> tuple[bytes, bytes]:
        """Ozone's getSCMCertificate, on the SCM holding the root CA's key (the primordial, HASecurityUtils):
        the sub-CA of SCM node `scm_node` (its scmUuid `scm_id`) of cluster `cluster_id`, signed by the
        root, for a caller presenting a JOIN credential minted for that node (`scm --init --join-token
        scm:NODE=FILE`; Ozone's SCM authenticates with its Kerberos principal). It is signed outside the
        Raft log (at bootstrap no quorum may exist yet): an out-of-log serial, and no record; the SCM
        records its own sub-CA once it leads (`record_scm_certificates`). (certificate PEM, root PEM)."""
        material = self.ca.material
        if material.root is None or material.root_key is None:
            raise SecurityError(
                SecurityResult.UNABLE_TO_ISSUE_CERTIFICATE,
                "this SCM holds no root CA key: the primordial SCM (ozone.scm.primordial.node.id) signs "
                "the other SCMs' certificates",
            )
        if caller.role is not CertRole.JOIN or caller_serial is None:
            raise SecurityError(
                SecurityResult.PERMISSION_DENIED,
                f"{caller.common_name} may not obtain an SCM certificate: an SCM bootstraps with a JOIN "
                "credential minted for its node (scm --init --join-token scm:NODE=FILE)",
            )
        if cluster_id != self.ca.cluster_id:
            raise SecurityError(
                SecurityResult.PERMISSION_DENIED,
                f"SCM {scm_node} is of cluster {cluster_id or '(none)'}, this CA's is {self.ca.cluster_id}",
            )
        csr = parse_csr(csr_pem)
        requested = requested_identity(csr)
        if requested.role is not CertRole.SCM:
            raise SecurityError(
                SecurityResult.INVALID_CSR, f"{requested.common_name}: an SCM's CSR names scm@HOST"
            )
        self.join_tokens.check_scm(caller_serial, scm_node, requested.host, self.ca.clock.wall_ms())
        now = dt.datetime.fromtimestamp(self.ca.clock.wall_ms() / 1000, dt.UTC)
        cert = X.sub_ca_certificate(
            csr.public_key(),  # type: ignore[arg-type]
            material.root_key,
            material.root,
            requested,
            tuple(X.host_names(csr)),
            cluster_id,
            scm_id,
            self.sub_ca_lifetime,
            self.ca.certs.out_of_log_serial(),
            now,
        )
        log.info(
            "Issued sub-CA certificate %d for SCM %s (%s, scmUuid %s) with JOIN credential %d, valid "
            "until %s",
            cert.serial_number,
            scm_node,
            requested.common_name,
            scm_id,
            caller_serial,
            cert.not_valid_after_utc.isoformat(),
        )
        return X.cert_to_pem(cert), material.pem

    def record_scm_certificates(self) -> None:
        """The leader of an HA service records its own sub-CA and the root in validCerts when they are
        missing (Ozone's persistPrimarySCMCerts, for every SCM): they were signed outside the log."""
        material = self.ca.material
        for cert in (material.trust_anchor, material.cert):
            if self.ca.certs.get(cert.serial_number) is None:
                self.ca.certs.add(cert)
                log.info("Recorded SCM certificate %d (%s)", cert.serial_number, X.common_name(cert))

    def _check_renewal_names(self, csr_pem: bytes, caller: Identity, caller_serial: int | None) -> None:
        """A renewal (the caller's own common name) names no host its current certificate does not: a
        certificate's hosts are fixed when it is first issued (a JOIN credential's, or an administrator's);
        an HA OM's names no other OM's host (one issued before SCM refused them is not renewed)."""
        current = None if caller_serial is None else self.ca.certs.get(caller_serial)
        csr = parse_csr(csr_pem)
        if current is None or not caller.role.is_service or X.csr_common_name(csr) != caller.common_name:
            return  # a user's certificate names no host at all (the CA refuses any: INVALID_CSR)
        added = set(X.host_names(csr)) - set(X.host_names(X.cert_from_pem(current.pem)))
        if added:
            raise SecurityError(
                SecurityResult.PERMISSION_DENIED,
                f"{caller.common_name} may not add {', '.join(sorted(added))} in a renewal: its certificate "
                "names the hosts it was first issued for",
            )
        om_node = X.om_node(csr)
        why = None if om_node is None else self.join_tokens.om_host_refusal(om_node, X.host_names(csr))
        if why:
            raise SecurityError(
                SecurityResult.PERMISSION_DENIED,
                f"{caller.common_name} of node {om_node} is not renewed: {why}; revoke it and join again",
            )

    def _supersede(self, cert: X.Certificate, caller: Identity, caller_serial: int | None) -> list[int]:
        """A renewal (the caller's own holder) revokes, as superseded, every other valid certificate of
        the holder but the caller's: a holder keeps at most two, so spares do not pile up."""
        holder = holder_of(cert)
        if caller_serial is None or holder[0] != caller.common_name:
            return []
        keep = {caller_serial, cert.serial_number}
        older = [r.serial for r in self.ca.certs.held_by(holder) if r.serial not in keep]
        now = self._revocation_ms()
        for serial in older:
            self.ca.certs.revoke(serial, RevocationReason.SUPERSEDED, now, cut_off=False)
        return older

    def _revocation_ms(self) -> int:
        """A second after the revocation before (the resolution of X.509 times), so crl_last_update
        orders the lists by it."""
        latest = max((r.revoked_ms for r in self.ca.certs.all_revoked()), default=0)
        return max(self.ca.clock.wall_ms(), latest + 1000)

    def publish_crl(self) -> None:
        """Hands the current CRL bundle to `on_crl`: after a revocation, and after SCM renews its sub-CA
        (a bundle signed by the new certificate, which parties take at the same number)."""
        if self.on_crl is not None:
            self.on_crl(*self.crl())

    def publish_and_record_crl(self) -> None:
        """After a revocation: the new lists recorded (an HA leader's, `record_crls`) and published."""
        self.record_crls()
        self.publish_crl()

    def mint_join(
        self, caller: Identity, role: CertRole, name: str, csr_pem: bytes, rejoin: str = "", om_node: str = ""
    ) -> tuple[bytes, bytes]:
        """An administrator's new JOIN credential for one `role` daemon (on host `name`, "" for any; the
        known datanode `rejoin` whose certificates are all revoked; the HA OM node `om_node` the
        configuration names): the certificate for the CSR's key (common name join@<role>), valid
        hdds.x509.join.token.expiry."""
        if not self.policy.is_admin(caller):
            raise SecurityError(
                SecurityResult.PERMISSION_DENIED,
                f"{caller.common_name} may not mint JOIN credentials: administrators only",
            )
        if rejoin:
            if role is not CertRole.DATANODE:
                raise SecurityError(SecurityResult.INVALID_CSR, "only a datanode rejoins by its UUID")
            self.join_tokens.check_rejoin(rejoin)
        if om_node and role is CertRole.OM:
            self.join_tokens.check_om_node(om_node)
        if role is CertRole.SCM:
            raise SecurityError(
                SecurityResult.INVALID_CSR,
                "an SCM's JOIN credential is minted by scm --init --join-token scm:NODE=FILE on the "
                "primordial SCM",
            )
        cert = mint_join(
            self.ca, self.join_tokens, role, name, parse_csr(csr_pem), self.join_expiry, rejoin, om_node
        )
        log.info(
            "Minted JOIN credential %d for a %s%s%s for %s, valid until %s",
            cert.serial_number,
            role.name,
            f" on {name}" if name else "",
            f" (node {om_node})" if om_node else "",
            caller.common_name,
            cert.not_valid_after_utc.isoformat(),
        )
        return self.ca.file_pem(cert), self.ca.material.pem

    def revoke(
        self,
        caller: Identity,
        serials: list[int],
        reason: RevocationReason,
        names: list[str] | tuple[str, ...] = (),
    ) -> list[RevokedRecord]:
        """Revokes valid certificates (administrators only), all or none: `serials`, and every valid
        certificate whose common name is in `names`. Each leaves validCerts for revokedCerts and enters
        the next CRL, and its holder is cut off (check_caller). SCM's own and the root CA's are not revoked
        here."""
        if not self.policy.is_admin(caller):
            raise SecurityError(
                SecurityResult.PERMISSION_DENIED,
                f"Access denied for user {caller.common_name}: revoking a certificate needs an administrator",
            )
        for name in dict.fromkeys(names):
            held = [r.serial for r in self.ca.certs.records() if _common_name(r) == name]
            if not held:
                raise SecurityError(SecurityResult.CERTIFICATE_NOT_FOUND, f"no valid certificate of {name}")
            serials = [*serials, *held]
        serials = list(dict.fromkeys(serials))
        for serial in serials:
            record = self.ca.certs.get(serial)
            if record is None:
                revoked = self.ca.certs.revoked(serial)
                raise SecurityError(
                    SecurityResult.CERTIFICATE_NOT_FOUND,
                    f"certificate {serial} was already revoked"
                    if revoked is not None
                    else f"no valid certificate with serial {serial}",
                )
            if record.role is CertRole.SCM:
                raise SecurityError(
                    SecurityResult.PERMISSION_DENIED,
                    f"certificate {serial} is SCM's own or the root CA's: it is not revoked, the CA is "
                    "initialised again",
                )
        # A JOIN credential's holder (join@<role>) names every credential of that role: cut off none.
        join = {s for s in serials if self.ca.certs.get(s).role is CertRole.JOIN}  # type: ignore[union-attr]
        now = self._revocation_ms()
        with self.ca.certs.batch():
            done = [
                r for s in serials if (r := self.ca.certs.revoke(s, reason, now, s not in join)) is not None
            ]
        self.publish_and_record_crl()
        for r in done:
            log.warning(
                "Revoked certificate %d (%s, %s) for %s",
                r.cert.serial,
                r.cert.role.name,
                reason.name,
                caller.common_name,
            )
        return done

    def crl(self, with_peers: bool = True) -> tuple[int, bytes]:
        """(CRL number, PEM): a signed CRL per issuer this SCM holds the key of, listing the revoked
        certificates that issuer signed and that have not expired — its sub-CA's (the daemons' and users'
        certificates) and the root's (SCM certificates, and leaves the root signed before SCM had a sub-CA)
        — then, in an SCM HA service, the other SCMs' lists as last fetched (`take_peer_crls`), then the
        sub-CA certificates, so a holder verifies each list against its ca.crt. OpenSSL's CRL check wants
        the CRL of a peer's issuer, SCM's own certificate's too. The number counts revocations, and the
        same number is always the same lists of this SCM's. Any certificate holder may fetch it (it names
        serials only)."""
        now = self.ca.clock.wall_ms()
        revoked = self.ca.certs.all_revoked()
        material = self.ca.material
        signers = self._signers()
        anchor = material.trust_anchor
        last_update = crl_last_update(anchor, [r.revoked_ms for r in revoked], now)
        issuers = {r.cert.serial: X.cert_from_pem(r.cert.pem).issuer for r in revoked}
        number = len(revoked)
        lists = [
            X.build_crl(
                key,
                issuer,
                [
                    (r.cert.serial, r.revoked_ms, r.reason.name)
                    for r in revoked
                    if r.cert.expiry_ms > now and issuers[r.cert.serial] == issuer.subject
                ],
                number,
                last_update,
                int(anchor.not_valid_after_utc.timestamp() * 1000),
            )
            for key, issuer in signers
        ]
        if not with_peers:
            return number, b"".join(lists) + X.chain_to_pem(material.chain)
        if self._service:
            for bundle in (self.ca.certs.store.meta.get(SCM_CRLS_RECORD) or {}).values():
                self.take_peer_crls(str(bundle).encode())
        peers = [pem for _, pem, _ in self.peer_crls.values()]
        chain = [*material.chain]
        for _, _, signer in self.peer_crls.values():
            if signer != anchor and signer not in chain:
                chain.append(signer)
        return number, b"".join(lists) + b"".join(peers) + X.chain_to_pem(chain)

    def take_peer_crls(self, bundle: bytes) -> bool:
        """Keeps another SCM's getCrl answer's lists of issuers this SCM does not sign for, each when newer
        (a later lastUpdate) than the one held; True when any was taken (ValueError: the bundle does not
        verify against the root)."""
        own = {signer.subject.rfc4514_string() for _, signer in self._signers()}
        taken = False
        for issuer, last_update, pem, signer in X.crl_parts(bundle, self.ca.material.trust_anchor):
            held = self.peer_crls.get(issuer)
            if issuer not in own and (held is None or last_update > held[0]):
                self.peer_crls[issuer] = (last_update, pem, signer)
                taken = True
        return taken

    def _signers(self) -> list[tuple[X.PrivateKey, X.Certificate]]:
        material = self.ca.material
        signers = [(material.key, material.cert)]
        if material.root is not None and material.root_key is not None:
            signers.append((material.root_key, material.root))
        return signers

    def ca_certificate(self) -> bytes:
        return self.ca.material.pem

    def certificate(self, caller: Identity, serial: int) -> bytes:
        self.policy.check_read_certificates(caller)
        record = self.ca.certs.get(serial)
        revoked = self.ca.certs.revoked(serial) if record is None else None
        if record is None and revoked is None:
            raise SecurityError(
                SecurityResult.CERTIFICATE_NOT_FOUND, f"no valid or revoked certificate with serial {serial}"
            )
        return record.pem if record is not None else revoked.cert.pem  # type: ignore[union-attr]

    def certificates(
        self, caller: Identity, role: CertRole | None, start_serial: int, count: int, revoked: bool = False
    ) -> list[bytes]:
        """Valid certificates, or (`revoked`) the revoked ones."""
        self.policy.check_read_certificates(caller)
        if revoked:
            return [r.cert.pem for r in self.ca.certs.list_revoked(role, start_serial, count)]
        return [r.pem for r in self.ca.certs.list(role, start_serial, count)]

    # ------------------------------------------------------------------ secret keys
    def current_secret_key(self, caller: Identity) -> ManagedSecretKey:
        self.policy.check_read_secret_keys(caller)
        key = self.secret_keys.current()
        if key is None:
            raise SecurityError(SecurityResult.SECRET_KEY_NOT_INITIALIZED, "SCM holds no current secret key")
        return key

    def secret_key(self, caller: Identity, key_id: uuid.UUID) -> ManagedSecretKey | None:
        self.policy.check_read_secret_keys(caller)
        return self.secret_keys.get(key_id)

    def all_secret_keys(self, caller: Identity) -> list[ManagedSecretKey]:
        self.policy.check_read_secret_keys(caller)
        return self.secret_keys.all()


SCM_CRLS_RECORD = "scmCrls"
"""The `meta` record of an SCM HA service's CRLs: issuer (RFC 4514) -> its latest CRL and signer (PEM), as
the SCM signing for that issuer recorded them when it led (`ScmSecurity.record_crls`)."""

CRL_CLOCK_SKEW_MS = 3_600_000
"""How far a daemon's clock may lag SCM's: a CRL dated in a daemon's future would fail every handshake."""


def _common_name(record: CertificateRecord) -> str:
    return X.common_name(X.cert_from_pem(record.pem))


def crl_last_update(ca: X.Certificate, revoked_ms: list[int], now_ms: int) -> int:
    """The lastUpdate of the CRL listing revocations at `revoked_ms`. OpenSSL checks a peer against the CRL
    of the latest lastUpdate it holds, so it grows with each revocation call (they are a second apart, and
    one call revokes many: a second per call past the CA's start), and it lies CRL_CLOCK_SKEW_MS before the
    latest revocation; never after SCM's `now_ms` (a CRL not yet valid fails every handshake)."""
    start = int(ca.not_valid_before_utc.timestamp() * 1000)
    calls = len(set(revoked_ms))
    return min(now_ms, max(start + 1000 * calls, max(revoked_ms, default=0) - CRL_CLOCK_SKEW_MS))


def mint_join(
    ca: CertificateAuthority,
    tokens: JoinTokens,
    role: CertRole,
    name: str,
    csr: X.CertificateSigningRequest,
    lifetime: dt.timedelta,
    rejoin: str = "",
    om_node: str = "",
    scm_node: str = "",
) -> X.Certificate:
    """Issues and records a JOIN credential for `role` (host `name`, "" for any; HA OM node `om_node`; SCM
    node `scm_node`, which an SCM's names) with the CSR's key, in one batch: `scm --init --join-token` and
    the security protocol's createJoinToken."""
    try:
        expected = join_identity(role)
    except ValueError as e:
        raise SecurityError(SecurityResult.INVALID_CSR, str(e)) from None
    if X.csr_common_name(csr) != expected.common_name:
        raise SecurityError(
            SecurityResult.INVALID_CSR,
            f"a JOIN credential's CSR names {expected.common_name}, not {X.csr_common_name(csr)!r}",
        )
    if name:
        try:
            Identity.from_common_name(f"{role.value}@{name}")
        except ValueError as e:
            raise SecurityError(SecurityResult.INVALID_CSR, f"--name {name!r}: {e}") from None
    if om_node:
        if role is not CertRole.OM:
            raise SecurityError(SecurityResult.INVALID_CSR, "only an OM's JOIN credential names an OM node")
        try:
            X.check_om_node(om_node)
        except ValueError as e:
            raise SecurityError(SecurityResult.INVALID_CSR, f"--node: {e}") from None
    if (role is CertRole.SCM) != bool(scm_node):
        raise SecurityError(
            SecurityResult.INVALID_CSR, "an SCM's JOIN credential, and it alone, names its SCM node"
        )
    with ca.certs.batch():
        cert = ca.issue(csr, lifetime)
        tokens.add(cert, role, name, rejoin, om_node, scm_node)
    return cert
