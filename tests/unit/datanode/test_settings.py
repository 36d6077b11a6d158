"""DatanodeSettings (datanode/settings.py): every datanode key read once into its group, the registry's
defaults, and the datanode's startup rules refused with their key, raw value and source."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.config import ConfigError, OzoneConfiguration, validate
from pyozone.datanode.settings import (
    DatanodeSettings,
    HeartbeatSettings,
    MinFreeSpace,
    PipelineRaftConfig,
    PortSettings,
    QueueLimits,
    RecoveringScrubSettings,
    ReportSettings,
    ScannerSettings,
    SpaceSettings,
    StorageSettings,
    TokenSettings,
)
from pyozone.hdds.states import SCMCommandType

MB, GB = 1 << 20, 1 << 30

# (an override breaking one rule, the key the message must name)
VIOLATIONS = [
    ({"hdds.datanode.volume.min.free.space": "-1GB"}, "hdds.datanode.volume.min.free.space"),
    ({"hdds.datanode.dir.du.reserved": "-1"}, "hdds.datanode.dir.du.reserved"),
    ({"hdds.container.close.threshold": "0"}, "hdds.container.close.threshold"),
]


def test_the_defaults_are_the_registrys() -> None:
    """Every group's defaults (what tests and the simulator build without a configuration) are what the
    registry (config/keys.py) gives for a configuration that sets nothing."""
    assert DatanodeSettings.from_conf(OzoneConfiguration()) == DatanodeSettings()


@pytest.mark.parametrize(("overrides", "key"), VIOLATIONS, ids=[k for _, k in VIOLATIONS])
def test_each_rule_refuses_a_violation_naming_its_key_value_and_source(
    overrides: dict[str, str], key: str
) -> None:
    with pytest.raises(ConfigError) as e:
        DatanodeSettings.from_conf(OzoneConfiguration(overrides))
    assert f"{key}={overrides[key]!r} (override): must be " in str(e.value)


def test_every_broken_rule_is_named_at_once_on_one_line() -> None:
    conf = OzoneConfiguration({k: v for overrides, _ in VIOLATIONS for k, v in overrides.items()})
    with pytest.raises(ConfigError) as e:
        DatanodeSettings.from_conf(conf)
    message = str(e.value)
    assert "\n" not in message
    assert [key in message for _, key in VIOLATIONS] == [True] * len(VIOLATIONS)


@pytest.mark.parametrize(("overrides", "key"), VIOLATIONS, ids=[k for _, k in VIOLATIONS])
def test_the_rules_are_the_datanodes_alone(overrides: dict[str, str], key: str) -> None:
    """One definition: the registry's validation (every process's) leaves them to DatanodeSettings."""
    validate(OzoneConfiguration(overrides))


def test_each_key_lands_in_its_field(tmp_path: Path) -> None:
    conf = OzoneConfiguration(
        {
            "hdds.heartbeat.interval": "3s",
            "hdds.heartbeat.initial-interval": "1s",
            "ozone.scm.heartbeat.rpc-timeout": "4s",
            "hdds.node.report.interval": "11s",
            "hdds.container.report.interval": "12s",
            "hdds.pipeline.report.interval": "13s",
            "hdds.command.status.report.interval": "14s",
            "hdds.datanode.dir": f"{tmp_path}/d0, {tmp_path}/d1,{tmp_path}/d0/,{tmp_path}/d1/./",
            "ozone.metadata.dirs": str(tmp_path / "meta"),
            "ozone.scm.datanode.id.dir": str(tmp_path / "id"),
            "hdds.container.ratis.datanode.storage.dir": str(tmp_path / "ratis"),
            "hdds.datanode.data.dir.permissions": "rwxr-x---",
            "ozone.metadata.dirs.permissions": "700",
            "hdds.datanode.dir.du.reserved": "1MB",
            "hdds.datanode.volume.min.free.space": "2GB",
            "hdds.datanode.volume.min.free.space.percent": "0.1",
            "ozone.scm.container.size": "1GB",
            "hdds.container.close.threshold": "0.5",
            "hdds.container.scrub.enabled": "false",
            "hdds.container.scrub.data.scan.interval": "1h",
            "hdds.container.scrub.volume.bytes.per.second": "1MB",
            "hdds.datanode.recovering.container.scrubbing.service.interval": "2m",
            "ozone.recovering.container.timeout": "3m",
            "hdds.ratis.leader.election.minimum.timeout.duration": "1s",
            "hdds.ratis.raft.server.rpc.slowness.timeout": "45s",
            "hdds.ratis.raft.server.Notification.no-leader.timeout": "2m",
            "hdds.ratis.raft.server.write.element-limit": "7",
            "dfs.container.ratis.leader.pending.bytes.limit": "8MB",
            "dfs.container.ratis.log.appender.queue.byte-limit": "9MB",
            "dfs.ratis.snapshot.threshold": "10",
            "dfs.container.ratis.log.purge.gap": "11",
            "dfs.container.ratis.statemachine.max.pending.apply-transactions": "12",
            "hdds.ratis.raft.server.watch.timeout": "5s",
            "hdds.ratis.raft.server.rpc.request.timeout": "6s",
            "hdds.datanode.replication.streams.limit": "3",
            "hdds.datanode.replication.queue.limit": "30",
            "hdds.datanode.replication.outofservice.limit.factor": "25",
            "hdds.datanode.block.delete.queue.limit": "4",
            "hdds.block.token.enabled": "true",
            "hdds.container.token.enabled": "true",
            "hdds.block.token.expiry.time": "1h",
            "dfs.datanode.hostname": "dn1.example.com",
            "hdds.container.ipc.port": "1001",
            "hdds.container.ratis.ipc.port": "1002",
            "hdds.datanode.replication.port": "1003",
            "hdds.container.ratis.datastream.enabled": "false",
            "hdds.container.ratis.datastream.port": "1004",
        }
    )
    assert DatanodeSettings.from_conf(conf) == DatanodeSettings(
        heartbeat=HeartbeatSettings(interval_ms=3000, initial_interval_ms=1000, rpc_timeout_ms=4000),
        reports=ReportSettings(11_000, 12_000, 13_000, 14_000, full_volume_interval_ms=3000),
        storage=StorageSettings(
            data_dirs=(tmp_path / "d0", tmp_path / "d1"),  # each once, however written
            metadata_dirs=(tmp_path / "meta",),
            id_dir=tmp_path / "id",
            ratis_dir=tmp_path / "ratis",
            data_dir_mode=0o750,
            metadata_dir_mode=0o700,
        ),
        space=SpaceSettings(MB, MinFreeSpace(2 * GB, 0.1), GB, 0.5),
        scanner=ScannerSettings(enabled=False, data_scan_interval_ms=3_600_000, volume_bytes_per_second=MB),
        recovering=RecoveringScrubSettings(interval_ms=120_000, timeout_ms=180_000),
        ratis=PipelineRaftConfig(1000, 45_000, 120_000, 7, 8 * MB, 9 * MB, 10, 11, 12, 5000, 6000),
        admission=QueueLimits(3, 30, 10.0, {SCMCommandType.deleteBlocksCommand: 4}),  # the factor clamped
        tokens=TokenSettings(block_tokens=True, container_tokens=True, block_token_lifetime_ms=3_600_000),
        ports=PortSettings(
            "dn1.example.com", 1001, 1002, 1003, datastream_enabled=False, datastream_port=1004
        ),
    )


def test_the_directories_a_datanode_needs_are_refused_when_asked_for_and_missing(tmp_path: Path) -> None:
    """The simulator and `cluster up` build settings without them; the datanode asks (IdentityStore,
    VolumeSet) and is refused with the key to set."""
    unset = DatanodeSettings.from_conf(OzoneConfiguration()).storage
    with pytest.raises(ConfigError, match=r"^hdds\.datanode\.dir is not set"):
        unset.data_volume_dirs()
    with pytest.raises(ConfigError, match=r"^ozone\.metadata\.dirs is not set"):
        unset.metadata_volume_dirs()
    with pytest.raises(
        ConfigError, match=r"ozone\.metadata\.dirs: not set, and ozone\.scm\.datanode\.id\.dir"
    ):
        unset.identity_dir()
    metadata = f"{tmp_path / 'm0'},{tmp_path / 'm1'}"
    storage = DatanodeSettings.from_conf(OzoneConfiguration({"ozone.metadata.dirs": metadata})).storage
    assert storage.identity_dir() == tmp_path / "m0"  # the first of ozone.metadata.dirs
    assert storage.ratis_storage_dir() == tmp_path / "m0" / "ratis"


def test_a_malformed_directory_mode_is_refused_with_its_key() -> None:
    with pytest.raises(ConfigError, match=r"hdds\.datanode\.data\.dir\.permissions='rwx'"):
        DatanodeSettings.from_conf(OzoneConfiguration({"hdds.datanode.data.dir.permissions": "rwx"}))
