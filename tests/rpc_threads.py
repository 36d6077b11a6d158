"""A pyozone.rpc server for synchronous test fakes: its own event-loop thread, and every handler of the
servicer run on a thread pool (as grpc.server ran them), so a fake may block, sleep and share locks with
other threads. A handler ends a call with a status by raising rpc.AbortError."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pyozone import rpc
from pyozone.common.tls import TlsStore
from pyozone.rpc.loop import new_event_loop

START_TIMEOUT_S = 10.0


class _OnPool:
    """The servicer's rpcs as async handlers, each running the sync one on `pool`."""

    def __init__(self, servicer: object, spec: rpc.ServiceSpec, pool: ThreadPoolExecutor) -> None:
        for name in spec.methods:
            handler = getattr(servicer, name, None)
            if handler is not None:
                setattr(self, name, _on_pool(handler, pool))


def _on_pool(handler: Callable[[Any, Any], Any], pool: ThreadPoolExecutor) -> Callable[..., Any]:
    async def call(request: Any, context: rpc.CallContext) -> Any:
        return await asyncio.get_running_loop().run_in_executor(pool, handler, request, context)

    return call


class ThreadedRpcServer:
    """`servicer` (plain sync methods named as the rpcs of `spec`) served on 127.0.0.1:`port`, mutual TLS
    with `tls`."""

    def __init__(
        self,
        spec: rpc.ServiceSpec,
        servicer: object,
        settings: rpc.ServerSettings,
        workers: int = 24,
        tls: TlsStore | None = None,
    ) -> None:
        self._pool = ThreadPoolExecutor(workers)
        self._loop = new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="rpc-fake", daemon=True)
        self._thread.start()
        self.server = rpc.Server(settings)
        self.server.add_service(spec, _OnPool(servicer, spec, self._pool))
        self.port: int = self._run(self.server.start("127.0.0.1", 0, tls))
        self._stopped = False

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(START_TIMEOUT_S)

    def stop(self) -> None:
        """Closes the port and every connection (callers see UNAVAILABLE); safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        self._run(self.server.stop(0))
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(START_TIMEOUT_S)
        self._pool.shutdown(wait=False, cancel_futures=True)
