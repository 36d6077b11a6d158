"""kill -9 of an SCM that is allocating blocks: on restart no acknowledged container is lost, pipelines
reload, and no container id or local id is handed out twice.

The child (scm_crash_child.py) runs the real SCM core over an on-disk scm.db with simulated datanodes
and acknowledges each allocated block on stdout. Only the SCM dies: the datanodes keep their pipelines
and replicas, so the restarted SCM is given datanodes that still hold what the acknowledged writes put
there, and leaves safe mode from their reports.

Run:
  .venv/bin/python -m pytest tests/e2e/test_crash_scm.py               3 kills (after 1, 300, 2000 acks)
  .venv/bin/python -m pytest tests/e2e/test_crash_scm.py -m slow -s    200 kills at random points
  PYOZONE_CRASH_RUNS=20 PYOZONE_CRASH_SEED=S, with -m slow             20 kills; the kill points of seed S
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

import pyozone
from pyozone.cli.main import main
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.messages import ContainerReplicaReport
from pyozone.hdds.states import LifeCycleState, PipelineState, ReplicaState
from pyozone.scm.block.sequence_id import CONTAINER_ID, LOCAL_ID
from pyozone.scm.store.scm_db import open_scm_db
from pyozone.sim.cluster import SimCluster
from tests.crash_support import crash_runs, crash_seed

CHILD = Path(__file__).with_name("scm_crash_child.py")
BLOCK = 1 << 20
RUNS = crash_runs(200)
MAX_ACKS = 3000


def _child_module() -> ModuleType:
    """The child's settings (conf, seed, datanode count), so the restarted cluster matches it."""
    spec = importlib.util.spec_from_file_location("scm_crash_child", CHILD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


child = _child_module()


def acked(out: bytes) -> int:
    """Complete ack lines so far: a line is acknowledged once its newline is out."""
    return out.rpartition(b"\n")[0].count(b"\nack ")


def run_child_until_acks(db_dir: Path, wanted: int, log: Path, timeout: float = 25.0) -> list[str]:
    """Starts the child, reads until `wanted` acks (or the timeout), SIGKILLs it; complete lines only."""
    env = {**os.environ, "PYTHONPATH": str(Path(pyozone.__file__).parents[1])}
    with open(log, "wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, str(CHILD), str(db_dir)], stdout=subprocess.PIPE, stderr=stderr, env=env
        )
        assert proc.stdout is not None
        fd, out = proc.stdout.fileno(), b""
        deadline = time.monotonic() + timeout
        try:
            while acked(out) < wanted and time.monotonic() < deadline and proc.poll() is None:
                if select.select([fd], [], [], 0.2)[0]:
                    out += os.read(fd, 1 << 16)
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        out += proc.stdout.read()  # acks printed between our last read and the kill count too
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL, f"child exited {proc.returncode}: {log.read_text()}"
    complete = out.rpartition(b"\n")[0]  # a line cut by the kill was never acknowledged
    return complete.decode().splitlines()


def survivors(cluster: SimCluster, acks: list[tuple[int, int, str]]) -> None:
    """The datanodes outlived the SCM: they still hold its pipelines and the acknowledged blocks."""
    scm = cluster.scm
    for pipeline in scm.pipelines.pipelines():
        if pipeline.is_closed():
            continue
        for dn in pipeline.nodes:
            node = cluster.datanodes[dn]
            node.pipelines[pipeline.id] = pipeline.nodes
            if dn in (pipeline.leader, pipeline.suggested_leader) or len(pipeline.nodes) == 1:
                node.leader_of.add(pipeline.id)
    blocks = Counter(cid for cid, _, _ in acks)
    for info in scm.containers.containers():
        pipeline = scm.pipelines.find(info.pipeline_id) if info.pipeline_id else None
        if pipeline is None:
            continue
        state = ReplicaState.CLOSED if info.state is LifeCycleState.CLOSED else ReplicaState.OPEN
        keys = blocks[info.container_id]
        for dn in pipeline.nodes:
            cluster.datanodes[dn].replicas[info.container_id] = ContainerReplicaReport(
                info.container_id,
                state,
                sequence_id=keys,
                origin_node_id=dn,
                key_count=keys,
                used_bytes=keys * BLOCK,
            )


def sigkill_while_allocating(db_dir: Path, wanted: int, crash: str) -> None:
    """A fresh scm.db in `db_dir`; the child killed after `wanted` acks; then every check of the module
    docstring. `crash` names the kill point in every failure."""
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["scm", "--init", "-D", f"ozone.metadata.dirs={db_dir}"]) == 0

    lines = run_child_until_acks(db_dir, wanted, db_dir / "child.stderr")
    dns = [line.split()[1] for line in lines if line.startswith("dn ")]
    acks = [
        (int(c), int(loc), pid) for _, c, loc, pid in (ln.split() for ln in lines if ln.startswith("ack "))
    ]
    assert "ready" in lines and len(dns) == child.DATANODES, crash
    assert len(acks) >= wanted, (
        f"{crash}: only {len(acks)} acks: {(db_dir / 'child.stderr').read_text()[-2000:]}"
    )
    local_ids = [loc for _, loc, _ in acks]
    assert local_ids == sorted(set(local_ids)), f"{crash}: the child itself handed out a local id twice"
    max_container, max_local = max(c for c, _, _ in acks), max(local_ids)

    store = open_scm_db(db_dir)
    try:
        cluster = child.cluster_over(store)
        scm = cluster.scm
        assert list(cluster.datanodes) == dns  # same seed, same datanodes: they can report to the new SCM

        # Every acknowledged container is back, on the pipeline its block was written to.
        for cid, _, pid in acks:
            info = scm.containers.find(cid)
            assert info is not None, f"{crash}: acknowledged container {cid} lost"
            assert info.pipeline_id == pid, crash
        # The pipelines reloaded, still OPEN.
        for pid in {pid for _, _, pid in acks}:
            pipeline = scm.pipelines.find(pid)
            assert pipeline is not None and pipeline.state is PipelineState.OPEN, (crash, pid)
        # The persisted batch ends are at or past every id handed out.
        for name, handed_out in ((CONTAINER_ID, max_container), (LOCAL_ID, max_local)):
            persisted = scm.sequence_ids.persisted_end(name)
            assert persisted >= handed_out, (
                f"{crash}: {name}: stored end {persisted} < acknowledged {handed_out}"
            )

        known = {info.container_id for info in scm.containers.containers()}
        survivors(cluster, acks)
        assert cluster.run_until(lambda: child.writable(cluster), timeout_ms=30 * 60_000), [
            crash,
            *((r.name, r.validated) for r in scm.safe_mode.rule_statuses()),
        ]

        # SCM counts no block it hands out against its container (as Ozone's ContainerStateManagerImpl):
        # a container fills when its datanodes' CONTAINER_FULL action comes with a heartbeat, so the
        # heartbeats flow between these writes as they do in the child (40 s: each datanode's at least once).
        new_blocks = []
        for _ in range(200):
            new_blocks.append(cluster.write_block(BLOCK))
            cluster.advance(200)
        new_locals = [b.block_id.local_id for b in new_blocks]
        assert min(new_locals) > max_local, f"{crash}: a local id was handed out again after the crash"
        assert new_locals == sorted(set(new_locals)), crash
        new_containers = {b.container_id for b in new_blocks} - known
        assert new_containers, "200 blocks of 1 MB into 4 MB containers must open new containers"
        assert min(new_containers) > max_container, f"{crash}: a container id was handed out again"
        assert all(b.pipeline.replication_config == RATIS_THREE for b in new_blocks), crash
    finally:
        store.close()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("wanted", [1, 300, 2000])
def test_sigkill_while_allocating_loses_no_container_and_reuses_no_id(tmp_path: Path, wanted: int) -> None:
    started = time.monotonic()
    sigkill_while_allocating(tmp_path, wanted, f"killed after {wanted} acks")
    assert time.monotonic() - started < 55


@pytest.mark.slow
@pytest.mark.timeout(60 + 30 * RUNS)
def test_repeated_sigkills_while_allocating_lose_no_container_and_reuse_no_id(tmp_path: Path) -> None:
    """RUNS kills, each after a number of acks drawn log-uniformly from 1 to MAX_ACKS (the seed is
    printed): near the start, at sequence batch boundaries, after many containers closed."""
    seed, started = crash_seed(), time.monotonic()
    rng = random.Random(seed)
    for run in range(RUNS):
        wanted = round(MAX_ACKS ** rng.random())
        db_dir = tmp_path / f"run{run}"
        db_dir.mkdir()
        crash = f"seed {seed} run {run} (killed after {wanted} acks)"
        print(crash)
        sigkill_while_allocating(db_dir, wanted, crash)
        shutil.rmtree(db_dir)
    took = time.monotonic() - started
    print(f"{RUNS} SCM crashes in {took:.0f} s ({took / RUNS:.1f} s each)")
