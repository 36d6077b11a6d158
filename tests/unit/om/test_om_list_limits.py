"""Every OM list call answers at most ozone.om.server.list.max.size entries (1000), however many it asks
for (issue 28, defect 7: listKeys with maxKeys 2^32-1 answered 1,050 keys)."""

from __future__ import annotations

from pathlib import Path

from pyozone.config import OzoneConfiguration
from pyozone.om.core import OzoneManager
from pyozone.om.multipart import MultipartManager
from pyozone.om.settings import OMSettings
from pyozone.proto import OmClientProtocol_pb2 as pb
from tests.unit.om.om_fakes import FakeScm, make_om
from tests.unit.om.test_om_server import run, running

ALL = 2**32 - 1


def test_list_keys_asking_for_2_pow_32_minus_1_answers_1000(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path, FakeScm()) as (daemon, stub):
            om = daemon.core
            om.create_volume("vol1")
            om.create_bucket("vol1", "bkt1")
            for i in range(1050):
                session = om.open_key("vol1", "bkt1", f"k{i:04d}", 0)
                om.commit_key("vol1", "bkt1", f"k{i:04d}", session.client_id, 0, [])
            reply = await stub.listKeys(pb.ListKeysRequest(volume="vol1", bucket="bkt1", maxKeys=ALL))
            assert len(reply.keys) == 1000 and reply.keys[-1].key == "k0999"

    run(body())


def test_every_list_is_capped_at_the_servers_max(tmp_path: Path) -> None:
    om: OzoneManager = make_om(tmp_path, list_max_size=3)
    for v in ("vol1", "vol2", "vol3", "vol4"):
        om.create_volume(v)
    for b in ("bkt1", "bkt2", "bkt3", "bkt4"):
        om.create_bucket("vol1", b)
    mpu = MultipartManager(om)
    for k in ("k1", "k2", "k3", "k4"):
        session = om.open_key("vol1", "bkt1", k, 0)
        om.commit_key("vol1", "bkt1", k, session.client_id, 0, [])
        mpu.initiate("vol1", "bkt1", k)
    upload = mpu.initiate("vol1", "bkt1", "parts")
    for n in range(1, 5):
        session = mpu.open_part("vol1", "bkt1", "parts", upload.upload_id, n, 0)
        mpu.commit_part(
            "vol1", "bkt1", "parts", session.client_id, upload.upload_id, n, 0, [], {"ETag": f"e{n}"}
        )

    assert len(om.list_volumes(max_keys=ALL)) == 3
    assert len(om.list_buckets("vol1", max_keys=ALL)) == 3
    assert len(om.list_keys("vol1", "bkt1", max_keys=ALL)) == 3
    assert len(om.list_keys("vol1", "bkt1")) == 3  # 0 asks for the most
    assert len(mpu.list_uploads("vol1", "bkt1", max_uploads=ALL)) == 3
    page = mpu.list_parts("vol1", "bkt1", "parts", upload.upload_id, max_parts=ALL)
    assert len(page.parts) == 3 and page.truncated
    assert len(om.list_keys("vol1", "bkt1", max_keys=2)) == 2  # fewer than the most: as asked


def test_the_servers_max_is_ozones_key() -> None:
    assert OMSettings().list_max_size == 1000
    conf = OzoneConfiguration({"ozone.om.server.list.max.size": "50"})
    assert OMSettings.from_conf(conf).list_max_size == 50
