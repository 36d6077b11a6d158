"""Servers built with grpc_options refuse a port another server holds (gRPC's default SO_REUSEPORT shared
it silently: a caller then reached the wrong daemon and heard "Method not found!")."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from pyozone.hdds.limits import grpc_options


def test_a_second_server_cannot_take_a_port_in_use() -> None:
    async def bind_twice() -> None:
        first = grpc.aio.server(options=grpc_options(1024))
        port = first.add_insecure_port("127.0.0.1:0")
        await first.start()
        try:
            second = grpc.aio.server(options=grpc_options(1024))
            with pytest.raises(RuntimeError, match="Failed to bind"):
                second.add_insecure_port(f"127.0.0.1:{port}")
        finally:
            await first.stop(0)

    asyncio.run(bind_twice())
