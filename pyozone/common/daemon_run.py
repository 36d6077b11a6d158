"""Running a daemon in its process until SIGTERM or SIGINT: one rule for every daemon whose start may wait
on a peer (OM on SCM, the S3 gateway on OM), so a signal ends a start that still waits, too."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import Protocol

log = logging.getLogger(__name__)


class Daemon(Protocol):
    async def start(self) -> None: ...

    async def stop(self) -> None: ...


async def run_until_signalled(daemon: Daemon, name: str) -> int:
    """Starts `daemon` and serves until SIGTERM or SIGINT; a failed start raises; `stop()` always runs."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        starting = asyncio.create_task(daemon.start())
        stopping = asyncio.create_task(stop.wait())
        await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not starting.done():
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
        else:
            starting.result()  # a failed start raises here
            await stopping
        stopping.cancel()
        log.info("%s shutting down", name)
    finally:
        await daemon.stop()
    return 0
