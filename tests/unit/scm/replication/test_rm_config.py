from __future__ import annotations

import re

import pytest

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.scm.replication.config import ReplicationManagerConfig
from pyozone.scm.settings import ScmSettings

RM = "hdds.scm.replication."


def test_defaults_match_spec() -> None:
    assert ScmSettings().replication == ReplicationManagerConfig()


def test_typed_values() -> None:
    conf = OzoneConfiguration(
        {
            RM + "thread.interval": "10s",
            RM + "event.timeout": "2m",
            RM + "event.timeout.datanode.offset": "30s",
            RM + "inflight.limit.factor": "0.5",
            RM + "container.sample.limit": "7",
            "hdds.datanode.replication.outofservice.limit.factor": "50",
        }
    )
    c = ScmSettings.from_conf(conf).replication
    assert (c.thread_interval_ms, c.event_timeout_ms, c.event_timeout_datanode_offset_ms) == (
        10_000,
        120_000,
        30_000,
    )
    assert (c.inflight_limit_factor, c.container_sample_limit, c.out_of_service_factor) == (0.5, 7, 10.0)


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({RM + "event.timeout.datanode.offset": "12m"}, "event.timeout.datanode.offset"),
        ({RM + "event.timeout.datanode.offset": "-1s"}, "event.timeout.datanode.offset"),
        ({RM + "datanode.reconstruction.weight": "0"}, "datanode.reconstruction.weight"),
        ({RM + "datanode.replication.limit": "2"}, "datanode.replication.limit"),
    ],
)
def test_validation_names_key_and_rule(overrides: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(named)):
        ScmSettings.from_conf(OzoneConfiguration(overrides))


def test_inflight_factor_must_be_a_fraction() -> None:
    with pytest.raises(ConfigError, match=re.escape("inflight.limit.factor")):
        OzoneConfiguration({RM + "inflight.limit.factor": "1.5"})
