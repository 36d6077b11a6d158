"""Acceptance (write pipeline V2): a member of a block's datastream chain is killed with -9 (the first, the
middle or the last member) or stalled with SIGSTOP (the middle one) mid-block. The client excludes that
pipeline and member, rewrites the unacknowledged part of the block on another pipeline and commits: the
key reads back bit-identical, nothing of it is visible before the commit, and no surviving member keeps an
uncommitted block file.

Blocks are 16 MB and keys 64 MB, and the member fails 8 MB into the second block: the first block is
acknowledged (its putBlock was watched) and stays in the key as written, read back from its survivors when
it shares the broken pipeline; the second has had no putBlock yet, so it is dropped and all of its bytes go
elsewhere. Each case gets its own cluster of 5 datanodes (3 RATIS/THREE pipelines, so one without the
failed member is left), so one case's failed node and closed pipelines do not shrink the next one's choice.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time

import pytest

from pyozone.client import OMException, OzoneClient
from pyozone.client.datastream import BlockDataStreamOutput
from pyozone.client.key_output import KeyOutputStream
from pyozone.cluster.layout import HOST
from pyozone.hdds.ids import BlockID
from pyozone.hdds.locations import DatanodeRef
from tests.e2e.cluster.cluster_helpers import (
    LiveCluster,
    MiB,
    all_block_files,
    block_files,
    live_cluster,
    ozone_client,
    sh,
)
from tests.e2e.cluster.xceiver_client import XceiverClient, XceiverError
from tests.polling import wait_for

VOL, BUCKET, KEY = "v2fail", "bucket", "key"
BLOCK = 16 * MiB
BEFORE = 24 * MiB  # written before the member fails: block 1 whole, 8 MB of block 2
AFTER = 40 * MiB
PIECE = 1 * MiB
DEADLINE_S = 60  # the writer's ozone.client.retry.deadline
STALL_TIMEOUT_S = 10  # hdds.ratis.raft.server.rpc.request.timeout in the stall case: a silent peer has failed
CLIENT = {
    "ozone.client.retry.deadline": f"{DEADLINE_S}s",
    "hdds.ratis.client.exponential.backoff.base.sleep": "250ms",
    "hdds.ratis.client.exponential.backoff.max.sleep": "2s",
}
OVERRIDES = {
    "ozone.scm.block.size": "16MB",
    "ozone.scm.container.size": "256MB",
    # pipelines form once all five registered: formed earlier, the first nodes take the slots and fewer form
    "hdds.scm.safemode.min.datanode": "5",
}
POSITIONS = {0: "first", 1: "middle", 2: "last"}


def three_pipelines(cluster: LiveCluster) -> list[dict[str, object]]:
    return [
        p
        for p in cluster.pipelines()
        if p["state"] == "OPEN" and p["replicationConfig"].endswith("THREE") and len(p["nodes"]) == 3
    ]


def assert_invisible(looker: OzoneClient) -> None:
    """Neither a lookup nor the listing finds the key (it is not committed yet)."""
    with pytest.raises(OMException) as error:
        looker.key_info(VOL, BUCKET, KEY)
    assert error.value.result == "KEY_NOT_FOUND", error.value
    assert KEY not in [k.name for k in looker.list_keys(VOL, BUCKET)]


def committed(cluster: LiveCluster, dn: str, container_id: int, local_id: int) -> bool:
    """Whether the datanode has the block committed (GetBlock lists it)."""
    with XceiverClient(HOST, cluster.port(dn, "ipc"), timeout_s=10) as client:
        try:
            client.get_block(BlockID(container_id, local_id))
        except XceiverError:
            return False
    return True


def uncommitted_files(cluster: LiveCluster, dns: set[str]) -> list[tuple[str, int, int]]:
    """Block files on those datanodes whose block is not committed there."""
    return sorted(f for f in all_block_files(cluster) if f[0] in dns and not committed(cluster, *f))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("position", "sig"),
    [(0, signal.SIGKILL), (1, signal.SIGKILL), (2, signal.SIGKILL), (1, signal.SIGSTOP)],
    ids=["kill-first", "kill-middle", "kill-last", "stall-middle"],
)
def test_a_v2_write_survives_a_chain_member_failing_mid_block(
    position: int,
    sig: signal.Signals,
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    overrides = dict(OVERRIDES)
    if sig is signal.SIGSTOP:
        overrides["hdds.ratis.raft.server.rpc.request.timeout"] = f"{STALL_TIMEOUT_S}s"
    name = f"v2-{sig.name.lower()}-{POSITIONS[position]}"
    with live_cluster(request, tmp_path_factory, name, 5, overrides=overrides) as cluster:
        pipelines = wait_for(lambda: len(p := three_pipelines(cluster)) >= 2 and p, 60, "2 OPEN RATIS/THREE")
        for made in (
            sh(cluster, "volume", "create", f"/{VOL}"),
            sh(cluster, "bucket", "create", f"/{VOL}/{BUCKET}"),
        ):
            assert made.code == 0, made
        digest = hashlib.sha256()
        stopped: int | None = None
        try:
            with ozone_client(cluster, **CLIENT) as client, ozone_client(cluster) as looker:
                writer = client.create_key(VOL, BUCKET, KEY, BEFORE + AFTER, datastream=True)
                for _ in range(BEFORE // PIECE):
                    piece = os.urandom(PIECE)
                    digest.update(piece)
                    writer.write(piece)
                block = writer.stream._current
                assert isinstance(block, BlockDataStreamOutput) and block.acked == 0, block
                loc, chain = block.location, block.chain
                assert len(chain) == 3, chain
                # mid-stream: every member wrote the block's 8 MB so far, and the stream stays open
                wait_for(
                    lambda: (
                        len(files := block_files(cluster, loc.container_id, loc.local_id)) == 3
                        and all(f.stat().st_size >= BEFORE - BLOCK for f in files.values())
                    ),
                    30,
                    f"block {loc.block_name} 8 MB on every member",
                )
                victim = chain[position]
                assert cluster.datanodes()[victim.host]["uuid"] == victim.uuid
                pid = cluster.state.pids[victim.host]
                os.kill(pid, sig)
                failed_at = time.monotonic()
                if sig is signal.SIGKILL:
                    wait_for(lambda: not cluster.running()[victim.host], 10, f"{victim.host} gone")
                else:
                    stopped = pid
                assert_invisible(looker)

                for _ in range(AFTER // PIECE):
                    piece = os.urandom(PIECE)
                    digest.update(piece)
                    writer.write(piece)
                assert_invisible(looker)
                info = writer.close()
                done_s = time.monotonic() - failed_at
                stream = writer.stream
                report(name, victim, chain, loc.pipeline.id, done_s, stream, pipelines)

                # the write went on elsewhere, within the retry deadline, excluding what failed
                assert info.data_size == BEFORE + AFTER and info.write_path == "V2", info
                assert done_s < DEADLINE_S, done_s
                assert stream.retries >= 1 and loc.pipeline.id in stream._failures[0], stream._failures
                assert loc.pipeline.id in stream.exclude_list.pipelines, stream.exclude_list
                assert victim.uuid in stream.exclude_list.datanodes, (victim.uuid, stream.exclude_list)
                blocks = stream._blocks
                assert [b.length for b in blocks][:1] == [BLOCK], blocks  # block 1 stays, acknowledged
                assert loc.local_id not in {b.local_id for b in blocks}  # block 2 had nothing acknowledged
                assert all(victim.uuid not in members(b.pipeline.members) for b in blocks[1:]), blocks
                looked = looker.key_info(VOL, BUCKET, KEY)
                assert looked.data_size == BEFORE + AFTER
                assert sum(b.length for b in looked.locations) == BEFORE + AFTER
                assert any(victim.uuid not in members(b.pipeline.members) for b in looked.locations)
                started = time.monotonic()
                read = hashlib.sha256(looker.read_key(VOL, BUCKET, KEY).readall()).hexdigest()
                print(f"read back in {time.monotonic() - started:.1f} s")
                assert read == digest.hexdigest()
        finally:
            if stopped is not None:
                os.kill(stopped, signal.SIGCONT)

        # no member keeps an uncommitted block file: the survivors, and a stalled member once it resumes
        live = {m.host for m in chain if m is not victim or sig is signal.SIGSTOP}
        wait_for(
            lambda: not uncommitted_files(cluster, live),
            30,
            lambda: f"uncommitted block files on {sorted(live)}: {uncommitted_files(cluster, live)}",
        )
        kept = sorted(set(block_files(cluster, loc.container_id, loc.local_id)) & live)
        print(f"failed block {loc.block_name}: committed on {kept}, gone from {sorted(live - set(kept))}")


def members(nodes: tuple[DatanodeRef, ...]) -> set[str]:
    return {m.uuid for m in nodes}


def report(
    name: str,
    victim: DatanodeRef,
    chain: tuple[DatanodeRef, ...],
    pipeline: str,
    done_s: float,
    stream: KeyOutputStream,
    pipelines: list[dict[str, object]],
) -> None:
    print(
        f"\n{name}: {len(pipelines)} pipelines; {victim.host} of chain {[m.host for m in chain]} "
        f"(pipeline {pipeline[:8]}); key committed {done_s:.1f} s later after "
        f"{stream.retries} retries; blocks: "
        + ", ".join(
            f"{b.length // MiB} MB on {sorted(m.host for m in b.pipeline.members)}" for b in stream._blocks
        )
    )
    for failure in stream._failures:
        print(f"  retry: {failure[:240]}")
