"""A secure local cluster for the security acceptance tests: `pyozone cluster up --secure --background` (SCM's
CA, mutual TLS on every port, block tokens, ACLs) through the real CLI and supervisor, module-scoped, always
stopped. Commands run with its configuration act as the administrator (the login user); `user_conf(name)`
gives another user's configuration (a certificate `admin cert issue-user` made), and `strangers()` the
certificates SCM's CA never issued.

Use it from a test module:

    @pytest.fixture(scope="module")
    def cluster(request, tmp_path_factory):
        with secure_cluster(request, tmp_path_factory, "acls") as c:
            yield c
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.config.site import SITE_FILE, load_configuration, read_site_xml, write_site_xml
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.users import login_user
from tests.e2e.cluster.cluster_helpers import LiveCluster, Result
from tests.tls_certs import CertAuthority, self_signed

CLIENT_KEYS = ("ozone.client.tls.cert.file", "ozone.client.tls.key.file", "ozone.client.tls.ca.file")


@dataclass(frozen=True)
class Strangers:
    """Client certificates a secure cluster must refuse, each claiming the administrator's name and
    trusting the cluster's CA (so only the server's check can fail): one signed by itself, one by another
    CA."""

    self_signed: TlsStore
    other_ca: TlsStore


class SecureCluster(LiveCluster):
    admin_user = login_user()

    def cluster(self, *args: str, timeout_s: float = 60) -> Result:
        if args and args[0] == "up":
            args = (*args, "--secure")
        return super().cluster(*args, timeout_s=timeout_s)

    # ------------------------------------------------------------------ certificates
    @property
    def admin_tls(self) -> TlsStore:
        """The administrator's client certificate, as the site file names it."""
        site = read_site_xml(self.conf_dir / SITE_FILE)
        cert, key, ca = (Path(site[k]) for k in CLIENT_KEYS)
        return TlsStore(TlsPaths(key, cert, ca))

    def strangers(self, root: Path) -> Strangers:
        trust = X.cert_from_pem(self.admin_tls.paths.ca.read_bytes())
        identity = X.Identity(X.CertRole.USER, self.admin_user)
        other = CertAuthority(root / "other-ca").store("other", identity, trust=trust)
        return Strangers(self_signed(root, "self-signed", identity, trust), other)

    def user_conf(self, name: str) -> Path:
        """A configuration dir acting as user `name`: the cluster's site file with the client keys naming
        the certificate `pyozone admin cert issue-user NAME` made (issued once, as the administrator)."""
        conf_dir = self.data_dir / "users" / name / "conf"
        if conf_dir.exists():
            return conf_dir
        certs = self.data_dir / "users" / name / "certs"
        issued = self.admin("cert", "issue-user", name, "--out", str(certs))
        assert issued.code == 0, issued
        site = read_site_xml(self.conf_dir / SITE_FILE)
        files = (certs / "certificate.crt", certs / "private.pem", certs / "ca.crt")
        site |= {key: str(path) for key, path in zip(CLIENT_KEYS, files, strict=True)}
        conf_dir.mkdir(parents=True)
        write_site_xml(conf_dir / SITE_FILE, site)
        return conf_dir

    def conf_without_certificate(self) -> Path:
        """The cluster's configuration without any client certificate."""
        conf_dir = self.data_dir / "no-certificate" / "conf"
        if not conf_dir.exists():
            site = {k: v for k, v in read_site_xml(self.conf_dir / SITE_FILE).items() if k not in CLIENT_KEYS}
            conf_dir.mkdir(parents=True)
            write_site_xml(conf_dir / SITE_FILE, site)
        return conf_dir

    # ------------------------------------------------------------------ commands
    def sh_as(self, conf_dir: Path, *args: str, timeout_s: float = 120) -> Result:
        """`pyozone sh ARGS --conf CONF_DIR` as a real process."""
        return self.pyozone("sh", *args, "--conf", str(conf_dir), timeout_s=timeout_s)

    def sh(self, *args: str, timeout_s: float = 120) -> Result:
        """`pyozone sh ARGS` as the administrator."""
        return self.sh_as(self.conf_dir, *args, timeout_s=timeout_s)

    def ozone_client(self, conf_dir: Path | None = None):
        """A synchronous OzoneClient acting as the user of `conf_dir` (default: the administrator)."""
        from pyozone.client import OzoneClient

        return OzoneClient(load_configuration(conf_dir or self.conf_dir, {}))


@contextlib.contextmanager
def secure_cluster(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    datanodes: int = 3,
    overrides: dict[str, str] | None = None,
) -> Iterator[SecureCluster]:
    """A running secure cluster, stopped (`cluster down`, then SIGKILL) when the module's tests end."""
    cluster = SecureCluster(tmp_path_factory.mktemp(name))
    request.addfinalizer(cluster.stop)
    cluster.up(datanodes, overrides=overrides)
    yield cluster
