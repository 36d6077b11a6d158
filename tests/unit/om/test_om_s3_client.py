"""The S3 calls through the real client against the OM daemon in-process (fake SCM, empty keys and parts:
no datanode is needed): metadata and tags as the gateway sets them, secrets and signing keys, and a
multipart upload's whole life with OM's refusals as the client raises them."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from pyozone.client import AsyncOzoneClient
from pyozone.client.errors import OMException
from pyozone.hdds.ids import RATIS_ONE
from pyozone.om.server import OmDaemon
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import conf, run


@asynccontextmanager
async def client(tmp_path: Path) -> AsyncIterator[AsyncOzoneClient]:
    daemon = OmDaemon(conf(tmp_path), FakeScm())
    daemon.settings = replace(daemon.settings, multipart_min_size=0)  # parts here are empty
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


async def refused(call, *args) -> str:
    with pytest.raises(OMException) as error:
        await call(*args)
    return error.value.result


def test_a_multipart_upload_through_the_client(tmp_path: Path) -> None:
    async def body() -> None:
        async with client(tmp_path) as c:
            upload_id = await c.initiate_multipart_upload(
                "s3v", "bkt", "big", "RATIS/ONE", metadata={"Content-Type": "a/b"}, tags={"t": "1"}
            )
            for number, etag in ((2, "old"), (1, "e1"), (2, "e2")):
                part = await c.create_multipart_key("s3v", "bkt", "big", upload_id, number)
                part.metadata["ETag"] = etag
                committed = await part.close()
                assert (committed.name, committed.data_size, committed.metadata) == ("big", 0, {"ETag": etag})
            listing = await c.list_parts("s3v", "bkt", "big", upload_id, max_parts=1)
            assert [(p.part_number, p.etag) for p in listing.parts] == [(1, "e1")]
            assert (listing.next_part_number_marker, listing.truncated) == (1, True)
            assert (listing.replication, listing.metadata) == (RATIS_ONE, {"Content-Type": "a/b"})
            rest = await c.list_parts("s3v", "bkt", "big", upload_id, part_number_marker=1)
            assert [(p.part_number, p.etag, p.size) for p in rest.parts] == [
                (2, "e2", 0)
            ] and not rest.truncated
            (listed,) = await c.list_multipart_uploads("s3v", "bkt", prefix="b")
            assert (listed.key, listed.upload_id, listed.replication) == ("big", upload_id, RATIS_ONE)
            args = ("s3v", "bkt", "big", upload_id)
            assert (
                await refused(c.complete_multipart_upload, *args, [(2, "e2"), (1, "e1")])
                == "INVALID_PART_ORDER"
            )
            assert (
                await refused(c.complete_multipart_upload, *args, [(1, "e1"), (2, "old")]) == "INVALID_PART"
            )
            assert await refused(c.create_multipart_key, *args, 10_001) == "INVALID_REQUEST"
            missing = ("s3v", "bkt", "big", "no-such-upload")
            assert await refused(c.create_multipart_key, *missing, 1) == "NO_SUCH_MULTIPART_UPLOAD_ERROR"
            assert await refused(c.list_parts, *missing) == "NO_SUCH_MULTIPART_UPLOAD_ERROR"
            key = await c.complete_multipart_upload(*args, [(1, "e1"), (2, "e2")], {"ETag": "x-2"})
            assert (key.metadata, key.tags) == ({"Content-Type": "a/b", "ETag": "x-2"}, {"t": "1"})
            assert key.replication == RATIS_ONE
            assert (await c.key_info("s3v", "bkt", "big")).metadata["ETag"] == "x-2"
            assert await c.list_multipart_uploads("s3v", "bkt") == []
            other = await c.initiate_multipart_upload("s3v", "bkt", "gone")
            await c.abort_multipart_upload("s3v", "bkt", "gone", other)
            assert await refused(c.abort_multipart_upload, "s3v", "bkt", "gone", other) == (
                "NO_SUCH_MULTIPART_UPLOAD_ERROR"
            )

    run(body())
