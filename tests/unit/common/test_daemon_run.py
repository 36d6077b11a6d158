"""run_until_signalled: a signal ends a serving daemon and one whose start still waits; stop() runs."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from pyozone.common.daemon_run import run_until_signalled


class FakeDaemon:
    def __init__(self, start_waits: bool = False, start_fails: bool = False) -> None:
        self.start_waits, self.start_fails = start_waits, start_fails
        self.started = self.stopped = self.start_cancelled = False

    async def start(self) -> None:
        if self.start_fails:
            raise RuntimeError("cannot bind")
        if self.start_waits:
            try:
                await asyncio.Event().wait()  # a peer that never answers
            except asyncio.CancelledError:
                self.start_cancelled = True
                raise
        self.started = True

    async def stop(self) -> None:
        self.stopped = True


async def _signal_soon(sig: int) -> None:
    await asyncio.sleep(0.05)
    os.kill(os.getpid(), sig)


async def _run(daemon: FakeDaemon, sig: int) -> int:
    asyncio.get_running_loop().create_task(_signal_soon(sig))
    return await asyncio.wait_for(run_until_signalled(daemon, "fake"), 5)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_serving_daemon_stops_on_a_signal(sig: int) -> None:
    daemon = FakeDaemon()
    assert asyncio.run(_run(daemon, sig)) == 0
    assert daemon.started and daemon.stopped


def test_a_signal_ends_a_start_that_still_waits() -> None:
    daemon = FakeDaemon(start_waits=True)
    assert asyncio.run(_run(daemon, signal.SIGTERM)) == 0
    assert daemon.start_cancelled and daemon.stopped and not daemon.started


def test_a_failed_start_raises_and_stops() -> None:
    daemon = FakeDaemon(start_fails=True)
    with pytest.raises(RuntimeError, match="cannot bind"):
        asyncio.run(run_until_signalled(daemon, "fake"))
    assert daemon.stopped
