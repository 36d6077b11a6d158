"""An OM daemon in-process with a fake SCM, its web server and a raw gRPC stub: for the web API and metrics
tests. Keys are written as a client would (openKey, commitKey) without datanodes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from pyozone import rpc
from pyozone.config import OzoneConfiguration
from pyozone.framework.om import OM_SERVICE
from pyozone.om.server import OmDaemon
from pyozone.proto import OmClientProtocol_pb2 as pb
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import om_channel


def conf(tmp_path: Path) -> OzoneConfiguration:
    return OzoneConfiguration(
        {
            "ozone.metadata.dirs": str(tmp_path),
            "ozone.om.address": "127.0.0.1:0",
            "ozone.om.http-address": "127.0.0.1:0",
            "ozone.scm.block.size": "1KB",
        }
    )


@dataclass
class RunningOM:
    daemon: OmDaemon
    stub: rpc.Stub
    http: aiohttp.ClientSession

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.daemon.http_port}"

    async def get(self, path: str, **params: object) -> tuple[int, Any]:
        async with self.http.get(self.url + path, params={k: str(v) for k, v in params.items()}) as r:
            body = await r.read()
            is_json = r.content_type == "application/json"
            return r.status, (await r.json() if is_json else body.decode())

    async def json(self, path: str, **params: object) -> Any:
        status, body = await self.get(path, **params)
        assert status == 200, (path, status, body)
        return body

    async def put_key(self, volume: str, bucket: str, key: str, size: int = 100) -> pb.KeyInfo:
        """A key of `size` bytes in its first block, committed (the datanode's side is not needed)."""
        opened = await self.open_key(volume, bucket, key, size)
        block = opened.keyInfo.locations[0]
        committed = await self.stub.commitKey(
            pb.CommitKeyRequest(
                volume=volume, bucket=bucket, key=key, clientID=opened.clientID, dataSize=size,
                locations=[pb.KeyLocation(blockID=block.blockID, offset=0, length=size)],
            )
        )  # fmt: skip
        return committed.keyInfo

    async def open_key(self, volume: str, bucket: str, key: str, size: int = 100) -> pb.OpenKeyResponse:
        return await self.stub.openKey(
            pb.OpenKeyRequest(volume=volume, bucket=bucket, key=key, dataSize=size)
        )


@asynccontextmanager
async def running_om(tmp_path: Path, scm: FakeScm | None = None) -> AsyncIterator[RunningOM]:
    daemon = OmDaemon(conf(tmp_path), scm or FakeScm())
    try:
        await daemon.start()
        async with (
            om_channel(daemon.rpc_port) as channel,
            aiohttp.ClientSession() as http,
        ):
            yield RunningOM(daemon, rpc.Stub(channel, OM_SERVICE), http)
    finally:
        await daemon.stop(0.5)


def run(coro: Coroutine[Any, Any, None]) -> None:
    asyncio.run(asyncio.wait_for(coro, 30))
