"""`pyozone admin cert` refusals made before anything is dialled: on a configuration without security
(no CA exists) and with client certificate files that are not what they claim; what the listing, info and
revoke say of the HA OMs of one host (against an in-process SCM CA)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.security import x509 as X
from pyozone.scm.security.certificates import RevocationReason
from pyozone.scm.security.manager import ScmSecurity
from tests.cli_support import Result
from tests.tls_certs import CertAuthority
from tests.unit.scm.security.test_manager import security
from tests.unit.scm.security.test_om_node_certificates import ADMIN, joined

ALICE = X.Identity(X.CertRole.USER, "alice")


@pytest.fixture(autouse=True)
def no_client_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OZONE_CLIENT_CERT", "OZONE_CLIENT_KEY", "OZONE_CA_CERT", "OZONE_CONF_DIR"):
        monkeypatch.delenv(name, raising=False)


def _client(cert: Path, key: Path, ca: Path) -> list[str]:
    return [
        "-D", "ozone.security.enabled=true", "-D", "ozone.scm.names=127.0.0.1",
        "-D", f"ozone.client.tls.cert.file={cert}", "-D", f"ozone.client.tls.key.file={key}",
        "-D", f"ozone.client.tls.ca.file={ca}",
    ]  # fmt: skip


@pytest.mark.parametrize("command", [("list",), ("issue-user", "bob")])
def test_without_security_the_error_says_there_is_no_ca(cli: Callable[..., Result], command) -> None:
    result = cli("admin", "cert", *command, "-D", "ozone.security.enabled=false")
    assert result.code != 0
    assert "ozone.security.enabled is false" in result.err
    assert "mutual TLS" not in result.err


def test_a_junk_or_mismatched_client_certificate_is_named(cli: Callable[..., Result], tmp_path: Path) -> None:
    ca = CertAuthority(tmp_path / "ca")
    alice, bob = ca.issue("alice", ALICE), ca.issue("bob", X.Identity(X.CertRole.USER, "bob"))
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    cases = {
        (junk, alice.key, alice.ca): f"{junk}: not a PEM certificate",
        (alice.cert, junk, alice.ca): f"{junk}: not an unencrypted PEM private key",
        (alice.cert, alice.key, junk): f"{junk}: not a PEM certificate",
        (alice.cert, bob.key, alice.ca): f"{alice.cert} is not the certificate of the private key {bob.key}",
    }
    for files, message in cases.items():
        result = cli("admin", "cert", "list", *_client(*files))
        assert result.code != 0
        assert message in result.err, result.err


def test_a_refusal_of_scms_ca_ends_any_command_or_daemon_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 28 review: a datanode whose JOIN credential was used up died with a 50-line traceback."""
    from pyozone.cli import main as cli_main
    from pyozone.cli import s3
    from pyozone.hdds.security.errors import SecurityError, SecurityResult

    def refused(args: object) -> int:
        raise SecurityError(SecurityResult.PERMISSION_DENIED, "JOIN credential 8 was already used")

    monkeypatch.setattr(s3, "run_revokesecret", refused)
    assert cli_main.main(["s3", "revokesecret", "-y"]) == 1
    err = capsys.readouterr().err
    assert err == "pyozone s3: error: PERMISSION_DENIED: JOIN credential 8 was already used\n", err


def test_a_serial_is_the_listings_decimal_or_hex_with_0x_and_nothing_else(cli: Callable[..., Result]) -> None:
    """Issue 28 review: a hex serial made of digits silently named another certificate. The listing's
    decimal form is taken, hex only with 0x; a hex digit without it is refused, naming both forms."""
    from pyozone.cli.admin.cert import parse_serial

    assert parse_serial("20") == 20 and parse_serial("0x14") == 20 and parse_serial("0X1A") == 26
    for bad in ("1a", "-3", "0x", "1 2", "٣"):
        result = cli("admin", "cert", "revoke", bad, "-D", "ozone.security.enabled=true")
        assert result.code == 1 and "decimal, as `admin cert list` prints it, or hex with 0x" in result.err, (
            bad
        )


class _Scm:
    """The CLI's SCMSecurityClient answered by an in-process ScmSecurity, as an administrator."""

    def __init__(self, scm: ScmSecurity) -> None:
        self.scm = scm

    def __enter__(self) -> _Scm:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def list_certificates(
        self, role: X.CertRole | None = None, start: int = 0, count: int = 1000, revoked: bool = False
    ) -> list[bytes]:
        return self.scm.certificates(ADMIN, role, start, count, revoked)

    def get_certificate(self, serial: int) -> bytes:
        return self.scm.certificate(ADMIN, serial)

    def revoke_certificates(self, serials: list[int], reason: int, names: list[str]) -> int:
        self.scm.revoke(ADMIN, serials, RevocationReason(reason), names)
        return self.scm.crl()[0]


@pytest.fixture
def three_oms_of_one_host(monkeypatch: pytest.MonkeyPatch) -> tuple[ScmSecurity, dict[str, int]]:
    """SCM's CA with the three OMs of `cluster up --om-ha` (one host), behind `admin cert`."""
    from pyozone.cli.admin import cert

    nodes = {"svc/om1": "h", "svc/om2": "h", "svc/om3": "h"}
    scm = security(ManualClock(epoch_ms=time.time_ns() // 1_000_000), nodes)[0]
    serials = {node: joined(scm, node)[0].serial_number for node in nodes}
    monkeypatch.setattr(cert, "connect", lambda args: (OzoneConfiguration(), _Scm(scm)))
    return scm, serials


def test_the_listing_and_info_show_which_om_node_a_certificate_is(
    cli: Callable[..., Result], three_oms_of_one_host: tuple[ScmSecurity, dict[str, int]]
) -> None:
    """R12 D4: the three OMs of one host were three identical CN=om@h rows."""
    _, serials = three_oms_of_one_host
    table = cli("admin", "cert", "list", "--role", "om")
    assert table.code == 0, table.err
    for node, serial in serials.items():
        row = next(line for line in table.out.splitlines() if line.startswith(f"{serial} "))
        assert "CN=om@h" in row and f"[{node}]" in row
    listed = json.loads(cli("admin", "cert", "list", "--role", "om", "--json").out)
    assert {(c["serialNumber"], c["node"]) for c in listed} == {(s, n) for n, s in serials.items()}
    info = cli("admin", "cert", "info", str(serials["svc/om2"]))
    assert "  OM node: svc/om2" in info.out.splitlines()


def test_an_administrator_revokes_one_om_of_a_host_by_its_node(
    cli: Callable[..., Result], three_oms_of_one_host: tuple[ScmSecurity, dict[str, int]]
) -> None:
    """R12 D4: `revoke --name om@h` was the only way by name, and it revokes every OM of the host."""
    scm, serials = three_oms_of_one_host
    done = cli("admin", "cert", "revoke", "--om-node", "svc/om2", "--reason", "keyCompromise")
    assert done.code == 0, done.err
    assert f"Revoked certificate(s) {serials['svc/om2']} (om@h, OM node svc/om2) (keyCompromise)" in done.out
    assert [scm.ca.certs.get(s) is None for s in serials.values()] == [False, True, False]
    missing = cli("admin", "cert", "revoke", "--om-node", "svc/om2")
    assert missing.code != 0 and "no valid certificate names OM node svc/om2" in missing.err
    assert "is not an OM node" in cli("admin", "cert", "revoke", "--om-node", "om2").err
    every = cli("admin", "cert", "revoke", "--name", "om@h")
    assert every.code == 0, every.err
    om1, om3 = serials["svc/om1"], serials["svc/om3"]
    assert (
        f"every certificate of om@h ({om1} (om@h, OM node svc/om1), {om3} (om@h, OM node svc/om3): every HA "
        "OM of the host; --om-node SERVICE/NODE revokes one)"
    ) in every.out
