"""The `validCerts` table: every certificate SCM's CA issued that has not expired, by serial number.

A record holds the PEM, the role and the expiry (ms since the epoch), so listing by role and dropping the
expired read no certificate. Serial numbers come from the `CertificateId` sequence (Ozone's name), so they
are unique for the cluster's life: an expired certificate's serial is never reused.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice

from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole
from pyozone.scm.block.sequence_id import SequenceIdGenerator
from pyozone.scm.store import SCMMetadataStore

CERTIFICATE_ID = "CertificateId"


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


def expiry_ms(cert: X.Certificate) -> int:
    return int(cert.not_valid_after_utc.timestamp() * 1000)


class CertificateStore:
    def __init__(self, store: SCMMetadataStore) -> None:
        self._table = store.valid_certs
        # One id per write: certificates are few, and a serial handed out must survive a crash.
        self._serials = SequenceIdGenerator(store, batch_size=1)

    def next_serial(self) -> int:
        return self._serials.next_id(CERTIFICATE_ID)

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

    def remove_expired(self, now_ms: int) -> list[int]:
        """Drops every certificate past its expiry; returns their serials."""
        expired = [s for s, d in self._table.items() if int(d["expiry"]) <= now_ms]
        for serial in expired:
            self._table.delete(serial)
        return expired
