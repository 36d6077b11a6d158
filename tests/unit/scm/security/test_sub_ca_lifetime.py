"""Issue 31, review R15 D2: SCM's sub-CA lives hdds.x509.max.duration (never past the root), as Ozone's
DefaultCAServer.expiryFor gives a sub-CA, at `scm --init` and at renewal. Before, it lived
hdds.x509.default.duration, and as every leaf is capped at its issuer's expiry a certificate issued on day
300 lived 65 days, not P365D, and every certificate of the cluster expired at one instant."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
from pathlib import Path

from pyozone.cli.main import main
from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.authority import CertificateAuthority
from pyozone.scm.security.certificates import CertificateStore
from pyozone.scm.server.ca_files import ScmSecurityFiles, load_ca, renew_scm_certificate
from pyozone.scm.store import SCMMetadataStore
from pyozone.security.config import SecurityConfig

DAY_MS = 86_400_000
SECURE = {"ozone.security.enabled": "true", "ozone.scm.names": "127.0.0.1", "ozone.administrators": "ada"}


def _init(metadata: Path, **extra: str) -> tuple[OzoneConfiguration, SecurityConfig, ScmSecurityFiles]:
    conf = OzoneConfiguration({"ozone.metadata.dirs": str(metadata), **SECURE, **extra})
    args = [
        a
        for k, v in {"ozone.metadata.dirs": str(metadata), **SECURE, **extra}.items()
        for a in ("-D", f"{k}={v}")
    ]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["scm", "--init", *args]) == 0
    settings = SecurityConfig.from_conf(conf)
    return conf, settings, ScmSecurityFiles.from_conf(conf, settings)


def _days(cert: X.Certificate) -> int:
    return (cert.not_valid_after_utc - cert.not_valid_before_utc - dt.timedelta(minutes=1)).days


def test_the_sub_ca_lives_max_duration_and_a_late_leaf_keeps_default_duration(tmp_path: Path) -> None:
    _, settings, files = _init(tmp_path / "scm", **{"hdds.x509.max.duration": "P1000D"})
    m = load_ca(files)
    assert _days(m.trust_anchor) == 1000 and _days(m.cert) >= 999  # the root's life, from a moment later
    assert m.cert.not_valid_after_utc <= m.trust_anchor.not_valid_after_utc
    start_ms = int(m.cert.not_valid_before_utc.timestamp() * 1000) + 60_000
    for day in (0, 300, 600):
        clock = ManualClock(epoch_ms=start_ms + day * DAY_MS)
        ca = CertificateAuthority(
            m, CertificateStore(SCMMetadataStore.in_memory()), clock, "C", "S", settings.default_duration_ms
        )
        leaf = ca.issue(X.build_csr(X.generate_private_key(), Identity(CertRole.OM, "om", "h1"), ("h1",)))
        assert _days(leaf) == 365, day


def test_a_renewed_sub_ca_lives_max_duration_capped_at_the_root(tmp_path: Path) -> None:
    _, settings, files = _init(tmp_path / "scm", **{"hdds.x509.max.duration": "P1000D"})
    m = load_ca(files)
    start_ms = int(m.cert.not_valid_before_utc.timestamp() * 1000) + 60_000
    clock = ManualClock(epoch_ms=start_ms + 100 * DAY_MS)
    ca = CertificateAuthority(
        m, CertificateStore(SCMMetadataStore.in_memory()), clock, "C", "S", settings.default_duration_ms
    )
    hosts = ("127.0.0.1",)
    renewed = renew_scm_certificate(ca, files.scm, hosts, 950 * DAY_MS, settings.max_duration_ms)
    assert renewed is not None and renewed.not_valid_after_utc == m.trust_anchor.not_valid_after_utc
    assert _days(renewed) in (899, 900)  # 1000 days less the 100 gone; the root may be made a second earlier
