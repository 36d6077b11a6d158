"""Mutual TLS for every port: `ssl` contexts for the RPC ports (pyozone.rpc), the datastream port and HTTP,
and the identity a peer's certificate names.

A `TlsStore` holds where one party's key, certificate and trusted CA live and re-reads them when they
change, so a renewed certificate is used by the next connection without restarting anything: `ssl`
contexts load the new chain into the same context, and an RPC channel kept for the process's life dials
again when the store's `generation` moves (rpc.Channel).
Both sides always present a certificate and check the other's against the CA (mutual TLS); a peer without
one, or with one from another CA, fails the handshake. Once the party holds SCM's certificate revocation
list (`update_crl`), a revoked peer fails it too: OpenSSL checks the CRL in the handshake, and
`revoked_ssl_peer` lets a server refuse per call a connection opened before the revocation.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import ssl
import tempfile
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path

from pyozone.common.fsutil import write_file
from pyozone.config import OzoneConfiguration
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import Identity

CRL_FILE = "crl.pem"
"""The CA's revocation lists a party last fetched (one per issuer, and the sub-CA signing them), beside its
ca.crt. Only the lists reach OpenSSL: ca.crt stays the one trust anchor."""


@dataclass(frozen=True, slots=True)
class TlsPaths:
    """One party's files: its private key, its certificate and the CA certificate it trusts."""

    key: Path
    cert: Path
    ca: Path

    @classmethod
    def under(cls, directory: Path, conf: OzoneConfiguration) -> TlsPaths:
        """A component's files under its metadata directory, by Ozone's names: keys/private.pem,
        certs/certificate.crt and certs/ca.crt."""
        keys = directory / conf.get("hdds.key.dir.name")
        certs = directory / conf.get("hdds.x509.dir.name")
        return cls(
            keys / conf.get("hdds.priv.key.file.name"),
            certs / conf.get("hdds.x509.file.name"),
            certs / "ca.crt",
        )

    @classmethod
    def for_client(cls, conf: OzoneConfiguration) -> TlsPaths | None:
        """A user's files: `ozone.client.tls.*` keys, else OZONE_CLIENT_CERT, OZONE_CLIENT_KEY and
        OZONE_CA_CERT. None when neither names a certificate; half a set is an error."""

        def pick(key: str, variable: str) -> str | None:
            """-D outranks the environment, which outranks ozone-site.xml: a shell acts as its user."""
            if conf.source(key) == "override":
                return conf.get(key)
            return os.environ.get(variable) or conf.get(key)

        cert = pick("ozone.client.tls.cert.file", "OZONE_CLIENT_CERT")
        key = pick("ozone.client.tls.key.file", "OZONE_CLIENT_KEY")
        ca = pick("ozone.client.tls.ca.file", "OZONE_CA_CERT")
        if not (cert or key or ca):
            return None
        missing = [
            n for n, v in (("certificate", cert), ("private key", key), ("CA certificate", ca)) if not v
        ]
        if missing:
            raise ValueError(
                "a client certificate needs all three of ozone.client.tls.cert.file, "
                "ozone.client.tls.key.file and ozone.client.tls.ca.file "
                "(or OZONE_CLIENT_CERT, OZONE_CLIENT_KEY, OZONE_CA_CERT); "
                f"missing: {', '.join(missing)}"
            )
        return cls(Path(key), Path(cert), Path(ca))  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class TlsMaterial:
    key_pem: bytes
    cert_pem: bytes
    ca_pem: bytes


class TlsStore:
    """The current material of one party, re-read when a file's modification time changes."""

    def __init__(self, paths: TlsPaths) -> None:
        self.paths = paths
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._material: TlsMaterial | None = None
        self._contexts: list[ssl.SSLContext] = []
        self.generation = 0
        """How many times the material was (re)loaded: long-lived channels compare it without touching the
        files (rpc.Channel); `material()` and `reload()` move it."""
        self.revoked: frozenset[int] = frozenset()
        """The serials the CA's CRL lists (`update_crl`); empty until one is loaded."""
        self.crl_number = -1
        self.crl_issuers: frozenset[str] = frozenset()
        """The issuers whose CRL the held bundle carries (OpenSSL checks a peer against its issuer's)."""
        self.crl_signers: dict[str, tuple[dt.datetime, int]] = {}
        """Per issuer of the held bundle, the start and serial of the certificate that signed its CRL
        (X.crl_signers)."""
        self._crls = b""
        """The held bundle's CRLs alone (X.crl_blocks), what OpenSSL is given."""
        self._load_kept_crl()

    def _load_kept_crl(self) -> None:
        """The CRL this party kept (crl.pem beside ca.crt) is enforced from the start, before any port
        opens: a daemon restarted while SCM is unreachable still refuses what was revoked. One that does
        not verify against the trusted CA stops the party (ValueError naming the file)."""
        path = self.paths.ca.with_name(CRL_FILE)
        if not path.exists():
            return
        pem = path.read_bytes()
        try:
            ca = X.cert_from_pem(self.paths.ca.read_bytes())
            self.crl_number, self.revoked = X.crl_number(pem, ca), X.crl_serials(pem, ca)
            self.crl_signers = X.crl_signers(pem, ca)
            self.crl_issuers = frozenset(self.crl_signers)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None
        self._crls = X.crl_blocks(pem)

    def update_crl(self, number: int, pem: bytes) -> bool:
        """Takes the CA's CRL bundle number `number` when newer than the one held, or as new but carrying
        the CRL of an issuer the held one lacks (SCM's sub-CA made after the root's CRL was kept) or signed
        by a later certificate of that issuer (SCM renewed or re-made its sub-CA; the revocation count did
        not move; the older bundle is not taken back), or listing every serial the held one lists and more
        (in an SCM HA service each SCM signs its own sub-CA's list, and the one answering carries the
        others' as it last fetched them: a fresher one comes at the same number; one missing a serial the
        held one lists is not taken, so nothing listed is forgotten):
        checks each signature against the trusted root, and that each certificate of the bundle chains to
        it (ValueError otherwise), keeps it beside ca.crt and has every ssl context of this party refuse
        the certificates it lists. True when it was taken."""
        if number < self.crl_number:
            return False
        root = X.cert_from_pem(self.material().ca_pem)
        signers = X.crl_signers(pem, root)
        serials = X.crl_serials(pem, root)
        newer = any(
            name not in self.crl_signers or signer > self.crl_signers[name]
            for name, signer in signers.items()
        ) or (serials > self.revoked)
        if number == self.crl_number and not newer:
            return False
        path = self.paths.ca.with_name(CRL_FILE)
        write_file(path, pem)
        with self._lock:
            self.crl_number, self.revoked, self.crl_issuers = number, serials, frozenset(signers)
            self.crl_signers, self._crls = signers, X.crl_blocks(pem)
            for context in self._contexts:
                self._load_crl(context)
        return True

    def _load_crl(self, context: ssl.SSLContext) -> None:
        """Hands OpenSSL the CRLs alone: it checks each with the issuer in the peer's chain (the peer sends
        its sub-CA), so no certificate of the bundle becomes a trust anchor, and a sub-CA held from an
        older bundle never outranks the renewed one the peer sends. OpenSSL keeps every CRL loaded and
        checks a peer against the one of the latest lastUpdate."""
        if self.crl_number >= 0:
            with tempfile.NamedTemporaryFile(suffix=".pem") as crls:
                crls.write(self._crls)
                crls.flush()
                context.load_verify_locations(cafile=crls.name)
            context.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF

    def _mtimes(self) -> tuple[int, int, int]:
        try:
            return tuple(os.stat(p).st_mtime_ns for p in (self.paths.key, self.paths.cert, self.paths.ca))  # type: ignore[return-value]
        except FileNotFoundError as e:
            raise FileNotFoundError(f"TLS file missing: {e.filename}") from None

    def material(self) -> TlsMaterial:
        with self._lock:
            stamp = self._mtimes()
            if stamp != self._stamp or self._material is None:
                self._material = TlsMaterial(
                    self.paths.key.read_bytes(), self.paths.cert.read_bytes(), self.paths.ca.read_bytes()
                )
                self._stamp = stamp
                self.generation += 1
                for context in self._contexts:
                    self._load_chain(context)
            return self._material

    def reload(self) -> None:
        """Called after the files were replaced (a renewal): the next handshake uses them."""
        self.material()

    def check(self) -> None:
        """Reads and parses the files, so a wrong one is named before anything is dialled (a TLS client
        reports it only as a failed handshake, blamed on the server, after its retries): ValueError naming the
        file that is not PEM of its kind, or the certificate that is not the private key's."""
        m = self.material()
        try:
            key = X.key_from_pem(m.key_pem)
        except ValueError as e:
            raise ValueError(f"{self.paths.key}: {e}") from None
        cert = self._parse_cert(self.paths.cert, m.cert_pem)
        self._parse_cert(self.paths.ca, m.ca_pem)
        if cert.public_key().public_numbers() != key.public_key().public_numbers():  # type: ignore[union-attr]
            raise ValueError(f"{self.paths.cert} is not the certificate of the private key {self.paths.key}")

    @staticmethod
    def _parse_cert(path: Path, pem: bytes) -> X.Certificate:
        try:
            return X.cert_from_pem(pem)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None

    def _load_chain(self, context: ssl.SSLContext) -> None:
        context.load_cert_chain(self.paths.cert, self.paths.key)
        context.load_verify_locations(cadata=self._material.ca_pem.decode() if self._material else None)

    # ---------------------------------------------------------------- ssl sockets (RPC, datastream, HTTP)
    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.verify_mode = ssl.CERT_REQUIRED
        self._register(context)
        return context

    def client_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.check_hostname = True
        self._register(context)
        return context

    def _register(self, context: ssl.SSLContext) -> None:
        self.material()
        with self._lock:
            self._load_chain(context)
            self._load_crl(context)
            self._contexts.append(context)
        _STORES[context] = self


_STORES: weakref.WeakKeyDictionary[ssl.SSLContext, TlsStore] = weakref.WeakKeyDictionary()
"""The party whose store made each `ssl` context: a connection's CRL is its party's current one."""


def revoked_ssl_peer(conn: ssl.SSLObject | ssl.SSLSocket) -> int | None:
    """The serial of an `ssl` connection's peer certificate when its party's current CRL lists it, else
    None. OpenSSL checks the CRL at the handshake only: a keep-alive connection opened before a revocation
    is checked again per request (http_server)."""
    store = _STORES.get(conn.context)
    if store is None or not store.revoked:
        return None
    der = conn.getpeercert(binary_form=True)
    if der is None:
        return None
    serial = _der_serial(der)
    return serial if serial in store.revoked else None


@functools.lru_cache(maxsize=1024)
def _der_serial(der: bytes) -> int:
    return X.cert_from_der(der).serial_number


def ssl_peer_identity(conn: ssl.SSLSocket | ssl.SSLObject) -> Identity:
    """The identity of a TLS socket's peer (its certificate was checked in the handshake)."""
    cert = conn.getpeercert()
    if not cert:
        raise ssl.SSLError("the peer presented no certificate")
    for rdn in cert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                return Identity.from_common_name(value)
    raise ssl.SSLError("the peer's certificate names no common name")
