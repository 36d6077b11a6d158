"""Crashes on real processes: three members of one group (RaftMember with the real SegmentedRaftLog), each
in its own OS process, the leader's process writing with concurrent callers; the leader is killed with -9
mid-writes (and, in the next round, a follower), then restarted from its files. Afterwards every write
that was acknowledged is applied on every member, and none twice. In one process, the same log is checked
at every step: no core hears `persisted` before a flush synced the writes it covers.

Each member process (`python -m tests.unit.ratis_server.test_shell_crash --member ...`) prints `ready`,
`lead TERM` when it becomes the leader, `ack KEY INDEX` for each write answered, and, asked with `dump` on
its stdin, `state {...}` (the keys its state machine holds, how many entries it was handed twice, its
applied index). A restarted member's state machine starts empty and applies its log again from the first
entry (no snapshots here), so what it holds is what its log files kept plus what the leader sends it.
With `--data`, each write also carries state machine data (`_DataKeys`, a `DataStateMachine`) and `state`
counts the entries applied without the data their write carried.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pyozone.common.net import HostPort
from pyozone.ratis.messages import LogEntry, RaftPeerId
from pyozone.ratis.outputs import Output, Persist
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis.settings import RaftSettings
from pyozone.ratis_server.segmented_log import SegmentedRaftLog
from pyozone.ratis_server.server import RaftMember
from pyozone.ratis_server.transport import RaftGroup, RaftPeer
from tests.unit.ratis_server.shell_support import Group, ports_of, put

ROOT = Path(__file__).resolve().parents[3]
NAMES = ("om1", "om2", "om3")
CALLERS = 4
# Longer than the in-process tests' timeouts: three interpreters share a loaded two-core machine.
SETTINGS = RaftSettings(rpc_timeout_min_ms=500, rpc_timeout_max_ms=1000)
WRITING_S = 1.5  # writes before each kill, and again after it


# ---- the member process


class _Keys:
    """The state machine: each entry's payload is a key written once; one applied again is counted."""

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.twice = 0
        self.last = 0

    def apply(self, entry: LogEntry) -> object:
        key = entry.payload.decode()
        if key in self.keys or entry.index <= self.last:
            self.twice += 1
        self.keys.add(key)
        self.last = entry.index
        return entry.index


def _data_of(key: str) -> bytes:
    """The state machine data a write of `key` carries (16 KB, different for every key)."""
    return hashlib.sha256(key.encode()).digest() * 512


class _DataKeys(_Keys):
    """The same keys as a `DataStateMachine` (a datanode's ContainerStateMachine in miniature): each entry's
    data is written at append to a file of its index (not synced, as a chunk file; a kill -9 keeps the page
    cache), read back for a follower the leader no longer caches it for, and checked at apply against
    what the key's write carried: `bad` counts entries applied with other data or none."""

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.bad = 0

    async def write_data(self, entry: LogEntry, data: memoryview) -> None:
        (self.directory / str(entry.index)).write_bytes(data)

    async def read_data(self, entry: LogEntry) -> bytes:
        return (self.directory / str(entry.index)).read_bytes()

    def apply_async(self, entry: LogEntry) -> asyncio.Future[object]:
        path = self.directory / str(entry.index)
        if not path.exists() or path.read_bytes() != _data_of(entry.payload.decode()):
            self.bad += 1
        done: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        done.set_result(self.apply(entry))
        return done


async def _member(me: str, ports: list[int], directory: Path, data: bool) -> None:
    group = RaftGroup(
        "crash",
        tuple(RaftPeer(RaftPeerId(n), HostPort("127.0.0.1", p)) for n, p in zip(NAMES, ports, strict=True)),
    )
    machine = _DataKeys(directory / f"{me}-data") if data else _Keys()
    member = RaftMember(
        RaftPeerId(me), group, SegmentedRaftLog(directory / me), machine, SETTINGS, rng=random.Random()
    )
    await member.start()
    print("ready", flush=True)
    incarnation = f"{me}-{os.getpid()}"
    writing = True

    async def caller(number: int) -> None:
        call = 0
        while writing:
            status = member.status()
            if status.role is not RaftPeerRole.LEADER:
                await asyncio.sleep(0.05)
                continue
            call += 1
            key = f"{incarnation}-{number}-{call}"
            try:
                carried = _data_of(key) if data else None
                index = await member.submit(key.encode(), f"{incarnation}-{number}", call, data=carried)
            except Exception:  # not (or no longer) the leader: not acknowledged
                await asyncio.sleep(0.05)
                continue
            print(f"ack {key} {index}", flush=True)

    async def leads() -> None:
        term = 0
        while True:
            status = member.status()
            if status.role is RaftPeerRole.LEADER and status.term != term:
                term = status.term
                print(f"lead {term}", flush=True)
            await asyncio.sleep(0.02)

    callers = [asyncio.create_task(caller(n)) for n in range(CALLERS)]
    watcher = asyncio.create_task(leads())
    loop = asyncio.get_running_loop()
    while True:
        command = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
        if command == "stop-writing":
            writing = False
            await asyncio.gather(*callers)
            print("stopped", flush=True)
        elif command == "dump":
            state = {"keys": sorted(machine.keys), "twice": machine.twice, "applied": machine.last}
            state["bad"] = machine.bad if isinstance(machine, _DataKeys) else 0
            print(f"state {json.dumps(state)}", flush=True)
        elif command in ("exit", ""):
            break
    watcher.cancel()
    writing = False
    await asyncio.gather(*callers)
    await member.stop()


# ---- the test


@dataclass
class _Process:
    name: str
    popen: subprocess.Popen[str]
    lines: queue.Queue[str] = field(default_factory=queue.Queue)

    def __post_init__(self) -> None:
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.put(line.strip())

    def tell(self, command: str) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.write(command + "\n")
        self.popen.stdin.flush()


class _Cluster:
    def __init__(self, directory: Path, data: bool = False) -> None:
        self.directory = directory
        self.data = data
        self.ports = ports_of(3)
        self.processes: dict[str, _Process] = {}
        self.acked: dict[str, int] = {}
        self.leader: tuple[int, str] | None = None  # (term, name) of the latest `lead`
        self.log: list[str] = []
        self.ready: set[str] = set()
        self.states: dict[str, dict[str, object]] = {}

    def start(self, name: str) -> None:
        command = [
            *(sys.executable, "-m", "tests.unit.ratis_server.test_shell_crash", "--member", name),
            *("--ports", ",".join(map(str, self.ports)), "--dir", str(self.directory)),
            *(("--data",) if self.data else ()),
        ]
        popen = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.processes[name] = _Process(name, popen)
        self.wait(lambda: name in self.ready, 20, f"{name} ready")

    def kill(self, name: str) -> None:
        process = self.processes.pop(name)
        process.popen.send_signal(signal.SIGKILL)
        process.popen.wait()
        self._drain()
        self.ready.discard(name)
        self.log.append(f"killed {name}")

    def _drain(self) -> None:
        for process in list(self.processes.values()):
            while True:
                try:
                    line = process.lines.get_nowait()
                except queue.Empty:
                    break
                self._take(process.name, line)

    def _take(self, name: str, line: str) -> None:
        kind, _, rest = line.partition(" ")
        if kind == "ready":
            self.ready.add(name)
        elif kind == "lead":
            term = int(rest)
            if self.leader is None or term > self.leader[0]:
                self.leader = (term, name)
                self.log.append(f"{name} leads term {term}")
        elif kind == "ack":
            key, index = rest.split()
            self.acked[key] = int(index)
        elif kind == "state":
            self.states[name] = json.loads(rest)

    def wait(self, condition: object, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            self._drain()
            if condition():  # type: ignore[operator]
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not within {timeout_s} s; {self.log}")
            time.sleep(0.02)

    def writes_for(self, seconds: float) -> None:
        """Lets the leader write for `seconds`, and checks it acknowledged some."""
        before = len(self.acked)
        deadline = time.monotonic() + seconds
        self.wait(lambda: time.monotonic() > deadline and len(self.acked) > before, seconds + 20, "writes")

    def current_leader(self) -> str:
        self.wait(
            lambda: self.leader is not None and self.leader[1] in self.processes, 20, "a running leader"
        )
        assert self.leader is not None
        return self.leader[1]

    def close(self) -> None:
        for name in list(self.processes):
            self.processes[name].popen.kill()
            self.processes[name].popen.wait()
        self.processes.clear()


def _crash_rounds(directory: Path, rounds: int, data: bool = False) -> None:
    cluster = _Cluster(directory, data)
    cluster._ready = set()
    cluster.states = {}
    try:
        for name in NAMES:
            cluster.start(name)
        cluster.writes_for(WRITING_S)
        for round_number in range(rounds):
            leader = cluster.current_leader()
            victim = leader if round_number % 2 == 0 else next(n for n in NAMES if n != leader)
            cluster.kill(victim)
            if victim == leader:
                cluster.wait(
                    lambda killed=victim: cluster.leader is not None and cluster.leader[1] != killed,
                    20,
                    "a new leader",
                )
            cluster.writes_for(WRITING_S)
            cluster.start(victim)
            cluster.writes_for(WRITING_S / 2)
        for process in cluster.processes.values():
            process.tell("stop-writing")
        acked = dict(cluster.acked)
        assert acked, cluster.log

        def converged() -> bool:
            cluster.states.clear()
            for process in cluster.processes.values():
                process.tell("dump")
            cluster.wait(lambda: len(cluster.states) == len(NAMES), 10, "every member's state")
            # Writes not acknowledged (their leader died) may be applied too, but alike on every member.
            key_sets = [set(s["keys"]) for s in cluster.states.values()]  # type: ignore[arg-type]
            return set(acked) <= key_sets[0] and all(k == key_sets[0] for k in key_sets)

        cluster.wait(converged, 20, "every acknowledged write applied on every member, alike")
        for name, state in cluster.states.items():
            assert state["twice"] == 0, (name, state["twice"])
            assert state["bad"] == 0, (name, state["bad"])
        print(f"{len(acked)} writes acknowledged; {cluster.log}")
        for process in cluster.processes.values():
            process.tell("exit")
        for process in cluster.processes.values():
            process.popen.wait(20)
        cluster.processes.clear()
    finally:
        cluster.close()


class _SyncedLog:
    """The real SegmentedRaftLog, watched: a write counts as durable once a flush that began after it
    returned having fdatasynced after it (`os.fdatasync` is counted: the test patches it). What the core
    hears must never run ahead of that: `persisted(seq)` only once every write up to `seq` is durable."""

    fdatasyncs = 0

    def __init__(self, directory: Path) -> None:
        self._log = SegmentedRaftLog(directory)
        self._lock = threading.Lock()
        self._pending: list[tuple[int, int]] = []  # (seq, fdatasyncs when written) of entry writes
        self._unsynced_seq = 0  # the last write not yet flushed
        self.durable_seq = 0
        self.early: list[tuple[int, int]] = []
        """(seq the core heard persisted, the last durable seq then): must stay empty."""

    def __getattr__(self, name: str) -> object:
        return getattr(self._log, name)

    def write(self, persist: Persist) -> None:
        self._log.write(persist)
        with self._lock:
            self._unsynced_seq = persist.seq
            if persist.entries:
                self._pending.append((persist.seq, _SyncedLog.fdatasyncs))

    def flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, []
            target = self._unsynced_seq
        self._log.flush()
        with self._lock:
            if all(_SyncedLog.fdatasyncs > synced_before for _, synced_before in pending):
                self.durable_seq = max(self.durable_seq, target)
            else:
                self._pending = pending + self._pending  # not made durable: never counted as such

    def persisted(self, seq: int) -> None:
        with self._lock:
            if seq > self.durable_seq:
                self.early.append((seq, self.durable_seq))


def test_persisted_is_reported_only_for_writes_a_flush_made_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The durability the crash rounds rely on, checked at each step rather than by luck of a kill's
    timing: no member's core hears `persisted(seq)` before every write up to `seq` was fdatasynced by a
    flush (a shell reporting before its flush, or a log whose flush does not sync, fails here)."""
    fdatasync = os.fdatasync

    def counted(fd: int) -> None:
        fdatasync(fd)
        _SyncedLog.fdatasyncs += 1

    monkeypatch.setattr(os, "fdatasync", counted)

    async def scenario() -> None:
        group = Group(3)
        logs = {peer: _SyncedLog(tmp_path / peer.id) for peer in group.nodes}
        for peer, node in group.nodes.items():
            node.storage = logs[peer]  # type: ignore[assignment]
        try:
            for peer in group.nodes:
                member = await group.start(peer)
                core = member._core
                assert core is not None
                heard = core.persisted

                def spy(seq: int, heard: Callable[[int], list[Output]] = heard, log: _SyncedLog = logs[peer]):
                    log.persisted(seq)
                    return heard(seq)

                core.persisted = spy  # type: ignore[method-assign]
            leader = await group.leader()
            for first in range(1, 61, 20):
                await asyncio.gather(
                    *(leader.submit(put(f"k{i}", "v"), "c", i) for i in range(first, first + 20))
                )
            await group.applied_everywhere(leader.status().last_index)
        finally:
            for peer in group.nodes:
                await group.stop(peer)
        assert all(log.durable_seq > 0 for log in logs.values())
        assert {peer.id: log.early for peer, log in logs.items()} == {peer.id: [] for peer in logs}

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_killed_leader_and_follower_lose_no_acknowledged_write(tmp_path: Path) -> None:
    _crash_rounds(tmp_path, rounds=2)


def test_killed_members_with_state_machine_data_restart_and_catch_up_with_equal_data(tmp_path: Path) -> None:
    """State machine data: the same kill -9 rounds with each write carrying 16 KB of state machine data: every
    member, restarted ones included (their data read back from the leader when it no longer caches it),
    applies the same keys, each with the data its write carried."""
    _crash_rounds(tmp_path, rounds=2, data=True)


@pytest.mark.slow
def test_many_kills_lose_no_acknowledged_write(tmp_path: Path) -> None:
    _crash_rounds(tmp_path, rounds=10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--member", required=True)
    parser.add_argument("--ports", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--data", action="store_true")
    args = parser.parse_args()
    asyncio.run(_member(args.member, [int(p) for p in args.ports.split(",")], Path(args.dir), args.data))


if __name__ == "__main__":
    main()
