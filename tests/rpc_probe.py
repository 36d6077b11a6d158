"""A blocking call over pyozone.rpc with what no client of the house sends (raw bytes, a method no server
has), for the tests that probe a live port with it."""

from __future__ import annotations

from pyozone import rpc
from pyozone.common.tls import TlsStore
from pyozone.hdds.limits import MiB
from pyozone.rpc.sync import run_sync


def raw_call(
    target: str, method: str, request: bytes, tls: TlsStore | None = None, timeout_s: float = 10
) -> bytes:
    """The answer's bytes; rpc.RpcError when the call fails."""
    channel = rpc.Channel(target, rpc.ChannelSettings(MiB), tls)
    try:
        return run_sync(channel.unary(method, request, None, timeout_s), timeout_s)
    finally:
        run_sync(channel.close(), 1)


def rpc_status(target: str, tls: TlsStore | None) -> tuple[rpc.StatusCode, str]:
    """Calls a method no server has: UNIMPLEMENTED means the call got through the handshake to the
    server; UNAVAILABLE that the connection was refused."""
    try:
        raw_call(target, "/pyozone.Probe/none", b"", tls)
    except rpc.RpcError as e:
        return e.code(), e.details()
    raise AssertionError(f"{target} answered a method it does not have")
