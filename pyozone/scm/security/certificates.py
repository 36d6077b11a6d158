"""The `validCerts` table: every certificate SCM's CA issued that has not expired, by serial number; and
`revokedCerts` (Ozone's names): every certificate an administrator revoked, moved out of validCerts.

A record holds the PEM, the role and the expiry (ms since the epoch), so listing by role and dropping the
expired read no certificate. Serial numbers come from the `CertificateId` sequence (Ozone's name), so they
are unique for the cluster's life: an expired certificate's serial is never reused. A revoked record stays
after its expiry: the identity it named (a datanode UUID) is never issued again. An administrator's
revocation also cuts off the identity it named (`RevokedRecord.cutoff`): every certificate of that identity
issued before it renews nothing, until an administrator issues one again.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from enum import Enum
from itertools import islice

from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole
from pyozone.scm.block.sequence_id import SequenceIdGenerator
from pyozone.scm.store import SCMMetadataStore

CERTIFICATE_ID = "CertificateId"
OUT_OF_LOG_SERIALS = 1 << 62
"""Serials of the certificates an SCM of an HA service signs outside the Raft log: a sub-CA the root signs at
`scm --bootstrap` (no quorum may exist yet) and an SCM's renewal of its own. Drawn at random at or above
this, which the CertificateId sequence (one id per certificate) never reaches, so they never collide with
one a leader issued; RFC 5280's serials are at most 20 octets, these 8."""


@dataclass(frozen=True, slots=True)
class CertificateRecord:
    serial: int
    pem: bytes
    role: CertRole
    expiry_ms: int

    @classmethod
    def of(cls, cert: X.Certificate) -> CertificateRecord:
        return cls(
            cert.serial_number,
            X.cert_to_pem(cert),
            X.identity_of(cert).role,
            expiry_ms(cert),
        )

    def to_json(self) -> dict[str, object]:
        return {"pem": self.pem.decode(), "role": self.role.value, "expiry": self.expiry_ms}

    @classmethod
    def from_json(cls, serial: int, data: dict[str, object]) -> CertificateRecord:
        return cls(serial, str(data["pem"]).encode(), CertRole(data["role"]), int(data["expiry"]))  # type: ignore[call-overload]


class RevocationReason(Enum):
    """RFC 5280's CRLReason codes an administrator may give (Ozone's revokeCertificates `reason`)."""

    UNSPECIFIED = 0
    KEY_COMPROMISE = 1
    AFFILIATION_CHANGED = 3
    SUPERSEDED = 4
    CESSATION_OF_OPERATION = 5
    CERTIFICATE_HOLD = 6
    PRIVILEGE_WITHDRAWN = 9


Holder = tuple[str, str | None]
"""Whom a certificate names: its common name and, for a datanode, its datanode UUID, for an HA OM its
"SERVICE/NODE" (several datanodes, or the OMs of a service, on one host share a common name; X.node_of)."""


def holder_of(cert: X.Certificate) -> Holder:
    return X.common_name(cert), X.node_of(cert)


@dataclass(frozen=True, slots=True)
class RevokedRecord:
    cert: CertificateRecord
    reason: RevocationReason
    revoked_ms: int
    holder: Holder
    cutoff: int
    """Certificates of `holder` with a lower serial are cut off (they renew nothing): a serial drawn at an
    administrator's revocation, 0 for a certificate superseded by its holder's renewal."""

    def to_json(self) -> dict[str, object]:
        return {
            **self.cert.to_json(),
            "reason": self.reason.value,
            "revoked": self.revoked_ms,
            "holder": self.holder[0],
            "datanode": self.holder[1],
            "cutoff": self.cutoff,
        }

    @classmethod
    def from_json(cls, serial: int, data: dict[str, object]) -> RevokedRecord:
        cert = CertificateRecord.from_json(serial, data)
        if "holder" in data:
            holder = (str(data["holder"]), None if data["datanode"] is None else str(data["datanode"]))
        else:  # revoked before holders were recorded: it cuts off its holder's certificates up to itself
            holder = holder_of(X.cert_from_pem(cert.pem))
        return cls(
            cert,
            RevocationReason(data["reason"]),
            int(data["revoked"]),  # type: ignore[call-overload]
            holder,
            int(data.get("cutoff", serial + 1)),  # type: ignore[call-overload]
        )


def expiry_ms(cert: X.Certificate) -> int:
    return int(cert.not_valid_after_utc.timestamp() * 1000)


class CertificateStore:
    def __init__(self, store: SCMMetadataStore) -> None:
        self.store = store
        self._table = store.valid_certs
        self._revoked = store.revoked_certs
        # One id per write: certificates are few, and a serial handed out must survive a crash.
        self._serials = SequenceIdGenerator(store, batch_size=1)

    def batch(self) -> AbstractContextManager[None]:
        """One atomic write for several changes (a certificate and the JOIN token it redeems)."""
        return self.store.batch()

    def next_serial(self) -> int:
        return self._serials.next_id(CERTIFICATE_ID)

    def out_of_log_serial(self) -> int:
        """A serial for a certificate signed outside the Raft log (OUT_OF_LOG_SERIALS), none this store
        knows."""
        while True:
            serial = OUT_OF_LOG_SERIALS + secrets.randbelow(OUT_OF_LOG_SERIALS)
            if self.get(serial) is None and self.revoked(serial) is None:
                return serial

    def add(self, cert: X.Certificate) -> CertificateRecord:
        record = CertificateRecord.of(cert)
        self._table.put(record.serial, record.to_json())
        return record

    def get(self, serial: int) -> CertificateRecord | None:
        if not 0 <= serial < 1 << 64:
            return None
        data = self._table.get(serial)
        return None if data is None else CertificateRecord.from_json(serial, data)

    def list(self, role: CertRole | None, start_serial: int, count: int) -> list[CertificateRecord]:
        """Up to `count` records with serial >= start_serial, in serial order; every role when None."""
        records = (CertificateRecord.from_json(s, d) for s, d in self._table.items() if s >= start_serial)
        return list(islice((r for r in records if role is None or r.role is role), count))

    def records(self) -> Iterator[CertificateRecord]:
        return (CertificateRecord.from_json(s, d) for s, d in self._table.items())

    def held_by(self, holder: Holder) -> list[CertificateRecord]:
        """The valid certificates naming `holder`."""
        return [r for r in self.records() if holder_of(X.cert_from_pem(r.pem)) == holder]

    def cut_off(self, holder: Holder, serial: int) -> bool:
        """Whether an administrator revoked a certificate of `holder` after `serial` was issued."""
        return any(r.holder == holder and serial < r.cutoff for r in self.all_revoked())

    def revoke(
        self, serial: int, reason: RevocationReason, now_ms: int, cut_off: bool = True
    ) -> RevokedRecord | None:
        """Moves a valid certificate to revokedCerts (in one batch), cutting off its holder unless
        `cut_off` is False (a renewal supersedes it); None when no valid certificate has that serial."""
        record = self.get(serial)
        if record is None:
            return None
        holder = holder_of(X.cert_from_pem(record.pem))
        revoked = RevokedRecord(record, reason, now_ms, holder, self.next_serial() if cut_off else 0)
        with self.store.batch():
            self._revoked.put(serial, revoked.to_json())
            self._table.delete(serial)
        return revoked

    def revoked(self, serial: int) -> RevokedRecord | None:
        if not 0 <= serial < 1 << 64:
            return None
        data = self._revoked.get(serial)
        return None if data is None else RevokedRecord.from_json(serial, data)

    def all_revoked(self) -> list[RevokedRecord]:
        return [RevokedRecord.from_json(s, d) for s, d in self._revoked.items()]

    def list_revoked(self, role: CertRole | None, start_serial: int, count: int) -> list[RevokedRecord]:
        records = (RevokedRecord.from_json(s, d) for s, d in self._revoked.items() if s >= start_serial)
        return list(islice((r for r in records if role is None or r.cert.role is role), count))

    def remove_expired(self, now_ms: int) -> list[int]:
        """Drops every certificate past its expiry; returns their serials."""
        expired = [s for s, d in self._table.items() if int(d["expiry"]) <= now_ms]
        for serial in expired:
            self._table.delete(serial)
        return expired
