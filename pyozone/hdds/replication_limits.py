"""The out-of-service scaling of a datanode's replication work, which SCM and the datanode must agree on.

A node leaving service (decommissioning, maintenance) serves no writes, so it grows its replication pool
and queue by hdds.datanode.replication.outofservice.limit.factor, and SCM queues that many more commands on
it. The factor is clamped to [1, 10] rather than rejected, and a scaled limit rounds up, as Ozone's
ReplicationConfig.scaleOutOfServiceLimit and ReplicationManager do. With one definition the two sides
cannot drift (they did: the datanode once rounded down and ran 12 workers where SCM queued for 13).
"""

from __future__ import annotations

import math

from pyozone.config import OzoneConfiguration

OUT_OF_SERVICE_FACTOR_KEY = "hdds.datanode.replication.outofservice.limit.factor"
MIN_OUT_OF_SERVICE_FACTOR = 1.0
MAX_OUT_OF_SERVICE_FACTOR = 10.0


def clamp_out_of_service_factor(factor: float) -> float:
    return min(MAX_OUT_OF_SERVICE_FACTOR, max(MIN_OUT_OF_SERVICE_FACTOR, factor))


def out_of_service_factor(conf: OzoneConfiguration) -> float:
    """The configured factor, clamped."""
    return clamp_out_of_service_factor(conf.get(OUT_OF_SERVICE_FACTOR_KEY))


def out_of_service_limit(limit: int, factor: float) -> int:
    """A limit (workers, queue length, commands SCM may queue) on a node leaving service."""
    return math.ceil(limit * clamp_out_of_service_factor(factor))
