"""Every OM list rpc answers at most ozone.om.server.list.max.size entries (1000), however many it asks
for (issue 28, defect 7: listKeys with maxKeys 2^32-1 answered 1,050 keys)."""

from __future__ import annotations

from pathlib import Path

from pyozone import rpc
from pyozone.config import OzoneConfiguration
from pyozone.framework.om import OM_SERVICE
from pyozone.om.core import OzoneManager
from pyozone.om.multipart import MultipartManager
from pyozone.om.server import OmDaemon
from pyozone.om.settings import OMSettings
from pyozone.proto import OmClientProtocol_pb2 as pb
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import conf, om_channel, run, running

ALL = 2**32 - 1


def test_list_keys_asking_for_2_pow_32_minus_1_answers_1000(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path, FakeScm()) as (daemon, stub):
            om = daemon.core
            om.volumes.create("vol1")
            om.buckets.create("vol1", "bkt1")
            for i in range(1050):
                session = om.keys.open("vol1", "bkt1", f"k{i:04d}", 0)
                om.keys.commit("vol1", "bkt1", f"k{i:04d}", session.client_id, 0, [])
            reply = await stub.listKeys(pb.ListKeysRequest(volume="vol1", bucket="bkt1", maxKeys=ALL))
            assert len(reply.keys) == 1000 and reply.keys[-1].key == "k0999"

    run(body())


def test_every_list_rpc_is_capped_at_the_servers_max(tmp_path: Path) -> None:
    async def body() -> None:
        configuration = conf(tmp_path)
        configuration.set("ozone.om.server.list.max.size", "3")
        daemon = OmDaemon(configuration, FakeScm())
        try:
            await daemon.start()
            om = daemon.core
            fill(om)
            async with om_channel(daemon.rpc_port) as channel:
                stub = rpc.Stub(channel, OM_SERVICE)
                for ask in (0, ALL):
                    assert len((await stub.listVolumes(pb.ListVolumesRequest(maxKeys=ask))).volumes) == 3
                    reply = await stub.listBuckets(pb.ListBucketsRequest(volume="vol1", maxKeys=ask))
                    assert len(reply.buckets) == 3
                    reply = await stub.listKeys(pb.ListKeysRequest(volume="vol1", bucket="bkt1", maxKeys=ask))
                    assert len(reply.keys) == 3
                    request = pb.ListMultipartUploadsRequest(volume="vol1", bucket="bkt1", maxUploads=ask)
                    assert len((await stub.listMultipartUploads(request)).uploads) == 3
                    upload = (await stub.listMultipartUploads(request)).uploads[0]
                    parts = await stub.listParts(
                        pb.ListPartsRequest(
                            volume="vol1",
                            bucket="bkt1",
                            key=upload.key,
                            uploadID=upload.uploadID,
                            maxParts=ask,
                        )
                    )
                    assert len(parts.parts) == 3 and parts.isTruncated
                reply = await stub.listKeys(pb.ListKeysRequest(volume="vol1", bucket="bkt1", maxKeys=2))
                assert len(reply.keys) == 2  # fewer than the most: as asked
        finally:
            await daemon.stop(0.5)

    run(body())


def fill(om: OzoneManager) -> None:
    """Four of everything: volumes, buckets, keys, uploads, and four parts in the first upload."""
    for v in ("vol1", "vol2", "vol3", "vol4"):
        om.volumes.create(v)
    for b in ("bkt1", "bkt2", "bkt3", "bkt4"):
        om.buckets.create("vol1", b)
    mpu = MultipartManager(om)
    uploads = []
    for k in ("k1", "k2", "k3", "k4"):
        session = om.keys.open("vol1", "bkt1", k, 0)
        om.keys.commit("vol1", "bkt1", k, session.client_id, 0, [])
        uploads.append(mpu.initiate("vol1", "bkt1", k))
    first = uploads[0].upload_id
    for n in range(1, 5):
        session = mpu.open_part("vol1", "bkt1", "k1", first, n, 0)
        mpu.commit_part("vol1", "bkt1", "k1", session.client_id, first, n, 0, [], {"ETag": f"e{n}"})


def test_the_servers_max_is_ozones_key() -> None:
    assert OMSettings().list_max_size == 1000
    conf = OzoneConfiguration({"ozone.om.server.list.max.size": "50"})
    assert OMSettings.from_conf(conf).list_max_size == 50
