"""Blocking calls for threads that are not on an event loop (the CLI, freon's workers, Spark tasks, OM's
executor calling SCM): every `SyncChannel` of a process runs its calls on one background event loop
thread, so they share its connections as asyncio callers do. A fork starts the child without the thread;
its first call starts another."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

from pyozone.common.net import HostPort
from pyozone.common.tls import TlsStore
from pyozone.hdds.security.x509 import CertRole
from pyozone.rpc.client import EOF, Channel, ChannelSettings, Metadata, StreamCall
from pyozone.rpc.loop import new_event_loop
from pyozone.rpc.service import MethodSpec
from pyozone.rpc.status import RpcError, StatusCode

RESULT_GRACE_S = 5.0
"""How long past a call's own deadline a thread waits for its outcome (the loop thread reports it)."""


class _LoopThread:
    def __init__(self) -> None:
        self.loop = new_event_loop()
        self.thread = threading.Thread(target=self._run, name="pyozone-rpc", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()


_lock = threading.Lock()
_thread: _LoopThread | None = None


def _loop() -> asyncio.AbstractEventLoop:
    global _thread
    if _thread is None:
        with _lock:
            if _thread is None:
                _thread = _LoopThread()
    return _thread.loop


def _forget_after_fork() -> None:
    global _thread, _lock
    _thread = None
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


def run_sync(coro: Any, timeout: float | None) -> Any:
    """Runs `coro` on the process's RPC loop and waits for it (a deadline the call enforces itself)."""
    future = asyncio.run_coroutine_threadsafe(coro, _loop())
    try:
        return future.result(None if timeout is None else timeout + RESULT_GRACE_S)
    except TimeoutError:
        future.cancel()
        raise RpcError(StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded") from None


class SyncChannel:
    """A `Channel` for blocking callers; the same callables, each returning the answer (a unary call) or
    an iterator of answers (a server stream)."""

    def __init__(
        self,
        target: HostPort | str,
        settings: ChannelSettings,
        tls: TlsStore | None = None,
        peer: CertRole | None = None,
        metadata: Metadata = None,
    ) -> None:
        self._channel = Channel(target, settings, tls, peer, metadata)
        self.target = self._channel.target

    def close(self) -> None:
        if _thread is not None:
            run_sync(self._channel.close(), 1.0)

    def __enter__(self) -> SyncChannel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def method(self, spec: MethodSpec) -> Callable[..., Any]:
        channel = self._channel
        decode = spec.response.FromString
        path = spec.path
        card = spec.cardinality
        if card.client_streaming:  # refused when called, so a Stub of the service's other rpcs still works

            def client_stream(*args: Any, **kwargs: Any) -> NoReturn:
                raise NotImplementedError(f"{path}: a client stream from a blocking caller (use Channel)")

            return client_stream
        if not card.server_streaming:

            def unary(request: Any, timeout: float | None = None, metadata: Metadata = None) -> Any:
                return run_sync(channel.unary(path, request, decode, timeout, metadata), timeout)

            return unary

        def server_stream(
            request: Any, timeout: float | None = None, metadata: Metadata = None
        ) -> Iterator[Any]:
            async def start() -> StreamCall:
                return channel.stream(path, decode, False, True, request, timeout, metadata)

            call = run_sync(start(), timeout)
            return _answers(call, timeout)

        return server_stream


def _answers(call: StreamCall, timeout: float | None) -> Iterator[Any]:
    try:
        while (answer := run_sync(call.read(), timeout)) is not EOF:
            yield answer
    finally:
        if not call.done():
            _loop().call_soon_threadsafe(call.cancel)
