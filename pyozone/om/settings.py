"""The OM's configuration, read once at the daemon's edge (om/server/daemon.py): a bad value fails at
start-up with the key's name, not mid-request, and the OM core takes these values, never the configuration
(an import-linter contract in pyproject.toml keeps pyozone.config out of pyozone/om but this module and
om/server)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pyozone.common.tls_mode import mtls_enabled
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.config.dirs import metadata_dir, single_dir
from pyozone.hdds.ids import RATIS_THREE, ReplicationConfig
from pyozone.hdds.security.acl import ACLType, parse_rights_names
from pyozone.hdds.security.users import Administrators, UserGroups
from pyozone.hdds.states import ReplicationType
from pyozone.hdds.topology import load_rack_mapping
from pyozone.om.master_keys import KEYSTORE_FILE, KEYSTORE_KEY
from pyozone.om.replication import ALLOWED_CONFIGS_KEY, AllowedConfigs
from pyozone.om.storage import OM_DB_DIRS_KEY, OM_DB_NAME

DEFAULT_LIST_LIMIT = 1000
"""What a list call asking for 0 entries answers at most; ozone.om.server.list.max.size's default."""
MULTIPART_MIN_SIZE = 5 << 20
"""The smallest part of a multipart upload but the last (Ozone's OzoneConsts.OM_MULTIPART_MIN_SIZE, S3's
5 MiB; a constant in Ozone too, which only tests change)."""
PREALLOCATE_MAX_BLOCKS = 64
"""openKey pre-allocates at most this many blocks (Ozone's ozone.key.preallocation.max.blocks); the
client asks allocateBlock for the rest."""


@dataclass(frozen=True, slots=True)
class AccessSettings:
    """Who is who and whether OM checks ACLs: read by om/access.py."""

    enabled: bool = False  # ozone.acl.enabled
    tls: bool = False  # hdds.grpc.tls.enabled: callers are who their certificates name
    administrators: Administrators = field(default_factory=lambda: Administrators(frozenset(), frozenset()))
    groups: UserGroups = field(default_factory=lambda: UserGroups({}))
    user_rights: frozenset[ACLType] = frozenset({ACLType.ALL})  # ozone.om.user.rights
    group_rights: frozenset[ACLType] = frozenset({ACLType.READ, ACLType.LIST})  # ozone.om.group.rights
    list_all_volumes: bool = False  # ozone.om.volume.listall.allowed (Ozone: true; docs/differences.md)

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> AccessSettings:
        try:
            return cls(
                enabled=bool(conf.get("ozone.acl.enabled")),
                tls=mtls_enabled(conf),
                administrators=Administrators.from_conf(conf),
                groups=UserGroups.from_conf(conf),
                user_rights=parse_rights_names(str(conf.get("ozone.om.user.rights"))),
                group_rights=parse_rights_names(str(conf.get("ozone.om.group.rights"))),
                list_all_volumes=bool(conf.get("ozone.om.volume.listall.allowed")),
            )
        except ValueError as e:
            raise ConfigError(str(e)) from None


@dataclass(frozen=True, slots=True)
class BlockTokenSettings:
    """Whether OM signs block tokens and for how long they hold: read by om/block_tokens.py."""

    enabled: bool = False  # hdds.block.token.enabled
    lifetime_ms: int = 24 * 3600_000  # hdds.block.token.expiry.time

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> BlockTokenSettings:
        return cls(bool(conf.get("hdds.block.token.enabled")), conf.get("hdds.block.token.expiry.time"))


@dataclass(frozen=True, slots=True)
class OMSettings:
    block_size: int = 256 << 20
    default_replication: ReplicationConfig = RATIS_THREE
    check_key_characters: bool = False
    key_deleting_interval_ms: int = 60_000
    key_deleting_limit: int = 20_000
    open_key_cleanup_interval_ms: int = 24 * 3600_000
    open_key_expire_ms: int = 7 * 24 * 3600_000
    open_key_cleanup_limit: int = 1000
    s3_lifecycle_interval_ms: int = 3600_000
    s3_lifecycle_limit: int = 1000
    """ozone.om.s3.lifecycle.limit.per.task: the most actions one lifecycle run takes (om/lifecycle.py)."""
    s3_lifecycle_time_override: bool = False
    """ozone.om.s3.lifecycle.time.override.enabled: whether runS3Lifecycle may judge a run at a time other
    than OM's clock (its nowMs): for tests and operators' rehearsals only, as a far time fires every
    bucket's rules at once."""
    location_cache_size: int = 100_000
    location_cache_ttl_ms: int = 360 * 60_000
    max_unflushed_transactions: int = 10_000
    length_check_timeout_ms: int = 3000
    """ozone.om.commit.block.length.check.timeout: how long a commit under a space quota waits for the
    stored lengths of its blocks (stored_lengths.py)."""
    list_max_size: int = DEFAULT_LIST_LIMIT
    """ozone.om.server.list.max.size: every list rpc (volumes, buckets, keys, parts, uploads) answers at
    most this many entries, however many it asks for (OzoneManagerService._limit)."""
    """ozone.om.unflushed.transaction.max.count: a request waits while this many are not in om.db."""
    racks: tuple[tuple[str, str], ...] = ()
    """(host name or IP, rack) from net.topology.node.switch.mapping.file: where a reader is."""
    multipart_min_size: int = MULTIPART_MIN_SIZE
    allowed_configs: AllowedConfigs = field(default_factory=AllowedConfigs)
    """ozone.replication.allowed-configs: the replication configs a client may name."""
    access: AccessSettings = field(default_factory=AccessSettings)
    """ozone.acl.enabled and who is who: om/access.py."""
    block_tokens: BlockTokenSettings = BlockTokenSettings()
    """hdds.block.token.*: om/block_tokens.py."""

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> OMSettings:
        allowed = allowed_configs(conf)
        return cls(
            block_size=_positive(conf, "ozone.scm.block.size"),
            default_replication=default_replication(conf, allowed),
            check_key_characters=bool(conf.get("ozone.om.keyname.character.check.enabled")),
            key_deleting_interval_ms=_positive(conf, "ozone.block.deleting.service.interval"),
            key_deleting_limit=_positive(conf, "ozone.key.deleting.limit.per.task"),
            open_key_cleanup_interval_ms=_positive(conf, "ozone.om.open.key.cleanup.service.interval"),
            open_key_expire_ms=_positive(conf, "ozone.om.open.key.expire.threshold"),
            open_key_cleanup_limit=_positive(conf, "ozone.om.open.key.cleanup.limit.per.task"),
            s3_lifecycle_interval_ms=_positive(conf, "ozone.om.s3.lifecycle.service.interval"),
            s3_lifecycle_limit=_positive(conf, "ozone.om.s3.lifecycle.limit.per.task"),
            s3_lifecycle_time_override=bool(conf.get("ozone.om.s3.lifecycle.time.override.enabled")),
            location_cache_size=_at_least(conf, "ozone.om.container.location.cache.size", 0),
            location_cache_ttl_ms=_at_least(conf, "ozone.om.container.location.cache.ttl", 0),
            max_unflushed_transactions=_positive(conf, "ozone.om.unflushed.transaction.max.count"),
            list_max_size=_positive(conf, "ozone.om.server.list.max.size"),
            length_check_timeout_ms=_positive(conf, "ozone.om.commit.block.length.check.timeout"),
            racks=_racks(conf),
            allowed_configs=allowed,
            access=AccessSettings.from_conf(conf),
            block_tokens=BlockTokenSettings.from_conf(conf),
        )

    def rack_of(self, host: str) -> str:
        """The reader's rack, or "" when the mapping file does not name its host."""
        return dict(self.racks).get(host.strip(), "")


def _racks(conf: OzoneConfiguration) -> tuple[tuple[str, str], ...]:
    path = conf.get("net.topology.node.switch.mapping.file")
    return tuple(sorted(load_rack_mapping(Path(path)).items())) if path else ()


def _at_least(conf: OzoneConfiguration, key: str, minimum: int) -> int:
    value = int(conf.get(key))
    if value < minimum:
        raise ConfigError(f"{key}: must be at least {minimum}, got {conf.get_raw(key)!r}")
    return value


def _positive(conf: OzoneConfiguration, key: str) -> int:
    return _at_least(conf, key, 1)


def om_metadata_dir(conf: OzoneConfiguration) -> Path:
    """Where OM's VERSION lives: ozone.metadata.dirs (one directory)."""
    return metadata_dir(conf, "OM", OM_DB_NAME)


def om_db_path(conf: OzoneConfiguration) -> Path:
    """om.db: in ozone.om.db.dirs, else in OM's metadata directory."""
    return (single_dir(conf, OM_DB_DIRS_KEY, "OM") or om_metadata_dir(conf)) / OM_DB_NAME


def keystore_path(conf: OzoneConfiguration, metadata_dir: Path) -> Path:
    """ozone.om.sse.master.keystore, else s3-sse-master.keystore beside om.db's VERSION
    (om/master_keys.py)."""
    named = str(conf.get(KEYSTORE_KEY) or "").strip()
    return Path(named) if named else metadata_dir / KEYSTORE_FILE


def allowed_configs(conf: OzoneConfiguration) -> AllowedConfigs:
    try:
        return AllowedConfigs(str(conf.get(ALLOWED_CONFIGS_KEY) or ""))
    except ValueError as e:
        raise ConfigError(str(e)) from None


def default_replication(conf: OzoneConfiguration, allowed: AllowedConfigs | None = None) -> ReplicationConfig:
    """ozone.server.default.replication.type / ozone.server.default.replication, as Ozone's
    ReplicationConfig.parse reads them: RATIS (or STAND_ALONE) with ONE/THREE (or 1/3), or EC with an EC
    name such as rs-6-3-1024k. The result must be an allowed config (ozone.replication.allowed-configs)."""
    rtype = str(conf.get("ozone.server.default.replication.type") or "RATIS").strip().upper()
    replication = str(conf.get("ozone.server.default.replication") or "3").strip()
    keys = "ozone.server.default.replication(.type)"
    if rtype not in ("RATIS", "STAND_ALONE", "EC"):
        raise ConfigError(f"ozone.server.default.replication.type: {rtype!r} is not RATIS, STAND_ALONE or EC")
    try:
        config = ReplicationConfig.parse(replication if rtype == "EC" else f"{rtype}/{replication}")
    except ValueError as e:
        raise ConfigError(f"{keys}: {e}") from None
    if (config.type is ReplicationType.EC) != (rtype == "EC"):
        raise ConfigError(f"{keys}: {replication!r} is not a {rtype} replication")
    allowed = allowed or AllowedConfigs()
    if not allowed.allows(config):
        raise ConfigError(f"{keys}: {config} is not allowed by {ALLOWED_CONFIGS_KEY} ({allowed.pattern})")
    return config
