"""Three `pyozone scm` processes of one HA service (ozone.scm.service.ids) on this host, started as an
operator does: `scm --init` on every SCM (the primordial alone initialises), the primordial started, then
`scm --bootstrap` and a start on each other one. Each SCM has its own ozone.metadata.dirs (scm.db, its Raft
log) under `data_dir`/NODE and its log in `data_dir`/logs/NODE.log; no datanode is needed for the Raft
group to elect a leader. `HaScms.raft_view` reads an SCM's /api/v1/ratis."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyozone
from pyozone.cluster.layout import free_ports
from tests.cli_support import Result
from tests.polling import wait_for

SERVICE = "scmservice"
NODES = ("scm1", "scm2", "scm3")
PORTS = ("client", "block.client", "datanode", "security.service", "ratis", "grpc")
"""The per-node port keys (`ozone.scm.KEY.port.SERVICE.NODE`); the web server's is the http-address."""


@dataclass
class HaScms:
    data_dir: Path
    values: dict[str, str]
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @classmethod
    def plan(cls, data_dir: Path, election_timeout: str = "1s") -> HaScms:
        ports = iter(free_ports((len(PORTS) + 1) * len(NODES)))
        values = {
            "ozone.scm.service.ids": SERVICE,
            f"ozone.scm.nodes.{SERVICE}": ",".join(NODES),
            "ozone.scm.primordial.node.id": NODES[0],
            "ozone.scm.ha.ratis.leader.election.timeout": election_timeout,
        }
        for node in NODES:
            values[f"ozone.scm.address.{SERVICE}.{node}"] = "127.0.0.1"
            values[f"ozone.scm.http-address.{SERVICE}.{node}"] = f"127.0.0.1:{next(ports)}"
            for key in PORTS:
                values[f"ozone.scm.{key}.port.{SERVICE}.{node}"] = str(next(ports))
        return cls(data_dir, values)

    def port(self, node: str, key: str) -> int:
        return int(self.values[f"ozone.scm.{key}.port.{SERVICE}.{node}"])

    def http_port(self, node: str) -> int:
        return int(self.values[f"ozone.scm.http-address.{SERVICE}.{node}"].rpartition(":")[2])

    def defines(self, node: str | None = None) -> list[str]:
        """The service's keys as -D flags; with `node`, that SCM's own (node id, metadata directory) too."""
        values = dict(self.values)
        if node is not None:
            values |= {"ozone.scm.node.id": node, "ozone.metadata.dirs": str(self.data_dir / node)}
        return [arg for key, value in values.items() for arg in ("-D", f"{key}={value}")]

    def pyozone(self, *args: str, timeout_s: float = 60) -> Result:
        """`python -m pyozone ARGS` to its end: its exit code and output."""
        done = subprocess.run(
            [sys.executable, "-m", "pyozone", *args],
            env=_environment(), capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        return Result(done.returncode, done.stdout, done.stderr)

    def start(self, node: str) -> None:
        (self.data_dir / "logs").mkdir(parents=True, exist_ok=True)
        with open(self.data_dir / "logs" / f"{node}.log", "ab") as log:
            self.processes[node] = subprocess.Popen(
                [sys.executable, "-m", "pyozone", "scm", *self.defines(node)],
                env=_environment(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip

    def start_all(self, timeout_s: float = 90) -> None:
        """`scm --init` everywhere, the primordial started, the others bootstrapped and started; returns once
        one SCM leads ready (its /api/v1/ratis)."""
        for node in NODES:
            done = self.pyozone("scm", "--init", *self.defines(node))
            assert done.code == 0, done
        self.start(NODES[0])
        primordial = ("127.0.0.1", self.port(NODES[0], "client"))
        wait_for(lambda: _accepts(primordial), timeout_s, f"{NODES[0]}'s client port", interval_s=0.2)
        for node in NODES[1:]:
            done = self.pyozone("scm", "--bootstrap", *self.defines(node), timeout_s=timeout_s)
            assert done.code == 0, done
            self.start(node)
        self.leader(timeout_s)

    def raft_view(self, node: str) -> dict[str, Any] | None:
        """The SCM's /api/v1/ratis, None while it does not answer."""
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{self.http_port(node)}/api/v1/ratis", timeout=2
            ) as answer:
                return json.loads(answer.read())
        except OSError:
            return None

    def leader(self, timeout_s: float = 60) -> str:
        """The SCM of those running that leads, ready (its log applied to its term's start), waited for."""

        def ready() -> str | None:
            for node in self.processes:
                view = self.raft_view(node)
                if view and view.get("ready"):
                    return node
            return None

        return wait_for(ready, timeout_s, f"an SCM of {SERVICE} that leads, ready", interval_s=0.3)

    def kill(self, node: str) -> None:
        process = self.processes.pop(node)
        process.send_signal(signal.SIGKILL)
        process.wait(30)

    def stop_all(self) -> None:
        for node in list(self.processes):
            process = self.processes.pop(node)
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(10)

    def log(self, node: str) -> str:
        return (self.data_dir / "logs" / f"{node}.log").read_text(errors="replace")


@contextmanager
def scm_service(data_dir: Path) -> Iterator[HaScms]:
    """The three SCMs, running; each stopped after."""
    scms = HaScms.plan(data_dir)
    try:
        scms.start_all()
        yield scms
    finally:
        scms.stop_all()


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OZONE_CONF_DIR"}
    env["PYTHONPATH"] = str(Path(pyozone.__file__).parents[1])
    return env


def _accepts(address: tuple[str, int]) -> bool:
    try:
        socket.create_connection(address, timeout=1).close()
    except OSError:
        return False
    return True
