"""kill -9 of OM while `omkg` load commits keys: after OM starts again on its om.db, nothing acknowledged
is lost, nothing unacknowledged is half there, and no object id is handed out twice.

One cluster serves every crash of a module: SCM, one datanode and OM, each its own process (`cluster up`
without the S3 gateway); the buckets are RATIS/ONE. Each crash: a child (om_crash_child.py) runs `freon
omkg`'s generate_om_keys on a fresh bucket from THREADS threads, printing `commit KEY` before each
commitKey is sent and `ack KEY OBJECT_ID` once OM answered it; OM gets SIGKILL at a random moment within
KILL_WINDOW_S of the first ack (drawn from the printed seed), the child is killed next, and OM starts
again on the same om.db. Then:
  a) every acknowledged key is listed and readable (lookupKey, then a read of its 0 bytes), with the
     objectID its commit answered;
  b) no key is half there: every listed key had its commit sent and is readable, the bucket's
     usedNamespace is the number of keys listed, and no listed key is still in openKeyTable (OM's
     /api/v1/openkeys);
  c) no object id is used twice over all the crashes of a run, and a key made after the restart gets an
     id above every id handed out before the crash;
and each earlier crash's bucket still holds exactly what was found after that crash.

Run (PYOZONE_PORT_RANGE=LOW-HIGH keeps the cluster's ports in a range):
  .venv/bin/python -m pytest tests/e2e/test_crash_om.py               3 crashes, in the default suite
  .venv/bin/python -m pytest tests/e2e/test_crash_om.py -m slow -s    200 crashes (-s: the seed and
                                                                      each crash's kill point as it goes)
  PYOZONE_CRASH_RUNS=20 PYOZONE_CRASH_SEED=S, with -m slow            20 crashes; the kill points of seed S
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pyozone.client import AsyncOzoneClient, KeyInfo, OzoneClient, OzoneClientError
from pyozone.cluster import supervisor
from pyozone.cluster.layout import HOST, plan_cluster
from pyozone.cluster.status import om_ready
from tests.crash_support import LineReader, crash_runs, crash_seed
from tests.e2e.cluster.cluster_helpers import FAST, LiveCluster, environment, ozone_client
from tests.e2e.om_crash_child import REPLICATION
from tests.polling import wait_for

CHILD = Path(__file__).with_name("om_crash_child.py")
VOLUME = "crash"
PROBE = "probe-after-restart"
THREADS = 8
KILL_WINDOW_S = 1.0
START_S = 30.0
RUNS = crash_runs(200)
# Every openKey asks SCM for a block: 1 MB blocks put 5,000 keys in a 5 GB container instead of 20.
OVERRIDES = {**FAST, "ozone.scm.block.size": "1MB"}


@dataclass(frozen=True, slots=True)
class Crash:
    """One kill, named in every failure so that it can be drawn again."""

    seed: int
    run: int
    bucket: str
    delay_s: float

    def __str__(self) -> str:
        return (
            f"seed {self.seed} run {self.run} (bucket {self.bucket}, OM killed {self.delay_s:.3f} s "
            "after the first ack)"
        )


@dataclass(frozen=True, slots=True)
class LoadReport:
    """What the child said before it was killed."""

    committing: frozenset[str]  # commitKey sent
    acked: dict[str, int]  # commitKey answered: key -> objectID

    @classmethod
    def parse(cls, lines: list[str]) -> LoadReport:
        words = [line.split() for line in lines if line.strip()]
        return cls(
            frozenset(w[1] for w in words if w[0] == "commit"),
            {w[1]: int(w[2]) for w in words if w[0] == "ack"},
        )


async def create_empty_key(client: AsyncOzoneClient, bucket: str, key: str) -> KeyInfo:
    """An omkg key (openKey, then commitKey with no blocks), made by the test itself."""
    client_id = (await client.om.open_key(VOLUME, bucket, key, 0, REPLICATION)).client_id
    return await client.om.commit_key(VOLUME, bucket, key, client_id, 0, [])


async def read_all(client: AsyncOzoneClient, bucket: str, names: list[str]) -> dict[str, str]:
    """Each key read through lookupKey and a key stream: "SIZE OBJECT_ID BYTES_READ", or the error."""
    gate = asyncio.Semaphore(16)

    async def one(name: str) -> tuple[str, str]:
        async with gate:
            try:
                stream = await client.read_key(VOLUME, bucket, name)
                try:
                    data = await stream.readall()
                finally:
                    await stream.close()
            except OzoneClientError as e:
                return name, f"error: {e}"
            return name, f"{stream.info.data_size} {stream.info.object_id} {len(data)}"

    return dict(await asyncio.gather(*(one(n) for n in names)))


class LoadChild:
    """om_crash_child.py, started before its bucket exists (its interpreter loads while OM restarts)."""

    def __init__(self, conf_dir: str, log: Path) -> None:
        self.log = log
        argv = [sys.executable, str(CHILD), conf_dir, VOLUME, "key", str(THREADS)]
        with open(log, "wb") as stderr:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=environment()
            )
        assert self.process.stdout is not None
        self.reader = LineReader(self.process.stdout)

    def load(self, bucket: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{bucket}\n".encode())
        self.process.stdin.flush()

    def kill(self) -> LoadReport:
        """SIGKILL; what it printed, the acks that came in after our last read included."""
        self.process.kill()
        self.process.wait()
        lines = self.reader.drain()
        self.close()
        return LoadReport.parse(lines)

    def close(self) -> None:
        """Kills it if it still runs and closes its pipes (again: nothing)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            assert stream is not None
            with contextlib.suppress(BrokenPipeError):
                stream.close()


class OmCrashHarness:
    """Crashes OM again and again under load; what each crash's bucket held after the restart."""

    def __init__(self, cluster: LiveCluster, client: OzoneClient, name: str, seed: int) -> None:
        self.cluster, self.client, self.name, self.seed = cluster, client, name, seed
        self.rng = random.Random(seed)
        self.state = cluster.state
        self.found: dict[str, dict[str, int]] = {}  # bucket -> key -> objectID, after its crash
        self.ids: set[int] = set()  # every committed key's objectID so far

    def run(self, runs: int) -> None:
        started = time.monotonic()
        self.next_child = self.child(0)
        try:
            for run in range(runs):
                self.crash(run)
        finally:
            self.next_child.close()
        for bucket in self.found:
            self.check_kept(bucket)
        took = time.monotonic() - started
        print(f"{runs} OM crashes in {took:.0f} s ({took / runs:.1f} s each), {len(self.ids)} keys checked")

    def child(self, run: int) -> LoadChild:
        return LoadChild(
            self.state.conf_dir, self.cluster.data_dir / "logs" / f"child-{self.name}{run:04d}.log"
        )

    def crash(self, run: int) -> None:
        """Kills OM under the next child's load, restarts it (starting the child after) and checks."""
        bucket = f"{self.name}{run:04d}"
        self.client.create_bucket(VOLUME, bucket, REPLICATION)
        crash = Crash(self.seed, run, bucket, self.rng.uniform(0, KILL_WINDOW_S))
        child = self.next_child
        child.load(bucket)
        try:
            started = child.reader.read_for(START_S, until="ack ")
            assert started, f"{crash}: no key acknowledged: {child.log.read_text()[-2000:]}"
            child.reader.read_for(crash.delay_s)
            assert supervisor.kill(self.state, "om"), f"{crash}: OM was not running"
        finally:
            load = child.kill()
        pid = supervisor.start(self.state, "om")
        self.next_child = self.child(run + 1)
        self.wait_om_ready(crash, pid)
        self.check(crash, load)
        if run:
            self.check_kept(f"{self.name}{run - 1:04d}")

    def wait_om_ready(self, crash: Crash, pid: int) -> None:
        port = self.state.daemon("om").ports["http"]

        def ready() -> bool:
            status = supervisor.exit_status(pid)
            assert status == "running", f"{crash}: OM {status} on restart:\n{self.cluster.logs(40)}"
            return om_ready(port)

        wait_for(ready, START_S, f"{crash}: OM ready after the restart", interval_s=0.1)

    def listing(self, bucket: str) -> dict[str, int]:
        return {k.name: k.object_id for k in self.client.list_keys(VOLUME, bucket)}

    def open_keys(self, bucket: str) -> set[str]:
        """The names in openKeyTable under the bucket, from OM's web API."""
        names: set[str] = set()
        after: str | None = ""
        while after is not None:
            query = urllib.parse.urlencode(
                {"prefix": f"/{VOLUME}/{bucket}/", "startAfter": after, "limit": 1000}
            )
            url = f"http://{HOST}:{self.state.daemon('om').ports['http']}/api/v1/openkeys?{query}"
            with urllib.request.urlopen(url, timeout=10) as response:
                page = json.loads(response.read())
            names |= {item["name"] for item in page["items"]}
            after = page["next"]
        return names

    def check(self, crash: Crash, load: LoadReport) -> None:
        listed = self.listing(crash.bucket)
        print(f"{crash}: {len(load.acked)} acked, {len(load.committing)} commits sent, {len(listed)} listed")
        lost = sorted(set(load.acked) - set(listed))
        assert not lost, f"{crash}: {len(lost)} acknowledged keys lost, e.g. {lost[:5]}"
        moved = {k: (i, listed[k]) for k, i in load.acked.items() if listed[k] != i}
        assert not moved, f"{crash}: objectID acked -> listed changed: {dict(list(moved.items())[:5])}"
        uncommitted = sorted(set(listed) - load.committing)
        assert not uncommitted, f"{crash}: keys listed whose commit was never sent: {uncommitted[:5]}"

        read = self.client.run(read_all(self.client.async_client, crash.bucket, list(listed)))
        unreadable = {k: got for k, got in read.items() if got != f"0 {listed[k]} 0"}
        assert not unreadable, f"{crash}: listed keys not read back as listed (0 bytes): {unreadable}"
        used = self.client.bucket_info(VOLUME, crash.bucket).used_namespace
        assert used == len(listed), f"{crash}: usedNamespace {used}, {len(listed)} keys listed"
        still_open = sorted(set(listed) & self.open_keys(crash.bucket))
        assert not still_open, f"{crash}: committed keys still in openKeyTable: {still_open[:5]}"

        ids = list(listed.values())
        assert len(set(ids)) == len(ids), f"{crash}: one objectID on two keys in {crash.bucket}"
        reused = sorted(self.ids & set(ids))
        assert not reused, f"{crash}: objectIDs of earlier crashes' keys used again: {reused[:5]}"
        before = max(self.ids | set(ids), default=0)
        probe = self.client.run(create_empty_key(self.client.async_client, crash.bucket, PROBE))
        assert probe.object_id > before, f"{crash}: new key got objectID {probe.object_id} <= {before}"
        self.ids |= {*ids, probe.object_id}
        self.found[crash.bucket] = {**listed, PROBE: probe.object_id}

    def check_kept(self, bucket: str) -> None:
        """A later crash took nothing from an earlier bucket and added nothing to it."""
        now, then = self.listing(bucket), self.found[bucket]
        lost, added = sorted(set(then) - set(now)), sorted(set(now) - set(then))
        assert now == then, (
            f"bucket {bucket} changed since its crash (seed {self.seed}): lost {lost[:5]}, new {added[:5]}"
        )


def kill_all(cluster: LiveCluster) -> None:
    """kill -9 of every daemon: a crash test needs no clean stop, and this one takes no time."""
    state = cluster.state
    for name in state.pids:
        supervisor.kill(state, name)


@pytest.fixture(scope="module")
def crash_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveCluster, OzoneClient]]:
    """SCM, one datanode and OM (no S3 gateway: one daemon less to start), and the volume."""
    data_dir = tmp_path_factory.mktemp("om-crash")
    state = plan_cluster(data_dir, 1, 1, OVERRIDES)
    state.daemons = [d for d in state.daemons if d.name != "s3g"]
    state.save()
    cluster = LiveCluster(data_dir)
    request.addfinalizer(lambda: kill_all(cluster))
    up = cluster.cluster("up", "--background", "--timeout", "90", timeout_s=150)
    assert up.code == 0, (up, cluster.logs())
    client = ozone_client(cluster)
    request.addfinalizer(client.close)
    client.create_volume(VOLUME)
    yield cluster, client


@pytest.mark.timeout(120)
def test_om_killed_under_load_keeps_acked_keys_shows_no_half_key_and_reuses_no_id(
    crash_cluster: tuple[LiveCluster, OzoneClient],
) -> None:
    OmCrashHarness(*crash_cluster, "quick", crash_seed()).run(3)


@pytest.mark.slow
@pytest.mark.timeout(120 + 60 * RUNS)
def test_om_killed_200_times_under_load_keeps_acked_keys_shows_no_half_key_and_reuses_no_id(
    crash_cluster: tuple[LiveCluster, OzoneClient],
) -> None:
    OmCrashHarness(*crash_cluster, "slow", crash_seed()).run(RUNS)
