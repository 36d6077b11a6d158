"""End to end: a RATIS/THREE pipeline's members elect their leader, and SCM follows. One cluster of six
datanodes (four RATIS/THREE pipelines), short timeouts: elections 1 s (FAST), the slowness and no-leader
timeouts 5 s; datanodes go STALE only after 60 s, so a pipeline that closes here closes on its leader's
slowness action, not on SCM's stale-node handler. The cases run in this order, each leaving every datanode
running:

(4) a new pipeline's first leader is SCM's suggested one, and SCM, `admin pipeline list` and the members'
    web API and /prom say so;
(3) a follower stopped (SIGSTOP) for less than the timeouts while a 20 MB key is written through its
    pipeline catches up once resumed: the key completes in that pipeline with no rewrite, the replicas'
    BCSIDs and block bytes are equal, and the pipeline stays OPEN;
(2) a follower killed (-9): a key written into its pipeline just after is acknowledged at majority (the
    leader commits entries the dead member never held), a client's writes go on, and the leader's slowness
    action closes the pipeline through SCM;
(1) the leader killed (-9) while a client writes keys through its pipeline: the other two elect a leader
    within 2 x the election timeout (+ a margin for this loaded machine; printed), SCM records it, every
    key the client acknowledged reads back byte-identical, SCM closes the pipeline on the new leader's
    slowness action for the dead one, and the pipeline's containers close or quasi-close.

(A writer that follows the named leader in the same pipeline: test_e2e_write_leader_failover.py.)
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import random
import signal
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pyozone.cluster.layout import HOST
from pyozone.datanode.metrics import ratis_group_name
from tests.e2e.cluster.cluster_helpers import (
    LiveCluster,
    MiB,
    block_files,
    container_replica_states,
    file_sha256,
    live_cluster,
    ozone_client,
    sh,
)
from tests.polling import wait_for

VOL, BUCKET = "elections", "bucket1"
ELECTION_S = 1.0  # hdds.ratis.leader.election.minimum.timeout.duration (FAST)
SLOWNESS_S = 5.0
ELECTION_MARGIN_S = 2.0  # a shared, loaded 2-core machine
STOP_S = 2.5  # a follower stopped for less than the slowness and no-leader timeouts
LEASE_S = 20  # ozone.scm.close.container.wait.duration
ENDED = ("CLOSED", "QUASI_CLOSED", "DELETING", "DELETED", "")  # "": deleted and forgotten (empty)
OVERRIDES = {
    "ozone.scm.block.size": "4MB",
    "ozone.scm.container.size": "64MB",
    "ozone.scm.close.container.wait.duration": f"{LEASE_S}s",
    "hdds.ratis.raft.server.rpc.slowness.timeout": f"{SLOWNESS_S:.0f}s",
    "hdds.ratis.raft.server.Notification.no-leader.timeout": f"{SLOWNESS_S:.0f}s",
    "ozone.scm.stale.node.interval": "60s",
    "ozone.scm.dead.node.interval": "120s",
    # Pipelines form once all six datanodes registered (test_e2e_keys_failures: else 3, not 4, may form).
    "hdds.scm.safemode.min.datanode": "6",
}
WRITER = {  # write pipeline V1, a writeChunk per MB, a putBlock every 2 MB
    "ozone.fs.datastream.enabled": "false",
    "ozone.client.stream.buffer.size": "1MB",
    "ozone.client.stream.buffer.flush.size": "2MB",
    "ozone.client.stream.buffer.max.size": "8MB",
}
KEY_SIZE = 1 * MiB


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    with live_cluster(request, tmp_path_factory, "elections", 6, overrides=OVERRIDES) as live:
        wait_for(lambda: len(open_three(live)) >= 4, 60, "4 OPEN RATIS/THREE pipelines")
        for made in (
            sh(live, "volume", "create", f"/{VOL}"),
            sh(live, "bucket", "create", f"/{VOL}/{BUCKET}"),
        ):
            assert made.code == 0, made
        yield live


def open_three(cluster: LiveCluster) -> list[dict[str, Any]]:
    """SCM's OPEN RATIS/THREE pipelines whose leader it knows."""
    return [
        p
        for p in cluster.pipelines()
        if p["state"] == "OPEN" and p["replicationConfig"].endswith("THREE") and p.get("leaderId")
    ]


def scm_pipeline(cluster: LiveCluster, pipeline_id: str) -> dict[str, Any] | None:
    return next((p for p in cluster.pipelines() if p["id"] == pipeline_id), None)


def hosts(pipeline: dict[str, Any]) -> dict[str, str]:
    """uuid -> datanode name (dn1, ...) of the pipeline's members."""
    return {n["uuid"]: n["hostname"] for n in pipeline["nodes"]}


def fetch(cluster: LiveCluster, host: str, path: str, timeout_s: float = 2) -> bytes | None:
    """GET the datanode's web `path`; None when it does not answer."""
    url = f"http://{HOST}:{cluster.port(host, 'http')}{path}"
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as answer:
            return answer.read()
    except (urllib.error.URLError, OSError):
        return None


def view(cluster: LiveCluster, host: str, pipeline_id: str) -> dict[str, Any] | None:
    """The pipeline as the datanode's Raft member has it (its /api/v1/pipelines item)."""
    body = fetch(cluster, host, "/api/v1/pipelines?limit=100")
    if body is None:
        return None
    return next((i for i in json.loads(body)["items"] if i["pipelineId"] == pipeline_id), None)


def pid_of(cluster: LiveCluster, host: str) -> int:
    pid = cluster.state.pids.get(host)
    assert pid is not None, host
    return pid


def payload(name: str) -> bytes:
    return random.Random(name).randbytes(KEY_SIZE)


class KeysWriter:
    """Writes 1 MB keys one after another from a thread until stopped; remembers the acknowledged ones."""

    def __init__(self, cluster: LiveCluster, prefix: str) -> None:
        self.client = ozone_client(cluster, **WRITER)
        self.prefix = prefix
        self.acked: dict[str, str] = {}
        self.acked_at: dict[str, float] = {}
        self.pipelines: dict[str, set[str]] = {}
        self.containers: set[tuple[str, int]] = set()
        """(pipeline, container) of the acknowledged keys' blocks."""
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"writer-{prefix}", daemon=True)

    def __enter__(self) -> KeysWriter:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
        self.client.close()

    def _run(self) -> None:
        n = 0
        while not self._stop.is_set():
            name = f"{self.prefix}-{n:04d}"
            n += 1
            data = payload(name)
            try:
                self.client.put_key(VOL, BUCKET, name, data)
                info = self.client.key_info(VOL, BUCKET, name)  # with its blocks' pipelines
            except Exception as e:  # reported by the test thread
                self.errors.append(f"{name}: {e!r}")
                continue
            self.acked[name] = hashlib.sha256(data).hexdigest()
            self.acked_at[name] = time.monotonic()
            self.pipelines[name] = {b.pipeline.id for b in info.locations}
            self.containers |= {(b.pipeline.id, b.container_id) for b in info.locations}

    def acked_after(self, moment: float) -> list[str]:
        return [name for name, at in list(self.acked_at.items()) if at > moment]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(120)
        assert not self._thread.is_alive(), "the writer hangs"

    def read_back(self) -> None:
        """Every acknowledged key reads back byte-identical."""
        for name, digest in sorted(self.acked.items()):
            with self.client.read_key(VOL, BUCKET, name) as reader:
                got = reader.readall()
            assert hashlib.sha256(got).hexdigest() == digest, name


def close_action(cluster: LiveCluster, pipeline_id: str, silent: str) -> str | None:
    """SCM's log line of the pipeline action that closed `pipeline_id` for member `silent`'s slowness."""
    wanted = f"pipeline Action CLOSE on pipeline {pipeline_id}. Reason : member {silent} silent"
    return next((line for line in cluster.log("scm").splitlines() if wanted in line), None)


def dormant_others(cluster: LiveCluster, pipeline_id: str) -> list[str]:
    """Deactivates every other OPEN RATIS/THREE pipeline, so SCM places the next blocks in this one."""
    others = [
        p["id"] for p in cluster.pipelines()
        if p["id"] != pipeline_id and p["state"] == "OPEN" and p["replicationConfig"].endswith("THREE")
    ]  # fmt: skip
    for other in others:
        assert cluster.admin("pipeline", "deactivate", other).code == 0
    return others


def activate(cluster: LiveCluster, pipelines: list[str]) -> None:
    for pipeline_id in pipelines:
        cluster.admin("pipeline", "activate", pipeline_id)


def leader_noticed(
    cluster: LiveCluster, host: str, pipeline_id: str, leader: str, since: datetime.datetime
) -> float | None:
    """Seconds from `since` to the datanode's first log line, after it, of `leader` taking over the
    pipeline (its state machine's leader change notification, as Ozone's XceiverServerRatis logs it)."""
    wanted = f"Leader change notification received for group: {pipeline_id} with new leaderId: {leader}"
    for line in cluster.log(host).splitlines():
        if wanted in line:
            at = datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
            if at >= since:
                return (at - since).total_seconds()
    return None


def restart(cluster: LiveCluster, host: str) -> None:
    """Starts a killed datanode again and waits until four pipelines of running members are OPEN."""
    cluster.start(host)
    wait_for(lambda: cluster.health(host) == "HEALTHY", 60, f"{host} HEALTHY again")
    wait_for(lambda: len(open_three(cluster)) >= 2, 90, "two OPEN RATIS/THREE pipelines")


# ---------------------------------------------------------------------------------------------------- (4)
def test_a_new_pipelines_first_leader_is_scms_suggested_one(cluster: LiveCluster) -> None:
    pipelines = open_three(cluster)
    table = cluster.admin("pipeline", "list")
    assert table.code == 0, table
    for p in pipelines:
        members = hosts(p)
        suggested = p["suggestedLeaderId"]
        assert p["leaderId"] == suggested, p
        # the members agree, in the term they started in: the suggested leader (priority 1) won the first
        for host in members.values():
            seen = wait_for(lambda h=host, i=p["id"]: view(cluster, h, i), 30, f"{host}'s view of {p['id']}")
            assert seen["leader"] == suggested, (host, seen)
        leader_host = members[suggested]
        (row,) = [line for line in table.out.splitlines() if line.startswith(p["id"])]
        assert f" {leader_host} " in f" {row} ".replace("(", " ").replace(")", " "), row  # LEADER column
        prom = (fetch(cluster, leader_host, "/prom", 10) or b"").decode()
        labels = f'group="{ratis_group_name(p["id"])}",instance="{suggested}"'
        assert f'ratis_server_role{{{labels},role="LEADER"}} 1.0' in prom.splitlines(), prom[-2000:]
    print(f"\n{len(pipelines)} pipelines, each led by SCM's suggested leader:\n{table.out}")


# ---------------------------------------------------------------------------------------------------- (3)
def test_a_follower_stopped_shorter_than_the_timeouts_catches_up_and_the_pipeline_stays_open(
    cluster: LiveCluster, tmp_path: Path
) -> None:
    pipeline = open_three(cluster)[0]
    members = hosts(pipeline)
    follower = next(uuid for uuid in members if uuid != pipeline["leaderId"])
    size = 20 * MiB
    data = random.Random("stopped").randbytes(size)
    outcome: dict[str, Any] = {}
    others = dormant_others(cluster, pipeline["id"])  # the key goes to this pipeline
    pid = pid_of(cluster, members[follower])
    try:
        with ozone_client(cluster, **WRITER) as client:

            def write() -> None:
                try:
                    writer = client.create_key(VOL, BUCKET, "twenty", size_hint=size)
                    for offset in range(0, size, MiB):
                        writer.write(data[offset : offset + MiB])
                    writer.close()
                    outcome["info"] = client.key_info(VOL, BUCKET, "twenty")  # with its blocks' pipelines
                    outcome["retries"] = writer.stream.retries
                except BaseException as e:  # reported by the test thread
                    outcome["error"] = e

            os.kill(pid, signal.SIGSTOP)
            stopped = time.monotonic()
            try:
                thread = threading.Thread(target=write, name="twenty", daemon=True)
                thread.start()
                time.sleep(max(0.0, STOP_S - (time.monotonic() - stopped)))
            finally:
                os.kill(pid, signal.SIGCONT)
            resumed = time.monotonic()
            thread.join(120)
            assert not thread.is_alive() and "error" not in outcome, outcome
            info = outcome["info"]
            assert outcome["retries"] == 0 and info.data_size == size
            assert {b.pipeline.id for b in info.locations} == {pipeline["id"]}, info.locations
            written_s = time.monotonic() - stopped
            with client.read_key(VOL, BUCKET, "twenty") as reader:
                assert reader.readall() == data
    finally:
        activate(cluster, others)

    # the resumed follower caught up: every replica holds the same bytes and BCSID
    for block in info.locations:

        def replicas(b: Any = block) -> dict[str, str]:
            files = block_files(cluster, b.container_id, b.local_id)
            return {dn: file_sha256(path) for dn, path in files.items() if path.stat().st_size == b.length}

        seen = wait_for(
            lambda r=replicas: len(found := r()) == 3 and found, 60, "three replicas of the block"
        )
        assert len(set(seen.values())) == 1, (block, seen)
    for cid in {b.container_id for b in info.locations}:

        def bcsids(c: int = cid) -> dict[str, int | None]:
            out: dict[str, int | None] = {}
            for host in members.values():
                body = fetch(cluster, host, f"/api/v1/containers/{c}")
                out[host] = json.loads(body)["bcsid"] if body is not None else None
            return out

        equal = wait_for(
            lambda b=bcsids: len(set((found := b()).values())) == 1 and found, 30, "BCSIDs equal"
        )
        print(f"container {cid}: BCSIDs {equal}")
    # past the slowness timeout since the resume, the pipeline is still OPEN and no member asked to close it
    time.sleep(max(0.0, SLOWNESS_S + 2 - (time.monotonic() - resumed)))
    now = scm_pipeline(cluster, pipeline["id"])
    assert now is not None and now["state"] == "OPEN", now
    assert close_action(cluster, pipeline["id"], follower) is None
    views = {host: view(cluster, host, pipeline["id"]) for host in members.values()}
    assert {(v or {}).get("role") for v in views.values()} == {"LEADER", "FOLLOWER"}, views
    print(
        f"\nfollower {members[follower]} of pipeline {pipeline['id'][:8]} stopped {resumed - stopped:.1f} s; "
        f"20 MB written in {written_s:.1f} s with no rewrite; replicas equal; the pipeline stays OPEN"
    )


# ---------------------------------------------------------------------------------------------------- (2)
def test_a_killed_follower_leaves_the_writes_going_and_its_leader_closes_the_pipeline(
    cluster: LiveCluster,
) -> None:
    pipeline = open_three(cluster)[0]
    members = hosts(pipeline)
    follower = next(uuid for uuid in members if uuid != pipeline["leaderId"])
    victim = members[follower]
    leader_host = members[pipeline["leaderId"]]
    others = dormant_others(cluster, pipeline["id"])  # the next key goes to this pipeline
    cluster.kill(victim)
    killed = time.monotonic()
    try:
        # a key written after the kill, acknowledged at majority in this pipeline
        with ozone_client(
            cluster, **WRITER, **{"hdds.ratis.client.request.watch.type": "MAJORITY_COMMITTED"}
        ) as client:
            writer = client.create_key(VOL, BUCKET, "majority", size_hint=KEY_SIZE)
            writer.write(payload("majority"))
            writer.close()
            majority_s = time.monotonic() - killed
            assert writer.stream.retries == 0, writer.stream._failures
            info = client.key_info(VOL, BUCKET, "majority")
            assert {b.pipeline.id for b in info.locations} == {pipeline["id"]}, info.locations
        seen = view(cluster, leader_host, pipeline["id"])
        assert seen is not None and seen["role"] == "LEADER", seen
        held = {m["uuid"]: m["matchIndex"] for m in seen["members"]}
        assert seen["commitIndex"] >= max(b.bcsid for b in info.locations) > held[follower], (info, seen)
    finally:
        activate(cluster, others)
    try:
        with KeysWriter(cluster, "f") as keys:  # the writes go on (elsewhere once the pipeline closes)
            closed = wait_for(
                lambda: (
                    (scm_pipeline(cluster, pipeline["id"]) or {"state": "CLOSED"})["state"] == "CLOSED"
                    and time.monotonic()
                ),
                SLOWNESS_S + 40,
                f"pipeline {pipeline['id']} CLOSED",
            )
            action = wait_for(
                lambda: close_action(cluster, pipeline["id"], follower), 30, "the leader's action"
            )
            wait_for(lambda: len(keys.acked_after(closed)) >= 2, 60, "two keys written after the close")
            keys.stop()
            assert not keys.errors, keys.errors
            keys.read_back()
            with keys.client.read_key(VOL, BUCKET, "majority") as reader:
                assert reader.readall() == payload("majority")
    finally:
        restart(cluster, victim)
    print(
        f"\nfollower {victim} of pipeline {pipeline['id'][:8]} killed: a key written there "
        f"{majority_s:.2f} s after the kill at majority (the leader committed to {seen['commitIndex']}, the "
        f"dead follower holds up to {held[follower]}); SCM closed the pipeline {closed - killed:.1f} s after "
        f"the kill (slowness timeout {SLOWNESS_S:.0f} s) on {action.split('] ')[-1]!r}; "
        f"{len(keys.acked)} keys written meanwhile and after, each read back byte-identical"
    )


# ---------------------------------------------------------------------------------------------------- (1)
def test_a_killed_leader_is_replaced_within_two_election_timeouts_and_no_acknowledged_key_is_lost(
    cluster: LiveCluster,
) -> None:
    with KeysWriter(cluster, "l") as writer:
        first = wait_for(lambda: next(iter(writer.pipelines.values()), None), 60, "a key written")
        pipeline = wait_for(
            lambda: next((p for p in open_three(cluster) if p["id"] in first), None), 30, "its pipeline OPEN"
        )
        members = hosts(pipeline)
        leader = pipeline["leaderId"]
        survivors = [host for uuid, host in members.items() if uuid != leader]
        before = wait_for(lambda: view(cluster, survivors[0], pipeline["id"]), 30, "the survivor's view")
        pid = pid_of(cluster, members[leader])
        killed, killed_at = time.monotonic(), datetime.datetime.now()
        os.kill(pid, signal.SIGKILL)
        try:

            def elected() -> tuple[str, int] | None:
                views = [view(cluster, host, pipeline["id"]) for host in survivors]
                named = {(v["leader"], v["term"]) for v in views if v is not None}
                if len(named) != 1 or len(views) != 2 or None in views:
                    return None
                (who, term) = named.pop()
                return (who, term) if who in members and who != leader else None

            new, term = wait_for(elected, 30, "the survivors elect a leader", interval_s=0.05)
            agreed_s = time.monotonic() - killed
            # when the first survivor heard of the new leader, by its log (no polling in the figure)
            elected_s = min(
                noticed
                for host in survivors
                if (noticed := leader_noticed(cluster, host, pipeline["id"], new, killed_at)) is not None
            )
            recorded = wait_for(
                lambda: (p := scm_pipeline(cluster, pipeline["id"])) is not None and p["leaderId"] == new,
                30,
                "SCM records the new leader",
            )
            recorded_s = time.monotonic() - killed
            closed = wait_for(
                lambda: (
                    (scm_pipeline(cluster, pipeline["id"]) or {"state": "CLOSED"})["state"] == "CLOSED"
                    and time.monotonic()
                ),
                SLOWNESS_S + 40,
                f"pipeline {pipeline['id']} CLOSED",
            )
            wait_for(  # the new leader's slowness action, for the old leader
                lambda: close_action(cluster, pipeline["id"], leader), 30, "the new leader's action"
            )
            wait_for(lambda: len(writer.acked_after(killed)) >= 3, 60, "three keys written after the kill")
            writer.stop()
            assert not writer.errors, writer.errors
            writer.read_back()
            # the pipeline's containers close or quasi-close (or, emptied, are deleted) without the dead one
            touched = sorted(cid for pid, cid in writer.containers if pid == pipeline["id"])
            ended: dict[int, tuple[str, list[str]]] = {}

            def containers_ended() -> bool:
                ended.update({cid: container_replica_states(cluster, cid) for cid in touched})
                return all(state in ENDED for state, _ in ended.values())

            wait_for(containers_ended, LEASE_S + 60, lambda: f"containers {touched} closed: {ended}", 1)
        finally:
            restart(cluster, members[leader])
    print(
        f"\nleader {members[leader]} of pipeline {pipeline['id'][:8]} killed (term {before['term']}): "
        f"{members[new]} elected in term {term} after {elected_s:.2f} s (bound 2 x {ELECTION_S:.0f} s + "
        f"{ELECTION_MARGIN_S:.0f} s margin; both survivors' web API named it after {agreed_s:.2f} s), "
        f"recorded by SCM after {recorded_s:.2f} s; SCM closed the "
        f"pipeline {closed - killed:.1f} s after the kill; {len(writer.acked)} keys acknowledged "
        f"({len(writer.acked_after(killed))} after the kill), each read back byte-identical; its containers "
        f"ended {ended}"
    )
    assert recorded and term > before["term"]
    assert elected_s <= 2 * ELECTION_S + ELECTION_MARGIN_S, elected_s
