"""Every configuration key pyozone reads, with Ozone's name, type and default (ozone-default.xml)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace
from enum import Enum


class Kind(Enum):
    DURATION = "duration"  # parsed to int milliseconds
    SIZE = "size"  # parsed to int bytes
    INT = "int"
    FLOAT = "float"
    FRACTION = "fraction"  # float in [0, 1]
    BOOL = "bool"
    STRING = "string"


@dataclass(frozen=True, slots=True)
class ConfigKey:
    name: str
    kind: Kind
    default: str | None
    description: str
    unit: str = "ms"  # unit of a bare number, for DURATION keys


def _k(name: str, kind: Kind, default: str | None, description: str, unit: str = "ms") -> ConfigKey:
    return ConfigKey(name, kind, default, description, unit)


D, S, N, F, P, B, T = Kind.DURATION, Kind.SIZE, Kind.INT, Kind.FLOAT, Kind.FRACTION, Kind.BOOL, Kind.STRING
RM = "hdds.scm.replication."
CB = "hdds.container.balancer."

KEYS: tuple[ConfigKey, ...] = (
    # --- node / heartbeat (2.1)
    _k("hdds.heartbeat.interval", D, "30s", "Datanode to SCM heartbeat period"),
    _k("hdds.heartbeat.initial-interval", D, "2s", "Datanode heartbeat period until registered"),
    _k("ozone.scm.heartbeat.thread.interval", D, "3s", "SCM node health check period"),
    _k("ozone.scm.stale.node.interval", D, "5m", "No heartbeat for this long: node is STALE"),
    _k("ozone.scm.dead.node.interval", D, "10m", "No heartbeat for this long: node is DEAD"),
    _k("ozone.scm.heartbeat.rpc-timeout", D, "5s", "Heartbeat RPC timeout"),
    _k("hdds.node.report.interval", D, "60000ms", "Node report period"),
    _k("hdds.container.report.interval", D, "60m", "Full container report period"),
    _k("hdds.pipeline.report.interval", D, "60000ms", "Pipeline report period"),
    _k("hdds.command.status.report.interval", D, "30s", "Command status report period"),
    _k("ozone.scm.datanode.admin.monitor.interval", D, "30s", "Decommission/maintenance monitor period"),
    _k("ozone.scm.datanode.admin.monitor.logging.limit", N, "1000", "Containers logged per monitor run"),
    _k("hdds.datanode.replication.outofservice.limit.factor", F, "2.0", "Out-of-service scale, [1, 10]"),
    _k("hdds.datanode.block.delete.queue.limit", N, "5", "Delete-block commands queued per datanode"),
    _k("net.topology.node.switch.mapping.file", T, None, "Lines 'HOST /rack'; absent: /default-rack"),
    # --- pipelines (2.2)
    _k("ozone.scm.datanode.pipeline.limit", N, "2", "Pipelines per datanode; 0: from metadata disks"),
    _k("ozone.scm.pipeline.per.metadata.disk", N, "2", "Pipelines per metadata disk if the limit is 0"),
    _k("ozone.scm.ratis.pipeline.limit", N, "0", "Cluster-wide cap on Ratis pipelines; 0 means no cap"),
    _k("ozone.scm.pipeline.owner.container.count", N, "3", "Open containers per pipeline owner"),
    _k("ozone.scm.datanode.disallow.same.peers", B, "false", "Forbid two pipelines with the same peers"),
    _k("ozone.scm.datanode.ratis.volume.free-space.min", S, "1GB", "Metadata volume free space needed"),
    _k("ozone.scm.pipeline.allocated.timeout", D, "5m", "ALLOCATED pipelines older than this are scrubbed"),
    _k("ozone.scm.pipeline.destroy.timeout", D, "66s", "CLOSED pipelines are removed after this"),
    _k("ozone.scm.pipeline.creation.interval", D, "120s", "Background pipeline creator period"),
    _k("ozone.scm.pipeline.scrub.interval", D, "5m", "Pipeline scrubber period"),
    _k("ozone.scm.pipeline.creation.auto.factor.one", B, "true", "Background creator also makes RATIS/ONE"),
    _k("ozone.scm.pipeline.creation.ratis.three", B, "true", "Create RATIS/THREE when default is EC"),
    _k("ozone.scm.pipeline.leader-choose.policy", T, "MinLeaderCountChoosePolicy", "Leader choose policy"),
    _k("hdds.scm.pipeline.choose.policy.impl", T, "RandomPipelineChoosePolicy", "Pipeline choose policy"),
    _k("ozone.scm.ec.pipeline.minimum", N, "5", "Minimum open EC pipelines"),
    _k("ozone.scm.ec.pipeline.per.volume.factor", F, "1", "EC pipelines per healthy volume"),
    _k("ozone.scm.container.size", S, "5GB", "Container size"),
    _k("ozone.scm.block.size", S, "256MB", "Block size"),
    _k("ozone.scm.close.container.wait.duration", D, "150s", "Lease before the close command is sent"),
    _k("hdds.container.ratis.datastream.enabled", B, "true", "Datanodes serve the datastream port (V2)"),
    _k("ozone.replication", T, "3", "Default replication (1, 3 or an EC spec such as rs-3-2-1024k)"),
    _k("ozone.replication.type", T, "RATIS", "Default replication type (RATIS or EC)"),
    _k("ozone.scm.sequence.id.batch.size", N, "1000", "Ids reserved per persisted sequence-id batch"),
    _k("hdds.scm.unknown-container.action", T, "WARN", "WARN or DELETE for containers SCM does not know"),
    # --- safe mode (2.3)
    _k("hdds.scm.safemode.enabled", B, "true", "Enter safe mode on start"),
    _k("hdds.scm.safemode.min.datanode", N, "3", "Datanodes that must register (the pre-check)"),
    _k("hdds.scm.safemode.threshold.pct", P, "0.99", "Fraction of containers with a reported replica"),
    _k("hdds.scm.safemode.healthy.pipeline.pct", P, "0.10", "Fraction of RATIS/THREE pipelines healthy"),
    _k("hdds.scm.safemode.atleast.one.node.reported.pipeline.pct", P, "0.90", "Pipelines with a member seen"),
    _k("hdds.scm.safemode.pipeline.creation", B, "true", "Create pipelines while in safe mode"),
    _k("hdds.scm.safemode.rule.refresh.interval", D, "5s", "Safe-mode rule refresh period; 0 disables"),
    _k("hdds.scm.safemode.log.interval", D, "1m", "Safe-mode status log period"),
    _k("hdds.scm.wait.time.after.safemode.exit", D, "5m", "Services wait this long after safe-mode exit"),
    # --- replication manager (2.4)
    _k(RM + "thread.interval", D, "300s", "Replication Manager full scan period"),
    _k(RM + "under.replicated.interval", D, "30s", "Under-replicated queue processor period"),
    _k(RM + "over.replicated.interval", D, "30s", "Over-replicated queue processor period"),
    _k(RM + "event.timeout", D, "12m", "SCM-side deadline of Replication Manager commands"),
    _k(RM + "event.timeout.datanode.offset", D, "6m", "Datanode deadline = SCM deadline - this offset"),
    _k(RM + "maintenance.replica.minimum", N, "2", "Ratis: healthy in-service replicas kept in maintenance"),
    _k(RM + "maintenance.remaining.redundancy", N, "1", "EC: redundancy kept online in maintenance"),
    _k(RM + "datanode.replication.limit", N, "20", "Weighted replicate+reconstruct commands per datanode"),
    _k(RM + "datanode.reconstruction.weight", N, "3", "Weight of one reconstruction command"),
    _k(RM + "datanode.delete.container.limit", N, "40", "deleteContainer commands queued per datanode"),
    _k(RM + "inflight.limit.factor", P, "0.75", "Cluster cap on pending adds (0 disables)"),
    _k(RM + "container.sample.limit", N, "100", "Container ids sampled per report state"),
    _k(RM + "quasi.closed.stuck.best.origin.copies", N, "3", "Copies kept of the best origin"),
    _k(RM + "quasi.closed.stuck.other.origin.copies", N, "2", "Copies kept of other origins"),
    # pyozone's own (Ozone's "Replication Manager" doc, "Limiting Ops per node"): units per node per
    # under-replication iteration
    _k(RM + "datanode.ops.limit.enabled", B, "false", "Count replication work per source and target node"),
    _k(RM + "datanode.ops.limit", N, "10", "Units a node may get per iteration when the above is on"),
    _k("ozone.scm.expired.container.replica.op.scrub.interval", D, "5m", "Pending replica op scrub period"),
    # --- container balancer (ContainerBalancerConfiguration)
    _k(CB + "utilization.threshold", F, "10", "Balanced: every datanode within this % of the average"),
    _k(CB + "datanodes.involved.max.percentage.per.iteration", N, "20", "% of datanodes one iteration uses"),
    _k(CB + "size.moved.max.per.iteration", S, "500GB", "Bytes one iteration moves at most"),
    _k(CB + "size.entering.target.max", S, "26GB", "Bytes entering one target per iteration at most"),
    _k(CB + "size.leaving.source.max", S, "26GB", "Bytes leaving one source per iteration at most"),
    _k(CB + "iterations", N, "10", "Iterations a run makes (-1: until balanced or stopped)"),
    _k(CB + "exclude.containers", T, "", "Container ids never moved, e.g. '1,4,5'"),
    _k(CB + "move.timeout", D, "65m", "Time a container move may take"),
    _k(CB + "move.replication.timeout", D, "50m", "Of the move timeout, the time its replication may take"),
    _k(CB + "balancing.iteration.interval", D, "70m", "Wait between two iterations"),
    _k(CB + "include.datanodes", T, "", "Only these datanodes (hostnames or IPs, comma separated)"),
    _k(CB + "exclude.datanodes", T, "", "Datanodes never balanced (hostnames or IPs, comma separated)"),
    _k(CB + "move.networkTopology.enable", B, "false", "Prefer targets near the source (not supported)"),
    _k(CB + "trigger.du.before.move.enable", B, "false", "Run du on datanodes first (not supported)"),
    # --- block deletion (2.5)
    _k("hdds.scm.block.deletion.per-interval.max", N, "500000", "Blocks sent for deletion per run"),
    _k("hdds.scm.block.deleting.service.interval", D, "60s", "Block deleting service period"),
    _k("hdds.scm.block.deletion.txn.dn.commit.map.limit", N, "5000000", "Skip a run above this many entries"),
    _k("ozone.scm.block.deletion.per.dn.distribution.factor", N, "8", "Per-datanode share of a deletion run"),
    _k("ozone.block.deleting.service.timeout", D, "300000ms", "Block deleting service timeout"),
    _k("ozone.scm.ha.ratis.log.appender.queue.byte-limit", S, "32MB", "Delete-transaction batch byte cap"),
    # --- client (2.6)
    _k("ozone.client.stream.buffer.size", S, "4MB", "Client write buffer (one writeChunk)"),
    _k("ozone.client.stream.buffer.flush.size", S, "16MB", "Bytes between putBlock flushes"),
    _k("ozone.client.stream.buffer.max.size", S, "32MB", "Client buffer pool capacity"),
    _k("ozone.client.stream.buffer.increment", S, "0B", "Buffer increment"),
    _k("ozone.client.stream.buffer.flush.delay", B, "true", "Delay flush until buffer is full"),
    _k("ozone.client.max.retries", N, "5", "Write retries"),
    _k("ozone.client.retry.interval", D, "0", "Write retry interval"),
    _k("hdds.ratis.client.exponential.backoff.base.sleep", D, "4s", "Write retries from the 2nd back off"),
    _k("hdds.ratis.client.exponential.backoff.max.sleep", D, "40s", "Cap of the write retry backoff"),
    _k(
        "ozone.client.retry.deadline",
        D,
        None,
        "pyozone: a write's failed blocks, and its commit, retry this long",
    ),
    _k("ozone.client.failover.max.attempts", N, "500", "Attempts of a key's commit while OM is unreachable"),
    _k("ozone.client.wait.between.retries.millis", D, "2000", "Wait between attempts to reach OM"),
    _k("ozone.client.read.max.retries", N, "3", "Read retries"),
    _k("ozone.client.read.retry.interval", D, "1", "Read retry interval", unit="s"),
    _k("ozone.client.checksum.type", T, "CRC32", "NONE, CRC32, CRC32C, SHA256 or MD5"),
    _k("ozone.client.bytes.per.checksum", S, "16KB", "Bytes covered by one checksum"),
    _k("ozone.client.verify.checksum", B, "true", "Verify checksums on read"),
    _k("ozone.client.exclude.nodes.expiry.time", D, "600000", "Excluded datanodes expire after this"),
    _k("ozone.client.datastream.buffer.flush.size", S, "16MB", "Streaming flush size"),
    _k("ozone.client.datastream.min.packet.size", S, "1MB", "Streaming minimum packet"),
    _k("ozone.client.datastream.window.size", S, "64MB", "Streaming window"),
    _k("ozone.client.datastream.pipeline.mode", B, "true", "Streaming chain through the pipeline"),
    _k("ozone.fs.datastream.enabled", B, "true", "Client writes large keys by write pipeline V2"),
    _k("ozone.fs.datastream.auto.threshold", S, "4MB", "Streaming above this size"),
    _k("hdds.ratis.client.request.watch.type", T, "ALL_COMMITTED", "Watch type before key commit"),
    _k(
        "hdds.ratis.raft.client.rpc.watch.request.timeout",
        D,
        "180s",
        "A client's watch for commit; longer than hdds.ratis.raft.server.watch.timeout",
    ),
    _k(
        "hdds.ratis.client.multilinear.random.retry.policy",
        T,
        "5s, 5, 10s, 5, 15s, 5, 20s, 5, 25s, 5, 60s, 10",
        "A block's failovers to the leader a NOT_LEADER names: (sleep, count) pairs",
    ),
    _k("ozone.client.max.ec.stripe.write.retries", N, "10", "EC stripe write retries"),
    # --- daemons and storage
    _k("ozone.metadata.dirs", T, None, "Directory for metadata (RocksDB, VERSION files)"),
    _k("ozone.scm.db.dirs", T, None, "Directory of scm.db; defaults to ozone.metadata.dirs"),
    _k("hdds.datanode.dir", T, None, "Comma-separated datanode data volumes"),
    _k("hdds.container.close.threshold", P, "0.9", "Datanode asks SCM to close a container this full"),
    _k("hdds.datanode.replication.streams.limit", N, "10", "Datanode replication worker pool size"),
    _k("ozone.scm.names", T, None, "SCM host names (datanodes and clients find SCM through it)"),
    _k("ozone.scm.client.address", T, None, "SCM admin/client RPC bind address (host[:port])"),
    _k("ozone.scm.client.port", N, "9860", "SCM admin/client RPC port"),
    _k("ozone.scm.datanode.address", T, None, "SCM datanode-protocol RPC bind address (host[:port])"),
    _k("ozone.scm.datanode.port", N, "9861", "SCM datanode-protocol RPC port"),
    _k("ozone.scm.block.client.address", T, None, "SCM block-protocol RPC bind address (host[:port])"),
    _k("ozone.scm.block.client.port", N, "9863", "SCM block-protocol RPC port (used by OM)"),
    _k("ozone.scm.http-address", T, "0.0.0.0:9876", "SCM web UI and readiness address"),
    _k("ozone.scm.client.bind.host", T, "0.0.0.0", "Host SCM's client RPC listens on (see net.bind_address)"),
    _k("ozone.scm.datanode.bind.host", T, "0.0.0.0", "Host SCM's datanode RPC listens on"),
    _k("ozone.scm.block.client.bind.host", T, "0.0.0.0", "Host SCM's block RPC listens on"),
    _k("ozone.scm.http-bind-host", T, "0.0.0.0", "Host SCM's web server listens on"),
    _k("ozone.scm.datanode.id.dir", T, None, "Directory of datanode.id (default: ozone.metadata.dirs)"),
    _k("dfs.datanode.hostname", T, None, "Host name a datanode advertises (default: the machine's)"),
    _k("hdds.container.ipc.port", N, "9859", "Datanode container (data) protocol port"),
    _k("hdds.datanode.replication.port", N, "9886", "Datanode container replication port"),
    _k("hdds.datanode.http-address", T, "0.0.0.0:9882", "Datanode web UI and readiness address"),
    _k("hdds.datanode.http-bind-host", T, "0.0.0.0", "Host the datanode's web server listens on"),
    _k("hdds.datanode.replication.queue.limit", N, "4096", "Replication commands queued on a datanode"),
    _k("hdds.datanode.dir.du.reserved", S, "0B", "Space for other uses than Ozone on each data volume"),
    _k("hdds.datanode.volume.min.free.space", S, "20GB", "Free-space floor of a data volume (bytes)"),
    _k("hdds.datanode.volume.min.free.space.percent", P, "0.02", "Floor as a fraction of the capacity"),
    _k("hdds.container.scrub.enabled", B, "true", "Run the background container scanner"),
    _k("hdds.container.scrub.data.scan.interval", D, "7d", "Interval between data scans of a container"),
    _k("hdds.container.scrub.volume.bytes.per.second", S, "5MB", "Scanner bandwidth per volume"),
    _k("hdds.datanode.recovering.container.scrubbing.service.interval", D, "1m", "Stale RECOVERING scan"),
    _k("ozone.recovering.container.timeout", D, "20m", "A RECOVERING replica older than this is deleted"),
    # --- datanode pipeline log (Ratis in Ozone)
    _k("hdds.container.ratis.ipc.port", N, "9858", "Datanode pipeline-log (RATIS) port"),
    _k("hdds.container.ratis.datastream.port", N, "9855", "Datanode datastream port (V2 writes, reads)"),
    _k("hdds.container.ratis.datanode.storage.dir", T, None, "Pipeline logs (default: id dir/ratis)"),
    _k("hdds.ratis.raft.server.watch.timeout", D, "30s", "A watch for commit fails after this"),
    _k("hdds.ratis.raft.server.rpc.request.timeout", D, "60s", "A pipeline client request fails after this"),
    _k("hdds.ratis.leader.election.minimum.timeout.duration", D, "5s", "Pipeline election timeout"),
    _k("hdds.ratis.raft.server.rpc.slowness.timeout", D, "300s", "A silent follower: pipeline closes"),
    _k("hdds.ratis.raft.server.Notification.no-leader.timeout", D, "300s", "No leader: pipeline closes"),
    _k("hdds.ratis.raft.server.write.element-limit", N, "1024", "Writes a pipeline leader holds"),
    _k("dfs.container.ratis.leader.pending.bytes.limit", S, "1GB", "Chunk data a pipeline leader caches"),
    _k("dfs.container.ratis.log.appender.queue.byte-limit", S, "32MB", "Bytes of one append to a follower"),
    _k("dfs.ratis.snapshot.threshold", N, "100000", "Applied entries between pipeline snapshots"),
    _k("dfs.container.ratis.log.purge.gap", N, "1000000", "Entries a pipeline log keeps past a snapshot"),
    _k("dfs.container.ratis.statemachine.max.pending.apply-transactions", N, "100000", "Applies in flight"),
    # --- Ozone Manager
    _k("ozone.om.address", T, "0.0.0.0:9862", "OM client RPC address (host[:port]); .SVC.NODE per HA OM"),
    _k("ozone.om.http-address", T, "0.0.0.0:9874", "OM web UI and readiness; .SVC.NODE per HA OM"),
    _k("ozone.om.http-bind-host", T, "0.0.0.0", "Host OM's web server listens on"),
    _k("ozone.om.db.dirs", T, None, "Directory of om.db; defaults to ozone.metadata.dirs"),
    _k("ozone.om.sse.master.keystore", T, None, "SSE-S3 master keystore; default: in OM's metadata dir"),
    _k("ozone.server.default.replication", T, "3", "Replication factor of new buckets' keys"),
    _k("ozone.server.default.replication.type", T, "RATIS", "Replication type of new buckets' keys"),
    _k(
        "ozone.replication.allowed-configs",
        T,
        r"^((STANDALONE|RATIS)/(ONE|THREE))|(EC/(3-2|6-3|10-4|2-1)-(512|1024|2048|4096)k)$",
        "Regular expression over the replication configs OM takes from clients (empty: any)",
    ),
    _k("ozone.om.keyname.character.check.enabled", B, "false", "Refuse key names with unsafe characters"),
    _k("ozone.block.deleting.service.interval", D, "60s", "OM key deleting service period"),
    _k("ozone.key.deleting.limit.per.task", N, "20000", "Deleted keys handed to SCM per run"),
    _k("ozone.om.open.key.cleanup.service.interval", D, "24h", "Open-key cleanup period"),
    _k("ozone.om.open.key.expire.threshold", D, "7d", "An open key older than this is abandoned"),
    _k("ozone.om.open.key.cleanup.limit.per.task", N, "1000", "Expired open keys cleaned per run"),
    _k("ozone.om.s3.lifecycle.service.interval", D, "1h", "S3 lifecycle service period (OM leader)"),
    _k(
        "ozone.om.s3.lifecycle.limit.per.task",
        N,
        "1000",
        "S3 lifecycle actions per run (keys, versions, markers, uploads)",
    ),
    _k(
        "ozone.om.s3.lifecycle.time.override.enabled",
        B,
        "false",
        "runS3Lifecycle may judge a run at a given time (tests and rehearsals only)",
    ),
    _k("ozone.om.container.location.cache.size", N, "100000", "Container locations OM caches"),
    _k(
        "ozone.om.server.list.max.size",
        N,
        "1000",
        "Most entries one OM list call answers (asked more: capped)",
    ),
    _k("ozone.om.container.location.cache.ttl", D, "360m", "How long a cached container location lives"),
    _k(
        "ozone.om.commit.block.length.check.timeout",
        D,
        "3s",
        "pyozone: how long a commit under a space quota waits for its blocks' stored lengths (then charges"
        " their allocation)",
    ),
    _k(
        "ozone.om.unflushed.transaction.max.count",
        N,
        "10000",
        "Transactions OM's double buffer may hold before requests wait for a flush",
    ),
    # --- OM high availability (OMConfigKeys; Ozone's ConfUtils suffixes a key with .SERVICE[.NODE])
    _k("ozone.om.service.ids", T, None, "OM services (comma-separated); each an HA group of OMs"),
    _k("ozone.om.internal.service.id", T, None, "The OM service this OM or client belongs to"),
    _k("ozone.om.nodes", T, None, "Written ozone.om.nodes.SERVICE: the node ids of a service's OMs"),
    _k(
        "ozone.om.decommissioned.nodes",
        T,
        None,
        "Written ozone.om.decommissioned.nodes.SERVICE: OMs removed from the service (admin om decommission)",
    ),
    _k("ozone.om.node.id", T, None, "This OM's node id (default: the node with a local address)"),
    _k("ozone.om.ratis.port", N, "9872", "OM's Raft port; .SERVICE.NODE per OM"),
    _k("ozone.om.ratis.storage.dir", T, None, "OM's Raft log directory (default: ozone.metadata.dirs/ratis)"),
    _k("ozone.om.ratis.minimum.timeout", D, "5s", "OM's Raft election timeout, minimum (max: +200 ms)"),
    _k("ozone.om.ratis.server.request.timeout", D, "3s", "A write waits this long for its Raft commit"),
    _k("ozone.om.ratis.segment.size", S, "4MB", "OM's Raft log segment size"),
    _k(
        "ozone.om.ratis.log.purge.gap",
        N,
        "1000000",
        "A snapshot purges OM's Raft log once this many entries gathered since the last purge",
    ),
    _k(
        "ozone.om.ratis.snapshot.auto.trigger.threshold",
        N,
        "400000",
        "Applied transactions between two snapshots of om.db",
    ),
    _k("ozone.om.ratis.server.retry.cache.timeout", D, "600000", "How long OM remembers a call's answer"),
    _k("ozone.om.ratis.server.leaderelection.pre-vote", B, "true", "OMs ask before they stand for election"),
    # --- SCM high availability (ScmConfigKeys; Ozone's ConfUtils suffixes a key with .SERVICE[.NODE])
    _k("ozone.scm.service.ids", T, None, "SCM services (comma-separated); each an HA group of SCMs"),
    _k("ozone.scm.default.service.id", T, None, "The SCM service of this daemon when several are named"),
    _k("ozone.scm.nodes", T, None, "Written ozone.scm.nodes.SERVICE: the node ids of a service's SCMs"),
    _k("ozone.scm.node.id", T, None, "This SCM's node id (default: the node with a local address)"),
    _k("ozone.scm.primordial.node.id", T, None, "The SCM (node id or host) that scm --init initializes"),
    _k("ozone.scm.skip.bootstrap.validation", B, "false", "scm --bootstrap skips the cluster id check"),
    _k("ozone.scm.address", T, None, "Written ozone.scm.address.SERVICE.NODE: an SCM's host"),
    _k("ozone.scm.ratis.port", N, "9894", "SCM's Raft port; .SERVICE.NODE per SCM"),
    _k("ozone.scm.grpc.port", N, "9895", "SCM's InterSCMGrpc port (configured, unused); .SERVICE.NODE"),
    _k("ozone.scm.ha.ratis.storage.dir", T, None, "SCM's Raft log directory (default: ozone.metadata.dirs)"),
    _k("ozone.scm.ha.ratis.segment.size", S, "64MB", "SCM's Raft log segment size"),
    _k("ozone.scm.ha.ratis.leader.election.timeout", D, "5s", "SCM's Raft election timeout (max: +200 ms)"),
    _k("ozone.scm.ha.ratis.server.leaderelection.pre-vote", B, "true", "SCMs ask before they stand"),
    _k("ozone.scm.ha.ratis.request.timeout", D, "30s", "A replicated SCM write waits this long to apply"),
    _k("ozone.scm.ha.ratis.server.retry.cache.timeout", D, "60s", "SCM's Raft retry cache expiry"),
    _k("ozone.scm.ha.ratis.snapshot.threshold", N, "1000", "Applied entries between two snapshots of scm.db"),
    _k("ozone.scm.ha.ratis.log.purge.enabled", B, "false", "A snapshot purges SCM's Raft log"),
    _k("ozone.scm.ha.ratis.log.purge.gap", N, "1000000", "Entries kept in SCM's Raft log before a purge"),
    _k("hdds.scmclient.failover.max.retry", N, "15", "Failovers of one SCM call between a service's SCMs"),
    _k("hdds.scmclient.failover.retry.interval", D, "2s", "Wait once every SCM of the service was asked"),
    _k("hdds.scmclient.max.retry.timeout", D, "10m", "How long one SCM call fails over at most"),
    _k("hdds.scmclient.rpc.timeout", D, "15m", "Longest wait for one SCM answer (caps a client's timeout)"),
    # --- S3 gateway
    _k("ozone.s3g.http-address", T, "0.0.0.0:9878", "S3 gateway address (host[:port])"),
    _k("ozone.s3g.http-bind-host", T, "0.0.0.0", "Host the S3 gateway listens on"),
    _k("ozone.s3g.webadmin.http-address", T, "0.0.0.0:19878", "S3 gateway readiness and admin address"),
    _k("ozone.s3g.volume.name", T, "s3v", "The volume that holds the S3 buckets"),
    _k("ozone.s3g.domain.name", T, None, "Domain(s) for virtual-host-style requests, comma-separated"),
    _k("ozone.s3g.client.buffer.size", S, "4MB", "Bytes the gateway reads from a request body at once"),
    _k("ozone.s3g.sse.customer.require.https", B, "true", "SSE-C (a key in a header) over HTTPS only"),
    _k("ozone.s3g.signing.key.cache.ttl", D, "10s", "How long the gateway keeps a signing key from OM"),
    _k("ozone.s3g.http.head.timeout", D, "10s", "A request head must arrive whole within this"),
    _k("ozone.s3g.http.body.idle.timeout", D, "20s", "A body stalled this long is RequestTimeout"),
    _k("ozone.s3g.commit.deadline", D, "30s", "pyozone: a PUT's commit waits this long for OM, then 503"),
    # --- security: the CA, certificates, TLS, block tokens, ACLs (Ozone's names and defaults)
    _k("ozone.security.enabled", B, "false", "Certificates, block tokens and identities on every daemon"),
    _k("hdds.grpc.tls.enabled", B, "false", "Mutual TLS on every RPC, datastream and HTTP port"),
    _k("ozone.scm.security.service.address", T, None, "SCM security protocol bind address (host[:port])"),
    _k(
        "ozone.scm.security.service.port",
        N,
        "9961",
        "SCM security protocol (CSRs, certificates, keys)",
    ),
    _k("ozone.scm.security.service.bind.host", T, "0.0.0.0", "Host SCM's security protocol listens on"),
    _k("hdds.key.algo", T, "RSA", "Key pair algorithm of every certificate (RSA)"),
    _k("hdds.key.len", N, "2048", "Key length in bits"),
    _k("hdds.key.dir.name", T, "keys", "Directory (under a component's metadata dir) of its key pair"),
    _k("hdds.priv.key.file.name", T, "private.pem", "Private key file name (mode 0600)"),
    _k("hdds.public.key.file.name", T, "public.pem", "Public key file name"),
    _k("hdds.x509.dir.name", T, "certs", "Directory (under a component's metadata dir) of its certificates"),
    _k("hdds.x509.file.name", T, "certificate.crt", "A component's own certificate file name"),
    _k("hdds.x509.signature.algorithm", T, "SHA256withRSA", "Signature algorithm of issued certificates"),
    _k("hdds.x509.default.duration", D, "P365D", "Lifetime of an issued certificate (ISO-8601)"),
    _k("hdds.x509.max.duration", D, "P1865D", "Lifetime of the root CA certificate (ISO-8601)"),
    _k("hdds.x509.renew.grace.duration", D, "P28D", "A certificate this close to expiry is renewed"),
    _k("hdds.x509.ca.rotation.check.interval", D, "P1D", "How often a daemon checks its certificate"),
    _k("hdds.x509.expired.certificate.check.interval", D, "P1D", "How often SCM drops expired certificates"),
    _k("hdds.x509.join.token.expiry", D, "P1D", "pyozone: lifetime of a one-use JOIN credential"),
    _k("hdds.x509.crl.refresh.interval", D, "PT1M", "pyozone: how often daemons fetch the CRL"),
    _k(
        "hdds.x509.rootca.certificate.file",
        T,
        None,
        "External root CA certificate (default: SCM's)",
    ),
    _k("hdds.x509.rootca.private.key.file", T, None, "The external root CA's private key"),
    _k("hdds.secret.key.rotate.duration", D, "1d", "SCM makes a new block-token secret key this often"),
    _k("hdds.secret.key.expiry.duration", D, "9d", "A token secret key is dropped this long after made"),
    _k("hdds.secret.key.rotate.check.duration", D, "10m", "How often SCM checks whether to rotate the key"),
    _k("hdds.secret.key.algorithm", T, "HmacSHA256", "Block-token signature algorithm"),
    _k(
        "hdds.secret.key.file.name",
        T,
        "secret_keys.json",
        "SCM's secret keys (mode 0600), metadata dir",
    ),
    _k("hdds.block.token.enabled", B, "false", "Datanodes require a block token on every block operation"),
    _k("hdds.container.token.enabled", B, "false", "Datanodes require a container token on container ops"),
    _k("hdds.block.token.expiry.time", D, "1d", "Lifetime of a block token OM issues"),
    _k("ozone.security.join.credentials.file", T, None, "pyozone: PEM key+cert+CA a daemon's first CSR uses"),
    _k("ozone.client.tls.cert.file", T, None, "pyozone: the client's certificate (env OZONE_CLIENT_CERT)"),
    _k("ozone.client.tls.key.file", T, None, "pyozone: the client's private key (env OZONE_CLIENT_KEY)"),
    _k("ozone.client.tls.ca.file", T, None, "pyozone: the CA certificate clients trust (env OZONE_CA_CERT)"),
    _k("ozone.acl.enabled", B, "false", "OM checks ACLs on every volume, bucket and key operation"),
    _k("ozone.acl.authorizer.class", T, "org.apache.hadoop.ozone.security.acl.OzoneNativeAuthorizer", "ACLs"),
    _k("ozone.administrators", T, None, "Users (comma-separated) allowed admin operations; * for all"),
    _k("ozone.administrators.groups", T, None, "Groups (comma-separated) allowed admin operations"),
    _k("ozone.readonly.administrators", T, None, "Users (comma-separated) allowed admin reads; * for all"),
    _k("ozone.readonly.administrators.groups", T, None, "Groups (comma-separated) allowed admin reads"),
    _k("ozone.om.user.rights", T, "ALL", "Rights a new volume/bucket/key's owner gets"),
    _k("ozone.om.group.rights", T, "READ,LIST", "Rights the owner's groups get on a new object"),
    _k("ozone.om.volume.listall.allowed", B, "false", "With ACLs, any user may list all volumes"),
    _k("hadoop.user.group.static.mapping.overrides", T, "dr.who=;", "Groups per user: u1=g1,g2;u2=g3"),
    _k("ozone.metadata.dirs.permissions", T, "750", "Mode of a daemon's metadata and db dirs (octal/rwx)"),
    _k("hdds.datanode.data.dir.permissions", T, "700", "Mode of a data volume's hdds dir (octal/rwx)"),
)

KEYS_BY_NAME: dict[str, ConfigKey] = {k.name: k for k in KEYS}

SUFFIXES: dict[str, tuple[int, ...]] = {
    "ozone.om.nodes": (1,),
    "ozone.om.decommissioned.nodes": (1,),
    "ozone.om.address": (2,),
    "ozone.om.http-address": (2,),
    "ozone.om.ratis.port": (2,),
    "ozone.scm.nodes": (1,),
    "ozone.scm.address": (2,),
    "ozone.scm.client.port": (2,),
    "ozone.scm.block.client.port": (2,),
    "ozone.scm.datanode.port": (2,),
    "ozone.scm.security.service.port": (2,),
    "ozone.scm.ratis.port": (2,),
    "ozone.scm.grpc.port": (2,),
    "ozone.scm.http-address": (2,),
}
"""Keys an HA service writes per service or per node, with how many suffixes each takes: Ozone's
ConfUtils.addKeySuffixes (`ozone.om.nodes.omservice`, `ozone.om.address.omservice.om1`, `ozone.scm.client.port
.scmservice.scm1`)."""


def lookup(name: str) -> ConfigKey | None:
    """The key `name` is: a known key, or a known key with its service (and node) suffixes, typed as it and
    without its default (an unset suffixed key falls back to what its reader decides)."""
    key = KEYS_BY_NAME.get(name)
    if key is not None:
        return key
    for base, counts in SUFFIXES.items():
        if name.startswith(base + "."):
            parts = name[len(base) + 1 :].split(".")
            if len(parts) in counts and all(parts):
                return replace(KEYS_BY_NAME[base], name=name, default=None)
    return None


def suffixed(base: str, *suffixes: str) -> str:
    """`base` with its suffixes, as Ozone's ConfUtils.addKeySuffixes writes them."""
    if len(suffixes) not in SUFFIXES.get(base, ()):
        raise ValueError(f"{base} takes no {len(suffixes)} suffixes")
    return ".".join((base, *suffixes))


def unknown_key_message(name: str) -> str:
    """Why `name` is rejected, with the closest known key: most unknown names are typos."""
    close = difflib.get_close_matches(name, KEYS_BY_NAME, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"{name}: not a configuration key pyozone knows{hint}"
