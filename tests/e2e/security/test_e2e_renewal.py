"""Renewed certificates on channels a daemon keeps for its life, on a `cluster up --secure` cluster whose
certificates last 30 s and renew 22 s before they expire (so a certificate has 22 s left when SCM goes
down, time for SCM's restart on a loaded machine: a datanode whose certificate expired while SCM was down
cannot renew it, as in Ozone): once every daemon's first certificate has
expired, SCM is killed and started again; the datanode (whose channel to SCM must reconnect) registers again
and a key is written and read back (OM reconnecting to SCM's block protocol, the datanode to SCM's security
protocol for the secret keys), all with renewed certificates.

The administrator's certificate `scm --init` made lasts 30 s too, so the test acts with a one-day
certificate for the same user that it signs with the CA's key on disk.
"""

from __future__ import annotations

import datetime as dt
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone.common.fsutil import write_file
from pyozone.common.tls import TlsPaths
from pyozone.config import OzoneConfiguration
from pyozone.config.site import SITE_FILE, read_site_xml, write_site_xml
from pyozone.hdds.security import x509 as X
from tests.e2e.security.secure_cluster import CLIENT_KEYS, SecureCluster, secure_cluster
from tests.polling import wait_for

SHORT = {
    "hdds.x509.default.duration": "PT30S",
    "hdds.x509.renew.grace.duration": "PT22S",
    "hdds.x509.ca.rotation.check.interval": "PT1S",
}
VOL, BUCKET = "renewal", "bucket"


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SecureCluster]:
    with secure_cluster(request, tmp_path_factory, "renewal", datanodes=1, overrides=SHORT) as c:
        yield c


def _certificate(path: Path) -> X.Certificate:
    return X.cert_from_pem(path.read_bytes())


def _admin_conf(cluster: SecureCluster) -> Path:
    """The cluster's configuration with a one-day certificate of the administrator, signed by the CA."""
    ca_dir = cluster.data_dir / "scm" / "ca"
    ca_key = X.key_from_pem((ca_dir / "keys" / "private.pem").read_bytes())
    ca_cert = _certificate(ca_dir / "certs" / "certificate.crt")
    key = X.generate_private_key()
    csr = X.build_csr(key, X.Identity(X.CertRole.USER, cluster.admin_user), ())
    cert = X.sign_csr(csr, ca_key, ca_cert, "", "", dt.timedelta(days=1), secrets.randbits(62))
    certs, conf_dir = cluster.data_dir / "admin-day" / "certs", cluster.data_dir / "admin-day" / "conf"
    files = (certs / "certificate.crt", certs / "private.pem", certs / "ca.crt")
    pems = (X.cert_to_pem(cert), X.key_to_pem(key), X.cert_to_pem(ca_cert))
    for path, data in zip(files, pems, strict=True):
        write_file(path, data, private=path.name == "private.pem")
    site = read_site_xml(cluster.conf_dir / SITE_FILE) | dict(zip(CLIENT_KEYS, map(str, files), strict=True))
    conf_dir.mkdir(parents=True)
    write_site_xml(conf_dir / SITE_FILE, site)
    return conf_dir


def test_daemons_reconnect_with_renewed_certificates_after_the_first_expired(cluster: SecureCluster) -> None:
    conf = OzoneConfiguration()
    om_cert = TlsPaths.under(cluster.data_dir / "om", conf).cert
    dn_cert = TlsPaths.under(cluster.data_dir / "dn1" / "meta", conf).cert
    first = {path: _certificate(path) for path in (om_cert, dn_cert)}
    admin = _admin_conf(cluster)

    expired = max(c.not_valid_after_utc for c in first.values()).timestamp() + 1

    def renewed_and_expired() -> bool:
        renewed = all(_certificate(p).serial_number != c.serial_number for p, c in first.items())
        return renewed and time.time() > expired

    wait_for(renewed_and_expired, 60, "OM's and the datanode's first certificates renewed, then expired")

    dn_log = cluster.data_dir / "logs" / "dn1.log"
    registrations = dn_log.read_text().count("registered with SCM")
    cluster.kill("scm")
    cluster.start("scm")
    wait_for(
        lambda: dn_log.read_text().count("registered with SCM") > registrations,
        30,
        lambda: f"the datanode registers with the restarted SCM:\n{dn_log.read_text()[-3000:]}",
    )

    data = secrets.token_bytes(64 * 1024)
    with cluster.ozone_client(admin) as client:
        client.create_volume(VOL)
        client.create_bucket(VOL, BUCKET, "RATIS/ONE")
        client.put_key(VOL, BUCKET, "after-renewal", data)
        out = cluster.data_dir / "got"
        client.get_key(VOL, BUCKET, "after-renewal", out)
    assert out.read_bytes() == data
