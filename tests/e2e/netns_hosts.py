"""Hosts made of Linux network namespaces on a private bridge, for multi-host deployment tests.

Each host has its own network stack (so every daemon can use Ozone's default ports), an address on a
bridge with no uplink, and an /etc/hosts naming all of them (`ip netns exec` mounts /etc/netns/NAME/hosts
over /etc/hosts). The machine's host name is shared: datanodes get theirs from dfs.datanode.hostname.
Needs root and CAP_NET_ADMIN; `available()` says whether this machine can.
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


def available() -> str | None:
    """None when network namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "needs root"
    if shutil.which("ip") is None:
        return "needs iproute2 (`ip`)"
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
