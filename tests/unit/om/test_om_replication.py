"""Replication configs in OM: Ozone's configFormat, ozone.replication.allowed-configs, the server default,
EC block capacity and replicated size, and the request converter's type/factor/ecReplicationConfig rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.hdds.errors import ProtocolError
from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, ReplicationConfig
from pyozone.hdds.om_records import replicated_size
from pyozone.hdds.states import ReplicationType
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.replication import (
    ALLOWED_CONFIGS_DEFAULT,
    AllowedConfigs,
    block_capacity,
    config_format,
    replica_bytes,
)
from pyozone.om.settings import OMSettings, default_replication
from pyozone.proto import OmClientProtocol_pb2 as om_pb
from pyozone.proto import hdds_pb2
from pyozone.protocol import om as wire
from pyozone.protocol import om_records
from pyozone.protocol.common import ec_config_to_proto

RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")
RS_6_3 = ReplicationConfig.parse("rs-6-3-1024k")
XOR_2_1 = ReplicationConfig.parse("xor-2-1-1024k")


@pytest.mark.parametrize(
    ("text", "formatted"),
    [
        ("RATIS/THREE", "RATIS/THREE"),
        ("RATIS/ONE", "RATIS/ONE"),
        ("STAND_ALONE/ONE", "STANDALONE/ONE"),
        ("rs-3-2-1024k", "EC/3-2-1024k"),
        ("xor-10-1-4096k", "EC/10-1-4096k"),
    ],
)
def test_config_format_is_ozones_without_the_codec(text: str, formatted: str) -> None:
    assert config_format(ReplicationConfig.parse(text)) == formatted


def test_the_default_allowed_configs_are_ozones_and_xor_2_1() -> None:
    allowed = AllowedConfigs()
    assert allowed.pattern == ALLOWED_CONFIGS_DEFAULT
    for text in ("RATIS/ONE", "RATIS/THREE", "STAND_ALONE/THREE", "rs-3-2-1024k", "rs-6-3-1024k",
                 "rs-10-4-1024k", "rs-3-2-512k", "rs-6-3-4096k", "xor-2-1-1024k"):  # fmt: skip
        assert allowed.allows(ReplicationConfig.parse(text)), text
    for text in ("rs-3-2-256k", "rs-4-2-1024k", "rs-3-2-8192k"):
        assert not allowed.allows(ReplicationConfig.parse(text)), text


def test_a_refused_config_is_invalid_request_with_ozones_message() -> None:
    with pytest.raises(OMException) as refused:
        AllowedConfigs().check(ReplicationConfig.parse("rs-4-2-1024k"))
    assert refused.value.code is OMResultCode.INVALID_REQUEST
    assert refused.value.message == (
        "Invalid replication config EC/4-2-1024k. Config must match the pattern defined by "
        f"ozone.replication.allowed-configs ({ALLOWED_CONFIGS_DEFAULT})"
    )


def test_an_empty_pattern_allows_everything_and_a_custom_one_only_what_it_names() -> None:
    assert AllowedConfigs("").allows(XOR_2_1)
    custom = AllowedConfigs("^(RATIS/THREE)|(EC/2-1-256k)$")
    assert custom.allows(RATIS_THREE) and custom.allows(ReplicationConfig.parse("xor-2-1-256k"))
    assert not custom.allows(RATIS_ONE) and not custom.allows(RS_3_2)


def test_a_bad_pattern_fails_at_start_up_naming_the_key() -> None:
    with pytest.raises(ConfigError, match=r"ozone\.replication\.allowed-configs"):
        OMSettings.from_conf(OzoneConfiguration({"ozone.replication.allowed-configs": "(EC"}))
    settings = OMSettings.from_conf(OzoneConfiguration({"ozone.replication.allowed-configs": ""}))
    assert settings.allowed_configs.allows(XOR_2_1)


def conf(rtype: str | None, replication: str | None, allowed: str | None = None) -> OzoneConfiguration:
    values = {"ozone.server.default.replication.type": rtype, "ozone.server.default.replication": replication,
              "ozone.replication.allowed-configs": allowed}  # fmt: skip
    return OzoneConfiguration({k: v for k, v in values.items() if v is not None})


@pytest.mark.parametrize(
    ("rtype", "replication", "expected"),
    [
        (None, None, RATIS_THREE),
        ("RATIS", "1", RATIS_ONE),
        ("RATIS", "ONE", RATIS_ONE),
        ("EC", "rs-6-3-1024k", RS_6_3),
        ("ec", "RS-3-2-1024k", RS_3_2),
    ],
)
def test_the_server_default_replication(rtype, replication, expected) -> None:  # type: ignore[no-untyped-def]
    assert default_replication(conf(rtype, replication)) == expected
    assert OMSettings.from_conf(conf(rtype, replication)).default_replication == expected


@pytest.mark.parametrize(
    ("rtype", "replication", "allowed", "fragment"),
    [
        ("EC", "3", None, "ozone.server.default.replication"),
        ("RATIS", "rs-3-2-1024k", None, "unknown replication factor"),
        ("CHAINED", "3", None, "is not RATIS, STAND_ALONE or EC"),
        ("EC", "rs-4-2-1024k", None, "not allowed by ozone.replication.allowed-configs"),
        ("RATIS", "ONE", "^RATIS/THREE$", "not allowed by ozone.replication.allowed-configs"),
    ],
)
def test_a_bad_server_default_fails_at_start_up(rtype, replication, allowed, fragment) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match=fragment):
        OMSettings.from_conf(conf(rtype, replication, allowed))


def test_an_allowed_xor_server_default() -> None:
    assert default_replication(conf("EC", "xor-2-1-1024k", ""), AllowedConfigs("")) == XOR_2_1


def test_block_capacity_and_replica_bytes() -> None:
    assert block_capacity(RATIS_THREE, 1000) == 1000
    assert block_capacity(RS_3_2, 4 << 20) == 12 << 20
    assert replica_bytes(RATIS_THREE, 700) == 700
    mib = 1 << 20
    assert replica_bytes(RS_3_2, 1) == 1
    assert replica_bytes(RS_3_2, 2 * mib + 5) == mib  # index 1 holds a full cell
    assert replica_bytes(RS_3_2, 3 * mib + 5) == mib + 5


def ozone_replicated_size(config: ReplicationConfig, size: int) -> int:
    """Ozone's QuotaUtil.getReplicatedSize for EC, written out independently."""
    chunk, d, p = config.ec_chunk_size, config.ec_data, config.ec_parity
    full, rest = divmod(size, d * chunk)
    return size + full * p * chunk + min(chunk, rest) * p


@given(st.integers(0, 50 << 20), st.sampled_from([RS_3_2, RS_6_3, XOR_2_1]))
def test_ec_replicated_size_is_data_plus_parity(size: int, config: ReplicationConfig) -> None:
    assert replicated_size(config, size) == ozone_replicated_size(config, size)


def test_replicated_size_of_replicated_keys() -> None:
    assert replicated_size(RATIS_THREE, 10) == 30 and replicated_size(RATIS_ONE, 10) == 10
    assert replicated_size(RS_3_2, 3 << 20) == 5 << 20


# ------------------------------------------------------------------ the request converter
EC_PROTO = ec_config_to_proto(RS_3_2, "ec")


@pytest.mark.parametrize(
    ("fields", "default", "expected"),
    [
        ({}, RS_6_3, RS_6_3),
        ({"type": hdds_pb2.RATIS, "factor": hdds_pb2.ONE}, RS_6_3, RATIS_ONE),
        ({"factor": hdds_pb2.ONE}, RATIS_THREE, RATIS_ONE),
        ({"factor": hdds_pb2.ONE}, RS_6_3, RATIS_ONE),  # a factor alone under an EC default: RATIS
        ({"type": hdds_pb2.RATIS}, RS_6_3, RATIS_THREE),
        ({"type": hdds_pb2.EC, "ecReplicationConfig": EC_PROTO}, RATIS_THREE, RS_3_2),
        ({"ecReplicationConfig": EC_PROTO}, RATIS_THREE, RS_3_2),  # an EC config alone: EC
    ],
)
def test_requested_replication(fields, default, expected) -> None:  # type: ignore[no-untyped-def]
    request = om_pb.OpenKeyRequest(volume="v", bucket="b", key="k", **fields)
    assert wire.names_replication(request) is bool(fields)
    asked: list[ReplicationConfig] = []

    def bucket_default() -> ReplicationConfig:
        asked.append(default)
        return default

    assert wire.requested_replication(request, bucket_default) == expected
    complete = "ecReplicationConfig" in fields or {"type", "factor"} <= fields.keys()
    assert bool(asked) is not complete  # the bucket is read only for a part the request leaves unset


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"type": hdds_pb2.EC}, "ecReplicationConfig"),
        ({"type": hdds_pb2.EC, "factor": hdds_pb2.THREE, "ecReplicationConfig": EC_PROTO}, "factor"),
        ({"type": hdds_pb2.RATIS, "ecReplicationConfig": EC_PROTO}, "ecReplicationConfig"),
        ({"type": 99, "ecReplicationConfig": EC_PROTO}, "type"),
        (
            {"ecReplicationConfig": hdds_pb2.ECReplicationConfig(data=3, parity=2, codec="RS")},
            "ecReplicationConfig.ecChunkSize",
        ),
    ],
)
def test_contradicting_replication_fields_name_the_field(fields, field) -> None:  # type: ignore[no-untyped-def]
    request = om_pb.CreateBucketRequest(volume="v", bucket="b", **fields)
    with pytest.raises(ProtocolError) as refused:
        wire.requested_replication(request, lambda: RATIS_THREE)
    assert refused.value.field.startswith(field)


@pytest.mark.parametrize("config", [RATIS_ONE, RATIS_THREE, RS_3_2, XOR_2_1, RS_6_3])
def test_stored_replication_round_trips(config: ReplicationConfig) -> None:
    info = om_pb.KeyInfo(volume="v", bucket="b", key="k", **om_records.replication_fields(config))
    assert info.HasField("ecReplicationConfig") is (config.type is ReplicationType.EC)
    assert om_records.stored_replication(om_pb.KeyInfo.FromString(info.SerializeToString())) == config
