"""EC configs in the OM core: recorded per bucket, key and multipart upload; a key without its own takes
its bucket's; SCM is asked for blocks of the key's config; allowed-configs is checked on what clients name;
EC block groups are sized per data index and counted as data plus parity."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.hdds.block import ExcludeList
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, ReplicationConfig
from pyozone.hdds.om_records import KeyBlock
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import PipelineState, ReplicationType
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import BUCKET_TABLE, MULTIPART_INFO_TABLE, OPEN_KEY_TABLE, bucket_key
from pyozone.om.multipart import MultipartManager, multipart_key
from pyozone.om.replication import AllowedConfigs
from pyozone.protocol import om as wire
from pyozone.protocol import om_records
from pyozone.protocol.block import BlockLocation
from tests.builders import dn_id
from tests.unit.om.om_fakes import BLOCK, FakeScm, details, make_om

RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")
RS_6_3 = ReplicationConfig.parse("rs-6-3-1024k")
XOR_2_1 = ReplicationConfig.parse("xor-2-1-1024k")


class EcScm(FakeScm):
    """The fake SCM, answering each allocation with a pipeline of the config asked for (an EC one of d+p
    members for an EC config), as SCM does."""

    def allocate_blocks(
        self, size: int, config: ReplicationConfig, num_blocks: int, excluded: ExcludeList, owner: str
    ) -> list[BlockLocation]:
        blocks = super().allocate_blocks(size, config, num_blocks, excluded, owner)
        nodes = tuple(range(1, config.required_nodes + 1))
        pipeline = Pipeline(
            f"00000000-0000-4000-8000-{config.required_nodes:012d}",
            config,
            PipelineState.OPEN,
            tuple(dn_id(i) for i in nodes),
            0,
            0,
        )
        members = {dn_id(i): details(i) for i in nodes}
        return [BlockLocation(b.block_id, pipeline, members) for b in blocks]


@pytest.fixture
def scm() -> EcScm:
    return EcScm()


@pytest.fixture
def om(tmp_path: Path, scm: EcScm) -> OzoneManager:
    om = make_om(tmp_path, scm)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "ecb", RS_3_2)
    return om


def code(call, *args, **kwargs) -> OMResultCode:  # type: ignore[no-untyped-def]
    with pytest.raises(OMException) as error:
        call(*args, **kwargs)
    return error.value.code


def test_a_bucket_records_its_ec_config(om: OzoneManager) -> None:
    assert om.bucket_info("vol1", "ecb").replication == RS_3_2
    stored = wire.om_pb.BucketInfo.FromString(om.store.get(BUCKET_TABLE, bucket_key("vol1", "ecb")))
    assert stored.type == ReplicationType.EC.value and stored.factor == 0
    assert (stored.ecReplicationConfig.data, stored.ecReplicationConfig.parity) == (3, 2)
    # Ozone writes the codec in lower case
    assert (stored.ecReplicationConfig.codec, stored.ecReplicationConfig.ecChunkSize) == ("rs", 1 << 20)
    assert [b.replication for b in om.buckets.list("vol1")] == [RS_3_2]


def test_a_key_takes_its_buckets_config_unless_it_names_its_own(om: OzoneManager, scm: EcScm) -> None:
    inherited = om.keys.open("vol1", "ecb", "a")
    assert inherited.key.replication == RS_3_2 and scm.allocations[-1][1] == RS_3_2
    own = om.keys.open("vol1", "ecb", "b", replication=RATIS_ONE)
    assert own.key.replication == RATIS_ONE and scm.allocations[-1][1] == RATIS_ONE
    om.buckets.create("vol1", "ratis", RATIS_THREE)
    ec_key = om.keys.open("vol1", "ratis", "c", replication=RS_6_3)
    assert ec_key.key.replication == RS_6_3 and scm.allocations[-1][1] == RS_6_3
    stored = om_records.decode_key(om.store.get(OPEN_KEY_TABLE, f"/vol1/ratis/c/{ec_key.client_id}"))
    assert stored.replication == RS_6_3


def test_the_committed_key_keeps_its_config_and_counts_data_plus_parity(om: OzoneManager) -> None:
    size = 2500  # under one cell: 2500 bytes on index 1, the same on each parity index
    session = om.keys.open("vol1", "ecb", "k", size)
    block = session.key.blocks[0]
    om.keys.commit("vol1", "ecb", "k", session.client_id, size, [KeyBlock(block.block_id, 0, size, 1)])
    key = om.keys.lookup("vol1", "ecb", "k").key
    assert key.replication == RS_3_2 and [k.replication for k in om.keys.list("vol1", "ecb")] == [RS_3_2]
    assert om.bucket_info("vol1", "ecb").used_bytes == size * 3 == key.replicated_bytes
    assert om.volume_info("vol1").used_bytes == size * 3


def test_ec_block_groups_hold_the_block_size_on_each_data_index(om: OzoneManager, scm: EcScm) -> None:
    group = BLOCK * 3
    session = om.keys.open("vol1", "ecb", "big", 2 * group + 1)
    assert len(session.key.blocks) == 3 and session.block_length == group
    assert scm.allocations[-1][0] == BLOCK  # SCM counts the block size per replica
    assert [p.pipeline.replication_config for p in session.allocated] == [RS_3_2] * 3
    whole = om.keys.open("vol1", "ecb", "exact", group)
    assert len(whole.key.blocks) == 1 and whole.block_length == group


def test_a_small_ec_key_asks_scm_for_its_longest_replica(
    om: OzoneManager, scm: EcScm, tmp_path: Path
) -> None:
    session = om.keys.open("vol1", "ecb", "small", 700)
    assert scm.allocations[-1][0] == 700 and session.block_length == 700
    small_cells = make_om(tmp_path / "small-cells", scm, allowed_configs=AllowedConfigs(""), block_size=4096)
    small_cells.volumes.create("vol1")
    small_cells.buckets.create("vol1", "bkt", ReplicationConfig.parse("rs-3-2-1k"))
    session = small_cells.keys.open("vol1", "bkt", "k", 2 * 1024 + 10)  # cells of 1024, 1024 and 10
    assert scm.allocations[-1][0] == 1024 and session.block_length == 2 * 1024 + 10


def test_allowed_configs_refuse_what_a_client_names(tmp_path: Path) -> None:
    om = make_om(tmp_path, EcScm(), allowed_configs=AllowedConfigs())
    rs_4_2 = ReplicationConfig.parse("rs-4-2-1024k")
    om.volumes.create("vol1")
    assert code(om.buckets.create, "vol1", "rs42", rs_4_2) is OMResultCode.INVALID_REQUEST
    om.buckets.create("vol1", "bkt")  # the server default is not checked again
    assert om.bucket_info("vol1", "bkt").replication == RATIS_THREE
    assert code(om.keys.open, "vol1", "bkt", "k", replication=rs_4_2) is OMResultCode.INVALID_REQUEST
    assert om.keys.open("vol1", "bkt", "k", replication=RS_3_2).key.replication == RS_3_2
    mpu = MultipartManager(om)
    assert code(mpu.initiate, "vol1", "bkt", "k", rs_4_2) is OMResultCode.INVALID_REQUEST
    with pytest.raises(OMException, match=r"ozone\.replication\.allowed-configs"):
        om.buckets.create("vol1", "bkc", ReplicationConfig.parse("rs-3-2-64k"))


def test_a_bucket_created_without_a_config_takes_the_servers_default(tmp_path: Path) -> None:
    om = make_om(tmp_path, EcScm(), default_replication=RS_6_3)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt")
    assert om.bucket_info("vol1", "bkt").replication == RS_6_3
    assert om.keys.open("vol1", "bkt", "k").key.replication == RS_6_3


def test_multipart_uploads_record_the_config_and_write_parts_with_it(
    om: OzoneManager, scm: EcScm, tmp_path: Path
) -> None:
    mpu = MultipartManager(om)
    inherited = mpu.initiate("vol1", "ecb", "m")
    own = mpu.initiate("vol1", "ecb", "n", RS_6_3)
    assert (inherited.replication, own.replication) == (RS_3_2, RS_6_3)
    stored = om.store.get(MULTIPART_INFO_TABLE, multipart_key("vol1", "ecb", "n", own.upload_id))
    assert om_records.decode_multipart(stored).replication == RS_6_3
    part = mpu.open_part("vol1", "ecb", "n", own.upload_id, 1, 10)
    assert part.key.replication == RS_6_3 and scm.allocations[-1][1] == RS_6_3
    assert [u.replication for u in mpu.list_uploads("vol1", "ecb")] == [RS_3_2, RS_6_3]


def test_an_upload_outlives_a_change_of_allowed_configs(tmp_path: Path) -> None:
    """The config was checked when the upload began; its parts are not refused later."""
    first = make_om(tmp_path, EcScm(), allowed_configs=AllowedConfigs(""))
    first.volumes.create("vol1")
    first.buckets.create("vol1", "bkt")
    upload = MultipartManager(first).initiate("vol1", "bkt", "k", XOR_2_1)
    first.store.close()
    again = make_om(tmp_path, EcScm(), allowed_configs=AllowedConfigs())
    part = MultipartManager(again).open_part("vol1", "bkt", "k", upload.upload_id, 1, 10)
    assert part.key.replication == XOR_2_1
