"""The OM daemon in-process on free ports with a fake SCM: the RPC adapter's answers and statuses,
readiness, waiting for SCM, the cluster-id check, and a clean stop."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.client import AsyncOzoneClient
from pyozone.config import OzoneConfiguration
from pyozone.framework.om import OM_SERVICE
from pyozone.hdds.ids import RATIS_THREE, BlockID
from pyozone.hdds.limits import MAX_ADMIN_MESSAGE_BYTES, MAX_OM_MESSAGE_BYTES
from pyozone.hdds.om_records import KeyBlock, KeyRecord
from pyozone.hdds.states import ReplicaState
from pyozone.om.metadata import KEY_TABLE, key_key
from pyozone.om.server import OmDaemon, ServerStartError
from pyozone.om.storage import OMStorageError
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.proto import hdds_pb2
from pyozone.protocol import om_records
from tests.polling import wait_for_async
from tests.unit.om.om_fakes import FakeScm, closed_location


def conf(tmp_path: Path) -> OzoneConfiguration:
    return OzoneConfiguration(
        {
            "ozone.metadata.dirs": str(tmp_path),
            "ozone.om.address": "127.0.0.1:0",
            "ozone.om.http-address": "127.0.0.1:0",
            "ozone.scm.block.size": "1KB",
        }
    )


def om_channel(port: int, max_message_bytes: int = MAX_OM_MESSAGE_BYTES) -> rpc.Channel:
    """A plaintext channel to an OM on this host (`rpc.Stub(channel, OM_SERVICE)` calls it)."""
    return rpc.Channel(f"127.0.0.1:{port}", rpc.ChannelSettings(max_message_bytes=max_message_bytes))


@asynccontextmanager
async def running(tmp_path: Path, scm: FakeScm) -> AsyncIterator[tuple[OmDaemon, rpc.Stub]]:
    daemon = OmDaemon(conf(tmp_path), scm)
    try:
        await daemon.start()
        async with om_channel(daemon.rpc_port) as ch:
            yield daemon, rpc.Stub(ch, OM_SERVICE)
    finally:
        await daemon.stop(0.5)


def run(coro) -> None:
    asyncio.run(asyncio.wait_for(coro, 20))


async def failure(call, request) -> tuple[rpc.StatusCode, str]:
    with pytest.raises(rpc.RpcError) as error:
        await call(request)
    return error.value.code(), error.value.details() or ""


def ready(port: int) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=2) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_the_protocol_end_to_end(tmp_path: Path) -> None:
    async def body() -> None:
        scm = FakeScm()
        async with running(tmp_path, scm) as (daemon, stub):
            status, answer = await asyncio.to_thread(ready, daemon.http_port)
            assert status == 200 and answer["clusterId"] == "CID-test" and answer["ready"] is True
            await stub.createVolume(pb.CreateVolumeRequest(volume="vol1"))
            bucket = await stub.createBucket(
                pb.CreateBucketRequest(volume="vol1", bucket="bkt1", type=hdds_pb2.RATIS, factor=hdds_pb2.ONE)
            )
            assert bucket.bucket.factor == hdds_pb2.ONE
            listed = await stub.listBuckets(pb.ListBucketsRequest(volume="vol1"))
            assert [b.bucket for b in listed.buckets] == ["bkt1"]
            opened = await stub.openKey(
                pb.OpenKeyRequest(volume="vol1", bucket="bkt1", key="k", dataSize=1500)
            )
            assert len(opened.keyInfo.locations) == 2
            first = opened.keyInfo.locations[0]
            assert (
                first.pipeline.leaderID
                and len(first.pipeline.members) == 3
                and first.containerState == "OPEN"
            )
            extra = await stub.allocateBlock(
                pb.AllocateBlockRequest(volume="vol1", bucket="bkt1", key="k", clientID=opened.clientID)
            )
            locations = [
                pb.KeyLocation(blockID=first.blockID, offset=0, length=1024),
                pb.KeyLocation(blockID=extra.location.blockID, offset=1024, length=476),
            ]
            committed = await stub.commitKey(
                pb.CommitKeyRequest(
                    volume="vol1",
                    bucket="bkt1",
                    key="k",
                    clientID=opened.clientID,
                    dataSize=1500,
                    locations=locations,
                )
            )
            assert committed.keyInfo.dataSize == 1500 and committed.keyInfo.factor == hdds_pb2.ONE
            looked = await stub.lookupKey(pb.LookupKeyRequest(volume="vol1", bucket="bkt1", key="k"))
            assert [x.length for x in looked.keyInfo.locations] == [1024, 476]
            keys = await stub.listKeys(pb.ListKeysRequest(volume="vol1", bucket="bkt1"))
            assert [k.key for k in keys.keys] == ["k"] and not keys.keys[0].locations
            await stub.renameKey(pb.RenameKeyRequest(volume="vol1", bucket="bkt1", key="k", toKey="k2"))
            await stub.deleteKey(pb.DeleteKeyRequest(volume="vol1", bucket="bkt1", key="k2"))
            info = await stub.getServiceInfo(pb.ServiceInfoRequest())
            assert (info.clusterID, info.omID, info.scmInSafeMode) == (
                "CID-test",
                daemon.storage.om_uuid,
                False,
            )

    run(body())


def test_failures_are_statuses_with_result_codes(tmp_path: Path) -> None:
    async def body() -> None:
        scm = FakeScm()
        async with running(tmp_path, scm) as (_, stub):
            await stub.createVolume(pb.CreateVolumeRequest(volume="vol1"))
            await stub.createBucket(pb.CreateBucketRequest(volume="vol1", bucket="bkt1"))
            S = rpc.StatusCode
            v1, b1 = {"volume": "vol1"}, {"volume": "vol1", "bucket": "bkt1"}
            bad_block = pb.CommitKeyRequest(**b1, key="k", clientID=1, locations=[pb.KeyLocation()])
            cases = [
                (stub.infoVolume, pb.InfoVolumeRequest(volume="nope"), S.NOT_FOUND, "VOLUME_NOT_FOUND: "),
                (stub.createVolume, pb.CreateVolumeRequest(volume="V"), S.INVALID_ARGUMENT, "INVALID_VOL"),
                (stub.createVolume, pb.CreateVolumeRequest(**v1), S.ALREADY_EXISTS, "VOLUME_ALREADY_EXISTS"),
                (stub.deleteVolume, pb.DeleteVolumeRequest(**v1), S.FAILED_PRECONDITION, "VOLUME_NOT_EMPTY:"),
                (stub.openKey, pb.OpenKeyRequest(**b1, key=""), S.INVALID_ARGUMENT, "INVALID_KEY_NAME: "),
                (stub.createBucket, pb.CreateBucketRequest(**v1, bucket="bkt2", type=hdds_pb2.EC),
                 S.INVALID_ARGUMENT, "INVALID_REQUEST: "),
                (stub.commitKey, bad_block, S.INVALID_ARGUMENT, "INVALID_REQUEST: locations[0].blockID"),
            ]  # fmt: skip
            for call, request, code, prefix in cases:
                got = await failure(call, request)
                assert got[0] is code and got[1].startswith(prefix), (request, got)
            scm.safe_mode = True
            got = await failure(stub.openKey, pb.OpenKeyRequest(volume="vol1", bucket="bkt1", key="k"))
            assert got[0] is rpc.StatusCode.FAILED_PRECONDITION and got[1].startswith("SCM_IN_SAFE_MODE: ")
            scm.unreachable = True
            got = await failure(stub.openKey, pb.OpenKeyRequest(volume="vol1", bucket="bkt1", key="k"))
            assert got[0] is rpc.StatusCode.UNAVAILABLE, got

    run(body())


def test_waits_for_scm_then_serves_and_refuses_another_cluster(tmp_path: Path) -> None:
    async def body() -> None:
        scm = FakeScm("CID-one")
        scm.unreachable = True
        daemon = OmDaemon(conf(tmp_path), scm)
        starting = asyncio.create_task(daemon.start())
        try:
            await asyncio.sleep(0.3)  # SCM stays unreachable meanwhile: the start must not finish
            assert not starting.done()
            await wait_for_async(lambda: daemon.http_port, 5, "the OM's HTTP port", interval_s=0.05)
            status, answer = await asyncio.to_thread(ready, daemon.http_port)
            assert status == 503 and answer["ready"] is False
            scm.unreachable = False
            await asyncio.wait_for(starting, 5)
            assert daemon.serving
        finally:
            await daemon.stop(0.1)
        other = OmDaemon(conf(tmp_path), FakeScm("CID-two"))
        try:
            with pytest.raises(OMStorageError, match=r"CID-two.*CID-one"):
                await other.start()
        finally:
            await other.stop(0.1)

    run(body())


def test_restart_keeps_the_namespace(tmp_path: Path) -> None:
    async def body() -> None:
        scm = FakeScm()
        async with running(tmp_path, scm) as (_, stub):
            await stub.createVolume(pb.CreateVolumeRequest(volume="vol1"))
        async with running(tmp_path, scm) as (_, stub):
            listed = await stub.listVolumes(pb.ListVolumesRequest())
            assert [v.volume for v in listed.volumes] == ["vol1"]

    run(body())


def test_a_key_of_thousands_of_blocks_is_readable_by_the_client(tmp_path: Path) -> None:
    """lookupKey states every block's pipeline in full: the client's channel takes what OM may send."""
    blocks = 12_000

    async def body() -> None:
        scm = FakeScm()
        scm.locations[1] = closed_location(1, *((i, ReplicaState.CLOSED) for i in (1, 2, 3)))
        async with running(tmp_path, scm) as (daemon, _):
            om = daemon.core
            om.volumes.create("vol")
            om.buckets.create("vol", "bkt")
            # written as a commit of that many allocateBlocks would leave it (quicker than doing them)
            located = tuple(KeyBlock(BlockID(1, 100 + i), i * 1024, 1024, 1) for i in range(blocks))
            record = KeyRecord("vol", "bkt", "big", blocks * 1024, 1, 1, RATIS_THREE, located, 1)
            om.store.write(
                [
                    (
                        KEY_TABLE,
                        key_key("vol", "bkt", "big"),
                        om_records.encode(om_records.key_to_proto(record)),
                    )
                ]
            )
            async with om_channel(daemon.rpc_port, MAX_OM_MESSAGE_BYTES) as ch:
                request = pb.LookupKeyRequest(volume="vol", bucket="bkt", key="big")
                answer = await rpc.Stub(ch, OM_SERVICE).lookupKey(request)
            assert answer.ByteSize() > MAX_ADMIN_MESSAGE_BYTES  # the limit the client's channel once had
            async with AsyncOzoneClient(f"127.0.0.1:{daemon.rpc_port}") as client:
                info = await client.key_info("vol", "bkt", "big")
            assert len(info.locations) == blocks

    run(body())


def test_undecodable_requests_are_invalid_argument_without_a_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Bytes that are no request message: INVALID_ARGUMENT and a warning line, not UNKNOWN and a traceback."""

    async def body() -> None:
        async with running(tmp_path, FakeScm()) as (daemon, stub):
            async with om_channel(daemon.rpc_port) as ch:
                for method in ("createVolume", "openKey", "listKeys"):
                    raw = ch.unary_unary(f"/pyozone.om.OzoneManagerService/{method}")
                    for garbage in (b"\xff" * 64, b"\x0a\xff\xff\xff\xff\x0f" + b"x" * 16):
                        code, details = await failure(raw, garbage)
                        assert code is rpc.StatusCode.INVALID_ARGUMENT, (method, code, details)
                        assert "not a valid request message" in details
            await stub.createVolume(pb.CreateVolumeRequest(volume="vol1"))  # and OM goes on serving

    run(body())
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


def test_the_metadata_dir_is_private_from_the_first_start(tmp_path: Path) -> None:
    """om.db holds S3 secrets: ozone.metadata.dirs.permissions (750) before anything is written there."""
    meta = tmp_path / "fresh"

    async def body() -> None:
        daemon = OmDaemon(conf(meta), FakeScm())
        try:
            await daemon.start()
            assert meta.stat().st_mode & 0o777 == 0o750
        finally:
            await daemon.stop(0.5)

    run(body())


def test_an_open_key_naming_its_replication_is_one_pool_job(tmp_path: Path, monkeypatch) -> None:
    """issue 29: openKey with a type or factor read the bucket in a pool job of its own (a second thread
    hop and durability wait per key) before the job that opens the key; the replication the request names
    is now resolved in that one job, its unset parts from the bucket's. Since, openKey runs on the loop and
    its one pool job is SCM's call (LoopBlockBatcher: one per batch)."""

    async def body() -> None:
        async with running(tmp_path, FakeScm()) as (daemon, stub):
            await stub.createVolume(pb.CreateVolumeRequest(volume="vol1"))
            await stub.createBucket(
                pb.CreateBucketRequest(volume="vol1", bucket="bkt1", type=hdds_pb2.RATIS, factor=hdds_pb2.ONE)
            )
            jobs = []
            submit = daemon._executor.submit

            def counted(fn, *args, **kwargs):
                jobs.append(fn)
                return submit(fn, *args, **kwargs)

            monkeypatch.setattr(daemon._executor, "submit", counted)
            for request, factor in [
                (pb.OpenKeyRequest(type=hdds_pb2.RATIS, factor=hdds_pb2.THREE), hdds_pb2.THREE),
                (pb.OpenKeyRequest(type=hdds_pb2.RATIS), hdds_pb2.ONE),  # the bucket's factor
                (pb.OpenKeyRequest(), hdds_pb2.ONE),
            ]:
                jobs.clear()
                request.volume, request.bucket, request.key = "vol1", "bkt1", "k"
                opened = await stub.openKey(request)
                assert opened.keyInfo.factor == factor and len(jobs) == 1
            code, details = await failure(
                stub.openKey, pb.OpenKeyRequest(volume="vol1", bucket="nope", key="k", type=hdds_pb2.RATIS)
            )
            assert code == rpc.StatusCode.NOT_FOUND and details.startswith("BUCKET_NOT_FOUND")

    run(body())


def test_a_taken_rpc_port_fails_the_start_naming_the_key(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        configuration = conf(tmp_path)
        configuration.set("ozone.om.address", f"127.0.0.1:{taken.getsockname()[1]}")

        async def body() -> None:
            daemon = OmDaemon(configuration, FakeScm())
            try:
                with pytest.raises(ServerStartError) as error:
                    await daemon.start()
                assert str(error.value).startswith("cannot bind the OM to 127.0.0.1:"), error.value
                assert "(ozone.om.address): " in str(error.value) and "in use" in str(error.value)
            finally:
                await daemon.stop(0.5)

        run(body())
