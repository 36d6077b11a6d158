"""Mutual TLS for every port: gRPC credentials, `ssl` contexts for the datastream port and HTTP, and the
identity a peer's certificate names.

A `TlsStore` holds where one party's key, certificate and trusted CA live and re-reads them when they
change, so a renewed certificate is used by the next connection without restarting anything: gRPC servers
take it through dynamic credentials, `ssl` contexts by loading the new chain into the same context, and a
channel kept for the process's life through `SyncRenewing`/`AioRenewing`, which dial it again (a gRPC
channel's credentials are fixed when it is made, and it reconnects with them).
Both sides always present a certificate and check the other's against the CA (mutual TLS); a peer without
one, or with one from another CA, fails the handshake. Once the party holds SCM's certificate revocation
list (`update_crl`), a revoked peer fails it too: `ssl` contexts check the CRL in the handshake (OpenSSL's
CRL check), gRPC servers at every call (`RevocationInterceptor`, as grpcio takes no CRL).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import ssl
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import grpc

from pyozone.common.fsutil import write_file
from pyozone.common.grpc_server import WrappingInterceptor
from pyozone.config import OzoneConfiguration
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole, Identity

log = logging.getLogger(__name__)

CRL_FILE = "crl.pem"
"""The CA's revocation list a party last fetched, beside its ca.crt."""


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
        files (`SyncRenewing`, `AioRenewing`); `material()` and `reload()` move it."""
        self.revoked: frozenset[int] = frozenset()
        """The serials the CA's CRL lists (`update_crl`); empty until one is loaded."""
        self.crl_number = -1
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
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None

    def update_crl(self, number: int, pem: bytes) -> bool:
        """Takes the CA's CRL number `number` when newer than the one held: checks its signature against
        the trusted CA (ValueError otherwise), keeps it beside ca.crt and has every ssl context and gRPC
        server of this party refuse the certificates it lists. True when it was newer."""
        if number <= self.crl_number:
            return False
        serials = X.crl_serials(pem, X.cert_from_pem(self.material().ca_pem))
        path = self.paths.ca.with_name(CRL_FILE)
        write_file(path, pem)
        with self._lock:
            self.crl_number, self.revoked = number, serials
            for context in self._contexts:
                self._load_crl(context)
        return True

    def _load_crl(self, context: ssl.SSLContext) -> None:
        """OpenSSL keeps every CRL loaded and checks a peer against the one of the latest lastUpdate."""
        if self.crl_number >= 0:
            context.load_verify_locations(cafile=str(self.paths.ca.with_name(CRL_FILE)))
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
        """Reads and parses the files, so a wrong one is named before anything is dialled (gRPC reports
        it only as a failed handshake, blamed on the server, after its retries): ValueError naming the
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

    # ---------------------------------------------------------------- gRPC
    def server_credentials(self) -> grpc.ServerCredentials:
        """Dynamic: each new connection's handshake asks for the current certificate."""

        def config() -> grpc.ServerCertificateConfiguration:
            m = self.material()
            return grpc.ssl_server_certificate_configuration([(m.key_pem, m.cert_pem)], m.ca_pem)

        initial = config()
        current = {"stamp": self._stamp}

        def fetch() -> grpc.ServerCertificateConfiguration | None:
            self.material()
            if self._stamp == current["stamp"]:
                return None  # unchanged
            current["stamp"] = self._stamp
            return config()

        return grpc.dynamic_ssl_server_credentials(initial, fetch, require_client_authentication=True)

    def channel_credentials(self) -> grpc.ChannelCredentials:
        m = self.material()
        return grpc.ssl_channel_credentials(
            root_certificates=m.ca_pem, private_key=m.key_pem, certificate_chain=m.cert_pem
        )

    # ---------------------------------------------------------------- ssl sockets (datastream, HTTP)
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


# ---------------------------------------------------------------------- revoked peers on gRPC ports
@functools.lru_cache(maxsize=1024)
def _serial(pem: bytes) -> int:
    return X.cert_from_pem(pem).serial_number


def revoked_peer(context: Any, tls: TlsStore) -> int | None:
    """The serial of the gRPC caller's certificate when the party's CRL lists it, else None."""
    if not tls.revoked:
        return None
    pems = context.auth_context().get("x509_pem_cert")
    if not pems:
        return None
    serial = _serial(pems[0])
    return serial if serial in tls.revoked else None


class RevocationInterceptor(WrappingInterceptor):
    """Ends every call of a caller whose certificate the party's CRL lists with PERMISSION_DENIED, before
    the servicer sees it, and a stream at its next message either way once the CRL lists its caller (a
    stream opened before the revocation): grpcio checks no CRL in the handshake. Install on every TLS gRPC
    server."""

    def __init__(self, tls: TlsStore) -> None:
        super().__init__()
        self._tls = tls

    async def _check(self, context: grpc.aio.ServicerContext) -> None:
        serial = revoked_peer(context, self._tls)
        if serial is not None:
            log.warning("Refused a call from %s: certificate %d is revoked", context.peer(), serial)
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, f"certificate {serial} was revoked")

    async def _checked(self, requests: Any, context: grpc.aio.ServicerContext) -> Any:
        """The request stream, the caller checked against the current CRL before each message."""
        async for request in requests:
            await self._check(context)
            yield request

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        check, de, ser = self._check, handler.request_deserializer, handler.response_serializer
        checked = self._checked
        if handler.unary_unary or handler.stream_unary:
            streaming = handler.unary_unary is None
            call = handler.stream_unary if streaming else handler.unary_unary

            async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                await check(context)
                result = call(checked(request, context) if streaming else request, context)
                return await result if inspect.isawaitable(result) else result

            make = grpc.stream_unary_rpc_method_handler if streaming else grpc.unary_unary_rpc_method_handler
            return make(unary, de, ser)
        streaming = handler.unary_stream is None
        stream_call = handler.stream_stream if streaming else handler.unary_stream

        async def stream(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await check(context)
            result = stream_call(checked(request, context) if streaming else request, context)
            if inspect.isawaitable(result):
                await result
                return
            if hasattr(result, "__aiter__"):
                async for response in result:
                    await check(context)
                    yield response
            else:
                for response in result:
                    await check(context)
                    yield response

        make = grpc.stream_stream_rpc_method_handler if streaming else grpc.unary_stream_rpc_method_handler
        return make(stream, de, ser)


def revocation_interceptors(tls: TlsStore | None) -> list[grpc.aio.ServerInterceptor]:
    """The interceptor a TLS gRPC server of this party installs (none without TLS)."""
    return [] if tls is None else [RevocationInterceptor(tls)]


def secure_port(server: Any, address: str, tls: TlsStore | None) -> int:
    """Binds a gRPC server (sync or aio): TLS with client certificates required, or plaintext."""
    if tls is None:
        return server.add_insecure_port(address)
    return server.add_secure_port(address, tls.server_credentials())


def _checking(target: str, options: list[tuple[str, Any]], peer: CertRole | None) -> list[tuple[str, Any]]:
    """A TLS channel to a `peer` verifies the server certificate's role-qualified name for the target's
    host (X.role_host_name), not the bare host: the role and the host at once. grpcio takes no custom
    verifier, and checks only names."""
    if peer is None:
        return options
    host = target.rpartition(":")[0] or target
    return [*options, ("grpc.ssl_target_name_override", X.role_host_name(peer, host))]


def aio_channel(
    target: str, options: list[tuple[str, Any]], tls: TlsStore | None, peer: CertRole | None = None
) -> grpc.aio.Channel:
    """`peer`: the role the server must have (every daemon's channel names it)."""
    if tls is None:
        return grpc.aio.insecure_channel(target, options=options)
    return grpc.aio.secure_channel(
        target, tls.channel_credentials(), options=_checking(target, options, peer)
    )


def sync_channel(
    target: str, options: list[tuple[str, Any]], tls: TlsStore | None, peer: CertRole | None = None
) -> grpc.Channel:
    """`peer`: the role the server must have (every daemon's channel names it)."""
    if tls is None:
        return grpc.insecure_channel(target, options=options)
    return grpc.secure_channel(target, tls.channel_credentials(), options=_checking(target, options, peer))


class Closable(Protocol):
    def close(self) -> None: ...


C = TypeVar("C")
S = TypeVar("S", bound=Closable)

RETIRE_GRACE_S = 600.0
"""How long an asyncio channel a renewal replaced keeps serving the calls already on it (its close returns as
soon as they end)."""


class _Renewing(Generic[C]):
    """A connection a holder keeps for the process's life, dialled again when its certificate is renewed.

    TLS checks a certificate only in the handshake and a gRPC channel reconnects with the credentials it was
    made with, so a channel made before a renewal fails every reconnect once the old certificate expires
    (e.g. to a restarted SCM). `get()` compares the store's generation (an attribute, no file access) and,
    when a renewal moved it, dials again and retires the old connection. Without TLS it dials once.
    `stub_class`: a stub made with each connection (`stub`), so calls never go through a retired one.
    """

    def __init__(
        self, dial: Callable[[], C], tls: TlsStore | None, stub_class: Callable[[C], Any] | None = None
    ) -> None:
        self._dial = dial
        self._tls = tls
        self._stub_class = stub_class
        self._lock = threading.Lock()
        self._generation = 0
        self._current = self._connect()

    def _connect(self) -> tuple[C, Any]:
        if self._tls is not None:
            self._tls.material()  # the generation of what `dial` presents
            self._generation = self._tls.generation
        connection = self._dial()
        return connection, self._stub_class(connection) if self._stub_class is not None else None

    def _follow(self) -> tuple[C, Any]:
        tls = self._tls
        if tls is not None and tls.generation != self._generation:
            with self._lock:
                if tls.generation != self._generation:
                    old, self._current = self._current[0], self._connect()
                    self._retire(old)
        return self._current

    def get(self) -> C:
        return self._follow()[0]

    @property
    def stub(self) -> Any:
        return self._follow()[1]

    def _retire(self, old: C) -> None:
        raise NotImplementedError


class SyncRenewing(_Renewing[S]):
    """For blocking clients used from any thread (a channel, or a client owning one). A replaced connection
    is closed at the next renewal or by `close()`: a blocking channel's close cuts its calls short, and
    renewals are far apart."""

    _retired: S | None = None

    def _retire(self, old: S) -> None:
        stale, self._retired = self._retired, old
        if stale is not None:
            stale.close()

    def close(self) -> None:
        self._current[0].close()
        if self._retired is not None:
            self._retired.close()


class AioRenewing(_Renewing[grpc.aio.Channel]):
    """For asyncio channels, used on their event loop: a replaced channel closes once its calls end (at
    most RETIRE_GRACE_S later)."""

    def __init__(
        self, dial: Callable[[], grpc.aio.Channel], tls: TlsStore | None, stub_class: Any = None
    ) -> None:
        self._retiring: dict[asyncio.Task[None], grpc.aio.Channel] = {}
        super().__init__(dial, tls, stub_class)

    def _retire(self, old: grpc.aio.Channel) -> None:
        task = asyncio.get_running_loop().create_task(old.close(RETIRE_GRACE_S))
        self._retiring[task] = old
        task.add_done_callback(lambda t: self._retiring.pop(t, None))

    async def close(self) -> None:
        """Closes the channel and any retired one still finishing, cancelling their calls."""
        retiring = list(self._retiring.items())
        await self._current[0].close()
        for task, channel in retiring:
            await channel.close()
            await asyncio.gather(task, return_exceptions=True)


def renewing_sync_channel(
    target: str,
    options: list[tuple[str, Any]],
    tls: TlsStore | None,
    stub_class: Any = None,
    peer: CertRole | None = None,
) -> SyncRenewing[grpc.Channel]:
    return SyncRenewing(lambda: sync_channel(target, options, tls, peer), tls, stub_class)


def renewing_aio_channel(
    target: str,
    options: list[tuple[str, Any]],
    tls: TlsStore | None,
    stub_class: Any = None,
    peer: CertRole | None = None,
) -> AioRenewing:
    return AioRenewing(lambda: aio_channel(target, options, tls, peer), tls, stub_class)


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
