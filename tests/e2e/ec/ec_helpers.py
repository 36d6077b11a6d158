"""What the EC acceptance tests share: the fast intervals their clusters run with, the bytes each replica
index must hold (an oracle built from the kernel's StripeLayout and codec, checked against the block files
on the datanodes' disks), and SCM's view of an EC container's replicas by index.

A block group's replica index i is an ordinary block on one datanode (chunks/<localID>.block), so what a
datanode stores for index i can be compared byte for byte with what the stripe arithmetic says it holds.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyozone.cluster.layout import HOST
from pyozone.hdds.ec.codec import codec_for
from pyozone.hdds.ec.layout import StripeLayout
from pyozone.hdds.ids import ReplicationConfig
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.e2e.cluster.cluster_helpers import LiveCluster, MiB, block_files, sh_here
from tests.e2e.cluster.xceiver_client import XceiverClient
from tests.polling import wait_for

RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")
XOR_2_1 = ReplicationConfig.parse("xor-2-1-1024k")
BLOCK = 2 * MiB
"""ozone.scm.block.size of the EC clusters: a block group holds a few stripes, so several are cheap."""

EC_INTERVALS = {
    "ozone.scm.block.size": "2MB",
    "ozone.scm.close.container.wait.duration": "2s",
    "hdds.scm.replication.thread.interval": "3s",
    "hdds.scm.replication.under.replicated.interval": "1s",
    "hdds.scm.replication.over.replicated.interval": "1s",
    "hdds.scm.replication.event.timeout": "60s",
    "hdds.scm.replication.event.timeout.datanode.offset": "20s",
    "hdds.container.report.interval": "5s",
}
"""What every EC module runs with (on top of cluster_helpers.FAST): the RM reacts within seconds."""


def make_bucket(cluster: LiveCluster, volume: str, bucket: str, config: ReplicationConfig | None) -> None:
    """The volume (if new) and a bucket through `pyozone sh`, with `config` as its EC default
    (`bucket create --type EC --replication rs-3-2-1024k`), else the cluster's default."""
    if sh_here(cluster, "volume", "info", f"/{volume}").code != 0:
        made = sh_here(cluster, "volume", "create", f"/{volume}")
        assert made.code == 0, made
    ec = ["--type", "EC", "--replication", config.ec_name] if config is not None else []
    made = sh_here(cluster, "bucket", "create", f"/{volume}/{bucket}", *ec)
    assert made.code == 0, made


# ------------------------------------------------------------------ the oracle
def index_bytes(group: bytes, config: ReplicationConfig, index: int) -> bytes:
    """What replica `index` of a block group holding `group` must store: its data cells stripe by stripe,
    or for a parity index each stripe's parity cell over the data cells zero-padded to the first cell."""
    layout = StripeLayout.of(config)
    codec = codec_for(config)
    out = io.BytesIO()
    for stripe in range(layout.stripes(len(group))):
        lengths = layout.stripe_cell_lengths(len(group), stripe)
        start = stripe * layout.stripe_bytes
        cells = [group[start + i * layout.cell : start + i * layout.cell + n] for i, n in enumerate(lengths)]
        if not layout.is_parity(index):
            out.write(cells[index - 1])
            continue
        padded = [c + bytes(lengths[0] - len(c)) for c in cells]
        out.write(bytes(codec.encode(padded)[index - layout.data - 1]))
    return out.getvalue()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Key:
    """A key under test: its bytes, OM's KeyInfo, and the containers of its block groups."""

    data: bytes
    info: Any

    @property
    def containers(self) -> list[int]:
        return sorted({loc.container_id for loc in self.info.locations})


# ------------------------------------------------------------------ SCM's view of an EC container
@dataclass(frozen=True, slots=True)
class Replica:
    uuid: str
    name: str  # the datanode's daemon name (dn1, ...)
    index: int
    state: str


def replicas(cluster: LiveCluster, container_id: int, names: dict[str, str]) -> list[Replica]:
    """SCM's replicas of a container (`admin container info --json`), with their replica indexes."""
    info = cluster.container(container_id) or {}
    return [
        Replica(r["datanode"], names.get(r["datanode"], r["datanode"]), r["replicaIndex"], r["state"])
        for r in info.get("replicas", [])
    ]


def uuid_names(cluster: LiveCluster) -> dict[str, str]:
    """Datanode uuid -> daemon name (dn1, ...)."""
    return {n["uuid"]: name for name, n in cluster.datanodes().items()}


def wait_indexes(
    cluster: LiveCluster,
    container_id: int,
    config: ReplicationConfig,
    names: dict[str, str],
    states: Iterable[str] = ("OPEN", "CLOSING", "CLOSED"),
    timeout_s: float = 30,
    among: set[str] | None = None,
) -> dict[int, Replica]:
    """Waits until SCM knows one replica of every index 1..d+p in one of `states` (on datanodes in `among`
    when given); those replicas by index."""
    wanted = set(range(1, config.required_nodes + 1))
    allowed = set(states)

    def found() -> dict[int, Replica] | None:
        good = {
            r.index: r
            for r in replicas(cluster, container_id, names)
            if r.state in allowed and (among is None or r.uuid in among)
        }
        return good if set(good) >= wanted else None

    return wait_for(
        found,
        timeout_s,
        lambda: (
            f"container {container_id}: indexes {sorted(wanted)} in {sorted(allowed)} "
            f"(SCM has {replicas(cluster, container_id, names)})"
        ),
        interval_s=0.5,
    )


def check_stored(
    cluster: LiveCluster, data: bytes, locations: Any, config: ReplicationConfig, names: dict[str, str]
) -> int:
    """Every replica index of every block group of a key holds on disk exactly the bytes the stripe
    arithmetic says; returns the bytes stored for the key over all its replicas."""
    stored = 0
    for location in locations:
        group = data[location.offset : location.offset + location.length]
        by_index = wait_indexes(cluster, location.container_id, config, names)
        files = block_files(cluster, location.container_id, location.local_id)
        where = f"{location.container_id}/{location.local_id}"
        for index, replica in sorted(by_index.items()):
            expected = index_bytes(group, config, index)
            path: Path | None = files.get(replica.name)
            if not expected:  # a group too short to reach this index: at most an empty block file
                assert path is None or path.stat().st_size == 0, (location, replica)
                continue
            assert path is not None, f"{where}: no block file on {replica}"
            got = path.read_bytes()
            assert len(got) == len(expected) and got == expected, (
                f"{where} index {index} on {replica.name}: "
                f"{len(got)} bytes stored, {len(expected)} expected, equal: {got == expected}"
            )
            stored += len(got)
            block = stored_block(cluster, replica, location.container_id, location.local_id)
            metadata = {kv.key: kv.value for kv in block.metadata}
            assert metadata.get("blockGroupLen") == str(location.length), (where, replica, metadata)
            assert block.size == len(expected), (where, replica, block.size)
    return stored


def stored_block(cluster: LiveCluster, replica: Replica, container_id: int, local_id: int) -> pb.BlockData:
    """The block's record as replica `replica` keeps it (GetBlock naming the replica index)."""
    port = cluster.datanodes()[replica.name]["ports"]["STANDALONE"]
    block_id = pb.DatanodeBlockID(containerID=container_id, localID=local_id, replicaIndex=replica.index)
    body = pb.GetBlockRequestProto(blockID=block_id)
    with XceiverClient(HOST, port) as client:
        return client.call(client.request(pb.GetBlock, container_id, getBlock=body)).getBlock.blockData
