"""DatanodeSettings: every ozone-site.xml key the datanode reads, typed and validated once at its edge.

Ozone's DatanodeConfiguration and its @ConfigGroup classes play this role. `DatanodeSettings.from_conf`
runs once per process (`pyozone datanode` before it logs anything, then handing it to the daemon;
`cluster up`'s space check; the simulator's datanodes) and the daemon hands each component its group; no
other datanode module reads the configuration (an import-linter contract keeps it so). Durations are int
milliseconds (`_ms`) and sizes int bytes (`_bytes`), as the registry (config/keys.py) parses them; each
field's comment names its key, and each group's defaults are the registry's
(tests/unit/datanode/test_settings.py). The datanode's startup rules (`RULES`) are checked here, all
broken ones named in one ConfigError.

Addresses (SCM's, the web server's) and security stay with the daemon, which resolves them with
pyozone.common and pyozone.security.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.config.dirs import METADATA_DIRS_KEY, METADATA_PERMISSIONS_KEY, dir_permissions
from pyozone.config.validate import Rule, broken_rules, raise_broken
from pyozone.datanode.container_full import CLOSE_THRESHOLD_KEY
from pyozone.datanode.pipeline_raft import (
    ELECTION_SPREAD_MS,
    FIRST_ELECTION_MAX_MS,
    MAX_PENDING_APPLY,
    SNAPSHOT_THRESHOLD,
)
from pyozone.hdds.replication_limits import out_of_service_factor
from pyozone.hdds.states import SCMCommandType
from pyozone.ratis.settings import RaftSettings

HEARTBEAT_INTERVAL_KEY = "hdds.heartbeat.interval"
DATA_DIRS_KEY = "hdds.datanode.dir"
ID_DIR_KEY = "ozone.scm.datanode.id.dir"
RATIS_DIR_KEY = "hdds.container.ratis.datanode.storage.dir"
DATA_PERMISSIONS_KEY = "hdds.datanode.data.dir.permissions"
RESERVED_KEY = "hdds.datanode.dir.du.reserved"
MIN_FREE_SPACE_KEY = "hdds.datanode.volume.min.free.space"
MIN_FREE_SPACE_PERCENT_KEY = "hdds.datanode.volume.min.free.space.percent"
CONTAINER_SIZE_KEY = "ozone.scm.container.size"

RULES: tuple[Rule, ...] = (
    ((MIN_FREE_SPACE_KEY,), lambda v: v >= 0, "must be >= 0"),
    ((RESERVED_KEY,), lambda v: v >= 0, "must be >= 0"),
    ((CLOSE_THRESHOLD_KEY,), lambda v: v > 0, "must be > 0 (a fraction of the container size)"),
)
"""The datanode's startup rules (config/validate.py's form); the registry already refuses a negative
duration and a fraction outside [0, 1], and config/validate.py a heartbeat interval of 0 (SCM reads it
too)."""

GB = 1 << 30


@dataclass(frozen=True, slots=True)
class HeartbeatSettings:
    """The heartbeat to each SCM (Ozone's HddsConfigKeys heartbeat keys)."""

    interval_ms: int = 30_000  # hdds.heartbeat.interval
    initial_interval_ms: int = 2_000  # hdds.heartbeat.initial-interval: until registered; first retry delay
    rpc_timeout_ms: int = 5_000  # ozone.scm.heartbeat.rpc-timeout


@dataclass(frozen=True, slots=True)
class ReportSettings:
    """When the periodic reports and command statuses come due (Ozone's StateContext report intervals)."""

    node_interval_ms: int = 60_000  # hdds.node.report.interval (also the volume checks' period)
    container_interval_ms: int = 3_600_000  # hdds.container.report.interval
    pipeline_interval_ms: int = 60_000  # hdds.pipeline.report.interval
    command_status_interval_ms: int = 30_000  # hdds.command.status.report.interval
    # hdds.heartbeat.interval: a full volume's node report goes at most this often
    full_volume_interval_ms: int = 30_000


@dataclass(frozen=True, slots=True)
class StorageSettings:
    """Where the datanode keeps its data and metadata. A directory it needs and is not given is a
    ConfigError when it asks for it (the `*_dir(s)` methods), so the simulator and `cluster up`, which
    build the other settings, need none."""

    data_dirs: tuple[Path, ...] = ()  # hdds.datanode.dir, each once
    metadata_dirs: tuple[Path, ...] = ()  # ozone.metadata.dirs, each once
    id_dir: Path | None = None  # ozone.scm.datanode.id.dir
    ratis_dir: Path | None = None  # hdds.container.ratis.datanode.storage.dir
    data_dir_mode: int = 0o700  # hdds.datanode.data.dir.permissions
    metadata_dir_mode: int = 0o750  # ozone.metadata.dirs.permissions

    def data_volume_dirs(self) -> tuple[Path, ...]:
        return _required(self.data_dirs, DATA_DIRS_KEY)

    def metadata_volume_dirs(self) -> tuple[Path, ...]:
        return _required(self.metadata_dirs, METADATA_DIRS_KEY)

    def identity_dir(self) -> Path:
        """datanode.id's: ozone.scm.datanode.id.dir, else the first of ozone.metadata.dirs (Ozone's
        getDatanodeIdFilePath)."""
        if self.id_dir is not None:
            return self.id_dir
        if not self.metadata_dirs:
            raise ConfigError(f"{METADATA_DIRS_KEY}: not set, and {ID_DIR_KEY} neither")
        return self.metadata_dirs[0]

    def ratis_storage_dir(self) -> Path:
        """The pipeline logs': hdds.container.ratis.datanode.storage.dir, else `ratis` in the identity
        directory (Ozone's default is `ratis` in ozone.metadata.dirs; the two agree unless
        ozone.scm.datanode.id.dir is set, and older pyozone datanodes kept their logs there)."""
        return self.ratis_dir if self.ratis_dir is not None else self.identity_dir() / "ratis"


def _required(dirs: tuple[Path, ...], key: str) -> tuple[Path, ...]:
    if not dirs:
        raise ConfigError(f"{key} is not set: a datanode needs at least one directory there")
    return dirs


@dataclass(frozen=True, slots=True)
class MinFreeSpace:
    """The free space a data volume keeps: the larger of a size and a fraction of its capacity (Ozone's
    DatanodeConfiguration.getMinFreeSpace). Reported to SCM as freeSpaceToSpare; no floor by default."""

    size_bytes: int = 0  # hdds.datanode.volume.min.free.space
    fraction: float = 0.0  # hdds.datanode.volume.min.free.space.percent

    def floor(self, capacity: int) -> int:
        return max(self.size_bytes, int(capacity * self.fraction))


@dataclass(frozen=True, slots=True)
class SpaceSettings:
    """What a data volume keeps free and what a container takes."""

    reserved_bytes: int = 0  # hdds.datanode.dir.du.reserved
    min_free: MinFreeSpace = MinFreeSpace(20 * GB, 0.02)  # hdds.datanode.volume.min.free.space[.percent]
    container_size_bytes: int = 5 * GB  # ozone.scm.container.size
    close_threshold: float = 0.9  # hdds.container.close.threshold: a container this full asks to close


@dataclass(frozen=True, slots=True)
class ScannerSettings:
    """The background data scanner (Ozone's ContainerScannerConfiguration)."""

    enabled: bool = True  # hdds.container.scrub.enabled
    data_scan_interval_ms: int = 7 * 86_400_000  # hdds.container.scrub.data.scan.interval
    volume_bytes_per_second: int = 5 << 20  # hdds.container.scrub.volume.bytes.per.second


@dataclass(frozen=True, slots=True)
class RecoveringScrubSettings:
    """The scrubber of EC reconstructions given up (Ozone's StaleRecoveringContainerScrubbingService)."""

    interval_ms: int = 60_000  # hdds.datanode.recovering.container.scrubbing.service.interval
    timeout_ms: int = 20 * 60_000  # ozone.recovering.container.timeout


@dataclass(frozen=True, slots=True)
class PipelineRaftConfig:
    """The datanode's Ratis settings for its pipelines (Ozone's DatanodeRatisServerConfig and the
    dfs.container.ratis.* keys)."""

    election_timeout_ms: int = 5000  # hdds.ratis.leader.election.minimum.timeout.duration
    slowness_timeout_ms: int = 300_000  # hdds.ratis.raft.server.rpc.slowness.timeout
    no_leader_timeout_ms: int = 300_000  # hdds.ratis.raft.server.Notification.no-leader.timeout
    write_element_limit: int = 1024  # hdds.ratis.raft.server.write.element-limit
    leader_pending_bytes: int = 1 << 30  # dfs.container.ratis.leader.pending.bytes.limit
    appender_queue_bytes: int = 32 << 20  # dfs.container.ratis.log.appender.queue.byte-limit
    snapshot_threshold: int = SNAPSHOT_THRESHOLD  # dfs.ratis.snapshot.threshold
    purge_gap: int = 1_000_000  # dfs.container.ratis.log.purge.gap
    # dfs.container.ratis.statemachine.max.pending.apply-transactions
    max_pending_apply: int = MAX_PENDING_APPLY
    watch_timeout_ms: int = 30_000  # hdds.ratis.raft.server.watch.timeout
    request_timeout_ms: int = 60_000  # hdds.ratis.raft.server.rpc.request.timeout (also the datastream's)

    def settings(self, suggested_leader: bool) -> RaftSettings:
        return RaftSettings(
            rpc_timeout_min_ms=self.election_timeout_ms,
            rpc_timeout_max_ms=self.election_timeout_ms + ELECTION_SPREAD_MS,
            append_byte_limit=self.appender_queue_bytes,
            purge_gap=self.purge_gap,
            push_commit=True,
            first_election_timeout_min_ms=0 if suggested_leader else None,
            first_election_timeout_max_ms=FIRST_ELECTION_MAX_MS if suggested_leader else None,
            no_leader_timeout_ms=self.no_leader_timeout_ms,
            rpc_slowness_timeout_ms=self.slowness_timeout_ms,
        )


@dataclass(frozen=True, slots=True)
class QueueLimits:
    """How much of SCM's work the datanode takes (Ozone's ReplicationConfig and DatanodeConfiguration)."""

    replication_streams: int = 10  # hdds.datanode.replication.streams.limit
    replication_queue: int = 4096  # hdds.datanode.replication.queue.limit
    out_of_service_factor: float = 2.0  # hdds.datanode.replication.outofservice.limit.factor, clamped
    # most commands of a type waiting (not yet running): hdds.datanode.block.delete.queue.limit
    per_type: Mapping[SCMCommandType, int] = field(
        default_factory=lambda: {SCMCommandType.deleteBlocksCommand: 5}
    )


@dataclass(frozen=True, slots=True)
class TokenSettings:
    """Which tokens the datanode requires, and the lifetime of those it signs for its own requests."""

    block_tokens: bool = False  # hdds.block.token.enabled
    container_tokens: bool = False  # hdds.container.token.enabled
    block_token_lifetime_ms: int = 86_400_000  # hdds.block.token.expiry.time

    @property
    def enabled(self) -> bool:
        return self.block_tokens or self.container_tokens


@dataclass(frozen=True, slots=True)
class PortSettings:
    """What the datanode advertises and listens on (port 0: any free port, the one bound is advertised)."""

    hostname: str | None = None  # dfs.datanode.hostname (None: the machine's)
    container_port: int = 9859  # hdds.container.ipc.port (STANDALONE)
    ratis_port: int = 9858  # hdds.container.ratis.ipc.port (RATIS)
    replication_port: int = 9886  # hdds.datanode.replication.port (REPLICATION)
    datastream_enabled: bool = True  # hdds.container.ratis.datastream.enabled
    datastream_port: int = 9855  # hdds.container.ratis.datastream.port (RATIS_DATASTREAM)


@dataclass(frozen=True, slots=True)
class DatanodeSettings:
    """The datanode's settings, a group per component; by default Ozone's, with no directories."""

    heartbeat: HeartbeatSettings = HeartbeatSettings()
    reports: ReportSettings = ReportSettings()
    storage: StorageSettings = StorageSettings()
    space: SpaceSettings = SpaceSettings()
    scanner: ScannerSettings = ScannerSettings()
    recovering: RecoveringScrubSettings = RecoveringScrubSettings()
    ratis: PipelineRaftConfig = PipelineRaftConfig()
    admission: QueueLimits = QueueLimits()
    tokens: TokenSettings = TokenSettings()
    ports: PortSettings = PortSettings()

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> DatanodeSettings:
        """ConfigError naming every broken rule of `RULES` (key, raw value and source), or a malformed
        directory mode; every process's rules were checked as the configuration loaded
        (config/validate.py)."""
        raise_broken(broken_rules(conf, RULES))
        heartbeat_ms = conf.get(HEARTBEAT_INTERVAL_KEY)
        return cls(
            heartbeat=HeartbeatSettings(
                interval_ms=heartbeat_ms,
                initial_interval_ms=conf.get("hdds.heartbeat.initial-interval"),
                rpc_timeout_ms=conf.get("ozone.scm.heartbeat.rpc-timeout"),
            ),
            reports=ReportSettings(
                node_interval_ms=conf.get("hdds.node.report.interval"),
                container_interval_ms=conf.get("hdds.container.report.interval"),
                pipeline_interval_ms=conf.get("hdds.pipeline.report.interval"),
                command_status_interval_ms=conf.get("hdds.command.status.report.interval"),
                full_volume_interval_ms=heartbeat_ms,
            ),
            storage=StorageSettings(
                data_dirs=_dirs(conf, DATA_DIRS_KEY),
                metadata_dirs=_dirs(conf, METADATA_DIRS_KEY),
                id_dir=_dir(conf, ID_DIR_KEY),
                ratis_dir=_dir(conf, RATIS_DIR_KEY),
                data_dir_mode=dir_permissions(conf, DATA_PERMISSIONS_KEY),
                metadata_dir_mode=dir_permissions(conf, METADATA_PERMISSIONS_KEY),
            ),
            space=SpaceSettings(
                reserved_bytes=conf.get(RESERVED_KEY),
                min_free=MinFreeSpace(conf.get(MIN_FREE_SPACE_KEY), conf.get(MIN_FREE_SPACE_PERCENT_KEY)),
                container_size_bytes=conf.get(CONTAINER_SIZE_KEY),
                close_threshold=conf.get(CLOSE_THRESHOLD_KEY),
            ),
            scanner=ScannerSettings(
                enabled=conf.get("hdds.container.scrub.enabled"),
                data_scan_interval_ms=conf.get("hdds.container.scrub.data.scan.interval"),
                volume_bytes_per_second=conf.get("hdds.container.scrub.volume.bytes.per.second"),
            ),
            recovering=RecoveringScrubSettings(
                interval_ms=conf.get("hdds.datanode.recovering.container.scrubbing.service.interval"),
                timeout_ms=conf.get("ozone.recovering.container.timeout"),
            ),
            ratis=PipelineRaftConfig(
                election_timeout_ms=conf.get("hdds.ratis.leader.election.minimum.timeout.duration"),
                slowness_timeout_ms=conf.get("hdds.ratis.raft.server.rpc.slowness.timeout"),
                no_leader_timeout_ms=conf.get("hdds.ratis.raft.server.Notification.no-leader.timeout"),
                write_element_limit=conf.get("hdds.ratis.raft.server.write.element-limit"),
                leader_pending_bytes=conf.get("dfs.container.ratis.leader.pending.bytes.limit"),
                appender_queue_bytes=conf.get("dfs.container.ratis.log.appender.queue.byte-limit"),
                snapshot_threshold=conf.get("dfs.ratis.snapshot.threshold"),
                purge_gap=conf.get("dfs.container.ratis.log.purge.gap"),
                max_pending_apply=conf.get("dfs.container.ratis.statemachine.max.pending.apply-transactions"),
                watch_timeout_ms=conf.get("hdds.ratis.raft.server.watch.timeout"),
                request_timeout_ms=conf.get("hdds.ratis.raft.server.rpc.request.timeout"),
            ),
            admission=QueueLimits(
                replication_streams=conf.get("hdds.datanode.replication.streams.limit"),
                replication_queue=conf.get("hdds.datanode.replication.queue.limit"),
                out_of_service_factor=out_of_service_factor(conf),
                per_type={
                    SCMCommandType.deleteBlocksCommand: conf.get("hdds.datanode.block.delete.queue.limit"),
                },
            ),
            tokens=TokenSettings(
                block_tokens=bool(conf.get("hdds.block.token.enabled")),
                container_tokens=bool(conf.get("hdds.container.token.enabled")),
                block_token_lifetime_ms=conf.get("hdds.block.token.expiry.time"),
            ),
            ports=PortSettings(
                hostname=conf.get("dfs.datanode.hostname") or None,
                container_port=conf.get("hdds.container.ipc.port"),
                ratis_port=conf.get("hdds.container.ratis.ipc.port"),
                replication_port=conf.get("hdds.datanode.replication.port"),
                datastream_enabled=conf.get("hdds.container.ratis.datastream.enabled"),
                datastream_port=conf.get("hdds.container.ratis.datastream.port"),
            ),
        )


def _dirs(conf: OzoneConfiguration, key: str) -> tuple[Path, ...]:
    """The comma-separated directories of `key`, trimmed, each once (`/d` and `/d/` are one), in order."""
    named = (d.strip() for d in (conf.get(key) or "").split(","))
    return tuple(Path(d) for d in dict.fromkeys(os.path.normpath(d) for d in named if d))


def _dir(conf: OzoneConfiguration, key: str) -> Path | None:
    value = conf.get(key)
    return Path(value) if value else None
