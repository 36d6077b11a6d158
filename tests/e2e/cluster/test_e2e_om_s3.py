"""OM's S3 side on a live `pyozone cluster up` (3 datanodes, 1 MB blocks), through the real client and CLI:
a key's metadata and tags (the ETag set at close, listed without a lookup), a multipart upload of parts
written out of order and one rewritten, completed into a key that reads back as the listed parts in order,
an aborted upload, and `pyozone s3 getsecret`/`revokesecret` as real processes with the signing key OM
derives from the secret."""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Iterator

import pytest

from pyozone.client import AsyncOzoneClient
from pyozone.client.errors import OMException
from tests.e2e.cluster.cluster_helpers import LiveCluster, MiB, live_cluster, ozone_client

VOL, BUCKET = "s3test", "bucket1"
PART = 5 * MiB  # OM's smallest part but the last


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    with live_cluster(request, tmp_path_factory, "om-s3", 3, overrides={"ozone.scm.block.size": "1MB"}) as c:
        yield c


def run(cluster: LiveCluster, scenario) -> None:  # type: ignore[no-untyped-def]
    client = ozone_client(cluster)
    try:
        client.run(scenario(client.async_client))
    finally:
        client.close()


async def write_part(c: AsyncOzoneClient, key: str, upload_id: str, number: int, data: bytes) -> str:
    out = await c.create_multipart_key(VOL, BUCKET, key, upload_id, number, len(data))
    await out.write(data)
    out.metadata["ETag"] = hashlib.md5(data).hexdigest()
    await out.close()
    return out.metadata["ETag"]


async def read(c: AsyncOzoneClient, key: str) -> bytes:
    stream = await c.read_key(VOL, BUCKET, key)
    async with stream:
        return b"".join([piece async for piece in stream])


def test_metadata_tags_and_a_multipart_upload(cluster: LiveCluster) -> None:
    async def scenario(c: AsyncOzoneClient) -> None:
        await c.create_volume(VOL)
        await c.create_bucket(VOL, BUCKET)
        data = os.urandom(3000)
        out = await c.create_key(VOL, BUCKET, "plain", len(data), metadata={"Content-Type": "text/x"})
        await out.write(data)
        out.metadata["ETag"] = hashlib.md5(data).hexdigest()
        await out.close()
        await c.set_key_tags(VOL, BUCKET, "plain", {"team": "a"})
        (listed,) = await c.list_keys(VOL, BUCKET)
        assert listed.metadata == {"Content-Type": "text/x", "ETag": hashlib.md5(data).hexdigest()}
        assert listed.tags == {"team": "a"}

        upload_id = await c.initiate_multipart_upload(VOL, BUCKET, "big", metadata={"x-amz-meta-a": "1"})
        last, first_old, first = os.urandom(1000), os.urandom(PART), os.urandom(PART + 1)
        etag2 = await write_part(c, "big", upload_id, 2, last)
        await write_part(c, "big", upload_id, 1, first_old)
        etag1 = await write_part(c, "big", upload_id, 1, first)  # replaces the older part 1
        parts = await c.list_parts(VOL, BUCKET, "big", upload_id)
        assert [(p.part_number, p.etag, p.size) for p in parts.parts] == [
            (1, etag1, PART + 1),
            (2, etag2, 1000),
        ]
        key = await c.complete_multipart_upload(
            VOL, BUCKET, "big", upload_id, [(1, etag1), (2, etag2)], {"ETag": "m-2"}
        )
        assert key.data_size == PART + 1 + 1000
        assert key.metadata == {"x-amz-meta-a": "1", "ETag": "m-2"}
        assert await read(c, "big") == first + last
        assert await c.list_multipart_uploads(VOL, BUCKET) == []

        aborted = await c.initiate_multipart_upload(VOL, BUCKET, "dropped")
        await write_part(c, "dropped", aborted, 1, os.urandom(2000))
        await c.abort_multipart_upload(VOL, BUCKET, "dropped", aborted)
        with pytest.raises(OMException) as error:
            await c.list_parts(VOL, BUCKET, "dropped", aborted)
        assert error.value.result == "NO_SUCH_MULTIPART_UPLOAD_ERROR"
        assert [k.name for k in await c.list_keys(VOL, BUCKET)] == ["big", "plain"]

    run(cluster, scenario)


def test_getsecret_and_revokesecret(cluster: LiveCluster) -> None:
    conf = ("--conf", str(cluster.conf_dir))
    shown = cluster.pyozone("s3", "getsecret", "-u", "alice", *conf)
    assert shown.code == 0, shown
    first, second = shown.out.splitlines()
    secret = second.removeprefix("awsSecret=")
    assert first == "awsAccessKey=alice" and len(secret) == 64
    exported = cluster.pyozone("s3", "getsecret", "-u", "alice", "-e", *conf)
    assert exported.out == f"export AWS_ACCESS_KEY_ID='alice'\nexport AWS_SECRET_ACCESS_KEY='{secret}'\n"

    async def signing_key(c: AsyncOzoneClient) -> None:
        key = await c.s3_signing_key("alice", "20250101", "us-east-1", "s3")
        expected = ("AWS4" + secret).encode()
        for part in ("20250101", "us-east-1", "s3", "aws4_request"):
            expected = hmac.new(expected, part.encode(), hashlib.sha256).digest()
        assert key == expected

    run(cluster, signing_key)
    revoked = cluster.pyozone("s3", "revokesecret", "-u", "alice", "-y", *conf)
    assert (revoked.code, revoked.out) == (0, "S3 secret revoked.\n")
    again = cluster.pyozone("s3", "revokesecret", "-u", "alice", "-y", *conf)
    assert again.code == 1 and "S3_SECRET_NOT_FOUND" in again.err
