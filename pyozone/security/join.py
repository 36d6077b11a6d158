"""The JOIN credential: one PEM file holding a key, its JOIN certificate (with SCM's sub-CA that issued it)
and the root CA certificate.

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
        """The blocks in any order: one private key, the certificate the key belongs to, the root CA
        certificate (self-signed) and the sub-CA between them, if any (its issuer, SCM's)."""
        keys, certs = [], []
        for match in _BLOCK.finditer(data):
            kind = match.group(1)
            if kind.endswith(b"PRIVATE KEY"):
                keys.append(match.group(0))
            elif kind == b"CERTIFICATE":
                certs.append(match.group(0))
        if len(keys) != 1 or len(certs) < 2:
            raise ValueError(
                f"{source}: expected one PEM private key and the PEM certificates of the JOIN credential and "
                f"its CA, found {len(keys)} key(s) and {len(certs)} certificate(s)"
            )
        key = X.key_from_pem(keys[0])
        parsed = [X.cert_from_pem(c) for c in certs]
        public = key.public_key().public_numbers()
        own = [i for i, c in enumerate(parsed) if c.public_key().public_numbers() == public]
        if len(own) != 1:
            raise ValueError(f"{source}: no certificate of the bundle belongs to its private key")
        roots = [i for i, c in enumerate(parsed) if i != own[0] and c.issuer == c.subject]
        if len(roots) != 1:
            raise ValueError(f"{source}: expected one self-signed root CA certificate, found {len(roots)}")
        cert, ca = parsed[own[0]], parsed[roots[0]]
        if X.identity_of(cert).role is not CertRole.JOIN:
            raise ValueError(f"{source}: {X.common_name(cert)!r} is not a JOIN certificate")
        between = [i for i in range(len(parsed)) if i not in (own[0], roots[0])]
        if not X.verifies_to(cert, [parsed[i] for i in between], ca):
            raise ValueError(f"{source}: the JOIN certificate is not signed by the bundle's CA certificate")
        return cls(keys[0], b"".join(certs[i] for i in (own[0], *between)), certs[roots[0]])

    @classmethod
    def read(cls, path: Path) -> JoinCredential:
        try:
            data = path.read_bytes()
        except OSError as e:
            raise ValueError(f"cannot read the JOIN credential {path}: {e.strerror or e}") from None
        return cls.from_pem(data, str(path))

    def write(self, path: Path) -> None:
        write_file(path, self.to_pem(), private=True)
