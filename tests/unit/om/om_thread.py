"""An OM daemon with a fake SCM on a thread of its own, for tools run in-process against it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pyozone.om.server import OmDaemon
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import conf


@contextmanager
def om_on_thread(tmp_path: Path) -> Iterator[str]:
    """The running OM's client address."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    daemon = OmDaemon(conf(tmp_path), FakeScm())
    try:
        asyncio.run_coroutine_threadsafe(daemon.start(), loop).result(20)
        yield f"127.0.0.1:{daemon.rpc_port}"
    finally:
        asyncio.run_coroutine_threadsafe(daemon.stop(0.5), loop).result(20)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
