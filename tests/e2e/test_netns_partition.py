"""Partitions between namespace hosts (tests/e2e/netns_hosts.py) drop packets silently, as the Jepsen-style
tests of OM HA need: a cut link neither connects nor refuses, an open connection stalls, one-way cuts lose
only one direction, and `heal` restores everything. Skipped unless network namespaces can be made here."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.e2e.netns_hosts import Hosts, available

WHY_NOT = available()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"network namespaces: {WHY_NOT}")

PORT = 7070
SERVER = f"""
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("0.0.0.0", {PORT}))
s.listen(8); s.settimeout(30)
while True:
    c, _ = s.accept(); c.sendall(b"hi"); c.close()
"""


def _reaches(hosts: Hosts, src: str, dst: str) -> str:
    """'ok', 'timeout' (a silent drop) or 'refused' when `src` connects to `dst`'s server."""
    target = (hosts.address(dst), PORT)
    probe = (
        "import socket\n"
        f"try:\n    socket.create_connection({target!r}, timeout=0.5).recv(2); print('ok')\n"
        "except TimeoutError: print('timeout')\n"
        "except OSError as e: print('refused', e)\n"
    )
    done = subprocess.run(
        ["ip", "netns", "exec", hosts.ns(src), sys.executable, "-c", probe],
        capture_output=True, text=True, timeout=10,
    )  # fmt: skip
    return done.stdout.split()[0] if done.stdout else done.stderr


@pytest.fixture
def hosts() -> Iterator[Hosts]:
    hosts = Hosts(["a", "b", "c"])
    try:
        hosts.start()
        for name in hosts.names:
            hosts.processes.append(
                subprocess.Popen(["ip", "netns", "exec", hosts.ns(name), sys.executable, "-c", SERVER])
            )
        yield hosts
    finally:
        hosts.stop()


def test_a_cut_drops_silently_both_ways_and_heal_restores(hosts: Hosts) -> None:
    for _ in range(50):  # the servers start
        if _reaches(hosts, "a", "b") == "ok" and _reaches(hosts, "b", "c") == "ok":
            break
    assert _reaches(hosts, "a", "b") == "ok"
    hosts.cut("a", "b")
    assert _reaches(hosts, "a", "b") == "timeout"
    assert _reaches(hosts, "b", "a") == "timeout"
    assert _reaches(hosts, "a", "c") == "ok"
    hosts.heal()
    assert _reaches(hosts, "a", "b") == "ok"
    assert _reaches(hosts, "b", "a") == "ok"


def test_a_one_way_cut_loses_the_answers_and_isolate_cuts_every_link(hosts: Hosts) -> None:
    for _ in range(50):
        if _reaches(hosts, "b", "a") == "ok":
            break
    hosts.cut("a", "b", one_way=True)  # a's packets to b are lost: b's SYN reaches a, a's SYN-ACK does not
    assert _reaches(hosts, "b", "a") == "timeout"
    assert _reaches(hosts, "c", "a") == "ok"
    hosts.heal()
    hosts.isolate("c")
    assert _reaches(hosts, "a", "c") == "timeout"
    assert _reaches(hosts, "c", "b") == "timeout"
    assert _reaches(hosts, "a", "b") == "ok"
