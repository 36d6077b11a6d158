"""`pyozone admin cert` refusals made before anything is dialled: on a configuration without security
(no CA exists) and with client certificate files that are not what they claim."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pyozone.hdds.security import x509 as X
from tests.cli_support import Result
from tests.tls_certs import CertAuthority

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
