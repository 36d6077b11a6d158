"""Deployment across hosts (issue 11, defect 10): SCM, OM and three datanodes each on its own host (a network
namespace), started by hand on Ozone's default ports from one ozone-site.xml that names hosts, not
addresses, and a client on a sixth host. Skipped unless network namespaces can be made here (root).

The namespaces share a bridge with no uplink, so their 0.0.0.0 listeners are reachable from nowhere else.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone.config.site import write_site_xml
from tests.e2e.netns_hosts import Hosts, available
from tests.polling import wait_for

WHY_NOT = available()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"network namespaces: {WHY_NOT}")

DATANODES = ["dn1", "dn2", "dn3"]


@pytest.fixture
def hosts(tmp_path: Path) -> Iterator[tuple[Hosts, Path]]:
    hosts = Hosts(["scm", "om", *DATANODES, "client"])
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    write_site_xml(
        conf_dir / "ozone-site.xml",
        {
            "ozone.scm.names": "scm",
            "ozone.om.address": "om",  # no port, as Ozone's docker-compose writes it: 9862
            "hdds.scm.safemode.min.datanode": "3",
            "hdds.heartbeat.interval": "1s",
            "ozone.scm.heartbeat.thread.interval": "1s",
            "ozone.scm.stale.node.interval": "6s",
            "ozone.scm.dead.node.interval": "12s",
            "hdds.scm.wait.time.after.safemode.exit": "2s",
            "ozone.scm.pipeline.creation.interval": "2s",
        },
    )
    try:
        hosts.start()
        yield hosts, conf_dir
    finally:
        hosts.stop()


def _logs(tmp_path: Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in tmp_path.glob("*.log"))


def test_daemons_on_separate_hosts_serve_a_key(hosts: tuple[Hosts, Path], tmp_path: Path) -> None:
    net, conf = hosts
    meta = f"ozone.metadata.dirs={tmp_path / 'scm'}"
    init = net.run("scm", ["scm", "--init", "-D", meta], conf)
    assert init.returncode == 0, init.stderr
    net.spawn("scm", ["scm", "-D", meta], conf, tmp_path / "scm.log")
    net.spawn("om", ["om", "-D", f"ozone.metadata.dirs={tmp_path / 'om'}"], conf, tmp_path / "om.log")
    for dn in DATANODES:
        home = tmp_path / dn
        args = [
            "datanode",
            "-D",
            f"ozone.metadata.dirs={home / 'meta'}",
            "-D",
            f"hdds.datanode.dir={home / 'data'}",
            "-D",
            f"dfs.datanode.hostname={dn}",
        ]
        net.spawn(dn, args, conf, tmp_path / f"{dn}.log")

    data = os.urandom(5 * 1024 * 1024 + 17)
    (tmp_path / "in.bin").write_bytes(data)

    tries: list[str] = []

    def put() -> bool:
        for command in (["sh", "volume", "create", "/vol1"], ["sh", "bucket", "create", "/vol1/bucket1"]):
            tries.append(net.run("client", command, conf).stderr.strip()[-2000:])
        done = net.run("client", ["sh", "key", "put", "/vol1/bucket1/k", str(tmp_path / "in.bin")], conf)
        tries.append(done.stderr.strip()[-2000:])
        return done.returncode == 0

    wait_for(put, 120, lambda: f"a key put from the client host ({tries[-3:]})\n{_logs(tmp_path)}", 2)
    got = net.run("client", ["sh", "key", "get", "/vol1/bucket1/k", str(tmp_path / "out.bin")], conf)
    assert got.returncode == 0, got.stderr
    assert hashlib.sha256((tmp_path / "out.bin").read_bytes()).digest() == hashlib.sha256(data).digest()

    listing = net.run("client", ["admin", "datanode", "list", "--json"], conf)
    assert listing.returncode == 0, listing.stderr
    nodes = json.loads(listing.stdout)
    assert {n["ipAddress"] for n in nodes} == {net.address(dn) for dn in DATANODES}  # not 127.0.0.1
    assert {n["hostname"] for n in nodes} == set(DATANODES)

    # SCM binds 0.0.0.0 (ozone.scm.client.bind.host): a client on SCM's host reaches it through loopback
    local = net.run("scm", ["admin", "safemode", "status", "-D", "ozone.scm.client.address=127.0.0.1"], conf)
    assert local.returncode == 0 and "out of safe mode" in local.stdout, local.stderr

    banner = (tmp_path / "dn1.log").read_text()
    assert "STARTUP_MSG: Starting HddsDatanodeService" in banner and "hdds.datanode.dir" in banner
