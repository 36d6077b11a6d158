"""The gateway's configuration, read once at start: a bad value fails with its key's name."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyozone.common.http_server import HttpLimits
from pyozone.common.net import HostPort, address, bind_address
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.hdds.security.users import Administrators, UserGroups

S3G_PORT_DEFAULT = 9878


@dataclass(frozen=True, slots=True)
class S3GatewaySettings:
    address: HostPort
    bind_host: str
    """ozone.s3g.http-bind-host when set; else a loopback address keeps its host (a one-machine cluster)."""
    volume: str = "s3v"
    domains: tuple[str, ...] = ()
    """ozone.s3g.domain.name: a Host of `bucket.<domain>` names the bucket (virtual-host style)."""
    buffer_size: int = 4 << 20
    """ozone.s3g.client.buffer.size: the piece of a body the gateway checks and writes at once, and the
    most it reads from a key at once for a GET."""
    signing_key_ttl_s: float = 10.0
    head_timeout_s: float = 10.0
    body_idle_timeout_s: float = 20.0
    commit_deadline_s: float = 30.0
    """ozone.s3g.commit.deadline: a write's commit waits this long for an unreachable OM, then the request
    is 503 ServiceUnavailable. Below every SDK's read timeout (botocore's and the AWS CLI's 60 s, the Java
    SDK's 50 s), so the client hears the outcome instead of giving up and retrying while the abandoned
    request may still commit."""
    sse_customer_require_https: bool = True
    """ozone.s3g.sse.customer.require.https: SSE-C's key (in a header) is taken over HTTPS alone, as Amazon
    takes it; false lets tests on a plain-HTTP cluster use SSE-C."""
    administrators: Administrators = field(default_factory=lambda: Administrators(frozenset(), frozenset()))
    """ozone.administrators(.groups), as OM reads them: who may manage any bucket's policy,
    PublicAccessBlock and other configuration through the gateway, as OM lets them (R34's F8)."""
    groups: UserGroups = field(default_factory=lambda: UserGroups({}))
    """hadoop.user.group.static.mapping.overrides: the groups ozone.administrators.groups names."""

    def administrator(self, user: str) -> bool:
        """Whether a (signed) user is an administrator; an anonymous request never is."""
        return bool(user) and self.administrators.permits(user, self.groups.groups(user))

    def http_limits(self) -> HttpLimits:
        """The HTTP guards, with aiohttp reading bodies in pieces of up to 1 MiB (64 KiB by default)."""
        return HttpLimits(
            head_timeout_s=self.head_timeout_s,
            body_idle_timeout_s=self.body_idle_timeout_s,
            read_bufsize=min(self.buffer_size, 1 << 20),
        )

    @classmethod
    def from_conf(cls, conf: OzoneConfiguration) -> S3GatewaySettings:
        where = address(conf, "ozone.s3g.http-address", default_port=S3G_PORT_DEFAULT)
        volume = str(conf.get("ozone.s3g.volume.name") or "").strip()
        if not volume:
            raise ConfigError("ozone.s3g.volume.name: must name a volume")
        domains = tuple(
            d.strip().lower() for d in str(conf.get("ozone.s3g.domain.name") or "").split(",") if d.strip()
        )
        buffer_size = int(conf.get("ozone.s3g.client.buffer.size"))
        if buffer_size <= 0:
            raise ConfigError("ozone.s3g.client.buffer.size: must be positive")
        return cls(
            address=where,
            bind_host=bind_address(conf, where, "ozone.s3g.http-bind-host").host,
            volume=volume,
            domains=domains,
            buffer_size=buffer_size,
            signing_key_ttl_s=int(conf.get("ozone.s3g.signing.key.cache.ttl")) / 1000,
            head_timeout_s=_positive_s(conf, "ozone.s3g.http.head.timeout"),
            body_idle_timeout_s=_positive_s(conf, "ozone.s3g.http.body.idle.timeout"),
            commit_deadline_s=_positive_s(conf, "ozone.s3g.commit.deadline"),
            sse_customer_require_https=bool(conf.get("ozone.s3g.sse.customer.require.https")),
            administrators=Administrators.from_conf(conf),
            groups=UserGroups.from_conf(conf),
        )


def _positive_s(conf: OzoneConfiguration, key: str) -> float:
    ms = int(conf.get(key))
    if ms <= 0:
        raise ConfigError(f"{key}: must be positive")
    return ms / 1000
