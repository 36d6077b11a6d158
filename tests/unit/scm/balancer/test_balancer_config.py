"""ContainerBalancerConfiguration: Ozone's keys and defaults, bad values refused with the key named, and the
cross-key rules a run's start applies (ContainerBalancer.validateConfiguration)."""

from __future__ import annotations

import pytest

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.scm.balancer.config import (
    ContainerBalancerConfiguration,
    InvalidContainerBalancerConfigurationError,
)
from pyozone.scm.settings import ScmSettings

GB = 1 << 30
MINUTE = 60_000
CB = "hdds.container.balancer."
CONTAINER_SIZE, OFFSET = 5 * GB, 6 * MINUTE


def config(**overrides: str) -> ContainerBalancerConfiguration:
    return ScmSettings.from_conf(OzoneConfiguration({CB + k: v for k, v in overrides.items()})).balancer


def test_ozone_defaults() -> None:
    c = config()
    assert c == ContainerBalancerConfiguration()
    assert (c.threshold, c.max_datanodes_percentage, c.iterations) == (10.0, 20, 10)
    assert (c.max_size_to_move_per_iteration, c.max_size_entering_target, c.max_size_leaving_source) == (
        500 * GB,
        26 * GB,
        26 * GB,
    )
    assert (c.move_timeout_ms, c.move_replication_timeout_ms, c.balancing_interval_ms) == (
        65 * MINUTE,
        50 * MINUTE,
        70 * MINUTE,
    )
    c.validate(CONTAINER_SIZE, OFFSET)


def test_keys_are_read() -> None:
    c = config(
        **{
            "utilization.threshold": "5.5",
            "iterations": "-1",
            "exclude.containers": "1, 4,5",
            "exclude.datanodes": "dn1.example, 10.0.0.2",
            "move.timeout": "90m",
        }
    )
    assert c.threshold_ratio == 0.055 and c.iterations == -1
    assert c.exclude_containers == {1, 4, 5} and c.exclude_datanodes == {"dn1.example", "10.0.0.2"}
    assert c.move_timeout_ms == 90 * MINUTE


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("utilization.threshold", "100"),
        ("utilization.threshold", "-1"),
        ("datanodes.involved.max.percentage.per.iteration", "101"),
        ("iterations", "0"),
        ("iterations", "-2"),
        ("exclude.containers", "1,x"),
        ("move.timeout", "soon"),
    ],
)
def test_bad_values_name_their_key(key: str, value: str) -> None:
    with pytest.raises(ConfigError, match=CB.replace(".", r"\.") + key.replace(".", r"\.")):
        config(**{key: value})


@pytest.mark.parametrize(
    ("options", "rule"),
    [
        (
            {"max_size_entering_target": 5 * GB},
            "size.entering.target.max .* greater than ozone.scm.container.size",
        ),
        (
            {"max_size_leaving_source": 4 * GB},
            "size.leaving.source.max .* greater than ozone.scm.container.size",
        ),
        (
            {"max_size_to_move_per_iteration": 0},
            r"size\.moved\.max\.per\.iteration \(0\) must be greater than zero",
        ),
        (  # R24 D2: int64 bytes
            {"max_size_to_move_per_iteration": 2**33 * GB},
            r"size\.moved\.max\.per\.iteration \(9223372036854775808\) must be at most 9223372036854775807 ",
        ),
        (
            {"balancing_interval_ms": 0},
            r"balancing\.iteration\.interval \(0ms\) must be greater than zero",
        ),  # D3
        ({"balancing_interval_ms": -5 * MINUTE}, r"balancing\.iteration\.interval .* greater than zero"),
        (  # R24 D7: at or below the datanode offset (6 min) every replicate reaches the datanode expired
            {"move_replication_timeout_ms": 5 * MINUTE, "move_timeout_ms": 20 * MINUTE},
            r"move\.replication\.timeout \(300000ms\) must be greater than .*datanode\.offset \(360000ms\)",
        ),
        ({"iterations": 2**31}, r"iterations 2147483648 must be > 0 \(at most 2147483647\)"),
        ({"move_replication_timeout_ms": 65 * MINUTE}, "move.replication.timeout should be less than"),
        ({"move_replication_timeout_ms": 55 * MINUTE}, "greater than or equal to 540000ms or 9 minutes"),
        ({"network_topology_enable": True}, "networkTopology.enable=true is not supported"),
        ({"trigger_du_enable": True}, "trigger.du.before.move.enable=true is not supported"),
        ({"threshold": 100.0}, "percentage from 0 to below 100"),
        (  # R24 D11: Ozone's int minutes
            {"move_timeout_ms": 2**31 * MINUTE, "move_replication_timeout_ms": 2**31 * MINUTE - 20 * MINUTE},
            r"move\.timeout \(128849018880000ms\) must be at most 128849018820000ms \(2\^31-1 minutes\)",
        ),
    ],
)
def test_a_run_refuses_inconsistent_settings(options: dict, rule: str) -> None:
    with pytest.raises(InvalidContainerBalancerConfigurationError, match=rule):
        ContainerBalancerConfiguration().with_options(**options).validate(CONTAINER_SIZE, OFFSET)


def test_a_size_per_iteration_below_the_per_node_limits_is_accepted() -> None:
    """R24 D4: Ozone has no rule tying size.entering/leaving.*.max to size.moved.max.per.iteration
    (`ozone admin containerbalancer start -s 20` runs with the 26 GB defaults)."""
    ContainerBalancerConfiguration(max_size_to_move_per_iteration=20 * GB).validate(CONTAINER_SIZE, OFFSET)
