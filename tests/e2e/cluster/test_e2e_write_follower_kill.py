"""End to end: a follower of a RATIS/THREE pipeline is killed (kill -9) while a key's first block is
being written (watch type ALL_COMMITTED): the leader answers the block's watches NOT_REPLICATED after its
hdds.ratis.raft.server.watch.timeout, the client takes them as committed by the majority (Ozone's
XceiverClientRatis "3 way commit failed"), the block completes in its pipeline and the key's next block is
allocated away from the dead datanode. (The leader's failures: test_e2e_write_leader_failover.py.)
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import pytest

from pyozone.client.block_output import BlockOutputStream
from tests.e2e.cluster.cluster_helpers import (
    MiB,
    block_files,
    file_sha256,
    live_cluster,
    ozone_client,
    random_file,
)
from tests.e2e.cluster.write_failover import (
    BUCKET,
    KILL_AT,
    OVERRIDES,
    PIECE,
    VOL,
    WRITER,
    make_bucket,
    pipeline_views,
)
from tests.polling import wait_for

FOLLOWER_BLOCK = 16 * MiB
FOLLOWER_SIZE = FOLLOWER_BLOCK + 4 * MiB  # the key's second block is allocated after the kill
FOLLOWER_OVERRIDES = {
    **OVERRIDES,
    # Four RATIS/THREE pipelines on six datanodes: one of them leaves the dead follower out.
    "hdds.scm.safemode.min.datanode": "6",
    # The dead follower's watches fail after this (30 s by default); a live one answers well within it.
    "hdds.ratis.raft.server.watch.timeout": "10s",
}
ALL_COMMITTED = {**WRITER, "hdds.ratis.client.request.watch.type": "ALL_COMMITTED"}


def test_a_key_whose_follower_is_killed_completes_its_block_at_majority_and_avoids_it_next(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    source = tmp_path / "during.bin"
    digest = random_file(source, FOLLOWER_SIZE)
    with live_cluster(request, tmp_path_factory, "follower-kill", 6, overrides=FOLLOWER_OVERRIDES) as cluster:
        wait_for(
            lambda: sum(
                p["state"] == "OPEN" and p["replicationConfig"].endswith("THREE") for p in cluster.pipelines()
            ) >= 4,
            60,
            "4 OPEN RATIS/THREE pipelines",
        )  # fmt: skip
        make_bucket(cluster)
        with ozone_client(cluster, **ALL_COMMITTED) as client:
            writer = client.create_key(VOL, BUCKET, "during")  # one block pre-allocated, then allocateBlock
            with open(source, "rb") as f:
                for _ in range(KILL_AT // PIECE):
                    writer.write(f.read(PIECE))
                block = writer.stream._current
                assert isinstance(block, BlockOutputStream)
                pipeline = block.location.pipeline
                leader = pipeline.leader()
                assert leader is not None
                hosts = [m.host for m in pipeline.members]
                wait_for(
                    lambda: (
                        len(views := pipeline_views(cluster, hosts, pipeline.id)) == 1
                        and views.pop()[0] == leader.uuid
                    ),
                    60,
                    "every member agrees on the leader the block names",
                )
                victim = next(m for m in pipeline.members if m is not leader)
                in_flight = block.sent - block.acked
                cluster.kill(victim.host)
                killed = time.monotonic()
                while piece := f.read(PIECE):
                    writer.write(piece)
            info = writer.close()
            committed_s = time.monotonic() - killed
            stream = writer.stream
            print(
                f"\nfollower {victim.host} of pipeline {pipeline.id[:8]} killed with {in_flight // MiB} MB "
                f"unacknowledged; the key committed {committed_s:.1f} s later; failed servers "
                f"{sorted(block.failed_servers)}; {stream.retries} block rewrites; next allocation excluded "
                f"{stream.exclude_list}"
            )
            for failure in stream._failures:
                print(f"  block rewritten: {failure[:400]}")
            assert stream.retries == 0, stream._failures  # nothing closed, nothing rewritten elsewhere
            assert block.failed_servers == {victim.uuid}
            first, second = stream._blocks
            assert first.pipeline.id == pipeline.id and first.length == FOLLOWER_BLOCK
            assert victim.uuid not in {m.uuid for m in second.pipeline.members}, second.pipeline
            assert second.length == FOLLOWER_SIZE - FOLLOWER_BLOCK == info.data_size - FOLLOWER_BLOCK
            assert stream.exclude_list.datanodes == {victim.uuid}

            out = tmp_path / "during.read"
            client.get_key(VOL, BUCKET, "during", out)
            assert file_sha256(out) == digest

        def replicas() -> dict[str, str]:
            files = block_files(cluster, first.container_id, first.local_id)
            return {
                dn: file_sha256(path) for dn, path in files.items() if path.stat().st_size == FOLLOWER_BLOCK
            }

        live = [m.host for m in pipeline.members if m is not victim]
        seen = wait_for(lambda: set(live) <= set(found := replicas()) and found, 60, "the live replicas")
        with open(source, "rb") as f:
            expected = hashlib.sha256(f.read(FOLLOWER_BLOCK)).hexdigest()
        assert {seen[host] for host in live} == {expected}, seen
