"""The CA in SCM HA on real processes (issue 31 item 4): three secure `pyozone scm` daemons of one service,
made as an operator does — `scm --init` on the primordial with a JOIN credential per other SCM, then `scm
--bootstrap` and start on each other. An administrator's certificate is signed by the leader's own sub-CA;
the leader gets SIGKILL, and the same client, failing over, has the next leader sign one with its sub-CA;
both chain to the one root, and the first is still listed (the records went through the log). A bootstrap
presenting another cluster's credential is refused naming it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import pyozone
from pyozone.common.tls import TlsStore
from pyozone.config import OzoneConfiguration
from pyozone.framework.scm_security import SCMSecurityClient, scm_security_nodes
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.server.ca_files import ScmSecurityFiles
from pyozone.security.config import SecurityConfig, admin_user
from tests.polling import wait_for
from tests.unit.ratis_server.shell_support import ports_of

NODES = ("scm1", "scm2", "scm3")
PORT_KEYS = ("client", "block.client", "datanode", "ratis", "security.service")


@dataclass
class ScmService:
    root: Path
    values: dict[str, str]
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @classmethod
    def plan(cls, root: Path) -> ScmService:
        ports = iter(ports_of(len(NODES) * (len(PORT_KEYS) + 1)))
        values = {
            "ozone.security.enabled": "true",
            "hdds.x509.crl.refresh.interval": "2s",
            "ozone.scm.service.ids": "scmservice",
            "ozone.scm.nodes.scmservice": ",".join(NODES),
            "ozone.scm.primordial.node.id": "scm1",
            "ozone.scm.ha.ratis.leader.election.timeout": "1s",
            "hdds.scmclient.failover.retry.interval": "500ms",
        }
        for node in NODES:
            values[f"ozone.scm.address.scmservice.{node}"] = "127.0.0.1"
            values[f"ozone.scm.http-address.scmservice.{node}"] = f"127.0.0.1:{next(ports)}"
            for key in PORT_KEYS:
                values[f"ozone.scm.{key}.port.scmservice.{node}"] = str(next(ports))
        return cls(root, values)

    def node_values(self, node: str, **extra: str) -> dict[str, str]:
        return {
            **self.values,
            "ozone.scm.node.id": node,
            "ozone.metadata.dirs": str(self.root / node),
            "ozone.security.join.credentials.file": str(self.join(node)),
            **extra,
        }

    def join(self, node: str) -> Path:
        return self.root / f"{node}-join.pem"

    def args(self, node: str, **extra: str) -> list[str]:
        return [a for k, v in self.node_values(node, **extra).items() for a in ("-D", f"{k}={v}")]

    def cli(self, node: str, *flags: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pyozone", "scm", *flags, *self.args(node, **extra)],
            capture_output=True,
            text=True,
            timeout=120,
            env=_env(),
        )

    def start(self, node: str) -> None:
        log = open(self.root / f"{node}.log", "ab")  # noqa: SIM115 - the child holds it
        self.procs[node] = subprocess.Popen(
            [sys.executable, "-m", "pyozone", "scm", *self.args(node)], stdout=log, stderr=log, env=_env()
        )

    def wait_serving(self, node: str) -> None:
        """Until the SCM's admin port takes connections (it opens after the Raft member started)."""
        port = int(self.values[f"ozone.scm.client.port.scmservice.{node}"])

        def serving() -> bool:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            except OSError:
                assert self.procs[node].poll() is None, (self.root / f"{node}.log").read_text()
                return False
            return True

        wait_for(serving, 60, f"SCM {node} serving", 0.2)

    def ratis(self, node: str) -> dict[str, object] | None:
        where = self.values[f"ozone.scm.http-address.scmservice.{node}"]
        try:
            with urllib.request.urlopen(f"http://{where}/api/v1/ratis", timeout=2) as answer:
                return json.loads(answer.read())  # type: ignore[no-any-return]
        except OSError:
            return None

    def leader(self, among: tuple[str, ...] = NODES) -> str:
        def ready() -> str | None:
            for node in among:
                report = self.ratis(node)
                if report is not None and report.get("ready"):
                    return node
            return None

        return wait_for(ready, 60, "a ready SCM leader", 0.2)

    def conf(self) -> OzoneConfiguration:
        return OzoneConfiguration(self.node_values("scm1"))

    def sub_ca(self, node: str) -> X.Certificate:
        return X.cert_from_pem((self.root / node / "certs" / "certificate.crt").read_bytes())

    def root_ca(self) -> X.Certificate:
        return X.cert_from_pem((self.root / "scm1" / "ca" / "certs" / "certificate.crt").read_bytes())

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(Path(pyozone.__file__).parents[1])}


def admin_client(service: ScmService) -> SCMSecurityClient:
    conf = service.conf()
    files = ScmSecurityFiles.from_conf(conf, SecurityConfig.from_conf(conf))
    return SCMSecurityClient(scm_security_nodes(conf), TlsStore(files.user(admin_user(conf))), timeout_s=5)


def sign_user(client: SCMSecurityClient, name: str) -> tuple[X.Certificate, bytes]:
    csr = X.build_csr(X.generate_private_key(), Identity(CertRole.USER, name))
    pem, _ = client.sign_csr(X.csr_to_pem(csr))
    return X.cert_from_pem(pem), pem


pytestmark = pytest.mark.slow  # the default suite runs a secure SCM service through `cluster up --scm-ha
# --secure` (test_e2e_secure_scm_ha_cluster.py) and the CA's refusals in process (test_scm_ha_secure.py)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ScmService]:
    running = ScmService.plan(tmp_path_factory.mktemp("scm-ha-ca"))
    joins = [a for n in NODES[1:] for a in ("--join-token", f"scm:{n}={running.join(n)}")]
    init = running.cli("scm1", "--init", *joins)
    assert init.returncode == 0, init.stderr
    try:
        running.start("scm1")
        running.wait_serving("scm1")
        for node in NODES[1:]:
            bootstrapped = running.cli(node, "--bootstrap")
            assert bootstrapped.returncode == 0, bootstrapped.stderr
            assert "a sub-CA of the root CA signed by the primordial SCM scm1" in bootstrapped.stdout
            running.start(node)
        yield running
    finally:
        running.stop()


def test_a_follower_turned_leader_signs_with_its_own_sub_ca_after_the_leader_is_killed(
    service: ScmService,
) -> None:
    first = service.leader()
    with admin_client(service) as client:
        bob, bob_pem = sign_user(client, "bob")
        assert bob.issuer == service.sub_ca(first).subject
        assert X.chain_verifies(bob_pem, service.root_ca())
        service.procs[first].send_signal(signal.SIGKILL)
        service.procs[first].wait(10)
        second = service.leader(tuple(n for n in NODES if n != first))
        carol, carol_pem = sign_user(client, "carol")  # the client fails over to the new leader
        assert carol.issuer == service.sub_ca(second).subject != bob.issuer
        assert X.chain_verifies(carol_pem, service.root_ca())
        assert carol.serial_number > bob.serial_number  # the CertificateId sequence went through the log
        listed = {X.cert_from_pem(p).serial_number for p in client.list_certificates(CertRole.USER)}
        assert {bob.serial_number, carol.serial_number} <= listed


def test_a_bootstrap_with_another_clusters_root_is_refused(service: ScmService, tmp_path: Path) -> None:
    other = ScmService.plan(tmp_path / "other")
    minted = other.cli("scm1", "--init", "--join-token", f"scm:scm3={other.join('scm3')}")
    assert minted.returncode == 0, minted.stderr
    stranger = service.cli(
        "scm3",
        "--bootstrap",
        **{
            "ozone.metadata.dirs": str(tmp_path / "stranger"),
            "ozone.security.join.credentials.file": str(other.join("scm3")),
        },
    )
    assert stranger.returncode != 0
    assert "SCM scm3 cannot bootstrap: the primordial SCM scm1" in stranger.stderr
    assert "another CA" in stranger.stderr
    assert not (tmp_path / "stranger" / "certs" / "certificate.crt").exists()
