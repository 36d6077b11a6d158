"""Rows of a synthetic snapshot as pure functions of (seed, row id), vectorised with numpy and pyarrow.

Each `*_rows(layout, start, end)` returns the rows for ids [start, end) as a RecordBatch in the exact
schema.TABLES schema. Values come from splitmix64 hashes of (seed, stream, id), not from a random
generator's sequence, so any id range can be produced on any executor independently and the snapshot is
the same however Spark splits the work. The `Layout` (datanodes, racks, pipelines, failed nodes) is small
and built once on the driver; everything proportional to containers or keys is computed here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pyozone.analytics.schema import BLOCK, TABLES

BASE_MS = 1_700_000_000_000  # a fixed "now", so a seed always gives the same rows
GIB = 1 << 30
TIB = 1 << 40
BLOCK_SIZE = 256 << 20  # ozone.scm.block.size
CONTAINER_SIZE = 5 * GIB  # ozone.scm.container.size
MAX_BLOCKS = 8  # local ids are key * MAX_BLOCKS + block + 1, unique across the snapshot
EC_CONFIG = "EC/RS-3-2-1024k"
EC_DATA, EC_WIDTH = 3, 5
MASK64 = (1 << 64) - 1

# Node roles; the failure spec turns healthy in-service nodes into the others.
OK, DEAD, DECOMMISSIONING, MAINTENANCE = 0, 1, 2, 3
_HEALTH = pa.array(["HEALTHY", "DEAD", "HEALTHY", "HEALTHY"])
_OP_STATE = pa.array(["IN_SERVICE", "IN_SERVICE", "DECOMMISSIONING", "IN_MAINTENANCE"])

# Container kinds and their names.
CLOSED, OPEN, CLOSING, EC = 0, 1, 2, 3
_CONTAINER_STATE = pa.array(["CLOSED", "OPEN", "CLOSING", "CLOSED"])
_CONTAINER_CONFIG = pa.array(["RATIS/THREE", "RATIS/THREE", "RATIS/THREE", EC_CONFIG])
_REPLICA_STATE = pa.array(["CLOSED", "OPEN", "OPEN", "CLOSED", "UNHEALTHY"])
_UNHEALTHY_REPLICA = 4

# Hash streams: one per independent decision.
(
    S_KIND,
    S_OPEN,
    S_MISSING,
    S_PIPELINE,
    S_SIZE,
    S_SEQ,
    S_AGE,
    S_NODE1,
    S_NODE2,
    S_NODE3,
    S_UNHEALTHY,
    S_VOLUME,
    S_BUCKET,
    S_DIR,
    S_KEYSIZE,
    S_BLOCK,
    S_DISKS,
    S_USED,
) = range(18)


@dataclass(frozen=True)
class Layout:
    """What every executor needs besides the row ids; O(datanodes + racks) in size."""

    seed: int
    containers: int
    ec_fraction: float
    open_fraction: float
    unhealthy: float
    missing: float
    volumes: int
    buckets: int
    rack_start: np.ndarray  # racks + 1 cumulative node offsets: rack r holds nodes [start[r], start[r+1])
    role: np.ndarray  # per node: OK, DEAD, DECOMMISSIONING or MAINTENANCE
    node_uuids: pa.Array
    three_nodes: np.ndarray  # (RATIS/THREE pipelines, 3) node indexes
    pipeline_uuids: pa.Array  # RATIS/THREE pipelines, then one RATIS/ONE per node
    pipeline_closed: np.ndarray  # per pipeline: a member is dead or leaving service, so SCM closed it

    @property
    def datanodes(self) -> int:
        return len(self.role)

    @property
    def racks(self) -> int:
        return len(self.rack_start) - 1


def rack_sizes(datanodes: int, racks: int, skew: float) -> list[int]:
    """The first rack holds `skew` times as many datanodes as each other rack (largest remainder
    rounding, at least one node per rack)."""
    weights = [skew] + [1.0] * (racks - 1)
    shares = [datanodes * w / sum(weights) for w in weights]
    sizes = [max(1, int(s)) for s in shares]
    by_remainder = sorted(range(racks), key=lambda r: sizes[r] - shares[r])
    i = 0
    while sum(sizes) != datanodes:
        r = by_remainder[i % racks]
        if sum(sizes) < datanodes:
            sizes[r] += 1
        elif sizes[r] > 1:
            sizes[r] -= 1
        i += 1
    return sizes


def build_layout(
    *,
    seed: int,
    containers: int,
    datanodes: int,
    racks: int,
    skew: float,
    roles: tuple[int, int, int],
    ec_fraction: float,
    open_fraction: float,
    unhealthy: float,
    missing: float,
    volumes: int,
    buckets: int,
) -> Layout:
    """Racks are contiguous blocks of node indexes, so placement can pick "a node outside rack A" with
    arithmetic. RATIS/THREE pipelines take floor(2M/3) triples from the nodes in rack-interleaved order,
    two slots per node (ozone.scm.datanode.pipeline.limit=2); `roles` counts dead, decommissioning and
    maintenance nodes, chosen by a seeded permutation."""
    rack_start = np.concatenate([[0], np.cumsum(rack_sizes(datanodes, racks, skew))]).astype(np.int64)
    role = np.full(datanodes, OK, dtype=np.int8)
    order = np.random.default_rng(seed).permutation(datanodes)
    dead, decommissioning, maintenance = roles
    role[order[:dead]] = DEAD
    role[order[dead : dead + decommissioning]] = DECOMMISSIONING
    role[order[dead + decommissioning : dead + decommissioning + maintenance]] = MAINTENANCE

    index = np.arange(datanodes)
    node_rack = np.searchsorted(rack_start, index, side="right") - 1
    interleaved = np.lexsort((node_rack, index - rack_start[node_rack]))
    three = (2 * datanodes) // 3 if datanodes >= 3 else 0
    three_nodes = np.concatenate([interleaved, interleaved])[: 3 * three].reshape(three, 3)
    pipeline_closed = np.concatenate([(role[three_nodes] != OK).any(axis=1), role != OK])
    return Layout(
        seed=seed,
        containers=containers,
        ec_fraction=ec_fraction if datanodes >= EC_WIDTH else 0.0,
        open_fraction=open_fraction if three else 0.0,
        unhealthy=unhealthy,
        missing=missing,
        volumes=volumes,
        buckets=buckets,
        rack_start=rack_start,
        role=role,
        node_uuids=pa.array(_uuids(seed, 1, datanodes)),
        three_nodes=three_nodes,
        pipeline_uuids=pa.array(_uuids(seed, 2, three + datanodes)),
        pipeline_closed=pipeline_closed,
    )


def _uuids(seed: int, stream: int, count: int) -> list[str]:
    ids = np.arange(count, dtype=np.uint64)
    high, low = _hash(seed, 100 + stream, ids), _hash(seed, 200 + stream, ids)
    return [str(uuid.UUID(int=(int(h) << 64) | int(lo), version=4)) for h, lo in zip(high, low, strict=True)]


def _mix_int(x: int) -> int:
    """splitmix64 on a Python int, for the per-stream key (numpy scalars would warn on overflow)."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def _hash(seed: int, stream: int, ids: np.ndarray) -> np.ndarray:
    """splitmix64(ids ^ key(seed, stream)) over a uint64 array (array arithmetic wraps silently)."""
    x = ids.astype(np.uint64) ^ np.uint64(_mix_int((seed << 8) ^ stream))
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _uniform(seed: int, stream: int, ids: np.ndarray) -> np.ndarray:
    return (_hash(seed, stream, ids) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _below(seed: int, stream: int, ids: np.ndarray, bound: int) -> np.ndarray:
    return (_hash(seed, stream, ids) % np.uint64(max(bound, 1))).astype(np.int64)


def container_kind(layout: Layout, cids: np.ndarray) -> np.ndarray:
    """CLOSED, OPEN, CLOSING (open on a pipeline SCM closed) or EC, for container ids (1-based)."""
    seed = layout.seed
    kind = np.full(len(cids), CLOSED, dtype=np.int8)
    kind[_uniform(seed, S_OPEN, cids) < layout.open_fraction] = OPEN
    kind[_uniform(seed, S_KIND, cids) < layout.ec_fraction] = EC
    opened = kind == OPEN
    kind[opened & layout.pipeline_closed[_open_pipeline(layout, cids)]] = CLOSING
    return kind


def _open_pipeline(layout: Layout, cids: np.ndarray) -> np.ndarray:
    return _below(layout.seed, S_PIPELINE, cids, len(layout.three_nodes))


def _used_bytes(layout: Layout, cids: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """Closed containers up to the container size, open ones up to a fifth of it."""
    fill = _uniform(layout.seed, S_SIZE, cids)
    fill = np.where((kind == OPEN) | (kind == CLOSING), fill / 5, fill)
    return (1 << 20) + (fill * (CONTAINER_SIZE - (1 << 20))).astype(np.int64)


def _sequence_id(layout: Layout, cids: np.ndarray) -> np.ndarray:
    return 1 + _below(layout.seed, S_SEQ, cids, 1_000_000)


def container_rows(layout: Layout, start: int, end: int) -> pa.RecordBatch:
    """Containers start..end-1 get ids start+1..end (Ozone's container ids start at 1)."""
    cids = np.arange(start + 1, end + 1, dtype=np.int64)
    kind = container_kind(layout, cids)
    used = _used_bytes(layout, cids, kind)
    opened = (kind == OPEN) | (kind == CLOSING)
    pipeline = pc.if_else(
        pa.array(opened), layout.pipeline_uuids.take(pa.array(_open_pipeline(layout, cids))), None
    )
    columns = {
        "container_id": cids,
        "state": _CONTAINER_STATE.take(pa.array(kind)),
        "replication_config": _CONTAINER_CONFIG.take(pa.array(kind)),
        "pipeline_id": pipeline,
        "owner": pa.array(["om"]).take(pa.array(np.zeros(len(cids), dtype=np.int64))),
        "used_bytes": used,
        "number_of_keys": np.maximum(1, used // (4 << 20)),
        "sequence_id": _sequence_id(layout, cids),
        "state_entered_ms": BASE_MS - _below(layout.seed, S_AGE, cids, 30 * 86_400_000),
        "suppressed": np.zeros(len(cids), dtype=bool),
        "replicas_reported": np.ones(len(cids), dtype=bool),
    }
    return _batch("containers", columns)


def _ratis_placement(layout: Layout, cids: np.ndarray) -> np.ndarray:
    """Ozone's rack-aware placement: the first node anywhere, the second on another rack, the third on
    the second's rack (else the first's, else anywhere). One rack: three distinct nodes."""
    seed, m, start = layout.seed, layout.datanodes, layout.rack_start
    n1 = _below(seed, S_NODE1, cids, m)
    h2, h3 = _hash(seed, S_NODE2, cids), _hash(seed, S_NODE3, cids)
    if layout.racks == 1:
        n2 = (n1 + 1 + _mod(h2, m - 1)) % m
        return np.stack([n1, n2, _skip(_mod(h3, m - 2), n1, n2)], axis=1)
    sizes = np.diff(start)
    node_rack = np.searchsorted(start, np.arange(m), side="right") - 1
    rack_a = node_rack[n1]
    k = _mod(h2, m - sizes[rack_a])
    n2 = np.where(k >= start[rack_a], k + sizes[rack_a], k)
    rack_b = node_rack[n2]
    in_b = start[rack_b] + _mod(h3, sizes[rack_b] - 1)
    in_b = np.where(in_b >= n2, in_b + 1, in_b)
    in_a = start[rack_a] + _mod(h3, sizes[rack_a] - 1)
    in_a = np.where(in_a >= n1, in_a + 1, in_a)
    anywhere = _skip(_mod(h3, m - 2), n1, n2)
    n3 = np.where(sizes[rack_b] >= 2, in_b, np.where(sizes[rack_a] >= 2, in_a, anywhere))
    return np.stack([n1, n2, n3], axis=1)


def _mod(h: np.ndarray, bound) -> np.ndarray:
    return (h % np.maximum(np.asarray(bound), 1).astype(np.uint64)).astype(np.int64)


def _skip(k: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The k-th node index when nodes a and b (distinct) are left out."""
    low, high = np.minimum(a, b), np.maximum(a, b)
    k = np.where(k >= low, k + 1, k)
    return np.where(k >= high, k + 1, k)


def _placement(layout: Layout, cids: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """(containers, 5) node indexes, -1 for no slot: Ratis uses 3 slots, EC one per replica index."""
    m = layout.datanodes
    nodes = np.full((len(cids), EC_WIDTH), -1, dtype=np.int64)
    if m >= 3:
        nodes[:, :3] = _ratis_placement(layout, cids)
    opened = (kind == OPEN) | (kind == CLOSING)
    if opened.any():
        nodes[opened, :3] = layout.three_nodes[_open_pipeline(layout, cids[opened])]
    ec = kind == EC
    if ec.any():
        first = _below(layout.seed, S_NODE1, cids[ec], m)
        nodes[ec] = (first[:, None] + np.arange(EC_WIDTH) * (m // EC_WIDTH)) % m
    return nodes


def replica_rows(layout: Layout, start: int, end: int) -> pa.RecordBatch:
    """Replicas as SCM sees them: none on dead nodes (DeadNodeHandler removed them) and none for the
    `missing` share of closed containers; the `unhealthy` share of the rest are UNHEALTHY."""
    seed = layout.seed
    cids = np.arange(start + 1, end + 1, dtype=np.int64)
    kind = container_kind(layout, cids)
    nodes = _placement(layout, cids, kind)
    missing = ((kind == CLOSED) | (kind == EC)) & (_uniform(seed, S_MISSING, cids) < layout.missing)
    present = (nodes >= 0) & ~missing[:, None]
    present &= layout.role[np.maximum(nodes, 0)] != DEAD
    row, slot = np.nonzero(present)
    node = nodes[row, slot]
    replica_kind = kind[row]
    unhealthy = _uniform(seed, S_UNHEALTHY, cids[row] * EC_WIDTH + slot) < layout.unhealthy
    state = np.where(unhealthy, _UNHEALTHY_REPLICA, replica_kind)
    used = _used_bytes(layout, cids, kind)[row]
    ec = replica_kind == EC
    datanode = layout.node_uuids.take(pa.array(node))
    columns = {
        "container_id": cids[row],
        "datanode": datanode,
        "state": _REPLICA_STATE.take(pa.array(state)),
        "origin_node_id": datanode,
        "sequence_id": _sequence_id(layout, cids)[row],
        "key_count": np.maximum(1, used // (4 << 20)),
        "bytes_used": np.where(ec, used // EC_DATA, used),
        "replica_index": np.where(ec, slot + 1, 0).astype(np.int32),
        "is_empty": np.zeros(len(row), dtype=bool),
    }
    return _batch("replicas", columns)


def key_rows(layout: Layout, start: int, end: int) -> pa.RecordBatch:
    """Keys of log-uniform size (1 KB to 1 GB) in `volumes` x `buckets`, one block per 256 MB, each
    block in a container drawn from all containers (so damaged containers hit keys)."""
    seed = layout.seed
    ids = np.arange(start, end, dtype=np.int64)
    size = np.exp2(10 + 20 * _uniform(seed, S_KEYSIZE, ids)).astype(np.int64)
    blocks = np.minimum(MAX_BLOCKS, -(-size // BLOCK_SIZE))
    offsets = np.concatenate([[0], np.cumsum(blocks)])
    key = np.repeat(np.arange(len(ids)), blocks)
    j = np.arange(offsets[-1]) - offsets[key]
    local_id = ids[key] * MAX_BLOCKS + j + 1
    container = 1 + _below(seed, S_BLOCK, local_id, layout.containers)
    length = np.minimum(BLOCK_SIZE, size[key] - j * BLOCK_SIZE)
    block_list = pa.ListArray.from_arrays(
        pa.array(offsets.astype(np.int32)),
        pa.StructArray.from_arrays([pa.array(a) for a in (container, local_id, length)], fields=list(BLOCK)),
    )
    first_kind = container_kind(layout, container[offsets[:-1]])
    volume = _below(seed, S_VOLUME, ids, layout.volumes)
    bucket = _below(seed, S_BUCKET, ids, layout.buckets)
    volumes = pa.array([f"vol{v}" for v in range(layout.volumes)])
    buckets = pa.array([f"bucket{b}" for b in range(layout.buckets)])
    dirs = pa.array([f"dir{d:02d}/key-" for d in range(64)])
    name = pc.binary_join_element_wise(
        dirs.take(pa.array(_below(seed, S_DIR, ids, 64))), pc.cast(pa.array(ids), pa.string()), ""
    )
    columns = {
        "volume": volumes.take(pa.array(volume)),
        "bucket": buckets.take(pa.array(bucket)),
        "key": name,
        "size": size,
        "replication_config": _CONTAINER_CONFIG.take(pa.array(first_kind)),
        "created_ms": BASE_MS - _below(seed, S_AGE, ids, 365 * 86_400_000),
        "blocks": block_list,
    }
    return _batch("keys", columns)


def node_rows(layout: Layout, start: int, end: int) -> pa.RecordBatch:
    seed = layout.seed
    index = np.arange(start, end, dtype=np.int64)
    role = layout.role[index]
    rack = np.searchsorted(layout.rack_start, index, side="right") - 1
    data_disks = (4 + _below(seed, S_DISKS, index, 9)).astype(np.int32)
    capacity = data_disks.astype(np.int64) * 8 * TIB
    used = (capacity * 0.6 * _uniform(seed, S_USED, index)).astype(np.int64)
    columns = {
        "uuid": layout.node_uuids.take(pa.array(index)),
        "hostname": pa.array([f"dn{i + 1:05d}.pyozone.test" for i in index]),
        "ip_address": pa.array([f"10.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}" for i in index]),
        "rack": pa.array([f"/rack{r + 1}" for r in rack]),
        "health": _HEALTH.take(pa.array(role)),
        "operational_state": _OP_STATE.take(pa.array(role)),
        "op_state_expiry_epoch_sec": np.zeros(len(index), dtype=np.int64),
        "data_disks": data_disks,
        "failed_disks": np.zeros(len(index), dtype=np.int32),
        "metadata_disks": (1 + index % 2).astype(np.int32),
        "capacity": capacity,
        "used": used,
        "remaining": capacity - used,
        "last_heartbeat_ms": np.where(role == DEAD, BASE_MS - 15 * 60_000, BASE_MS),
    }
    return _batch("nodes", columns)


def pipeline_rows(layout: Layout, start: int, end: int) -> pa.RecordBatch:
    """RATIS/THREE pipelines first, then one RATIS/ONE per datanode; CLOSED when a member is dead or
    leaving service (SCM closes those)."""
    index = np.arange(start, end, dtype=np.int64)
    three = len(layout.three_nodes)
    is_three = index < three
    members = [
        layout.three_nodes[i] if i < three else np.array([i - three]) for i in index
    ]  # O(batch) small lists: pipelines are O(datanodes)
    offsets = np.concatenate([[0], np.cumsum([len(m) for m in members])]).astype(np.int32)
    flat = np.concatenate(members) if members else np.zeros(0, dtype=np.int64)
    node_ids = layout.node_uuids.take(pa.array(flat, type=pa.int64()))
    closed = layout.pipeline_closed[index]
    columns = {
        "pipeline_id": layout.pipeline_uuids.take(pa.array(index)),
        "replication_config": pa.array(np.where(is_three, "RATIS/THREE", "RATIS/ONE")),
        "state": pa.array(np.where(closed, "CLOSED", "OPEN")),
        "nodes": pa.ListArray.from_arrays(pa.array(offsets), node_ids),
        "leader": node_ids.take(pa.array(offsets[:-1])),
        "created_ms": np.full(len(index), BASE_MS - 86_400_000, dtype=np.int64),
    }
    return _batch("pipelines", columns)


def _batch(table: str, columns: dict[str, object]) -> pa.RecordBatch:
    schema = TABLES[table]
    arrays = [_array(columns[f.name], f.type) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _array(values: object, arrow_type: pa.DataType) -> pa.Array:
    if isinstance(values, pa.Array):
        return values if values.type == arrow_type else values.cast(arrow_type)
    return pa.array(values, type=arrow_type)
