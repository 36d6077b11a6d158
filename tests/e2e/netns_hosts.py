"""Hosts made of Linux network namespaces on a private bridge, for multi-host deployment tests.

Each host has its own network stack (so every daemon can use Ozone's default ports), an address on a
bridge with no uplink, and an /etc/hosts naming all of them (`ip netns exec` mounts /etc/netns/NAME/hosts
over /etc/hosts). The machine's host name is shared: datanodes get theirs from dfs.datanode.hostname.
Needs root and CAP_NET_ADMIN; `available()` says whether this machine can.

A partition (`cut`) drops packets silently, as a broken network does: on the sending host's link a `tc`
u32 filter sends what goes to the other host into a `blackhole` qdisc (no error comes back, open
connections stall until their own timeouts), so a test sees what a real partition shows, not a refused
connection. `cut(a, b, one_way=True)` drops only a's packets to b (b's still arrive, a's answers are lost).
(This kernel has no tc drop action and no prio qdisc: an htb root with a blackholed class does the same.)

This machine's own namespace may join the bridge (`join`): its processes then reach the hosts, and the hosts
its listeners on 0.0.0.0, through addresses 10.231.N.I it holds; `cut_local` drops what passes between a
host and one of those addresses, both ways (a client of the test process opening its connections from it).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pyozone

SUBNET = "10.231.{}.{}"


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


def _tc(*args: str) -> None:
    done = subprocess.run(["tc", *args], capture_output=True, timeout=10)
    if done.returncode != 0:
        raise RuntimeError(f"tc {' '.join(args)}: {done.stderr.decode().strip()}")


def available() -> str | None:
    """None when network namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "needs root"
    if shutil.which("ip") is None or shutil.which("tc") is None:
        return "needs iproute2 (`ip`, `tc`)"
    probe = f"pzprobe{secrets.token_hex(2)}"
    try:
        _ip("netns", "add", probe)
        _ip("netns", "del", probe)
    except subprocess.CalledProcessError as e:
        return f"cannot create a network namespace: {e.stderr.decode().strip()}"
    return None


@dataclass
class Hosts:
    """`names` become hosts 10.231.N.1, .2, ... on one bridge; `stop()` removes every trace."""

    names: list[str]
    tag: str = field(default_factory=lambda: secrets.token_hex(2))
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    cuts: set[tuple[str, str]] = field(default_factory=set)
    local_cuts: set[tuple[str, str]] = field(default_factory=set)
    shaped: set[str] = field(default_factory=set)  # the devices with the blackhole qdisc

    def __post_init__(self) -> None:
        self.net = int(self.tag, 16) % 200 + 20
        self.bridge = f"pzbr{self.tag}"

    def ns(self, name: str) -> str:
        return f"pz{self.tag}-{name}"

    def address(self, name: str) -> str:
        return SUBNET.format(self.net, self.names.index(name) + 1)

    def start(self) -> None:
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("link", "set", self.bridge, "up")
        hosts_file = "127.0.0.1 localhost\n" + "".join(f"{self.address(n)} {n}\n" for n in self.names)
        for i, name in enumerate(self.names):
            ns, outside, inside = self.ns(name), f"pz{self.tag}o{i}", f"pz{self.tag}i{i}"
            _ip("netns", "add", ns)
            _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            _ip("link", "set", outside, "master", self.bridge, "up")
            _ip("link", "set", inside, "netns", ns)
            _ip("-n", ns, "addr", "add", f"{self.address(name)}/24", "dev", inside)
            _ip("-n", ns, "link", "set", inside, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            etc = Path("/etc/netns") / ns
            etc.mkdir(parents=True, exist_ok=True)
            (etc / "hosts").write_text(hosts_file)

    def cut(self, a: str, b: str, one_way: bool = False) -> None:
        """Drop every packet `a` sends to `b`, and (unless `one_way`) every one `b` sends to `a`."""
        for src, dst in ((a, b),) if one_way else ((a, b), (b, a)):
            if (src, dst) in self.cuts:
                continue
            ns, dev = self.ns(src), self._inside(src)
            self._shape(ns, dev)
            _tc(
                "-n", ns, "filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1",
                "u32", "match", "ip", "dst", f"{self.address(dst)}/32", "flowid", "1:2",
            )  # fmt: skip
            self.cuts.add((src, dst))

    def join(self, index: int) -> str:
        """Gives this machine's own namespace the address 10.231.N.`index` on the bridge (not one of the
        hosts': 200 and up), and returns it."""
        local = SUBNET.format(self.net, index)
        _ip("addr", "add", f"{local}/24", "dev", self.bridge)
        return local

    def cut_local(self, host: str, local: str) -> None:
        """Drop every packet `host` sends to `local` (an address `join` gave) and every one `local` sends
        to `host`: on the host's side of its link and on the bridge's."""
        if (host, local) in self.local_cuts:
            return
        inside, outside = self._inside(host), self._outside(host)
        self._shape(self.ns(host), inside)
        self._shape(None, outside)
        _tc(
            "-n", self.ns(host), "filter", "add", "dev", inside, "parent", "1:", "protocol", "ip",
            "prio", "1", "u32", "match", "ip", "dst", f"{local}/32", "flowid", "1:2",
        )  # fmt: skip
        _tc(
            "filter", "add", "dev", outside, "parent", "1:", "protocol", "ip", "prio", "1",
            "u32", "match", "ip", "src", f"{local}/32", "flowid", "1:2",
        )  # fmt: skip
        self.local_cuts.add((host, local))

    def isolate(self, host: str) -> None:
        """Cut `host` from every other host."""
        for other in self.names:
            if other != host:
                self.cut(host, other)

    def heal(self) -> None:
        """Remove every cut."""
        for src in {src for src, _ in self.cuts} | {host for host, _ in self.local_cuts}:
            _tc("-n", self.ns(src), "filter", "del", "dev", self._inside(src), "parent", "1:", "prio", "1")
        for host in {host for host, _ in self.local_cuts}:
            _tc("filter", "del", "dev", self._outside(host), "parent", "1:", "prio", "1")
        self.cuts.clear()
        self.local_cuts.clear()

    def _inside(self, name: str) -> str:
        return f"pz{self.tag}i{self.names.index(name)}"

    def _outside(self, name: str) -> str:
        return f"pz{self.tag}o{self.names.index(name)}"

    def _shape(self, ns: str | None, dev: str) -> None:
        """An htb root whose default class passes everything and whose class 1:2 drops it (once per device;
        `ns` None: this machine's own namespace)."""
        if dev in self.shaped:
            return
        where = ("-n", ns) if ns is not None else ()
        _tc(*where, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "1")
        for classid in ("1:1", "1:2"):
            _tc(
                *where, "class", "add", "dev", dev, "parent", "1:", "classid", classid, "htb",
                "rate", "10gbit", "quantum", "60000",
            )  # fmt: skip
        _tc(*where, "qdisc", "add", "dev", dev, "parent", "1:2", "handle", "20:", "blackhole")
        self.shaped.add(dev)

    def command(self, host: str, *args: str) -> list[str]:
        """`python -m pyozone ARGS` as run on `host`."""
        return ["ip", "netns", "exec", self.ns(host), sys.executable, "-m", "pyozone", *args]

    def env(self, conf_dir: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "PYOZONE_LOG_LEVEL"}
        env["PYTHONPATH"] = str(Path(pyozone.__file__).parents[1])
        env["OZONE_CONF_DIR"] = str(conf_dir)
        return env

    def spawn(self, host: str, args: list[str], conf_dir: Path, log: Path) -> None:
        with log.open("wb") as out:
            self.processes.append(
                subprocess.Popen(
                    self.command(host, *args), env=self.env(conf_dir), stdout=out, stderr=subprocess.STDOUT
                )
            )

    def run(
        self, host: str, args: list[str], conf_dir: Path, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(host, *args), env=self.env(conf_dir), capture_output=True, text=True, timeout=timeout
        )

    def stop(self) -> None:
        for process in self.processes:
            process.kill()
        for process in self.processes:
            process.wait(timeout=10)
        for i, name in enumerate(self.names):
            subprocess.run(["ip", "netns", "del", self.ns(name)], capture_output=True, timeout=10)
            subprocess.run(["ip", "link", "del", f"pz{self.tag}o{i}"], capture_output=True, timeout=10)
            shutil.rmtree(Path("/etc/netns") / self.ns(name), ignore_errors=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True, timeout=10)
