"""A daemon's certificate on disk: when it serves as is, when a new one must be asked for, and when it is
due for renewal. The exchanges with a live SCM are tests/e2e/security/test_e2e_ca.py."""

from __future__ import annotations

import datetime as dt
import shutil
import stat
from pathlib import Path

import pytest

from pyozone.common.fsutil import write_file
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError, SecurityResult
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.security.cert_client import CertRenewer, daemon_identity, daemon_tls
from tests.tls_certs import CertAuthority, without_role_names

HOSTS = ("127.0.0.1", "localhost")
OM = Identity(CertRole.OM, "om", "127.0.0.1")


def secure_conf(**extra: str) -> OzoneConfiguration:
    # Port 1 on loopback: nothing listens there, so a request to SCM fails at once as UNAVAILABLE.
    return OzoneConfiguration(
        {
            "ozone.security.enabled": "true",
            "ozone.scm.names": "127.0.0.1",
            "ozone.scm.security.service.port": "1",
            **extra,
        }
    )


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


def install(ca: CertAuthority, directory: Path, identity: Identity = OM, **kwargs) -> TlsPaths:
    """A certificate from `ca` where daemon_tls looks for it (TlsPaths.under)."""
    issued = ca.issue(f"issued-{directory.name}", identity, **kwargs)
    paths = TlsPaths.under(directory, OzoneConfiguration())
    for src, dst in ((issued.key, paths.key), (issued.cert, paths.cert), (issued.ca, paths.ca)):
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    return paths


@pytest.mark.parametrize("role", [CertRole.SCM, CertRole.JOIN, CertRole.USER])
def test_only_service_daemons_ask_for_a_certificate(role: CertRole) -> None:
    with pytest.raises(ValueError, match="is not a role a daemon requests a certificate for"):
        daemon_identity(role, HOSTS)


def test_the_first_host_names_the_daemon() -> None:
    assert daemon_identity(CertRole.DATANODE, ("10.0.0.7", "dn7")).common_name == "dn@10.0.0.7"
    with pytest.raises(ValueError, match="at least one host"):
        daemon_identity(CertRole.OM, ())


def test_a_valid_certificate_on_disk_is_used_without_asking_scm(ca: CertAuthority, tmp_path: Path) -> None:
    paths = install(ca, tmp_path)
    before = paths.cert.read_bytes()
    store = daemon_tls(secure_conf(), CertRole.OM, tmp_path, HOSTS, wait_s=0)
    assert store.paths == paths and paths.cert.read_bytes() == before


def test_a_datanodes_certificate_on_disk_serves_the_datanode_it_names(
    ca: CertAuthority, tmp_path: Path
) -> None:
    dn, uuid = Identity(CertRole.DATANODE, "dn", "127.0.0.1"), "00000000-0000-4000-8000-000000000001"
    install(ca, tmp_path, dn, datanode=uuid)
    store = daemon_tls(secure_conf(), CertRole.DATANODE, tmp_path, HOSTS, wait_s=0, datanode=uuid)
    assert X.datanode_id(X.cert_from_pem(store.paths.cert.read_bytes())) == uuid


def test_an_ha_om_s_certificate_on_disk_serves_the_om_node_it_names(
    ca: CertAuthority, tmp_path: Path
) -> None:
    install(ca, tmp_path, om_node="svc/om2")
    store = daemon_tls(secure_conf(), CertRole.OM, tmp_path, HOSTS, wait_s=0, om_node="svc/om2")
    assert X.om_node(X.cert_from_pem(store.paths.cert.read_bytes())) == "svc/om2"


def test_a_join_file_removed_after_the_first_start_is_not_needed(ca: CertAuthority, tmp_path: Path) -> None:
    install(ca, tmp_path)
    conf = secure_conf(**{"ozone.security.join.credentials.file": str(tmp_path / "gone.pem")})
    assert daemon_tls(conf, CertRole.OM, tmp_path, HOSTS, wait_s=0).paths.cert.exists()


def test_a_first_start_makes_a_private_key_and_needs_the_join_credential(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"ozone\.security\.join\.credentials\.file is not set"):
        daemon_tls(secure_conf(), CertRole.OM, tmp_path, HOSTS, wait_s=0)
    key = TlsPaths.under(tmp_path, OzoneConfiguration()).key
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    X.key_from_pem(key.read_bytes())


@pytest.mark.parametrize(
    "case",
    [
        "expired",
        "other name",
        "other hosts",
        "other CA",
        "other key",
        "other datanode",
        "other OM node",
        "a lone OM's",
    ],
)
def test_a_certificate_that_cannot_serve_is_replaced_through_scm(
    ca: CertAuthority, tmp_path: Path, case: str
) -> None:
    """Each case goes to SCM (here: unreachable) instead of using the file."""
    join = ca.issue("join", Identity(CertRole.JOIN, "join", "127.0.0.1"))
    join_file = tmp_path / "join.pem"
    join_file.write_bytes(join.key.read_bytes() + join.cert.read_bytes() + join.ca.read_bytes())
    directory = tmp_path / "om"
    role, datanode, om_node = CertRole.OM, None, None
    if case == "other OM node":  # om2 of the service holds a certificate of its own, not om1's
        install(ca, directory, om_node="svc/om1")
        om_node = "svc/om2"
    elif case == "a lone OM's":  # the OM joined an HA service: its certificate names its node now
        install(ca, directory)
        om_node = "svc/om1"
    elif case == "other datanode":  # the datanode's UUID changed (a new datanode.id): its certificate too
        role, datanode = CertRole.DATANODE, "00000000-0000-4000-8000-000000000002"
        dn, theirs = Identity(CertRole.DATANODE, "dn", "127.0.0.1"), "00000000-0000-4000-8000-000000000001"
        install(ca, directory, dn, datanode=theirs)
    elif case == "expired":
        install(ca, directory, lifetime=dt.timedelta(seconds=-30))
    elif case == "other name":
        install(ca, directory, Identity(CertRole.OM, "om", "10.1.1.1"))
    elif case == "other hosts":
        install(ca, directory, hosts=("127.0.0.1",))
    elif case == "other CA":
        install(CertAuthority(tmp_path / "other"), directory)
    else:
        paths = install(ca, directory)
        write_file(paths.key, X.key_to_pem(X.generate_private_key()), private=True)
    conf = secure_conf(**{"ozone.security.join.credentials.file": str(join_file)})
    with pytest.raises(SecurityError) as e:
        daemon_tls(conf, role, directory, HOSTS, wait_s=0, datanode=datanode, om_node=om_node)
    assert e.value.code == SecurityResult.UNAVAILABLE
    assert "ozone.scm.security.service.address" in e.value.message


def test_renewal_is_due_inside_the_grace_period(ca: CertAuthority, tmp_path: Path) -> None:
    paths = install(ca, tmp_path, lifetime=dt.timedelta(seconds=100))
    expiry_ms = int(X.cert_from_pem(paths.cert.read_bytes()).not_valid_after_utc.timestamp() * 1000)
    conf = secure_conf(**{"hdds.x509.default.duration": "PT100S", "hdds.x509.renew.grace.duration": "PT30S"})
    clock = ManualClock(epoch_ms=expiry_ms - 31_000)
    renewer = CertRenewer(conf, TlsStore(paths), CertRole.OM, HOSTS, clock=clock)
    assert not renewer.due() and not renewer.check()
    clock.advance(1_000)
    assert renewer.due()
    with pytest.raises(SecurityError) as e:  # due, so it asks SCM (unreachable here)
        renewer.check()
    assert e.value.code == SecurityResult.UNAVAILABLE


def test_a_certificate_without_role_names_is_renewed_at_once(ca: CertAuthority, tmp_path: Path) -> None:
    """A certificate issued before the CA added role-qualified names (x509.role_host_name) would not
    verify for the clients that dial this daemon: the renewer replaces it at its first check."""
    paths = install(ca, tmp_path)
    cert = X.cert_from_pem(paths.cert.read_bytes())
    old = without_role_names(cert, ca.key)
    write_file(paths.cert, X.cert_to_pem(old))
    conf = secure_conf(**{"hdds.x509.renew.grace.duration": "PT1S"})  # far from its expiry
    assert CertRenewer(conf, TlsStore(paths), CertRole.OM, HOSTS).due()
    write_file(paths.cert, X.cert_to_pem(cert))
    assert not CertRenewer(conf, TlsStore(paths), CertRole.OM, HOSTS).due()
