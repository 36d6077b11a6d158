"""A 100-byte unary echo over each candidate RPC transport, in one run: issue 29's "measure before you build".

Each case runs its server in its own process (`python -m benchmarks.rpc --serve CASE`) and its client in
this one, on one connection with 32 calls in flight, for --seconds after a --warmup; the table gives each
case's calls/s, the CPU each side spent per call and the CPU-bound rate (calls / the busier process's CPU
seconds: the rate were each process alone on a core, which a loaded, shared machine blurs far less than
the measured rate). Cases:
- grpc.aio: a generic bytes-in/bytes-out handler, a grpc.aio channel (what every service used before
  issue 29; the only use of grpcio left, which the test extra's grpcio-tools installs);
- frames (asyncio) / frames (uvloop): length-prefixed frames multiplexed by call id over asyncio streams,
  the echo done inline by the server's reader (the machine's floor for this shape of call, as the issue
  measured it); frames, Protocol (uvloop): the same frames parsed in asyncio.Protocol callbacks, without
  streams (what a layer written on protocols could reach);
- grpclib: pure-Python gRPC over h2 on asyncio (optional: found in /tmp/grpclib-pkgs, never a project
  dependency; skipped with a printed line when missing);
- zmq (uvloop): pyzmq's DEALER/ROUTER sockets multiplexed by call id (optional: /tmp/rpc-extra-pkgs; no
  X.509 TLS, so skipped under --tls);
- pycapnp: Cap'n Proto RPC (C++) on asyncio, one connection (optional: /tmp/capnp-pkgs);
- dask comm: dask's rpc (distributed.core), which pools a connection per call in flight rather than
  multiplexing one (optional: /tmp/dask-pkgs);
- pyozone.rpc: the new layer (`_pyozone_rpc_case`), once it is built.
Then the ratios issue 29 sets as targets: pyozone.rpc / frames (uvloop) >= 0.5, pyozone.rpc / grpc.aio
>= 10. With --tls every case that supports it runs with mutual TLS (a throwaway CA, a server and a client
certificate made with pyozone's x509 helpers), for the secure ratios.

    python -m benchmarks.rpc [--seconds 3] [--warmup 0.5] [--inflight 32] [--size 100] [--tls] [--cases ...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import importlib.util
import logging
import os
import ssl
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.common import cpu_seconds, print_table
from pyozone.hdds.security import x509 as certs

HOST = "127.0.0.1"
GRPCLIB_PATH = "/tmp/grpclib-pkgs"  # pip install --target /tmp/grpclib-pkgs grpclib
EXTRA_PATH = "/tmp/rpc-extra-pkgs"  # pip install --target /tmp/rpc-extra-pkgs pyzmq
CAPNP_PATH = "/tmp/capnp-pkgs"  # pip install --target /tmp/capnp-pkgs pycapnp
DASK_PATH = "/tmp/dask-pkgs"  # pip install --target /tmp/dask-pkgs distributed
CAPNP_SCHEMA = """@0xb1e3c6f2a1d4e5f7;
interface Echo {
  echo @0 (body :Data) -> (body :Data);
}
"""
FRAME = struct.Struct(">IQ")  # body length, call id
ECHO_PATH = "/bench.Echo/Echo"
RAW_TARGET, GRPC_TARGET = 0.5, 10.0

Call = Callable[[bytes], Awaitable[bytes]]
_SERVING: list[Any] = []  # the server process's server objects: a dropped grpc.aio server stops serving


# ------------------------------------------------------------------ TLS material
@dataclass(frozen=True, slots=True)
class Tls:
    """PEM files of a throwaway CA and the server's and client's certificates (mutual TLS)."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path

    @classmethod
    def make(cls, directory: Path) -> Tls:
        ca_key = certs.generate_private_key()
        ca = certs.self_signed_root(ca_key, "bench-cluster", "bench-scm", HOST, dt.timedelta(days=1), 1)
        files: dict[str, Path] = {"ca": directory / "ca.pem"}
        files["ca"].write_bytes(certs.cert_to_pem(ca))
        people = (
            ("server", certs.Identity(certs.CertRole.OM, "om", HOST), (HOST,)),
            ("client", certs.Identity(certs.CertRole.USER, "bench"), ()),
        )
        for serial, (who, identity, hosts) in enumerate(people, start=2):
            key = certs.generate_private_key()
            csr = certs.build_csr(key, identity, hosts)
            cert = certs.sign_csr(csr, ca_key, ca, "bench-cluster", "bench-scm", dt.timedelta(days=1), serial)
            files[f"{who}_cert"] = directory / f"{who}.pem"
            files[f"{who}_key"] = directory / f"{who}-key.pem"
            files[f"{who}_cert"].write_bytes(certs.cert_to_pem(cert))
            files[f"{who}_key"].write_bytes(certs.key_to_pem(key))
        return cls(**files)

    @classmethod
    def load(cls, directory: Path) -> Tls:
        names = ("ca.pem", "server.pem", "server-key.pem", "client.pem", "client-key.pem")
        return cls(*(directory / name for name in names))

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=str(self.ca))
        context.load_cert_chain(self.server_cert, self.server_key)
        context.verify_mode = ssl.CERT_REQUIRED
        return context

    def client_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(self.ca))
        context.load_cert_chain(self.client_cert, self.client_key)
        return context


# ------------------------------------------------------------------ cases
@dataclass(frozen=True, slots=True)
class Case:
    """One transport: `serve` starts its echo server on 127.0.0.1 and returns the port (its process then
    serves until killed); `connect` returns the client's call and a coroutine that closes it. Both run
    inside `around` (a library's own loop integration). `missing` says why the case cannot run here (an
    optional library absent), or is empty."""

    name: str
    serve: Callable[[Tls | None], Awaitable[int]]
    connect: Callable[[int, Tls | None], Awaitable[tuple[Call, Callable[[], Awaitable[None]]]]]
    uvloop: bool = False
    tls: bool = True
    missing: str = ""
    around: Callable[[], contextlib.AbstractAsyncContextManager[Any]] = contextlib.nullcontext


def _optional(path: str, module: str) -> str:
    """Puts `path` on sys.path (only this benchmark's optional cases use it); the reason a module is
    missing, or ""."""
    if path not in sys.path and Path(path).is_dir():
        sys.path.append(path)
    if importlib.util.find_spec(module) is None:
        return f"{module} is not importable (pip install --target {path} {module})"
    return ""


# grpc.aio ---------------------------------------------------------------------
async def _grpc_serve(tls: Tls | None) -> int:
    import grpc

    async def echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return request

    server = grpc.aio.server()
    handler = grpc.unary_unary_rpc_method_handler(echo)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Echo", {"Echo": handler}),))
    if tls is None:
        port = server.add_insecure_port(f"{HOST}:0")
    else:
        credentials = grpc.ssl_server_credentials(
            [(tls.server_key.read_bytes(), tls.server_cert.read_bytes())],
            root_certificates=tls.ca.read_bytes(),
            require_client_auth=True,
        )
        port = server.add_secure_port(f"{HOST}:0", credentials)
    await server.start()
    _SERVING.append(server)
    return port


async def _grpc_connect(port: int, tls: Tls | None) -> tuple[Call, Callable[[], Awaitable[None]]]:
    import grpc

    if tls is None:
        channel = grpc.aio.insecure_channel(f"{HOST}:{port}")
    else:
        credentials = grpc.ssl_channel_credentials(
            tls.ca.read_bytes(), tls.client_key.read_bytes(), tls.client_cert.read_bytes()
        )
        channel = grpc.aio.secure_channel(f"{HOST}:{port}", credentials)
    call = channel.unary_unary(ECHO_PATH)
    return call, channel.close


# length-prefixed frames over asyncio streams ---------------------------------------
async def _frames_serve(tls: Tls | None) -> int:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                header = await reader.readexactly(FRAME.size)
                length, _ = FRAME.unpack(header)
                writer.write(header + await reader.readexactly(length))
        writer.close()

    context = tls.server_context() if tls else None
    server = await asyncio.start_server(handle, HOST, 0, ssl=context)
    _SERVING.append(server)
    return server.sockets[0].getsockname()[1]


async def _frames_connect(port: int, tls: Tls | None) -> tuple[Call, Callable[[], Awaitable[None]]]:
    context = tls.client_context() if tls else None
    reader, writer = await asyncio.open_connection(HOST, port, ssl=context)
    waiting: dict[int, asyncio.Future[bytes]] = {}
    ids = iter(range(1, 1 << 63))

    async def read_answers() -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                length, call_id = FRAME.unpack(await reader.readexactly(FRAME.size))
                waiting.pop(call_id).set_result(await reader.readexactly(length))

    reading = asyncio.create_task(read_answers())

    async def call(body: bytes) -> bytes:
        call_id = next(ids)
        answer = waiting[call_id] = asyncio.get_running_loop().create_future()
        writer.write(FRAME.pack(len(body), call_id) + body)
        return await answer

    async def close() -> None:
        reading.cancel()
        writer.close()

    return call, close


# the same frames on asyncio.Protocol callbacks (no StreamReader) ---------------------
class _FrameProtocol(asyncio.Protocol):
    """Splits the byte stream into frames and hands each (call id, body) to `on_frame`."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        start, end = 0, len(self.buffer)
        while end - start >= FRAME.size:
            length, call_id = FRAME.unpack_from(self.buffer, start)
            if end - start < FRAME.size + length:
                break
            body = bytes(self.buffer[start + FRAME.size : start + FRAME.size + length])
            start += FRAME.size + length
            self.on_frame(call_id, body)
        del self.buffer[:start]

    def on_frame(self, call_id: int, body: bytes) -> None:
        raise NotImplementedError


class _EchoProtocol(_FrameProtocol):
    def on_frame(self, call_id: int, body: bytes) -> None:
        assert self.transport is not None
        self.transport.write(FRAME.pack(len(body), call_id) + body)


class _CallerProtocol(_FrameProtocol):
    def __init__(self) -> None:
        super().__init__()
        self.waiting: dict[int, asyncio.Future[bytes]] = {}

    def on_frame(self, call_id: int, body: bytes) -> None:
        self.waiting.pop(call_id).set_result(body)


async def _protocol_serve(tls: Tls | None) -> int:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(_EchoProtocol, HOST, 0, ssl=tls.server_context() if tls else None)
    _SERVING.append(server)
    return server.sockets[0].getsockname()[1]  # type: ignore[no-any-return]


async def _protocol_connect(port: int, tls: Tls | None) -> tuple[Call, Callable[[], Awaitable[None]]]:
    loop = asyncio.get_running_loop()
    context = tls.client_context() if tls else None
    transport, protocol = await loop.create_connection(_CallerProtocol, HOST, port, ssl=context)
    ids = iter(range(1, 1 << 63))

    async def call(body: bytes) -> bytes:
        call_id = next(ids)
        answer = protocol.waiting[call_id] = loop.create_future()
        transport.write(FRAME.pack(len(body), call_id) + body)
        return await answer

    async def close() -> None:
        transport.close()

    return call, close


# grpclib ------------------------------------------------------------------------
def _grpclib_codec() -> Any:
    from grpclib.encoding.base import CodecBase

    class RawCodec(CodecBase):
        """Bytes as they are (the grpc.aio case's identity serializers)."""

        __content_subtype__ = "proto"

        def encode(self, message: Any, message_type: Any) -> bytes:
            return message  # type: ignore[no-any-return]

        def decode(self, data: bytes, message_type: Any) -> Any:
            return data

    return RawCodec()


async def _grpclib_serve(tls: Tls | None) -> int:
    from grpclib.const import Cardinality, Handler
    from grpclib.server import Server

    async def echo(stream: Any) -> None:
        await stream.send_message(await stream.recv_message())

    class EchoService:
        def __mapping__(self) -> dict[str, Handler]:
            return {ECHO_PATH: Handler(echo, Cardinality.UNARY_UNARY, bytes, bytes)}

    server = Server([EchoService()], codec=_grpclib_codec())
    await server.start(HOST, 0, ssl=tls.server_context() if tls else None)
    _SERVING.append(server)
    return server._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]


async def _grpclib_connect(port: int, tls: Tls | None) -> tuple[Call, Callable[[], Awaitable[None]]]:
    from grpclib.client import Channel, UnaryUnaryMethod

    channel = Channel(HOST, port, codec=_grpclib_codec(), ssl=tls.client_context() if tls else None)
    call = UnaryUnaryMethod(channel, ECHO_PATH, bytes, bytes)

    async def close() -> None:
        channel.close()

    return call, close


# pyzmq --------------------------------------------------------------------------
async def _zmq_serve(tls: Tls | None) -> int:
    import zmq
    import zmq.asyncio

    socket = zmq.asyncio.Context.instance().socket(zmq.ROUTER)
    port = socket.bind_to_random_port(f"tcp://{HOST}")

    async def serve() -> None:
        while True:
            await socket.send_multipart(await socket.recv_multipart(copy=False), copy=False)

    _SERVING.append(asyncio.get_running_loop().create_task(serve()))
    return port


async def _zmq_connect(port: int, tls: Tls | None) -> tuple[Call, Callable[[], Awaitable[None]]]:
    import zmq
    import zmq.asyncio

    socket = zmq.asyncio.Context.instance().socket(zmq.DEALER)
    socket.connect(f"tcp://{HOST}:{port}")
    waiting: dict[bytes, asyncio.Future[bytes]] = {}
    ids = iter(range(1, 1 << 63))

    async def read_answers() -> None:
        while True:
            call_id, body = await socket.recv_multipart()
            waiting.pop(call_id).set_result(body)

    reading = asyncio.create_task(read_answers())

    async def call(body: bytes) -> bytes:
        call_id = next(ids).to_bytes(8, "big")
        answer = waiting[call_id] = asyncio.get_running_loop().create_future()
        await socket.send_multipart((call_id, body))
        return await answer

    async def close() -> None:
        reading.cancel()
        socket.close(linger=0)

    return call, close


# pycapnp ------------------------------------------------------------------------
def _capnp_schema() -> Any:
    import capnp

    path = Path(tempfile.gettempdir()) / "pyozone-bench-echo.capnp"
    path.write_text(CAPNP_SCHEMA)
    return capnp.load(str(path))


def _capnp_loop() -> contextlib.AbstractAsyncContextManager[Any]:
    import capnp

    return capnp.kj_loop()  # type: ignore[no-any-return]


async def _capnp_serve(tls: Tls | None) -> int:
    import capnp

    schema = _capnp_schema()

    class Echo(schema.Echo.Server):  # type: ignore[misc,name-defined]
        async def echo(self, body: bytes, _context: Any) -> bytes:
            return body

    async def accept(stream: Any) -> None:
        await capnp.TwoPartyServer(stream, bootstrap=Echo()).on_disconnect()

    context = tls.server_context() if tls else None
    server = await capnp.AsyncIoStream.create_server(accept, HOST, 0, ssl=context)
    _SERVING.append(server)
    return server.sockets[0].getsockname()[1]  # type: ignore[no-any-return]


async def _capnp_connect(port: int, tls: Tls | None) -> tuple[Call, Callable[[], Awaitable[None]]]:
    import capnp

    context = tls.client_context() if tls else None
    stream = await capnp.AsyncIoStream.create_connection(HOST, port, ssl=context)
    client = capnp.TwoPartyClient(stream)
    echo = client.bootstrap().cast_as(_capnp_schema().Echo)

    async def call(body: bytes) -> bytes:
        return (await echo.echo(body)).body  # type: ignore[no-any-return]

    async def close() -> None:
        client.close()

    return call, close


# dask's comm layer (distributed.core) ----------------------------------------------
async def _dask_serve(tls: Tls | None) -> int:
    from distributed.core import Server

    logging.getLogger("distributed").setLevel(logging.WARNING)  # not its scratch-space notes

    async def echo(body: bytes) -> bytes:
        return body

    server = Server({"echo": echo})
    if tls is None:
        await server.listen(f"tcp://{HOST}:0")
    else:
        await server.listen(f"tls://{HOST}:0", ssl_context=tls.server_context())
    _SERVING.append(server)
    return server.port  # type: ignore[no-any-return]


async def _dask_connect(port: int, tls: Tls | None) -> tuple[Call, Callable[[], Awaitable[None]]]:
    """dask's rpc pool: a connection per call in flight (dask multiplexes by pooling, not by call id)."""
    from distributed.core import ConnectionPool

    if tls is None:
        pool = await ConnectionPool(limit=512)
        remote = pool(f"tcp://{HOST}:{port}")
    else:
        pool = await ConnectionPool(limit=512, connection_args={"ssl_context": tls.client_context()})
        remote = pool(f"tls://{HOST}:{port}")

    async def call(body: bytes) -> bytes:
        return await remote.echo(body=body)  # type: ignore[no-any-return]

    return call, pool.close


# pyozone.rpc --------------------------------------------------------------------
def _pyozone_rpc_case() -> Case | None:
    """The new RPC layer: OM's echoRPC message (a protobuf request and answer, as OM's own echo) on a
    `pyozone.rpc` server and its async Channel, on uvloop; mutual TLS with the role-checked server name."""
    return Case(PYOZONE_RPC, _pyozone_serve, _pyozone_connect, uvloop=True)


def _rpc_tls(tls: Tls, server: bool) -> Any:
    from pyozone.common.tls import TlsPaths, TlsStore

    if server:
        return TlsStore(TlsPaths(tls.server_key, tls.server_cert, tls.ca))
    return TlsStore(TlsPaths(tls.client_key, tls.client_cert, tls.ca))


async def _pyozone_serve(tls: Tls | None) -> int:
    from pyozone import rpc
    from pyozone.proto import OmClientProtocol_pb2 as om

    class Echo:
        async def echoRPC(self, request: Any, context: rpc.CallContext) -> Any:
            return om.EchoRPCResponse(payload=request.payloadReq)

    server = rpc.Server(rpc.ServerSettings(max_message_bytes=4 << 20))
    server.add_service(rpc.service(om, "OzoneManagerService"), Echo())
    port = await server.start(HOST, 0, _rpc_tls(tls, True) if tls else None)
    _SERVING.append(server)
    return port


async def _pyozone_connect(port: int, tls: Tls | None) -> tuple[Call, Callable[[], Awaitable[None]]]:
    from pyozone import rpc
    from pyozone.hdds.security.x509 import CertRole
    from pyozone.proto import OmClientProtocol_pb2 as om

    channel = rpc.Channel(
        f"{HOST}:{port}",
        rpc.ChannelSettings(max_message_bytes=4 << 20),
        _rpc_tls(tls, False) if tls else None,
        peer=CertRole.OM if tls else None,
    )
    stub = rpc.Stub(channel, rpc.service(om, "OzoneManagerService"))

    async def call(body: bytes) -> bytes:
        return (await stub.echoRPC(om.EchoRPCRequest(payloadReq=body), timeout=30)).payload

    return call, channel.close


PYOZONE_RPC = "pyozone.rpc"
GRPC_AIO, FRAMES_UVLOOP = "grpc.aio", "frames (uvloop)"


def cases() -> list[Case]:
    have_uvloop = importlib.util.find_spec("uvloop") is not None
    found = [
        Case(GRPC_AIO, _grpc_serve, _grpc_connect),
        Case("frames (asyncio)", _frames_serve, _frames_connect),
        Case(
            FRAMES_UVLOOP,
            _frames_serve,
            _frames_connect,
            uvloop=True,
            missing="" if have_uvloop else "uvloop is not installed",
        ),
        Case(
            "frames, Protocol (uvloop)",
            _protocol_serve,
            _protocol_connect,
            uvloop=True,
            missing="" if have_uvloop else "uvloop is not installed",
        ),
        Case("grpclib", _grpclib_serve, _grpclib_connect, missing=_optional(GRPCLIB_PATH, "grpclib")),
        Case(
            "zmq (uvloop)",
            _zmq_serve,
            _zmq_connect,
            uvloop=True,
            tls=False,
            missing=_optional(EXTRA_PATH, "zmq"),
        ),
        Case(
            "pycapnp",
            _capnp_serve,
            _capnp_connect,
            missing=_optional(CAPNP_PATH, "capnp"),
            around=_capnp_loop,
        ),
        Case("dask comm", _dask_serve, _dask_connect, missing=_optional(DASK_PATH, "distributed")),
    ]
    pyozone_rpc = _pyozone_rpc_case()
    return [*found, pyozone_rpc] if pyozone_rpc else found


def run(case: Case, main: Callable[[], Awaitable[Any]]) -> Any:
    """main() on the case's loop (uvloop or the stdlib's), inside the case's `around`."""

    async def inside() -> Any:
        async with case.around():
            return await main()

    if case.uvloop:
        import uvloop

        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(inside())
    return asyncio.run(inside())


# ------------------------------------------------------------------ server process
def serve(name: str, tls_dir: str | None) -> None:
    """The server side of one case, in its own process: prints its port, serves until killed."""
    case = next(c for c in cases() if c.name == name)
    tls = Tls.load(Path(tls_dir)) if tls_dir else None

    async def main() -> None:
        print(await case.serve(tls), flush=True)
        await asyncio.Event().wait()

    run(case, main)


# ------------------------------------------------------------------ client side
@dataclass(frozen=True, slots=True)
class Result:
    calls: int
    seconds: float
    client_cpu: float
    server_cpu: float

    @property
    def rate(self) -> float:
        return self.calls / self.seconds

    @property
    def cpu_bound_rate(self) -> float:
        """The rate were the busier side alone on a core: what a loaded, shared machine blurs least."""
        return self.calls / max(self.client_cpu, self.server_cpu, 1e-9)

    def row(self) -> str:
        per_call = 1e6 / max(self.calls, 1)
        return (
            f"{self.rate:9,.0f} calls/s   CPU/call: client {self.client_cpu * per_call:4.0f} us, "
            f"server {self.server_cpu * per_call:4.0f} us   CPU-bound {self.cpu_bound_rate:9,.0f} calls/s"
        )


async def drive(case: Case, port: int, server_pid: int, tls: Tls | None, args: argparse.Namespace) -> Result:
    """`args.inflight` workers call the echo back to back on one connection; counted after the warm-up."""
    call, close = await case.connect(port, tls)
    payload = os.urandom(args.size)
    if await call(payload) != payload:
        raise SystemExit(f"{case.name}: the echo did not answer with the request")
    calls, running = 0, True

    async def worker() -> None:
        nonlocal calls
        while running:
            await call(payload)
            calls += 1

    workers = [asyncio.create_task(worker()) for _ in range(args.inflight)]
    await asyncio.sleep(args.warmup)
    c0, t0, cpu0, server0 = calls, time.perf_counter(), time.process_time(), cpu_seconds(server_pid)
    await asyncio.sleep(args.seconds)
    c1, t1, cpu1, server1 = calls, time.perf_counter(), time.process_time(), cpu_seconds(server_pid)
    running = False
    await asyncio.gather(*workers)
    await close()
    return Result(c1 - c0, t1 - t0, cpu1 - cpu0, server1 - server0)


def measure(case: Case, tls_dir: Path | None, args: argparse.Namespace) -> Result:
    cmd = [sys.executable, "-m", "benchmarks.rpc", "--serve", case.name]
    if tls_dir:
        cmd += ["--tls-dir", str(tls_dir)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if not line:
            raise SystemExit(f"{case.name}: the server did not start")
        tls = Tls.load(tls_dir) if tls_dir else None
        port = int(line)
        return run(case, lambda: drive(case, port, server.pid, tls, args))  # type: ignore[no-any-return]
    finally:
        server.kill()
        server.wait()


def _ratio(a: Result, b: Result) -> str:
    return f"{a.rate / b.rate:8.2f} measured, {a.cpu_bound_rate / b.cpu_bound_rate:6.2f} CPU-bound"


def ratio_rows(results: dict[str, Result]) -> list[tuple[str, str]]:
    """The targets (on the measured rates of this run), then each other case against the raw frame floor."""
    rows = []
    for baseline, target in ((FRAMES_UVLOOP, RAW_TARGET), (GRPC_AIO, GRPC_TARGET)):
        name = f"{PYOZONE_RPC} / {baseline}"
        new, base = results.get(PYOZONE_RPC), results.get(baseline)
        if new is None or base is None:
            rows.append((name, f"     n/a   target >= {target:g}"))
            continue
        verdict = "PASS" if new.rate / base.rate >= target else "MISS"
        rows.append((name, f"{_ratio(new, base)}   target >= {target:g}   {verdict}"))
    floor = results.get(FRAMES_UVLOOP)
    for name, result in results.items():
        if floor is not None and name not in (PYOZONE_RPC, FRAMES_UVLOOP):
            rows.append((f"{name} / {FRAMES_UVLOOP}", _ratio(result, floor)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="measured time per case (default 3)")
    parser.add_argument("--warmup", type=float, default=0.5, help="unmeasured time first (default 0.5)")
    parser.add_argument("--inflight", type=int, default=32, help="calls in flight (default 32)")
    parser.add_argument("--size", type=int, default=100, help="request and answer bytes (default 100)")
    parser.add_argument("--tls", action="store_true", help="mutual TLS where the case supports it")
    parser.add_argument(
        "--cases",
        nargs="+",
        metavar="CASE",
        help=f"only these cases, by name (default: all; the ratios need {GRPC_AIO!r} and {FRAMES_UVLOOP!r})",
    )
    parser.add_argument("--serve", metavar="CASE", help=argparse.SUPPRESS)
    parser.add_argument("--tls-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.tls_dir)
        return

    rows: list[tuple[str, str]] = []
    results: dict[str, Result] = {}
    with tempfile.TemporaryDirectory(prefix="pyozone-rpc-bench-") as tmp:
        tls_dir = Path(tmp) if args.tls else None
        if tls_dir:
            Tls.make(tls_dir)
        for case in cases():
            if args.cases and case.name not in args.cases:
                continue
            no_tls = args.tls and not case.tls
            skipped = case.missing or ("no X.509 TLS, skipped under --tls" if no_tls else "")
            if skipped:
                print(f"{case.name}: {skipped}")
                rows.append((case.name, "skipped"))
                continue
            results[case.name] = measure(case, tls_dir, args)
            rows.append((case.name, results[case.name].row()))
    if _pyozone_rpc_case() is None:
        print(f"{PYOZONE_RPC}: not built yet")
        rows.append((PYOZONE_RPC, "not built yet"))
    mode = "mutual TLS" if args.tls else "plaintext"
    title = (
        f"{args.size}-byte unary echo, {args.inflight} in flight, client and server in separate processes "
        f"({mode}, 127.0.0.1, {args.seconds:g} s each)"
    )
    print_table(title, rows + ratio_rows(results))


if __name__ == "__main__":
    main()
