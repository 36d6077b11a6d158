"""End to end: a key written through a RATIS/THREE pipeline across two leader changes completes in one
block of that pipeline. The leader datanode is stopped (SIGSTOP) for longer than the election timeout (1 s,
FAST): the other two elect a leader, which SCM reports, and the key's block is allocated with it and half
written (acknowledged by a majority: hdds.ratis.client.request.watch.type MAJORITY_COMMITTED). The old
leader runs again, catches up and, SCM's suggested leader (priority 1), takes the leadership back. The
writer's next request, to the leader its block names, is refused NOT_LEADER naming the old one: the block
follows it (Ozone's XceiverClientRatis) instead of being closed and rewritten elsewhere. Every acknowledged
key reads back byte-identical; the election, the leadership's return and the failover times are printed.

A second case kills the leader datanode (kill -9) while a key's requests are in flight: they fail
unreachable, the writer asks the other members in turn (one names the dead leader until the two elect
another, then names the new one or leads) and the key completes in its block of that pipeline; the time
from the kill to the key's commit and the failovers are printed.

The third case, a killed follower: test_e2e_write_follower_kill.py (its own 6-datanode cluster).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from pyozone.client.block_output import BlockOutputStream
from pyozone.client.sync import OzoneClient
from pyozone.hdds.locations import PipelineRef
from tests.e2e.cluster.cluster_helpers import (
    LiveCluster,
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

SIZE = 8 * MiB
PAUSE_AT = 4 * MiB  # two flushes acknowledged, nothing in flight


def _leader(cluster: LiveCluster, pipeline_id: str) -> str | None:
    for p in cluster.pipelines():
        if p["id"] == pipeline_id and p["state"] == "OPEN":
            return str(p.get("leaderId") or "") or None
    return None


def _pid(cluster: LiveCluster, host: str) -> int:
    pid = cluster.state.pids.get(host)
    assert pid is not None, f"no pid for datanode {host}"
    return pid


def _on_one_pipeline(cluster: LiveCluster, client: OzoneClient, before: Path) -> tuple[PipelineRef, str]:
    """Puts the key "before", leaves its RATIS/THREE pipeline the only active one (the default cluster has
    two) and returns it with its leader once SCM and every member agree on that leader."""
    client.put_key(VOL, BUCKET, "before", before.read_bytes())
    (pipeline,) = {b.pipeline for b in client.key_info(VOL, BUCKET, "before").locations}
    for other in cluster.pipelines():
        if other["id"] != pipeline.id and other["replicationConfig"].endswith("THREE"):
            assert cluster.admin("pipeline", "deactivate", other["id"]).code == 0
    first = wait_for(lambda: _leader(cluster, pipeline.id), 30, "the pipeline's leader")
    hosts = [m.host for m in pipeline.members]
    wait_for(
        lambda: len(views := pipeline_views(cluster, hosts, pipeline.id)) == 1 and views.pop()[0] == first,
        60,
        "every member agrees on the leader SCM reports",
    )
    return pipeline, first


def test_a_key_written_across_leader_changes_completes_in_its_pipeline(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    before, during = tmp_path / "before.bin", tmp_path / "during.bin"
    digests = {"before": random_file(before, 2 * MiB), "during": random_file(during, SIZE)}
    with live_cluster(request, tmp_path_factory, "leader-failover", 3, overrides=OVERRIDES) as cluster:
        make_bucket(cluster)
        with ozone_client(cluster, **WRITER) as client:
            pipeline, first = _on_one_pipeline(cluster, client, before)
            pipeline_id = pipeline.id
            old = next(m for m in pipeline.members if m.uuid == first)
            others = [m.host for m in pipeline.members if m is not old]
            pid = _pid(cluster, old.host)

            os.kill(pid, signal.SIGSTOP)
            stopped = time.monotonic()
            try:
                new = wait_for(
                    lambda: (leader := _leader(cluster, pipeline_id)) not in (None, first) and leader,
                    60,
                    "SCM reports a new leader of the pipeline",
                )
                wait_for(
                    lambda: (
                        len(views := pipeline_views(cluster, others, pipeline_id)) == 1
                        and views.pop()[0] == new
                    ),
                    60,
                    "the running members agree on it",
                )
                elected_s = time.monotonic() - stopped
                writer = client.create_key(VOL, BUCKET, "during", size_hint=SIZE)
                with open(during, "rb") as f:
                    for _ in range(PAUSE_AT // PIECE):
                        writer.write(f.read(PIECE))
                    block = writer.stream._current
                    assert isinstance(block, BlockOutputStream)
                    assert block.location.pipeline.id == pipeline_id
                    named = block.location.pipeline.leader_id
                    assert named != first, (first, new, cluster.pipelines())  # a leader that runs
                    wait_for(lambda: block.acked == block.sent == PAUSE_AT, 60, "the first 4 MB acknowledged")
            finally:
                os.kill(pid, signal.SIGCONT)
            stopped_s = time.monotonic() - stopped
            hosts = [m.host for m in pipeline.members]
            wait_for(  # every member in one term under it (SCM may hear the resumed one's stale claim first)
                lambda: (
                    len(views := pipeline_views(cluster, hosts, pipeline_id)) == 1 and views.pop()[0] == first
                ),
                120,
                "the old leader leads again",
            )
            returned_s = time.monotonic() - stopped - stopped_s

            resumed = time.monotonic()
            with open(during, "rb") as f:
                f.seek(PAUSE_AT)
                while piece := f.read(PIECE):
                    writer.write(piece)
            info = writer.close()
            written_s = time.monotonic() - resumed
            stream = writer.stream
            print(
                f"\nleader {old.host} of pipeline {pipeline_id[:8]} stopped {stopped_s:.1f} s; new leader "
                f"{new[:8]} reported after {elected_s:.1f} s; {old.host} led again {returned_s:.1f} s after "
                f"it ran again; the block followed it in {block.failover_s * 1000:.0f} ms ({block._moves} "
                f"failover(s)); the last {(SIZE - PAUSE_AT) // MiB} MB written and the key committed in "
                f"{written_s:.1f} s; {stream.retries} block rewrites"
            )
            for failure in stream._failures:
                print(f"  block rewritten: {failure[:400]}")
            assert block._moves == 1 and block.failover_s > 0
            assert stream.retries == 0, stream._failures  # no block closed, nothing rewritten elsewhere
            (location,) = stream._blocks
            assert location.pipeline.id == pipeline_id and location.length == SIZE == info.data_size

            for name, digest in digests.items():
                out = tmp_path / f"{name}.read"
                client.get_key(VOL, BUCKET, name, out)
                assert file_sha256(out) == digest, name

        # every replica holds the same bytes, the old leader's (which caught up from the new one) too
        def replicas() -> dict[str, str]:
            files = block_files(cluster, location.container_id, location.local_id)
            return {dn: file_sha256(path) for dn, path in files.items() if path.stat().st_size == SIZE}

        seen = wait_for(lambda: len(found := replicas()) == 3 and found, 60, "three replicas of the block")
        assert set(seen.values()) == {digests["during"]}, seen


KILL_SIZE = 12 * MiB


def _watch_election(
    cluster: LiveCluster, hosts: list[str], pipeline_id: str, old: str, elected: list[float]
) -> None:
    """Appends the time (monotonic) the running members `hosts` first agree on a leader other than `old`."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            views = pipeline_views(cluster, hosts, pipeline_id)
        except OSError:  # a datanode's web server busy past the call's timeout: ask again
            continue
        if len(views) == 1 and (leader := views.pop()[0]) and leader != old:
            elected.append(time.monotonic())
            return
        time.sleep(0.1)


def test_a_key_in_flight_when_its_leader_is_killed_completes_in_its_pipeline(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    before, during = tmp_path / "before.bin", tmp_path / "during.bin"
    digests = {"before": random_file(before, 2 * MiB), "during": random_file(during, KILL_SIZE)}
    with live_cluster(request, tmp_path_factory, "leader-kill", 3, overrides=OVERRIDES) as cluster:
        make_bucket(cluster)
        with ozone_client(cluster, **WRITER) as client:
            pipeline, first = _on_one_pipeline(cluster, client, before)
            pipeline_id = pipeline.id
            old = next(m for m in pipeline.members if m.uuid == first)
            others = [m.host for m in pipeline.members if m is not old]

            writer = client.create_key(VOL, BUCKET, "during", size_hint=KILL_SIZE)
            with open(during, "rb") as f:
                for _ in range(KILL_AT // PIECE):
                    writer.write(f.read(PIECE))
                block = writer.stream._current
                assert isinstance(block, BlockOutputStream)
                assert block.location.pipeline.id == pipeline_id
                assert block.location.pipeline.leader_id == first
                in_flight = block.sent - block.acked
                os.kill(_pid(cluster, old.host), signal.SIGKILL)
                killed = time.monotonic()
                elected: list[float] = []
                watcher = threading.Thread(
                    target=_watch_election, args=(cluster, others, pipeline_id, first, elected)
                )
                watcher.start()
                while piece := f.read(PIECE):
                    writer.write(piece)
            info = writer.close()
            committed_s = time.monotonic() - killed
            watcher.join(60)
            assert elected, "the other two elected no leader"
            stream = writer.stream
            new = block._leader
            assert new is not None
            views = pipeline_views(cluster, others, pipeline_id)
            print(
                f"\nleader {old.host} of pipeline {pipeline_id[:8]} killed with {in_flight // MiB} MB "
                f"unacknowledged; the other two agreed on a new leader {elected[0] - killed:.1f} s later; "
                f"the block found {new.host} leading after {block._moves} failover(s) "
                f"({block.failover_s:.1f} s in them, the policy's sleeps included); the key committed "
                f"{committed_s:.1f} s after the kill; {stream.retries} block rewrites; the other members "
                f"see (leader, term) {sorted(views, key=str)}"
            )
            for failure in stream._failures:
                print(f"  block rewritten: {failure[:400]}")
            assert block._moves >= 1 and new.uuid != first
            assert views == {(new.uuid, max(term for _, term in views))}, views
            assert stream.retries == 0, stream._failures  # no block closed, nothing rewritten elsewhere
            (location,) = stream._blocks
            assert location.pipeline.id == pipeline_id and location.length == KILL_SIZE == info.data_size

            for name, digest in digests.items():
                out = tmp_path / f"{name}.read"
                client.get_key(VOL, BUCKET, name, out)
                assert file_sha256(out) == digest, name

        def replicas() -> dict[str, str]:
            files = block_files(cluster, location.container_id, location.local_id)
            return {dn: file_sha256(path) for dn, path in files.items() if path.stat().st_size == KILL_SIZE}

        seen = wait_for(lambda: set(others) <= set(found := replicas()) and found, 60, "the live replicas")
        assert {seen[host] for host in others} == {digests["during"]}, seen
