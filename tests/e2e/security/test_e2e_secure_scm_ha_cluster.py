"""`pyozone cluster up --scm-ha --secure` on real processes (issue 31 items 1 and 4): three SCMs of one
service, each at a security port of its own; scm1's `scm --init` mints scm2's and scm3's JOIN credentials,
with which their `scm --bootstrap` gets each one's sub-CA from scm1's root CA. With the administrator's
certificate (the site file names the one scm1's init wrote) `admin scm roles` reads every SCM over TLS, a
key is written and read; the SCM leader killed with SIGKILL, a key is written and read through the next
leader; the killed SCM comes back as a follower over its own certificate, and the whole cluster starts
again from its data dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone.cluster.layout import SCM_HA_NODES, SCM_SERVICE_ID
from pyozone.hdds.security import x509 as X
from tests.e2e.cluster.cluster_helpers import Result, all_running, sh
from tests.e2e.security.secure_cluster import SecureCluster
from tests.polling import wait_for

VOLUME, BUCKET = "securescmvol", "securescmbucket"


@pytest.fixture(scope="module")
def started(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
    tuple[SecureCluster, Result]
]:  # fmt: skip
    cluster = SecureCluster(tmp_path_factory.mktemp("scm-ha-secure"))
    request.addfinalizer(cluster.stop)
    yield cluster, cluster.up(3, 1, None, "--scm-ha")


def roles(cluster: SecureCluster) -> dict[str, str]:
    """`admin scm roles` (HOST:RATIS_PORT:ROLE:NODE_ID:IP lines) over TLS with the administrator's
    certificate: node id -> role."""
    result = cluster.admin("scm", "roles")
    assert result.code == 0, result
    return {line.split(":")[3]: line.split(":")[2] for line in result.out.splitlines()}


def leader(cluster: SecureCluster) -> str:
    return wait_for(
        lambda: next((node for node, role in roles(cluster).items() if role == "LEADER"), None),
        60,
        "an SCM leader in admin scm roles",
        interval_s=0.5,
    )


def put_and_read(cluster: SecureCluster, key: str, tmp_path: Path) -> None:
    source, copy = tmp_path / f"{key}.in", tmp_path / f"{key}.out"
    source.write_bytes(key.encode() * 10_000)
    put = sh(cluster, "key", "put", f"/{VOLUME}/{BUCKET}/{key}", str(source))
    assert put.code == 0, (put, cluster.logs())
    got = sh(cluster, "key", "get", f"/{VOLUME}/{BUCKET}/{key}", str(copy))
    assert got.code == 0, got
    assert copy.read_bytes() == source.read_bytes()


def test_each_scm_has_its_own_security_port_and_a_sub_ca_of_scm1s_root(
    started: tuple[SecureCluster, Result],
) -> None:
    cluster, up = started
    assert f"3 SCMs of {SCM_SERVICE_ID}" in up.out and "mutual TLS" in up.out, up
    scms = cluster.state.scms()
    security = {scm.name: scm.ports["security"] for scm in scms}
    assert len(set(security.values())) == len(SCM_HA_NODES)
    for scm in scms:
        line = next(line for line in up.out.splitlines() if line.strip().startswith(f"{scm.name}:"))
        assert f"security (CA) 127.0.0.1:{security[scm.name]}" in line, line
    root = X.cert_from_pem((cluster.data_dir / "scm1" / "ca" / "certs" / "certificate.crt").read_bytes())
    for node in SCM_HA_NODES:
        pem = (cluster.data_dir / node / "certs" / "certificate.crt").read_bytes()
        assert X.is_ca(X.cert_from_pem(pem)) and X.chain_verifies(pem, root), node
    assert cluster.admin_tls.paths.cert.is_relative_to(cluster.data_dir / "scm1" / "ca" / "users")


def test_keys_are_written_and_read_before_and_after_the_scm_leaders_kill(
    started: tuple[SecureCluster, Result], tmp_path: Path
) -> None:
    cluster, _ = started
    assert sorted(roles(cluster).values()) == ["FOLLOWER", "FOLLOWER", "LEADER"]
    for made in (
        sh(cluster, "volume", "create", f"/{VOLUME}"),
        sh(cluster, "bucket", "create", f"/{VOLUME}/{BUCKET}"),
    ):
        assert made.code == 0, made
    put_and_read(cluster, "before", tmp_path)
    first = leader(cluster)
    cluster.kill(first)
    second = leader(cluster)
    assert second != first and roles(cluster)[first] == "UNREACHABLE"
    put_and_read(cluster, "after", tmp_path)
    cluster.start(first)  # over its own certificate: its JOIN credential is not presented again
    wait_for(
        lambda: sorted(roles(cluster).values()) == ["FOLLOWER", "FOLLOWER", "LEADER"],
        60,
        f"{first} back as a follower",
        interval_s=1,
    )


@pytest.mark.slow
def test_the_cluster_starts_again_from_its_data_dir(
    started: tuple[SecureCluster, Result], tmp_path: Path
) -> None:
    cluster, _ = started
    down = cluster.cluster("down", timeout_s=90)
    assert down.code == 0, down
    cluster.up(3, 1, None, "--scm-ha")
    all_running(cluster)
    got = sh(cluster, "key", "get", f"/{VOLUME}/{BUCKET}/after", str(tmp_path / "after"))
    assert got.code == 0, got
    assert (tmp_path / "after").read_bytes() == b"after" * 10_000
