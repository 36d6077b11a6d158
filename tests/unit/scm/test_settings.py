"""ScmSettings: SCM's rules refused with their keys named, every broken rule at once, the registry's
defaults, and typed values (durations in ms, sizes in bytes)."""

from __future__ import annotations

import re

import pytest

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.config.validate import RULES
from pyozone.hdds.ids import ReplicationConfig
from pyozone.scm.container.report_handler import UnknownContainerAction
from pyozone.scm.settings import ScmSettings, scm_rules

RM = "hdds.scm.replication."
CB = "hdds.container.balancer."

# (overrides breaking one SCM rule, the key the message must name)
VIOLATIONS = [
    ({"ozone.scm.heartbeat.thread.interval": "0"}, "ozone.scm.heartbeat.thread.interval"),
    ({"ozone.scm.stale.node.interval": "10m"}, "ozone.scm.stale.node.interval"),
    ({"ozone.scm.dead.node.interval": "4m"}, "ozone.scm.dead.node.interval"),
    ({RM + "event.timeout.datanode.offset": "-1m"}, RM + "event.timeout.datanode.offset"),
    ({RM + "event.timeout.datanode.offset": "12m"}, RM + "event.timeout.datanode.offset"),
    ({RM + "datanode.reconstruction.weight": "0"}, RM + "datanode.reconstruction.weight"),
    ({RM + "datanode.ops.limit": "0"}, RM + "datanode.ops.limit"),
    ({RM + "datanode.replication.limit": "2"}, RM + "datanode.replication.limit"),
    ({CB + "utilization.threshold": "100"}, CB + "utilization.threshold"),
    ({CB + "datanodes.involved.max.percentage.per.iteration": "101"}, CB + "datanodes.involved"),
    ({CB + "iterations": "0"}, CB + "iterations"),
    ({CB + "size.moved.max.per.iteration": "0"}, CB + "size.moved.max.per.iteration"),
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
]


@pytest.mark.parametrize(("overrides", "key"), VIOLATIONS, ids=[str(v[0]) for v in VIOLATIONS])
def test_each_rule_is_refused_naming_its_key_and_source(overrides: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError, match=key) as e:
        ScmSettings.from_conf(OzoneConfiguration(overrides))
    assert "(override)" in str(e.value)


def test_each_scm_rule_has_one_definition() -> None:
    """validate()'s rows name no SCM key but the durations' (every duration key must not be negative) and
    the block and container sizes (OM and the datanodes read them too); SCM's other rows are its groups'
    alone, each once."""
    scm_keys = ("ozone.scm.", "hdds.scm.", CB)
    sizes = {("ozone.scm.block.size",), ("ozone.scm.container.size",)}
    sizes.add(("ozone.scm.block.size", "ozone.scm.container.size"))
    shared = [names for names, _, rule in RULES if rule != "must not be negative" and names not in sizes]
    assert not [names for names in shared if any(key.startswith(scm_keys) for key in names)]
    assert sizes <= {names for names, _, _ in RULES}
    scm_only = [(names, rule) for names, _, rule in scm_rules()[len(RULES) :]]
    assert len(scm_only) == len(set(scm_only)) == 18  # the 21 SCM rows validate() had, less the sizes'
    assert not sizes & {names for names, _ in scm_only}


def test_the_shared_rows_are_checked_too() -> None:
    with pytest.raises(ConfigError, match=re.escape("destroy.timeout='-1s' (override): must not")):
        ScmSettings.from_conf(OzoneConfiguration({"ozone.scm.pipeline.destroy.timeout": "-1s"}))


def test_every_broken_rule_in_one_line() -> None:
    conf = OzoneConfiguration(
        {
            "ozone.scm.heartbeat.thread.interval": "-1s",
            "ozone.scm.block.size": "0",
            RM + "datanode.ops.limit": "0",
        }
    )
    with pytest.raises(ConfigError) as e:
        ScmSettings.from_conf(conf)
    message = str(e.value)
    assert "\n" not in message
    assert message.count("ozone.scm.heartbeat.thread.interval") == 1
    assert "ozone.scm.block.size" in message
    assert RM + "datanode.ops.limit" in message


def test_defaults_are_the_registrys() -> None:
    assert ScmSettings.from_conf(OzoneConfiguration()) == ScmSettings()


def test_boundaries_are_accepted() -> None:
    settings = ScmSettings.from_conf(
        OzoneConfiguration(
            {
                "ozone.scm.stale.node.interval": "9m",
                RM + "event.timeout.datanode.offset": "0",
                RM + "datanode.replication.limit": "3",
                "ozone.scm.block.size": "5GB",
                "ozone.scm.datanode.pipeline.limit": "0",
                "hdds.scm.safemode.min.datanode": "0",
                "hdds.scm.unknown-container.action": "DELETE",
                CB + "iterations": "-1",
            }
        )
    )
    assert settings.health.stale_ms == 9 * 60_000
    assert settings.container.block_size_bytes == settings.container.size_bytes == 5 << 30
    assert settings.container.unknown_container_action is UnknownContainerAction.DELETE
    assert settings.balancer.iterations == -1


def test_durations_are_milliseconds_and_sizes_bytes() -> None:
    settings = ScmSettings.from_conf(
        OzoneConfiguration(
            {
                "ozone.scm.close.container.wait.duration": "2m",
                "hdds.scm.wait.time.after.safemode.exit": "0s",
                "ozone.scm.datanode.ratis.volume.free-space.min": "2GB",
                "ozone.scm.ha.ratis.log.appender.queue.byte-limit": "1MB",
            }
        )
    )
    assert settings.container.close_wait_ms == 120_000
    assert settings.safe_mode.wait_after_exit_ms == 0
    assert settings.pipeline.metadata_free_space_min_bytes == 2 << 30
    assert settings.block_deletion.batch_byte_limit == 1 << 20


def test_the_default_ec_config_is_read_once() -> None:
    conf = OzoneConfiguration({"ozone.replication.type": "EC", "ozone.replication": "rs-3-2-1024k"})
    assert ScmSettings.from_conf(conf).pipeline.default_ec == ReplicationConfig.parse("EC/rs-3-2-1024k")
    assert ScmSettings().pipeline.default_ec is None
    with pytest.raises(ConfigError, match=re.escape("ozone.replication: '3' is not an EC config")):
        ScmSettings.from_conf(OzoneConfiguration({"ozone.replication.type": "EC"}))


def test_bad_excluded_containers_are_refused() -> None:
    with pytest.raises(ConfigError, match=CB + "exclude.containers='1,x'"):
        ScmSettings.from_conf(OzoneConfiguration({CB + "exclude.containers": "1,x"}))


def test_a_balancer_run_scm_would_refuse_is_a_config_error() -> None:
    settings = ScmSettings()
    with pytest.raises(ConfigError, match=re.escape("should be greater than ozone.scm.container.size")):
        settings.check_balancer(settings.balancer.with_options(max_size_entering_target=1 << 30))
