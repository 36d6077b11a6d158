"""Acceptance (issue 11, defect 5): with two datanodes of a 5-node cluster killed in a row (each the leader
of a pipeline in use) while puts run, no put fails while 3 datanodes remain, unless its deadline passes.

Puts that hit a dead pipeline exclude it and back off; SCM no longer hands the excluded pipeline back, so
they wait until SCM has marked the dead nodes stale, closed their pipelines and formed one on the three
live datanodes. Every key reads back whole.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from typing import Any

import pytest

from tests.e2e.cluster.cluster_helpers import STALE_S, LiveCluster, live_cluster, ozone_client, sh
from tests.polling import wait_for

VOL, BUCKET = "double", "bucket"
WRITERS = 4
SIZE = 256 * 1024
DEADLINE_S = 60  # the puts' ozone.client.retry.deadline: outlasts stale (6 s) + forming a new pipeline
CLIENT = {
    "ozone.client.stream.buffer.size": "64KB",
    "ozone.client.stream.buffer.flush.size": "128KB",
    "ozone.client.stream.buffer.max.size": "256KB",
    "hdds.ratis.client.exponential.backoff.base.sleep": "250ms",
    "hdds.ratis.client.exponential.backoff.max.sleep": "2s",
    "ozone.client.retry.deadline": f"{DEADLINE_S}s",
}
OVERRIDES = {"ozone.scm.block.size": "1MB", "ozone.scm.container.size": "8MB"}


def open_three(cluster: LiveCluster) -> list[dict[str, Any]]:
    return [
        p
        for p in cluster.pipelines()
        if p["state"] == "OPEN" and p["replicationConfig"].endswith("THREE") and len(p["nodes"]) == 3
    ]


def leader_host(pipeline: dict[str, Any]) -> str:
    leader = pipeline["leaderId"] or pipeline["suggestedLeaderId"]
    return next(n["hostname"] for n in pipeline["nodes"] if n["uuid"] == leader)


@pytest.mark.slow
def test_puts_outlast_two_datanodes_killed_in_a_row(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with live_cluster(request, tmp_path_factory, "double-kill", 5, overrides=OVERRIDES) as cluster:
        pipelines = wait_for(lambda: len(p := open_three(cluster)) >= 2 and p, 60, "2 OPEN RATIS/THREE")
        for made in (
            sh(cluster, "volume", "create", f"/{VOL}"),
            sh(cluster, "bucket", "create", f"/{VOL}/{BUCKET}"),
        ):
            assert made.code == 0, made
        digests: dict[str, str] = {}
        failures: list[str] = []
        slowest = [0.0]
        stop = threading.Event()
        lock = threading.Lock()

        def writer(n: int) -> None:
            with ozone_client(cluster, **CLIENT) as client:
                i = 0
                while not stop.is_set():
                    name, data = f"w{n}-{i}", os.urandom(SIZE)
                    started = time.monotonic()
                    try:
                        client.put_key(VOL, BUCKET, name, data)
                    except Exception as e:
                        with lock:
                            failures.append(f"{name} after {time.monotonic() - started:.1f}s: {e}")
                    else:
                        with lock:
                            digests[name] = hashlib.sha256(data).hexdigest()
                            slowest[0] = max(slowest[0], time.monotonic() - started)
                    i += 1

        threads = [threading.Thread(target=writer, args=(n,), daemon=True) for n in range(WRITERS)]
        for thread in threads:
            thread.start()
        wait_for(lambda: len(digests) >= 8, 60, "puts going")
        pipelines = open_three(cluster) or pipelines
        # a pipeline's leader first, then the node that leaves the fewest OPEN pipelines on live nodes
        members = [{n["hostname"] for n in p["nodes"]} for p in pipelines]
        hosts = sorted(set().union(*members))
        first, second = max(
            ((leader_host(p), b) for p in pipelines for b in hosts if b != leader_host(p)),
            key=lambda pair: sum(bool(set(pair) & m) for m in members),
        )
        untouched = sum(not {first, second} & m for m in members)
        cluster.kill(first)
        time.sleep(2)
        cluster.kill(second)
        killed = time.monotonic()
        at_kill = len(digests)

        def live_pipeline_used() -> bool:  # a pipeline on the three live datanodes took puts
            return (
                any(not {first, second} & {n["hostname"] for n in p["nodes"]} for p in open_three(cluster))
                and len(digests) >= at_kill + 2 * WRITERS
            )

        wait_for(live_pipeline_used, STALE_S + 40, "puts on a pipeline of the three live datanodes")
        recovered_s = time.monotonic() - killed
        stop.set()
        for thread in threads:
            thread.join(DEADLINE_S + 30)
        assert not any(t.is_alive() for t in threads)
        print(
            f"\n{len(pipelines)} pipelines, {untouched} on live nodes; killed {first} then {second}; "
            f"{len(digests)} puts ({at_kill} before the 2nd kill), "
            f"{len(failures)} failed; puts flowed on the live nodes {recovered_s:.1f} s after; "
            f"slowest put {slowest[0]:.1f} s"
        )
        assert failures == [], failures[:5]
        with ozone_client(cluster) as reader:
            for name, digest in digests.items():
                assert hashlib.sha256(reader.read_key(VOL, BUCKET, name).readall()).hexdigest() == digest
