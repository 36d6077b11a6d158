"""Each startup rule of validate() (the rows every process shares; SCM's are tested with ScmSettings in
tests/unit/scm/test_settings.py), and the clamped out-of-service factor."""

from __future__ import annotations

import pytest

from pyozone.config import KEYS, ConfigError, Kind, OzoneConfiguration, validate
from pyozone.config.validate import RULES
from pyozone.hdds.replication_limits import out_of_service_factor

# (overrides breaking one rule, the key the message must name)
VIOLATIONS = [
    ({"hdds.heartbeat.interval": "0s"}, "hdds.heartbeat.interval"),
    ({"ozone.scm.block.size": "0B"}, "ozone.scm.block.size"),
    ({"ozone.scm.container.size": "0"}, "ozone.scm.container.size"),
    ({"ozone.scm.block.size": "6GB"}, "ozone.scm.container.size"),
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
        "hdds.scm.replication.inflight.limit.factor",
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
        OzoneConfiguration({"hdds.heartbeat.interval": "1ms", "ozone.scm.pipeline.destroy.timeout": "0s"})
    )


def test_all_problems_in_one_line_without_repeats() -> None:
    conf = OzoneConfiguration({"hdds.heartbeat.interval": "-1s", "ozone.scm.pipeline.destroy.timeout": "-1s"})
    with pytest.raises(ConfigError) as e:
        validate(conf)
    message = str(e.value)
    assert "\n" not in message
    assert message.count("hdds.heartbeat.interval") == 1  # broken twice (>= 0, > 0), said once
    assert "ozone.scm.pipeline.destroy.timeout" in message


@pytest.mark.parametrize(
    ("raw", "factor"), [("2.0", 2.0), ("0.5", 1.0), ("1", 1.0), ("25", 10.0), ("7.5", 7.5)]
)
def test_out_of_service_factor_is_clamped(raw: str, factor: float) -> None:
    conf = OzoneConfiguration({"hdds.datanode.replication.outofservice.limit.factor": raw})
    validate(conf)
    assert out_of_service_factor(conf) == factor


def test_the_client_checksum_type_has_no_rule_here() -> None:
    """The client's rule sits next to its field (client/config.py's ClientConfig, issue 34;
    tests/unit/client/test_client_config.py): a daemon's start does not refuse a key only clients read."""
    assert not [names for names, _, _ in RULES if "ozone.client.checksum.type" in names]
    validate(OzoneConfiguration({"ozone.client.checksum.type": "ADLER32"}))
