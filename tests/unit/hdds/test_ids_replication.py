"""ReplicationConfig's one validate() (every reader's rules) and one resolve() (Ozone's
ReplicationConfig.resolve: requested, else the bucket's, else the server's)."""

from __future__ import annotations

import pytest

from pyozone.hdds.ids import RATIS_ONE, RATIS_THREE, InvalidReplicationConfig, ReplicationConfig
from pyozone.hdds.states import ReplicationType

RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")
EC = ReplicationType.EC


@pytest.mark.parametrize(
    ("config", "part", "reason"),
    [
        (ReplicationConfig(ReplicationType.RATIS, 2), "factor", "ONE or THREE"),
        (ReplicationConfig(ReplicationType.STAND_ALONE, 5), "factor", "ONE or THREE"),
        (ReplicationConfig(EC, 0, 3, 2, "LRC"), "codec", "'lrc' is not one of RS, XOR"),
        (ReplicationConfig(EC, 0, 0, 2), "data", "positive"),
        (ReplicationConfig(EC, 0, 3, 0), "parity", "positive"),
        (ReplicationConfig(EC, 0, 3, 2, "RS", 0), "ecChunkSize", "positive"),
        (ReplicationConfig(EC, 0, 3, 2, "XOR"), "parity", "XOR has exactly one parity"),
        (ReplicationConfig(EC, 0, 30, 4), "data", "more than 32 datanodes"),
    ],
)
def test_validate_names_the_part_a_config_breaks(config: ReplicationConfig, part: str, reason: str) -> None:
    with pytest.raises(InvalidReplicationConfig, match=reason) as refused:
        config.validate()
    assert refused.value.part == part


@pytest.mark.parametrize("config", [RATIS_ONE, RATIS_THREE, RS_3_2, ReplicationConfig.parse("xor-2-1-1024k")])
def test_valid_configs_validate_to_themselves(config: ReplicationConfig) -> None:
    assert config.validate() is config


def test_parse_refuses_what_validate_refuses_naming_the_text() -> None:
    with pytest.raises(InvalidReplicationConfig, match="'RATIS/2': replication factor must be ONE or THREE"):
        ReplicationConfig.parse("RATIS/2")


@pytest.mark.parametrize(
    ("requested", "bucket_default", "expected"),
    [
        (RS_3_2, RATIS_ONE, RS_3_2),  # the client's, when it names one
        (None, RATIS_ONE, RATIS_ONE),  # else its bucket's
        (None, None, RATIS_THREE),  # else the server's (a bucket has no bucket default)
    ],
)
def test_resolve_as_ozone(
    requested: ReplicationConfig | None, bucket_default: ReplicationConfig | None, expected: ReplicationConfig
) -> None:
    assert ReplicationConfig.resolve(requested, bucket_default, RATIS_THREE) == expected


def test_of_takes_a_config_a_name_or_nothing() -> None:
    """The edges' one conversion: a config as it is, a name parsed, None and "" OM's default (an empty
    `replication=` meant the default before the client took configs; R5's F1)."""
    assert ReplicationConfig.of(RATIS_ONE) is RATIS_ONE
    assert ReplicationConfig.of("RATIS:THREE") == RATIS_THREE
    assert ReplicationConfig.of(None) is None and ReplicationConfig.of("") is None
    with pytest.raises(ValueError):
        ReplicationConfig.of("RATIS/TWO")
