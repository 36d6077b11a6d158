"""The JOIN credential: one PEM file holding a key, its JOIN certificate and the CA certificate.

`pyozone scm --init --join-token ROLE=FILE` or `pyozone admin cert join-token` writes one (mode 0600) per
daemon; the daemon reaches it through `ozone.security.join.credentials.file` and presents it when it has no
certificate of its own yet, so its first CSR travels over mutual TLS like every other call. SCM signs one
CSR with it, for the role it was minted for and an identity that does not exist yet
(scm/security/join_tokens.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pyozone.common.fsutil import write_file
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole

_BLOCK = re.compile(rb"-----BEGIN ([A-Z ]+)-----\r?\n.*?-----END \1-----\r?\n?", re.DOTALL)


@dataclass(frozen=True, slots=True)
class JoinCredential:
    key_pem: bytes
    cert_pem: bytes
    ca_pem: bytes

    def to_pem(self) -> bytes:
        return self.key_pem + self.cert_pem + self.ca_pem

    @classmethod
    def from_pem(cls, data: bytes, source: str = "the JOIN credential") -> JoinCredential:
        """The three blocks in any order: one private key, then the certificate the key belongs to and
        the CA certificate that signed it."""
        keys, certs = [], []
        for match in _BLOCK.finditer(data):
            kind = match.group(1)
            if kind.endswith(b"PRIVATE KEY"):
                keys.append(match.group(0))
            elif kind == b"CERTIFICATE":
                certs.append(match.group(0))
        if len(keys) != 1 or len(certs) != 2:
            raise ValueError(
                f"{source}: expected one PEM private key and two PEM certificates (JOIN and CA), "
                f"found {len(keys)} key(s) and {len(certs)} certificate(s)"
            )
        key = X.key_from_pem(keys[0])
        parsed = [X.cert_from_pem(c) for c in certs]
        public = key.public_key().public_numbers()
        own = [i for i, c in enumerate(parsed) if c.public_key().public_numbers() == public]
        if len(own) != 1:
            raise ValueError(f"{source}: no certificate of the bundle belongs to its private key")
        cert, ca = parsed[own[0]], parsed[1 - own[0]]
        if X.identity_of(cert).role is not CertRole.JOIN:
            raise ValueError(f"{source}: {X.common_name(cert)!r} is not a JOIN certificate")
        if not X.is_signed_by(cert, ca):
            raise ValueError(f"{source}: the JOIN certificate is not signed by the bundle's CA certificate")
        return cls(keys[0], certs[own[0]], certs[1 - own[0]])

    @classmethod
    def read(cls, path: Path) -> JoinCredential:
        try:
            data = path.read_bytes()
        except OSError as e:
            raise ValueError(f"cannot read the JOIN credential {path}: {e.strerror or e}") from None
        return cls.from_pem(data, str(path))

    def write(self, path: Path) -> None:
        write_file(path, self.to_pem(), private=True)
