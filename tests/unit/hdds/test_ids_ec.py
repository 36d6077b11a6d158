"""EC replication configs by Ozone's names, and the bad ones refused with a reason."""

from __future__ import annotations

import pytest

from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import ReplicationType


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rs-3-2-1024k", (3, 2, "RS", 1024)),
        ("RS-6-3-1024K", (6, 3, "RS", 1024)),
        ("rs-10-4-1024k", (10, 4, "RS", 1024)),
        ("xor-2-1-1024k", (2, 1, "XOR", 1024)),
        ("EC/RS-3-2-512k", (3, 2, "RS", 512)),
        ("rs-3-2-1048576", (3, 2, "RS", 1024)),  # a chunk without k is in bytes, as Ozone reads it
    ],
)
def test_ozones_ec_names_parse(text, expected):
    config = ReplicationConfig.parse(text)
    assert config.type is ReplicationType.EC
    assert (config.ec_data, config.ec_parity, config.ec_codec, config.ec_chunk_kb) == expected


def test_an_ec_config_prints_and_names_itself_as_ozone_does():
    config = ReplicationConfig.parse("rs-3-2-1024k")
    assert (str(config), config.ec_name, config.ec_chunk_size, config.required_nodes) == (
        "EC/RS-3-2-1024k", "rs-3-2-1024k", 1 << 20, 5,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("xor-3-2-1024k", "XOR has exactly one parity"),
        ("lrc-3-2-1024k", "is not one of RS, XOR"),
        ("rs-3-2-1000", "multiple of 1024"),
        ("rs-3-0-1024k", "positive"),
        ("rs-3-x-1024k", "non-numeric"),
        ("rs-30-4-1024k", "more than 32 datanodes"),
    ],
)
def test_bad_ec_configs_are_refused_with_a_reason(text, reason):
    with pytest.raises(ValueError, match=reason):
        ReplicationConfig.parse(text)
