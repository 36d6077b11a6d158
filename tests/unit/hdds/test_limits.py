"""An RPC server refuses a port another server holds (gRPC's default SO_REUSEPORT once shared it silently: a
caller then reached the wrong daemon and heard "Method not found!")."""

from __future__ import annotations

import pytest

from pyozone import rpc
from tests.unit.rpc.rpc_support import MB, SPEC, Echo, scenario, serve


def test_a_second_server_cannot_take_a_port_in_use() -> None:
    async def bind_twice() -> None:
        first, port = await serve()
        second = rpc.Server(rpc.ServerSettings(4 * MB))
        second.add_service(SPEC, Echo())
        try:
            with pytest.raises(OSError, match="in use"):
                await second.start("127.0.0.1", port)
        finally:
            await second.stop(None)
            await first.stop(None)

    scenario(bind_twice)
