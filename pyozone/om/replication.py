"""Which replication configs OM takes from a client, and what one block of a config holds.

The allowed configs are Ozone's `ozone.replication.allowed-configs`: a regular expression over Ozone's
configFormat of a config ("RATIS/THREE", "STANDALONE/ONE", "EC/3-2-1024k": an EC config's codec is not in
it). OM checks the configs a client names (bucket create, key open, multipart upload); a bucket's stored
default and the server's default were checked when they were set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pyozone.config.keys import KEYS_BY_NAME
from pyozone.hdds.ec.layout import StripeLayout
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import ReplicationFactor, ReplicationType
from pyozone.om.exceptions import OMException, OMResultCode

ALLOWED_CONFIGS_KEY = "ozone.replication.allowed-configs"
ALLOWED_CONFIGS_DEFAULT = KEYS_BY_NAME[ALLOWED_CONFIGS_KEY].default or ""
"""Ozone's default (RATIS and STANDALONE of one or three copies; RS or XOR 3-2, 6-3 and 10-4 in cells of
512 KB to 4 MB) plus 2-1, so that xor-2-1-1024k works out of the box (docs/differences.md)."""


def config_format(config: ReplicationConfig) -> str:
    """Ozone's ReplicationConfig.configFormat(), what the allowed-configs pattern is matched against."""
    if config.type is ReplicationType.EC:
        return f"EC/{config.ec_data}-{config.ec_parity}-{config.ec_chunk_kb}k"
    kind = "STANDALONE" if config.type is ReplicationType.STAND_ALONE else config.type.name
    return f"{kind}/{ReplicationFactor(config.factor).name}"


@dataclass(frozen=True, slots=True)
class AllowedConfigs:
    """The compiled allowed-configs pattern; an empty pattern allows every config (Ozone's too)."""

    pattern: str = ALLOWED_CONFIGS_DEFAULT
    _compiled: re.Pattern[str] | None = field(init=False, compare=False, repr=False, default=None)

    def __post_init__(self) -> None:
        if not self.pattern:
            return
        try:
            compiled = re.compile(self.pattern)
        except re.error as e:
            raise ValueError(
                f"{ALLOWED_CONFIGS_KEY}: {self.pattern!r} is not a regular expression: {e}"
            ) from None
        object.__setattr__(self, "_compiled", compiled)

    def allows(self, config: ReplicationConfig) -> bool:
        return self._compiled is None or self._compiled.fullmatch(config_format(config)) is not None

    def check(self, config: ReplicationConfig) -> ReplicationConfig:
        """`config`, or INVALID_REQUEST with Ozone's message when the pattern does not allow it."""
        if not self.allows(config):
            raise OMException(
                OMResultCode.INVALID_REQUEST,
                f"Invalid replication config {config_format(config)}. Config must match the pattern defined "
                f"by {ALLOWED_CONFIGS_KEY} ({self.pattern})",
            )
        return config


def block_capacity(config: ReplicationConfig, block_size: int) -> int:
    """Key bytes one block of `config` holds when each replica holds `block_size` bytes: an EC block group
    holds `block_size` on each data index (Ozone's ECKeyOutputStream), a replicated block `block_size`."""
    if config.type is ReplicationType.EC:
        return StripeLayout.of(config).group_capacity(block_size)
    return block_size


def replica_bytes(config: ReplicationConfig, size: int) -> int:
    """The most bytes any one replica holds of a block of `size` key bytes: what SCM is asked to count for
    a small key. An EC group's first data index and its parity indexes are its longest."""
    if config.type is ReplicationType.EC:
        return StripeLayout.of(config).index_length(size, 1)
    return size
