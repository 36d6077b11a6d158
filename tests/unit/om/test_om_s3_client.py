"""The S3 calls through the real client against the OM daemon in-process (fake SCM, empty keys: no
datanode is needed): metadata and tags as the gateway sets them."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from pyozone.client import AsyncOzoneClient
from pyozone.client.errors import OMException
from pyozone.om.server import OmDaemon
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import conf, run


@asynccontextmanager
async def client(tmp_path: Path) -> AsyncIterator[AsyncOzoneClient]:
    daemon = OmDaemon(conf(tmp_path), FakeScm())
    try:
        await daemon.start()
        async with AsyncOzoneClient(f"127.0.0.1:{daemon.rpc_port}") as c:
            await c.create_volume("s3v")
            await c.create_bucket("s3v", "bkt")
            yield c
    finally:
        await daemon.stop(0.5)


def test_metadata_set_before_close_and_tags(tmp_path: Path) -> None:
    async def body() -> None:
        async with client(tmp_path) as c:
            out = await c.create_key("s3v", "bkt", "k", metadata={"Content-Type": "a/b"}, tags={"t": "1"})
            out.metadata["ETag"] = "d41d8cd98f00b204e9800998ecf8427e"
            committed = await out.close()
            expected = {"Content-Type": "a/b", "ETag": "d41d8cd98f00b204e9800998ecf8427e"}
            assert (committed.metadata, committed.tags) == (expected, {"t": "1"})
            (listed,) = await c.list_keys("s3v", "bkt")
            assert (listed.metadata, listed.tags) == (expected, {"t": "1"})
            await c.set_key_tags("s3v", "bkt", "k", {"u": "2"})
            info = await c.key_info("s3v", "bkt", "k")
            assert (info.metadata, info.tags) == (expected, {"u": "2"})
            put = await c.put_key("s3v", "bkt", "k", b"", metadata={"ETag": "x"})
            assert (put.metadata, put.tags) == ({"ETag": "x"}, {})
            with pytest.raises(OMException) as error:
                await c.set_key_tags("s3v", "bkt", "k", {"": "v"})
            assert error.value.result == "INVALID_REQUEST"

    run(body())


def test_secrets_and_signing_keys(tmp_path: Path) -> None:
    async def body() -> None:
        async with client(tmp_path) as c:
            with pytest.raises(OMException) as error:
                await c.get_s3_secret("alice", create=False)
            assert error.value.result == "S3_SECRET_NOT_FOUND"
            access_id, secret = await c.get_s3_secret("alice")
            assert (access_id, len(secret)) == ("alice", 64)
            assert await c.get_s3_secret("alice", create=False) == (access_id, secret)
            key = await c.s3_signing_key("alice", "20240102", "us-east-1", "s3")
            expected = ("AWS4" + secret).encode()
            for part in ("20240102", "us-east-1", "s3", "aws4_request"):
                expected = hmac.new(expected, part.encode(), hashlib.sha256).digest()
            assert key == expected
            with pytest.raises(OMException) as error:
                await c.s3_signing_key("alice", "2024-01-02", "us-east-1", "s3")
            assert error.value.result == "INVALID_REQUEST"
            with pytest.raises(OMException) as error:  # refused at the RPC edge, by its length
                await c.s3_signing_key("alice", "20240102" * 100, "us-east-1", "s3")
            assert error.value.result == "INVALID_REQUEST"
            await c.revoke_s3_secret("alice")
            with pytest.raises(OMException) as error:
                await c.s3_signing_key("alice", "20240102", "us-east-1", "s3")
            assert error.value.result == "S3_SECRET_NOT_FOUND"

    run(body())
