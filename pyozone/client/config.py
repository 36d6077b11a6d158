"""ClientConfig: the ozone.client.* settings the data path reads, typed once when a client starts.

Reading the configuration once (rather than per key) keeps the write path free of parsing, and a frozen
value can be shared by every stream of a client without locks. It is the one thing the client builds from
the configuration (`AsyncOzoneClient`'s and `OzoneClient`'s constructors call `from_conf`): the OMs it
calls, its rack, its retry policies; its rules (a bad value named with its key) are checked here.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, replace
from pathlib import Path

from pyozone.client.retry import (
    COMMIT_DEADLINE_S,
    LEADER_FAILOVER,
    LeaderFailover,
    OmRetryPolicy,
    WriteRetryPolicy,
)
from pyozone.common.net import HostPort
from pyozone.common.om_ha import OmAddresses
from pyozone.common.tls import TlsStore
from pyozone.common.tls_mode import client_tls
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.framework.om import OmEndpoint
from pyozone.hdds.checksum import ChecksumType
from pyozone.hdds.limits import MAX_CHUNK_BYTES
from pyozone.hdds.topology import load_rack_mapping

CHECKSUM_TYPE_KEY = "ozone.client.checksum.type"


@dataclass(frozen=True, slots=True)
class ClientConfig:
    om_nodes: tuple[OmEndpoint, ...]  # a lone OM, or the OMs of the service the client talks to
    buffer_size: int  # one writeChunk
    flush_size: int  # bytes between putBlocks
    max_size: int  # unacknowledged bytes held per key
    block_size: int  # where the writer moves to the next block (OM pre-allocates this size)
    max_retries: int
    retry_interval_s: float
    read_max_retries: int
    read_retry_interval_s: float
    checksum_type: ChecksumType
    bytes_per_checksum: int
    verify_checksum: bool
    exclude_expiry_s: float
    watch_all: bool  # hdds.ratis.client.request.watch.type is ALL_COMMITTED
    request_timeout_s: float = 60.0  # one datanode request
    watch_timeout_s: float = 180.0  # hdds.ratis.raft.client.rpc.watch.request.timeout: one WatchForCommit
    om_timeout_s: float = 30.0  # one OM call
    unavailable_budget_s: float = 60.0  # how long OM/SCM "no OPEN pipeline yet" is retried
    backoff_base_s: float = 4.0  # write retries after the first
    backoff_max_s: float = 40.0
    retry_deadline_s: float = 600.0  # a run of write failures; outlasts SCM replacing a dead pipeline
    datastream_enabled: bool = True  # ozone.fs.datastream.enabled: keys of datastream_threshold bytes take V2
    datastream_threshold: int = 4 << 20  # ozone.fs.datastream.auto.threshold
    packet_size: int = 1 << 20  # ozone.client.datastream.min.packet.size: one V2 packet (a chunk)
    datastream_flush_size: int = 16 << 20  # ozone.client.datastream.buffer.flush.size: V2 bytes per putBlock
    datastream_window: int = 64 << 20  # ozone.client.datastream.window.size: V2 bytes sent, not acknowledged
    ec_stripe_retries: int = 10  # ozone.client.max.ec.stripe.write.retries: an EC key's rewrites in a run
    tls: TlsStore | None = None  # the certificate every channel and datastream socket presents (mutual TLS)
    om_attempts: int = 500  # ozone.client.failover.max.attempts: a commit while OM is unreachable
    om_wait_s: float = 2.0  # ozone.client.wait.between.retries.millis
    om_deadline_s: float = COMMIT_DEADLINE_S  # ozone.client.retry.deadline: a commit's whole wait for OM
    leader_failover: LeaderFailover = LEADER_FAILOVER  # hdds.ratis.client.multilinear.random.retry.policy
    rack: str = ""  # net.topology.node.switch.mapping.file: this host's rack ("" when the file names none)

    @property
    def om_address(self) -> HostPort:
        """The first OM (a lone OM's address)."""
        return self.om_nodes[0].address

    @property
    def write_retry(self) -> WriteRetryPolicy:
        return WriteRetryPolicy(
            self.max_retries, self.retry_interval_s, self.backoff_base_s, self.backoff_max_s,
            self.retry_deadline_s,
        )  # fmt: skip

    @property
    def om_retry(self) -> OmRetryPolicy:
        return OmRetryPolicy(self.om_attempts, self.om_wait_s, self.om_deadline_s)

    @property
    def ec_write_retry(self) -> WriteRetryPolicy:
        """An EC key's retries: Ozone counts them by ozone.client.max.ec.stripe.write.retries."""
        return replace(self.write_retry, max_retries=self.ec_stripe_retries)

    def uses_datastream(self, size: int, datastream: bool | None = None) -> bool:
        """Whether a key of `size` bytes (0: unknown) is written by V2: `datastream` when given, else by
        ozone.fs.datastream.enabled and the auto threshold (small keys gain nothing from it: the "Ozone Write
        Pipeline V2 with Ratis Streaming" post).
        An EC key's cells take the datanodes' datastream ports by the same rule: a key of unknown size may
        pause longer than a datanode keeps an idle stream open; RPC writeChunks have no such limit."""
        if datastream is not None:
            return datastream
        return self.datastream_enabled and size >= self.datastream_threshold

    @property
    def chunks_per_flush(self) -> int:
        return max(1, self.flush_size // self.buffer_size)

    @classmethod
    def from_conf(
        cls, conf: OzoneConfiguration, om_address: str | None = None, tls: TlsStore | None = None
    ) -> ClientConfig:
        """`om_address`: OM's host[:port], or the id of an OM service of `ozone.om.service.ids` (default: the
        configured service, else ozone.om.address). `tls`: a service's own certificate (the S3 gateway's); by
        default, with hdds.grpc.tls.enabled, the user's (ozone.client.tls.* or OZONE_CLIENT_*)."""
        om_nodes = _om_nodes(conf, om_address)
        checksum = checksum_type(conf)
        explicit = conf.get("ozone.client.retry.deadline")
        # Unset, a run of failed blocks lasts until SCM has given up on a dead datanode and replaced its
        # pipelines; a commit, until an OM restart or failover is long over (retry.COMMIT_DEADLINE_S).
        deadline = conf.get("ozone.scm.dead.node.interval") if explicit is None else explicit
        om_deadline_s = COMMIT_DEADLINE_S if explicit is None else int(explicit) / 1000
        try:
            failover = LeaderFailover.parse(str(conf.get(LeaderFailover.KEY)))
        except ValueError as e:
            raise ConfigError(str(e)) from None
        config = cls(
            om_nodes=om_nodes,
            buffer_size=int(conf.get("ozone.client.stream.buffer.size")),
            flush_size=int(conf.get("ozone.client.stream.buffer.flush.size")),
            max_size=int(conf.get("ozone.client.stream.buffer.max.size")),
            block_size=int(conf.get("ozone.scm.block.size")),
            max_retries=int(conf.get("ozone.client.max.retries")),
            retry_interval_s=int(conf.get("ozone.client.retry.interval")) / 1000,
            read_max_retries=int(conf.get("ozone.client.read.max.retries")),
            read_retry_interval_s=int(conf.get("ozone.client.read.retry.interval")) / 1000,
            checksum_type=checksum,
            bytes_per_checksum=int(conf.get("ozone.client.bytes.per.checksum")),
            verify_checksum=bool(conf.get("ozone.client.verify.checksum")),
            exclude_expiry_s=int(conf.get("ozone.client.exclude.nodes.expiry.time")) / 1000,
            watch_all=str(conf.get("hdds.ratis.client.request.watch.type")).upper() != "MAJORITY_COMMITTED",
            watch_timeout_s=int(conf.get("hdds.ratis.raft.client.rpc.watch.request.timeout")) / 1000,
            backoff_base_s=int(conf.get("hdds.ratis.client.exponential.backoff.base.sleep")) / 1000,
            backoff_max_s=int(conf.get("hdds.ratis.client.exponential.backoff.max.sleep")) / 1000,
            retry_deadline_s=int(deadline) / 1000,
            datastream_enabled=bool(conf.get("ozone.fs.datastream.enabled")),
            datastream_threshold=int(conf.get("ozone.fs.datastream.auto.threshold")),
            packet_size=int(conf.get("ozone.client.datastream.min.packet.size")),
            datastream_flush_size=int(conf.get("ozone.client.datastream.buffer.flush.size")),
            datastream_window=int(conf.get("ozone.client.datastream.window.size")),
            ec_stripe_retries=int(conf.get("ozone.client.max.ec.stripe.write.retries")),
            tls=tls or client_tls(conf),
            om_attempts=int(conf.get("ozone.client.failover.max.attempts")),
            om_wait_s=int(conf.get("ozone.client.wait.between.retries.millis")) / 1000,
            om_deadline_s=om_deadline_s,
            leader_failover=failover,
            rack=client_rack(conf, socket.gethostname()),
        )
        config.check()
        return config

    def check(self) -> None:
        """Refuses settings the write path cannot honour, naming the key."""
        for name, value in (
            ("ozone.client.stream.buffer.size", self.buffer_size),
            ("ozone.client.bytes.per.checksum", self.bytes_per_checksum),
            ("ozone.scm.block.size", self.block_size),
            ("ozone.client.datastream.min.packet.size", self.packet_size),
            ("ozone.client.failover.max.attempts", self.om_attempts),
        ):
            if value <= 0:
                raise ConfigError(f"{name}: must be positive, got {value}")
        if self.flush_size < self.buffer_size:
            raise ConfigError(
                f"ozone.client.stream.buffer.flush.size ({self.flush_size}) is below "
                f"ozone.client.stream.buffer.size ({self.buffer_size})"
            )
        if self.packet_size > MAX_CHUNK_BYTES:
            raise ConfigError(
                f"ozone.client.datastream.min.packet.size ({self.packet_size}) is above the "
                f"{MAX_CHUNK_BYTES}-byte chunk limit"
            )
        if self.max_size < self.flush_size:
            raise ConfigError(
                f"ozone.client.stream.buffer.max.size ({self.max_size}) is below "
                f"ozone.client.stream.buffer.flush.size ({self.flush_size})"
            )


def checksum_type(conf: OzoneConfiguration) -> ChecksumType:
    """ozone.client.checksum.type: one of Ozone's ChecksumType names, spelled as Ozone's OzoneClientConfig
    takes them (ChecksumType.valueOf); anything else is a ConfigError naming the key, the value and where
    it was set."""
    key = CHECKSUM_TYPE_KEY
    value = conf.get(key)
    if value not in ChecksumType.__members__:
        raise ConfigError(
            f"{key}={conf.get_raw(key)!r} ({conf.source(key)}): must be one of "
            f"{', '.join(ChecksumType.__members__)}"
        )
    return ChecksumType[value]


def client_rack(conf: OzoneConfiguration, host: str) -> str:
    """The client's rack by net.topology.node.switch.mapping.file ("" when no mapping names the host): where
    its datastream chains start (routing.py)."""
    path = conf.get("net.topology.node.switch.mapping.file")
    if not path:
        return ""
    return load_rack_mapping(Path(str(path))).get(host, "")


def _om_nodes(conf: OzoneConfiguration, om_address: str | None) -> tuple[OmEndpoint, ...]:
    """The OMs a client calls: an HA service's nodes (named by `om_address`, or the configured service),
    else one OM at `om_address` or ozone.om.address."""
    oms = OmAddresses.from_conf(conf, om_address)
    if oms.service_id is None:
        return (OmEndpoint("", oms.client_address()),)
    return tuple(OmEndpoint(n.node_id, n.rpc_address) for n in oms.nodes)
