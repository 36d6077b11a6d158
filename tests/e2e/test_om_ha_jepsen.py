"""Jepsen-style test of OM HA on real processes (issue 30): client threads create, overwrite, read, rename and
delete keys of one bucket on a 3-OM service while a nemesis, in turn, isolates the leader from the other two
OMs and from half the clients (then heals), pauses it (SIGSTOP, then SIGCONT), deposes it (its clients of
the service are turned away first, then it is isolated from the other OMs: nothing staged on it is left
uncommitted, so it may answer reads from its own om.db while the others elect a new leader) and kills it
(SIGKILL, restarted after a while). Beside the clients of the service, a reader pinned to each OM (a client
whose service names that OM alone, as Jepsen's per-node clients) reads all along, the keys written last
most often: a follower or a deposed leader that answers a read from its own om.db is caught reading an old
value. Every invoke and completion is recorded (tests/jepsen/history.py) and the history is checked for
linearizability (tests/jepsen/checker.py: 0 anomalies). After the faults every key is read once more, and
every acknowledged change that no other change can follow must be what its key holds (tests/jepsen/
durability.py: 0 lost); once the three OMs applied the same index they are stopped and their om.db compared,
table by table (0 differences: a change applied twice or skipped on one OM shows there even when no read
saw it). An isolation must see a new leader elected while the old one is cut off (else the two-leader case
it exists for did not happen): at least one per run, or the test fails.

Timing: the clients' OM call timeout (OM_CALL_TIMEOUT_S) is under the time a cut-off leader takes to step
down (raft.server.rpc.timeout.max, the election timeout + 200 ms), and the relays of the clients cut from
the leader reset their connections (a firewall that rejects), so those clients fail over at once and write
on the new leader as soon as it is elected, while the deposed one may still answer its pinned reader.

Where things run: each OM in its own network namespace (tests/e2e/netns_hosts.py), so a partition between
two OMs is a real one (packets dropped silently). SCM and the three datanodes run in this machine's own
namespace (`cluster up`, whose lone OM is stopped), SCM listening on 0.0.0.0 so the OMs reach it through the
bridge (the test process joins it at .254). The clients are threads of the test process, each with its own
OzoneClient on the service, through relays: group B's open their connections from .254, group A's from
.250, so the nemesis can cut the leader from group A only (and never from SCM); the pinned readers talk to
their OM from .254 directly.

Keys: families of three (`e0k0-e0k2`, `e0k3-e0k5`, ...), renames within a family, so operations conflict
while the checker's components stay small; every 10 faults the clients move to an epoch of new keys, so
the writes left indeterminate pile up on no one set of keys. A failing history is saved as JSON lines in
the system's temp dir (pyozone-jepsen-SEED-TIME.jsonl), its path printed: `python -m tests.jepsen.checker
FILE` replays it.

The short run has five faults (depose, kill, depose, depose, pause: under a minute; the new leader's
first writes land before the deposed one steps down in about half the deposes only, so the planted read
bug of the mutants test needs several); `-m slow` runs 200 (PYOZONE_JEPSEN_FAULTS=N for another count,
PYOZONE_JEPSEN_SEED=S to draw the same operations and faults again). The test is itself tested:
tests/e2e/test_om_ha_jepsen_mutants.py plants known bugs in a copy of the tree and expects this test to
fail there."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import random
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from benchmarks.om_ha import SERVICE, HaOms
from pyozone.client import OzoneClient
from pyozone.client.config import ClientConfig
from pyozone.config import OzoneConfiguration
from pyozone.config.site import load_configuration, read_site_xml
from pyozone.framework.om_errors import OMException
from pyozone.hdds.store.rocksdb import RocksDBBackend
from tests.e2e.cluster.cluster_helpers import LiveCluster
from tests.e2e.netns_hosts import Hosts, available
from tests.e2e.relays import Relay
from tests.jepsen.checker import Budget, Verdict, check
from tests.jepsen.durability import lost_writes
from tests.jepsen.history import EventType, History
from tests.jepsen.models import KeyValueModel, Op, Refusal
from tests.polling import wait_for

WHY_NOT = available()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"network namespaces: {WHY_NOT}")

VOLUME, BUCKET = "jepsen", "keys"
OMS = ("om1", "om2", "om3")
LOCAL, GROUP_A = 254, 250  # this machine's addresses on the bridge: its own, and group A's
FAMILY, FAMILIES = 3, 6
EPOCH_FAULTS = 10  # the clients move to new keys after this many faults


def keys_of(epoch: int) -> list[str]:
    """An epoch's keys. Each epoch has its own: an indeterminate write stays open to the end of the history
    (the checker may place it anywhere after its invocation), so over 200 faults the open writes on one
    set of keys would make the search exponential; on its own keys an epoch is checked apart (P-locality),
    as short histories are."""
    return [f"e{epoch}k{i}" for i in range(FAMILY * FAMILIES)]


@dataclass
class Epoch:
    """The epoch the clients work in now (the nemesis moves it on)."""

    value: int = 0


class Recent:
    """The keys whose writes were acknowledged last: what the pinned readers read most (a stale OM shows
    itself on a key just written, not on one left alone)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: deque[str] = deque(maxlen=RECENT)

    def add(self, key: str) -> None:
        with self._lock:
            self._keys.append(key)

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._keys)


CLIENTS_PER_GROUP = 3
MIX = ((Op.CREATE, 2), (Op.PUT, 2), (Op.GET, 4), (Op.DELETE, 1), (Op.RENAME, 2))
THINK_S = 0.05  # at most, between a client's operations (the checker's work grows with the history)
ELECTION_TIMEOUT = "1s"  # ozone.om.ratis.minimum.timeout: a cut-off leader steps down after 1.2 s or more
OM_CALL_TIMEOUT_S = 0.8  # one OM call: under that step-down time (see the module's docstring)
OM_WAIT_S = 0.1  # ozone.client.wait.between.retries.millis: after asking every OM, the next round soon
OM_DEADLINE_S = 15.0  # a commit's retries
READ_TIMEOUT_S = 0.5  # a pinned reader's call: a paused OM is given up on and asked again soon
RECENT = 2  # a pinned reader reads one of the keys written last 9 times in 10
FAULT_ORDER = ("depose", "kill", "depose", "depose", "pause")  # the first faults; then drawn at random
DEPOSE_SETTLE_S = 0.3  # a deposed leader's clients are gone this long before its peers: its writes commit
DEFAULT_FAULTS = len(FAULT_ORDER)
CHECK_STEPS, CHECK_SECONDS = 50_000_000, 900.0  # the checker's budget: past it, "unknown" fails the test


@dataclass
class NetnsOms(HaOms):
    """HaOms with each OM in its own namespace host of `hosts` (its addresses are the host's)."""

    hosts: Hosts | None = None

    def start(self, node: str) -> None:
        assert self.hosts is not None
        (self.data_dir / "logs").mkdir(parents=True, exist_ok=True)
        defines = {**self.values, "ozone.om.node.id": node, "ozone.metadata.dirs": str(self.data_dir / node)}
        args = [arg for k, v in defines.items() for arg in ("-D", f"{k}={v}")]
        with open(self.data_dir / "logs" / f"{node}.log", "ab") as log:
            self.processes[node] = subprocess.Popen(  # `ip netns exec` execs: the pid is the OM's
                self.hosts.command(node, "om", "--conf", str(self.conf_dir), *args),
                env=self.hosts.env(self.conf_dir), stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip

    def raft_view(self, node: str) -> dict[str, Any] | None:
        address = self.values[f"ozone.om.http-address.{SERVICE}.{node}"]
        try:
            with urllib.request.urlopen(f"http://{address}/api/v1/ratis", timeout=1) as answer:
                return json.loads(answer.read())
        except (OSError, ValueError):
            return None

    def leader(self, within_s: float = 60) -> str:
        """The OM that leads (the highest term's, while an old leader may still think it leads)."""

        def leading() -> str | None:
            views = {n: self.raft_view(n) for n in self.processes}
            leaders = [(v["term"], n) for n, v in views.items() if v and v.get("role") == "LEADER"]
            return max(leaders)[1] if leaders else None

        return wait_for(leading, within_s, "an OM of the service that leads", interval_s=0.3)


@dataclass
class Service:
    cluster: LiveCluster
    oms: NetnsOms
    hosts: Hosts
    conf_a: OzoneConfiguration  # group A's: the OMs through the relays
    conf_b: OzoneConfiguration
    pinned: dict[str, OzoneConfiguration]  # a service of one OM each (from this machine's address)
    group_a: str  # group A's address
    relays: dict[tuple[str, str], Relay] = field(default_factory=dict)  # (group, OM): the group's way to it


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    hosts = Hosts(list(OMS))
    cluster = LiveCluster(tmp_path / "cluster")
    cluster.data_dir.mkdir()
    relays: dict[tuple[str, str], Relay] = {}
    oms: NetnsOms | None = None
    try:
        hosts.start()
        local, group_a = hosts.join(LOCAL), hosts.join(GROUP_A)
        scm_bind = {
            f"ozone.scm.{kind}.bind.host": "0.0.0.0" for kind in ("client", "block.client", "datanode")
        }
        cluster.up(3, overrides=scm_bind)
        cluster.kill("om")
        oms = NetnsOms.plan(cluster.data_dir, cluster.conf_dir, election_timeout=ELECTION_TIMEOUT)
        oms.hosts = hosts
        site = read_site_xml(cluster.conf_dir / "ozone-site.xml")
        for key in ("ozone.scm.client.address", "ozone.scm.block.client.address"):
            oms.values[key] = f"{local}:{site[key].rpartition(':')[2]}"
        oms.values["ozone.scm.names"] = local
        for node in OMS:
            for key in (f"ozone.om.address.{SERVICE}.{node}", f"ozone.om.http-address.{SERVICE}.{node}"):
                oms.values[key] = f"{hosts.address(node)}:{oms.values[key].rpartition(':')[2]}"
        values = {"a": dict(oms.values), "b": dict(oms.values)}
        for (group, source), node in itertools.product((("a", group_a), ("b", local)), OMS):
            key = f"ozone.om.address.{SERVICE}.{node}"
            relay = Relay((hosts.address(node), int(oms.values[key].rpartition(":")[2])), source)
            relays[(group, node)] = relay
            values[group][key] = f"127.0.0.1:{relay.port}"
        for node in OMS:
            oms.start(node)
        oms.leader(90)
        client_keys = [k for k in oms.values if not k.startswith("ozone.scm")]
        conf_a, conf_b = (
            load_configuration(cluster.conf_dir, {k: values[group][k] for k in client_keys}) for group in "ab"
        )
        service_keys = {k: oms.values[k] for k in client_keys}
        pinned = {
            node: load_configuration(cluster.conf_dir, {**service_keys, f"ozone.om.nodes.{SERVICE}": node})
            for node in OMS
        }
        yield Service(cluster, oms, hosts, conf_a, conf_b, pinned, group_a, relays)
    finally:
        for relay in relays.values():
            relay.close()
        if oms is not None:
            for process in oms.processes.values():
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(signal.SIGCONT)
            oms.stop_all()
        cluster.stop()
        hosts.stop()


def client_of(conf: OzoneConfiguration, timeout_s: float = OM_CALL_TIMEOUT_S) -> OzoneClient:
    config = replace(
        ClientConfig.from_conf(conf), om_timeout_s=timeout_s, om_wait_s=OM_WAIT_S, om_deadline_s=OM_DEADLINE_S
    )
    return OzoneClient(conf, config=config)


def run_op(client: OzoneClient, f: Op, args: tuple[Any, ...]) -> Callable[[], Any]:
    """The call that runs the operation: a read returns the content, a write None (the model's result)."""

    def call() -> str | None:
        if f is Op.GET:
            with client.read_key(VOLUME, BUCKET, args[0]) as reader:
                return reader.readall().decode()
        if f in (Op.CREATE, Op.PUT):
            client.put_key(VOLUME, BUCKET, args[0], str(args[1]).encode())
        elif f is Op.DELETE:
            client.delete_key(VOLUME, BUCKET, args[0])
        else:
            client.rename_key(VOLUME, BUCKET, args[0], args[1])
        return None

    return call


def worker(
    process: str, conf: OzoneConfiguration, seed: int, history: History, stop: threading.Event, epoch: Epoch,
    recent: Recent,
) -> None:  # fmt: skip
    rng = random.Random(seed)
    kinds, weights = zip(*MIX, strict=True)
    written = 0
    with client_of(conf) as client:
        while not stop.is_set():
            f = rng.choices(kinds, weights)[0]
            keys = keys_of(epoch.value)
            key = rng.randrange(len(keys))
            if f in (Op.CREATE, Op.PUT):
                written += 1
                args: tuple[Any, ...] = (keys[key], f"{process}-{written}")
            elif f is Op.RENAME:
                family = key - key % FAMILY
                args = (keys[key], keys[rng.randrange(family, family + FAMILY)])
            else:
                args = (keys[key],)
            done = history.record(process, f, args, run_op(client, f, args))
            if f in (Op.CREATE, Op.PUT) and done.type is EventType.OK:
                recent.add(keys[key])
            time.sleep(rng.uniform(0, THINK_S))


def pinned_reader(
    process: str, conf: OzoneConfiguration, seed: int, history: History, stop: threading.Event, epoch: Epoch,
    recent: Recent,
) -> None:  # fmt: skip
    """Reads through one OM only: its refusals (not the leader) fail, its answers are checked as any."""
    rng = random.Random(seed)
    with client_of(conf, READ_TIMEOUT_S) as client:
        while not stop.is_set():
            last = recent.keys()
            key = rng.choice(last) if last and rng.random() < 0.9 else rng.choice(keys_of(epoch.value))
            history.record(process, Op.GET, (key,), run_op(client, Op.GET, (key,)))
            time.sleep(rng.uniform(0, THINK_S))


@dataclass
class Nemesis:
    service: Service
    rng: random.Random
    hold_s: tuple[float, float] = (2.0, 4.0)  # how long a fault lasts
    quiet_s: tuple[float, float] = (0.5, 2.0)  # and the calm after it
    done: list[str] = field(default_factory=list)
    isolations: int = 0
    isolations_with_new_leader: int = 0  # another OM led (a higher term) while the old one was cut off

    def fault(self, kind: str) -> None:
        oms, hosts = self.service.oms, self.service.hosts
        leader = oms.leader()
        hold = self.rng.uniform(*self.hold_s)
        at = time.time()  # the wall clock, as the OM logs show it
        if kind == "kill":
            oms.kill(leader, signal.SIGKILL)
            time.sleep(hold)
            during = self.leader_now()
            oms.start(leader)
        elif kind == "pause":
            oms.processes[leader].send_signal(signal.SIGSTOP)
            try:
                time.sleep(hold)
                during = self.leader_now()
            finally:
                oms.processes[leader].send_signal(signal.SIGCONT)
        else:
            refused = [self.service.relays[(group, leader)] for group in ("ab" if kind == "depose" else "a")]
            for relay in refused:
                relay.refuse(True)
            if kind == "depose":
                time.sleep(DEPOSE_SETTLE_S)
            hosts.isolate(leader)
            hosts.cut_local(leader, self.service.group_a)
            try:
                time.sleep(hold)
                during = self.leader_now()
            finally:
                hosts.heal()
                for relay in refused:
                    relay.refuse(False)
            self.isolations += 1
            self.isolations_with_new_leader += during not in (leader, "no OM")
        self.done.append(
            f"{kind} {leader} {hold:.1f}s at {time.strftime('%H:%M:%S', time.localtime(at))}"
            f".{int(at % 1 * 1000):03d} (then {during} led)"
        )
        print(f"nemesis: {self.done[-1]}", flush=True)
        time.sleep(self.rng.uniform(*self.quiet_s))

    def leader_now(self) -> str:
        try:
            return self.service.oms.leader(5)
        except AssertionError:
            return "no OM"


FAULTS = ("kill", "pause", "isolate", "depose")


def fault_kinds(faults: int, rng: random.Random) -> Iterator[str]:
    """FAULT_ORDER, then faults drawn at random."""
    for i in range(faults):
        yield FAULT_ORDER[i] if i < len(FAULT_ORDER) else rng.choice(FAULTS)


def final_reads(conf: OzoneConfiguration, history: History, keys: list[str]) -> dict[str, str | None]:
    """Every key read once more after the faults, as process "final" of the history. Any answer but the
    content or KEY_NOT_FOUND (e.g. a key OM lists whose blocks are gone) fails the test."""
    state: dict[str, str | None] = {}
    with client_of(conf) as client:
        for key in keys:
            for attempt in range(10):
                invocation = history.invoke("final", Op.GET, key)
                try:
                    value = run_op(client, Op.GET, (key,))()
                except OMException as e:
                    if e.result == Refusal.KEY_NOT_FOUND.value:
                        history.ok(invocation, Refusal.KEY_NOT_FOUND)
                        state[key] = None
                        break
                    history.info(invocation, repr(e))
                    error: Exception = e
                except Exception as e:
                    history.info(invocation, repr(e))
                    error = e
                else:
                    history.ok(invocation, value)
                    state[key] = value
                    break
                time.sleep(0.5 * (attempt + 1))
            else:
                raise AssertionError(f"{key} unreadable after the faults: {error!r}")
    return state


def applied_alike(oms: NetnsOms, within_s: float = 60) -> int:
    """Waits until the three OMs applied the same index (and their logs end there), and returns it."""

    def alike() -> int | None:
        views = [oms.raft_view(node) for node in OMS]
        indexes = {(v["appliedIndex"], v["lastIndex"]) for v in views if v is not None}
        if len(indexes) != 1 or None in views:
            return None
        applied, last = indexes.pop()
        return applied if applied == last else None

    return wait_for(alike, within_s, "the three OMs applied the same index", interval_s=0.3)


def _record(value: bytes | None) -> str:
    return "absent" if value is None else f"{len(value)} bytes #{hashlib.sha1(value).hexdigest()[:8]}"


def om_db_differences(oms: NetnsOms) -> tuple[dict[str, int], list[str]]:
    """Stops the OMs (SIGTERM: om.db flushed) and compares their om.db files, every table: the records
    each table holds (on om1) and the differences, each a table, a key and what each OM holds there."""
    oms.stop_all()
    tables: dict[str, dict[str, dict[bytes, bytes]]] = {}
    for node in OMS:
        backend = RocksDBBackend(oms.data_dir / node / "om.db", read_only=True)
        try:
            tables[node] = {cf: dict(backend.items(cf)) for cf in backend.column_families}
        finally:
            backend.close()
    sizes = {cf: len(records) for cf, records in tables[OMS[0]].items()}
    differences = []
    for cf in sorted({cf for node in OMS for cf in tables[node]}):
        held = {node: tables[node].get(cf, {}) for node in OMS}
        for key in sorted({k for records in held.values() for k in records}):
            values = {node: held[node].get(key) for node in OMS}
            if len(set(values.values())) > 1:
                shown = ", ".join(f"{node}: {_record(v)}" for node, v in values.items())
                differences.append(f"{cf} {key.decode(errors='replace')}: {shown}")
    return sizes, differences


def run_jepsen(service: Service, faults: int) -> None:
    seed = int(os.environ.get("PYOZONE_JEPSEN_SEED", random.randrange(1 << 32)))
    print(f"jepsen: seed {seed} (PYOZONE_JEPSEN_SEED={seed} draws it again), {faults} faults", flush=True)
    rng = random.Random(seed)
    with client_of(service.conf_b) as client:
        client.create_volume(VOLUME)
        client.create_bucket(VOLUME, BUCKET)
    history = History()
    stop = threading.Event()
    epoch = Epoch()
    recent = Recent()
    clients = [(f"{group}{i}", conf, worker) for group, conf in (("a", service.conf_a), ("b", service.conf_b))
               for i in range(CLIENTS_PER_GROUP)]  # fmt: skip
    clients += [(f"r{node}", service.pinned[node], pinned_reader) for node in OMS]
    threads = [
        threading.Thread(
            target=target,
            args=(process, conf, rng.randrange(1 << 32), history, stop, epoch, recent),
            name=f"client-{process}",
            daemon=True,
        )
        for process, conf, target in clients
    ]
    nemesis = Nemesis(service, rng)
    started = time.monotonic()
    for thread in threads:
        thread.start()
    try:
        time.sleep(2)
        for i, kind in enumerate(fault_kinds(faults, rng)):
            nemesis.fault(kind)
            if (i + 1) % EPOCH_FAULTS == 0 and i + 1 < faults:
                epoch.value += 1
        service.oms.leader()
        time.sleep(3)  # calm: every client's operations go through again
    finally:
        stop.set()
        for thread in threads:
            thread.join(OM_DEADLINE_S + 4 * OM_CALL_TIMEOUT_S + 30)
    hung = [t.name for t in threads if t.is_alive()]
    final = final_reads(service.conf_b, history, [k for e in range(epoch.value + 1) for k in keys_of(e)])
    ops = history.operations()
    counts = {
        kind: sum(op.type is kind for op in ops) for kind in (EventType.OK, EventType.FAIL, EventType.INFO)
    }
    pinned_reads = sum(op.type is EventType.OK for op in ops if str(op.process).startswith("r"))
    print(
        f"jepsen: {len(ops)} operations in {time.monotonic() - started:.0f}s "
        f"({', '.join(f'{k.value} {n}' for k, n in counts.items())}; {pinned_reads} answered to pinned "
        f"readers); faults: {'; '.join(nemesis.done)}",
        flush=True,
    )
    print(
        f"jepsen: {nemesis.isolations_with_new_leader} of {nemesis.isolations} isolations saw a new leader "
        "elected while the old one was cut off",
        flush=True,
    )
    index = applied_alike(service.oms)
    sizes, differences = om_db_differences(service.oms)
    print(
        f"jepsen: om.db of {', '.join(OMS)} at index {index}: {len(differences)} differences "
        f"({sizes.get('keyTable', 0)} keys, {sum(sizes.values())} records in {len(sizes)} tables)",
        flush=True,
    )
    checking = time.monotonic()
    result = check(history, KeyValueModel(), Budget(steps=CHECK_STEPS, seconds=CHECK_SECONDS))
    durability = lost_writes(history, final)
    print(f"{result.report()} in {time.monotonic() - checking:.1f}s", flush=True)
    print(
        f"jepsen: {durability.keys} of {len(final)} keys end on acknowledged changes ({durability.writes} "
        f"acknowledged writes among them checked), {len(durability.lost)} lost",
        flush=True,
    )
    problems = [f"{result.verdict.value}"] if result.verdict is not Verdict.LINEARIZABLE else []
    if durability.lost:
        problems.append(f"{len(durability.lost)} acknowledged writes lost: {durability.lost}")
    if differences:
        problems.append(f"the OMs' om.db differ in {len(differences)} records: {differences[:20]}")
    if hung:
        problems.append(f"clients hung: {hung}")
    if nemesis.isolations and not nemesis.isolations_with_new_leader:
        problems.append(
            f"none of {nemesis.isolations} isolations saw a new leader elected while the old one was cut "
            "off: the two-leader case was not exercised"
        )
    if problems:
        # Not under pytest's base temp dir: pytest keeps only the last three runs' of this user.
        saved = Path(tempfile.gettempdir()) / f"pyozone-jepsen-{seed}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
        history.dump(saved)
        print(f"jepsen: history saved: {saved} (replay: python -m tests.jepsen.checker {saved})", flush=True)
        logs = service.oms.data_dir / "logs"
        raise AssertionError(f"{'; '.join(problems)}; history {saved}; OM logs {logs}\n{result.report()}")
    assert counts[EventType.OK] > 0 and pinned_reads > 0


@pytest.mark.slow  # a Jepsen-style run: behind its marker, with its own command (README)
def test_om_ha_stays_linearizable_through_leader_kills_pauses_and_partitions(
    service: Service,
) -> None:
    run_jepsen(service, int(os.environ.get("PYOZONE_JEPSEN_FAULTS", DEFAULT_FAULTS)))


@pytest.mark.slow
@pytest.mark.timeout(6 * 3600)
def test_om_ha_stays_linearizable_through_200_faults(service: Service) -> None:
    run_jepsen(service, int(os.environ.get("PYOZONE_JEPSEN_FAULTS", 200)))
