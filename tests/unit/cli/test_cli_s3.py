"""`pyozone s3 getsecret` and `revokesecret` in-process, against the OM daemon running on a thread (fake
SCM): Ozone's output, -e for eval, the confirmation prompt and the refusals."""

from __future__ import annotations

import getpass
import io
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cli_support import Result
from tests.unit.om.om_thread import om_on_thread


@pytest.fixture
def om_address(tmp_path: Path) -> Iterator[str]:
    with om_on_thread(tmp_path) as address:
        yield address


@pytest.fixture
def s3(cli: Callable[..., Result], om_address: str) -> Callable[..., Result]:
    return lambda *args: cli("s3", *args, "--om", om_address)


def test_getsecret_prints_as_ozone_and_keeps_the_pair(s3: Callable[..., Result]) -> None:
    shown = s3("getsecret", "-u", "alice")
    assert shown.code == 0
    first, second = shown.out.splitlines()
    assert first == "awsAccessKey=alice"
    secret = second.removeprefix("awsSecret=")
    assert len(secret) == 64 and int(secret, 16) >= 0
    exported = s3("getsecret", "-u", "alice", "-e")
    assert exported.out == (f"export AWS_ACCESS_KEY_ID='alice'\nexport AWS_SECRET_ACCESS_KEY='{secret}'\n")


def test_the_user_defaults_to_the_os_user(s3: Callable[..., Result], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HADOOP_USER_NAME", raising=False)
    assert s3("getsecret").out.startswith(f"awsAccessKey={getpass.getuser()}\n")


def test_the_user_defaults_to_hadoop_user_name(
    s3: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user every other OM call claims (HADOOP_USER_NAME), so ACLs and the secret name one user."""
    monkeypatch.setenv("HADOOP_USER_NAME", "carol")
    assert s3("getsecret").out.startswith("awsAccessKey=carol\n")


def test_revokesecret_asks_first(s3: Callable[..., Result], monkeypatch: pytest.MonkeyPatch) -> None:
    secret = s3("getsecret", "-u", "bob").out
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    kept = s3("revokesecret", "-u", "bob")
    assert (kept.code, kept.out) == (
        0,
        "Enter 'y' to confirm S3 secret revocation for 'bob': Operation cancelled.\n",
    )
    assert s3("getsecret", "-u", "bob").out == secret
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert s3("revokesecret", "-u", "bob").out.endswith("S3 secret revoked.\n")
    assert s3("getsecret", "-u", "bob").out != secret  # a new pair
    assert s3("revokesecret", "-u", "bob", "-y").out == "S3 secret revoked.\n"
    refused = s3("revokesecret", "-u", "bob", "-y")
    assert refused.code == 1
    assert refused.err.startswith("pyozone s3: error: S3_SECRET_NOT_FOUND: ")


@pytest.mark.parametrize("command", ["getsecret", "revokesecret"])
@pytest.mark.parametrize("name", ["", "  "])
def test_an_empty_or_blank_user_is_refused_not_taken_for_you(
    s3: Callable[..., Result], command: str, name: str
) -> None:
    """Issue 28 defect 19d: `-u ""` answered with the default user's key pair."""
    refused = s3(command, "-u", name, "-y") if command == "revokesecret" else s3(command, "-u", name)
    assert (refused.code, refused.out) == (1, "")
    assert refused.err == f"pyozone s3: error: -u {name!r}: an empty or blank user name\n"
