"""Jepsen-style test of OM HA on real processes (issue 30): client threads create, overwrite, read, rename and
delete keys of one bucket on a 3-OM service while a nemesis, in turn, kills the leader (SIGKILL, restarted
after a while), pauses it (SIGSTOP, then SIGCONT) and isolates it from the other two OMs and from half the
clients (then heals). Every invoke and completion is recorded (tests/jepsen/history.py) and the history is
checked for linearizability (tests/jepsen/checker.py: 0 anomalies); after the faults every key is read once
more, and every acknowledged write that nothing could have replaced must be there (0 lost).

Where things run: each OM in its own network namespace (tests/e2e/netns_hosts.py), so a partition between
two OMs is a real one (packets dropped silently). SCM and the three datanodes run in this machine's own
namespace (`cluster up`, whose lone OM is stopped), SCM listening on 0.0.0.0 so the OMs reach it through the
bridge (the test process joins it at .254). The clients are threads of the test process, each with its own
OzoneClient on the service; group B talks to the OMs from .254, group A through relays that open every
connection from .250, so the nemesis can cut the leader from group A only (and never from SCM).

Keys: families of three (`e0k0-e0k2`, `e0k3-e0k5`, ...), renames within a family, so operations conflict
while the checker's components stay small; every 10 faults the clients move to an epoch of new keys, so
the writes left indeterminate pile up on no one set of keys. A history that is not linearizable (or lost
keys) is saved as JSON lines in the system's temp dir (pyozone-jepsen-SEED-TIME.jsonl), its path printed:
`python -m tests.jepsen.checker FILE` replays it.

The default suite runs a handful of faults; `-m slow` runs 200 (PYOZONE_JEPSEN_FAULTS=N for another count,
PYOZONE_JEPSEN_SEED=S to draw the same operations and faults again)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
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
from tests.e2e.cluster.cluster_helpers import LiveCluster
from tests.e2e.netns_hosts import Hosts, available
from tests.jepsen.checker import Budget, Verdict, check
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


CLIENTS_PER_GROUP = 3
MIX = ((Op.CREATE, 2), (Op.PUT, 2), (Op.GET, 4), (Op.DELETE, 1), (Op.RENAME, 2))
THINK_S = 0.05  # at most, between a client's operations (the checker's work grows with the history)
OM_CALL_TIMEOUT_S = 4.0  # one OM call: a client of an isolated leader gives up (info) and goes on
OM_DEADLINE_S = 15.0  # a commit's retries
ELECTION_TIMEOUT = "1s"  # ozone.om.ratis.minimum.timeout
CHECK_STEPS, CHECK_SECONDS = 50_000_000, 900.0  # the checker's budget: past it, "unknown" fails the test


class Relay:
    """Forwards every connection to 127.0.0.1:`port` to `target`, opened from `source` (an address this
    machine holds on the bridge), so the nemesis can cut a group of clients from one OM by that address."""

    def __init__(self, target: tuple[str, int], source: str) -> None:
        self.target, self.source = target, source
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._closed = False
        threading.Thread(target=self._accept, name=f"relay-{self.port}", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                downstream, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._connect, args=(downstream,), daemon=True).start()

    def _connect(self, downstream: socket.socket) -> None:
        try:  # a cut link does not answer: the client sees its connection reset after a while
            upstream = socket.create_connection(self.target, timeout=5, source_address=(self.source, 0))
        except OSError:
            downstream.close()
            return
        upstream.settimeout(None)
        with self._lock:
            if self._closed:
                upstream.close()
                downstream.close()
                return
            self._open |= {upstream, downstream}
        for a, b in ((downstream, upstream), (upstream, downstream)):
            threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._listener.close()
        with self._lock:
            self._closed = True
            for s in self._open:
                with contextlib.suppress(OSError):
                    s.close()


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
    group_a: str  # group A's address
    relays: list[Relay] = field(default_factory=list)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    hosts = Hosts(list(OMS))
    cluster = LiveCluster(tmp_path / "cluster")
    cluster.data_dir.mkdir()
    relays: list[Relay] = []
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
        values_a = dict(oms.values)
        for node in OMS:
            key = f"ozone.om.address.{SERVICE}.{node}"
            relay = Relay((hosts.address(node), int(oms.values[key].rpartition(":")[2])), group_a)
            relays.append(relay)
            values_a[key] = f"127.0.0.1:{relay.port}"
        for node in OMS:
            oms.start(node)
        oms.leader(90)
        client_keys = [k for k in oms.values if not k.startswith("ozone.scm")]
        conf_a = load_configuration(cluster.conf_dir, {k: values_a[k] for k in client_keys})
        conf_b = load_configuration(cluster.conf_dir, {k: oms.values[k] for k in client_keys})
        yield Service(cluster, oms, hosts, conf_a, conf_b, group_a, relays)
    finally:
        for relay in relays:
            relay.close()
        if oms is not None:
            for process in oms.processes.values():
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(signal.SIGCONT)
            oms.stop_all()
        cluster.stop()
        hosts.stop()


def client_of(conf: OzoneConfiguration) -> OzoneClient:
    config = replace(
        ClientConfig.from_conf(conf), om_timeout_s=OM_CALL_TIMEOUT_S, om_deadline_s=OM_DEADLINE_S
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
    process: str, conf: OzoneConfiguration, seed: int, history: History, stop: threading.Event, epoch: Epoch
) -> None:
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
            history.record(process, f, args, run_op(client, f, args))
            time.sleep(rng.uniform(0, THINK_S))


@dataclass
class Nemesis:
    service: Service
    rng: random.Random
    hold_s: tuple[float, float] = (2.0, 5.0)  # how long a fault lasts
    quiet_s: tuple[float, float] = (1.0, 3.0)  # and the calm after it
    done: list[str] = field(default_factory=list)

    def fault(self, kind: str) -> None:
        oms, hosts = self.service.oms, self.service.hosts
        leader = oms.leader()
        hold = self.rng.uniform(*self.hold_s)
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
            hosts.isolate(leader)
            hosts.cut_local(leader, self.service.group_a)
            try:
                time.sleep(hold)
                during = self.leader_now()
            finally:
                hosts.heal()
        self.done.append(f"{kind} {leader} {hold:.1f}s (then {during} led)")
        print(f"nemesis: {self.done[-1]}", flush=True)
        time.sleep(self.rng.uniform(*self.quiet_s))

    def leader_now(self) -> str:
        try:
            return self.service.oms.leader(5)
        except AssertionError:
            return "no OM"


FAULTS = ("kill", "pause", "isolate")


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


def lost_writes(history: History, final: dict[str, str | None]) -> tuple[int, list[str]]:
    """Acknowledged writes that nothing could have replaced, missing at the end: a put acknowledged on key k
    after every other change of k (and of a key renamed onto or from k) was acknowledged, with no change of
    k left indeterminate, must be what k holds. Returns how many keys had one, and those lost."""
    ops = [
        op
        for op in history.operations()
        if op.process != "final" and op.f is not Op.GET and op.type is not EventType.FAIL
    ]
    checked, lost = 0, []
    for key in final:
        changes = [op for op in ops if key in KeyValueModel().keys(op.f, op.args)]
        if not changes or any(op.ret is None for op in changes):
            continue
        last = max(changes, key=lambda op: op.call)
        if last.f not in (Op.CREATE, Op.PUT) or any(op.ret > last.call for op in changes if op is not last):
            continue
        checked += 1
        if final[key] != last.args[1]:
            lost.append(f"{key}: {last} acknowledged, the key holds {final[key]!r}")
    return checked, lost


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
    threads = [
        threading.Thread(
            target=worker,
            args=(f"{group}{i}", conf, rng.randrange(1 << 32), history, stop, epoch),
            name=f"client-{group}{i}",
            daemon=True,
        )
        for group, conf in (("a", service.conf_a), ("b", service.conf_b))
        for i in range(CLIENTS_PER_GROUP)
    ]
    nemesis = Nemesis(service, rng)
    started = time.monotonic()
    for thread in threads:
        thread.start()
    try:
        time.sleep(2)
        for i in range(faults):
            nemesis.fault(FAULTS[i % len(FAULTS)] if i < len(FAULTS) else rng.choice(FAULTS))
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
    print(
        f"jepsen: {len(ops)} operations in {time.monotonic() - started:.0f}s "
        f"({', '.join(f'{k.value} {n}' for k, n in counts.items())}); faults: {'; '.join(nemesis.done)}",
        flush=True,
    )
    checking = time.monotonic()
    result = check(history, KeyValueModel(), Budget(steps=CHECK_STEPS, seconds=CHECK_SECONDS))
    checked, lost = lost_writes(history, final)
    print(f"{result.report()} in {time.monotonic() - checking:.1f}s", flush=True)
    print(f"jepsen: {checked} keys end on an acknowledged write, {len(lost)} of them lost", flush=True)
    if result.verdict is not Verdict.LINEARIZABLE or lost or hung:
        # Not under pytest's base temp dir: pytest keeps only the last three runs' of this user.
        saved = Path(tempfile.gettempdir()) / f"pyozone-jepsen-{seed}-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
        history.dump(saved)
        print(f"jepsen: history saved: {saved} (replay: python -m tests.jepsen.checker {saved})", flush=True)
        logs = service.oms.data_dir / "logs"
        raise AssertionError(
            f"{result.verdict.value}; {len(lost)} acknowledged writes lost {lost}; clients hung {hung}; "
            f"history {saved}; OM logs {logs}\n{result.report()}"
        )
    assert counts[EventType.OK] > 0


def test_om_ha_stays_linearizable_through_leader_kills_pauses_and_partitions(
    service: Service,
) -> None:
    run_jepsen(service, int(os.environ.get("PYOZONE_JEPSEN_FAULTS", 3)))


@pytest.mark.slow
@pytest.mark.timeout(6 * 3600)
def test_om_ha_stays_linearizable_through_200_faults(service: Service) -> None:
    run_jepsen(service, int(os.environ.get("PYOZONE_JEPSEN_FAULTS", 200)))
