"""Issue 28 defect 19b: `freon ockg -s 1TB --duration 5s` checked the duration only between keys and wrote
~50 GB before it was killed. The duration bounds a key in progress too: the key is aborted (nothing of it
committed) and the report counts it as interrupted, beside the keys and bytes that were written."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from tests.cli_support import Result
from tests.unit.client.fakes import SMALL, FakeCluster


@pytest.fixture
def cluster() -> Iterator[FakeCluster]:
    c = FakeCluster(block_size=1 << 30, instant_commit=True)  # openKey of 1TB: the fake pre-allocates all
    yield c
    c.stop()


def _defines(**extra: str) -> list[str]:
    """-D arguments for the small test keys on write pipeline V1 (what the fakes serve), and `extra`."""
    conf = {**SMALL, "ozone.fs.datastream.enabled": "false", **extra}
    return [arg for key, value in conf.items() for arg in ("-D", f"{key}={value}")]


def _table(out: str) -> dict[str, str]:
    """freon's summary table: each row's last word by its name."""
    return dict(line.rsplit(None, 1) for line in out.splitlines())


def test_the_duration_ends_a_key_in_progress(cli: Callable[..., Result], cluster: FakeCluster) -> None:
    defines = _defines()
    started = time.monotonic()
    result = cli(
        "freon", "ockg", "-s", "1TB", "--duration", "300ms", "-t", "2", "-p", "big",
        "--om", cluster.om.address, "-q", *defines,
    )  # fmt: skip
    took = time.monotonic() - started
    assert result.code == 0, result.err
    rows = _table(result.out)
    assert (rows["keys"], rows["failed"], rows["bytes"], rows["interrupted"]) == ("0", "0", "0", "2")
    assert cluster.om.keys == {}, "nothing of the keys committed"
    assert took < 10, f"{took:.1f}s for --duration 300ms"


def test_the_duration_ends_a_key_being_verified(cli: Callable[..., Result], cluster: FakeCluster) -> None:
    address = ("--om", cluster.om.address, "-q", *_defines())
    written = cli("freon", "ockg", "-n", "1", "-s", "16MB", "-p", "v", *address)
    assert written.code == 0, written.err
    started = time.monotonic()
    checked = cli("freon", "ockv", "-p", "v", "-n", "1", "--duration", "100ms", *address)
    assert checked.code == 0, checked.err
    rows = _table(checked.out)
    assert (rows["keys"], rows["failed"], rows["interrupted"]) == ("0", "0", "1")
    assert time.monotonic() - started < 5


def test_the_duration_ends_a_commit_waiting_for_om(cli: Callable[..., Result], cluster: FakeCluster) -> None:
    """Once a key's last piece was written, close() waited out the whole OM retry policy: the duration
    bounds that wait too, and the key counts as interrupted, not failed."""
    cluster.om.commit_unavailable = 10**6  # OM unreachable for commits from now on
    defines = _defines(
        **{"ozone.client.failover.max.attempts": "40", "ozone.client.wait.between.retries.millis": "250"}
    )
    started = time.monotonic()
    result = cli(
        "freon", "ockg", "-s", "10KB", "--duration", "500ms", "-t", "1", "-p", "c",
        "--om", cluster.om.address, "-q", *defines,
    )  # fmt: skip
    took = time.monotonic() - started
    assert result.code == 0, result.err
    rows = _table(result.out)
    assert (rows["keys"], rows["failed"], rows["interrupted"]) == ("0", "0", "1")
    assert took < 5, f"{took:.1f}s for --duration 500ms (the policy alone: 10 s)"
