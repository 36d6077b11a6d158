"""Each startup rule of validate(), and the clamped out-of-service factor."""

from __future__ import annotations

import pytest

from pyozone.config import KEYS, ConfigError, Kind, OzoneConfiguration, validate
from pyozone.config.validate import RULES
from pyozone.hdds.replication_limits import out_of_service_factor

RM = "hdds.scm.replication."

# (overrides breaking one rule, the key the message must name)
VIOLATIONS = [
    ({"ozone.scm.heartbeat.thread.interval": "0"}, "ozone.scm.heartbeat.thread.interval"),
    ({"ozone.scm.stale.node.interval": "10m"}, "ozone.scm.stale.node.interval"),
    ({"ozone.scm.dead.node.interval": "4m"}, "ozone.scm.dead.node.interval"),
    ({RM + "event.timeout.datanode.offset": "-1m"}, RM + "event.timeout.datanode.offset"),
    ({RM + "event.timeout.datanode.offset": "12m"}, RM + "event.timeout.datanode.offset"),
    ({RM + "datanode.reconstruction.weight": "0"}, RM + "datanode.reconstruction.weight"),
    ({RM + "datanode.replication.limit": "2"}, RM + "datanode.replication.limit"),
    ({"hdds.scm.block.deletion.per-interval.max": "0"}, "hdds.scm.block.deletion.per-interval.max"),
    ({"ozone.scm.block.size": "0B"}, "ozone.scm.block.size"),
    ({"ozone.scm.container.size": "0"}, "ozone.scm.container.size"),
    ({"ozone.scm.block.size": "6GB"}, "ozone.scm.container.size"),
    ({"ozone.scm.pipeline.owner.container.count": "0"}, "ozone.scm.pipeline.owner.container.count"),
    ({"ozone.scm.datanode.pipeline.limit": "-1"}, "ozone.scm.datanode.pipeline.limit"),
    ({"ozone.scm.pipeline.per.metadata.disk": "0"}, "ozone.scm.pipeline.per.metadata.disk"),
    ({"ozone.scm.ratis.pipeline.limit": "-1"}, "ozone.scm.ratis.pipeline.limit"),
    ({"hdds.scm.safemode.min.datanode": "-1"}, "hdds.scm.safemode.min.datanode"),
    ({"ozone.scm.sequence.id.batch.size": "0"}, "ozone.scm.sequence.id.batch.size"),
    ({"hdds.scm.unknown-container.action": "IGNORE"}, "hdds.scm.unknown-container.action"),
    ({"ozone.client.checksum.type": "ADLER32"}, "ozone.client.checksum.type"),
    ({"ozone.scm.pipeline.destroy.timeout": "-1s"}, "ozone.scm.pipeline.destroy.timeout"),
]


def test_defaults_are_valid() -> None:
    validate(OzoneConfiguration())


@pytest.mark.parametrize(("overrides", "key"), VIOLATIONS, ids=[next(iter(v[0])) for v in VIOLATIONS])
def test_each_rule_rejects_a_violation(overrides: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError, match=key) as e:
        validate(OzoneConfiguration(overrides))
    assert "(override)" in str(e.value)


@pytest.mark.parametrize(
    "key",
    [
        "hdds.scm.safemode.threshold.pct",
        "hdds.scm.safemode.healthy.pipeline.pct",
        "hdds.scm.safemode.atleast.one.node.reported.pipeline.pct",
        RM + "inflight.limit.factor",
    ],
)
def test_fractions_are_rejected_outside_0_1(key: str) -> None:
    for raw in ("-0.01", "1.5"):
        with pytest.raises(ConfigError, match=key):
            OzoneConfiguration({key: raw})
    for raw in ("0", "1"):
        validate(OzoneConfiguration({key: raw}))


def test_every_duration_key_rejects_negatives() -> None:
    durations = {k.name for k in KEYS if k.kind is Kind.DURATION}
    checked = {names[0] for names, _, rule in RULES if rule == "must not be negative"}
    assert durations == checked


def test_boundaries_are_accepted() -> None:
    validate(
        OzoneConfiguration(
            {
                "ozone.scm.stale.node.interval": "9m",
                RM + "event.timeout.datanode.offset": "0",
                RM + "datanode.replication.limit": "3",
                "ozone.scm.block.size": "5GB",
                "ozone.scm.datanode.pipeline.limit": "0",
                "hdds.scm.safemode.min.datanode": "0",
                "hdds.scm.unknown-container.action": "DELETE",
                "ozone.client.checksum.type": "NONE",
            }
        )
    )


def test_all_problems_in_one_line_without_repeats() -> None:
    conf = OzoneConfiguration({"ozone.scm.heartbeat.thread.interval": "-1s", "ozone.scm.block.size": "0"})
    with pytest.raises(ConfigError) as e:
        validate(conf)
    message = str(e.value)
    assert "\n" not in message
    assert message.count("ozone.scm.heartbeat.thread.interval") == 1
    assert "ozone.scm.block.size" in message


@pytest.mark.parametrize(
    ("raw", "factor"), [("2.0", 2.0), ("0.5", 1.0), ("1", 1.0), ("25", 10.0), ("7.5", 7.5)]
)
def test_out_of_service_factor_is_clamped(raw: str, factor: float) -> None:
    conf = OzoneConfiguration({"hdds.datanode.replication.outofservice.limit.factor": raw})
    validate(conf)
    assert out_of_service_factor(conf) == factor
