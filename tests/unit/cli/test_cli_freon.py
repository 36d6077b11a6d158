"""`pyozone freon` options: --duration in Ozone's format, echo payloads in KB or with a unit, -n's default,
bad values as one-line errors; ome and omkg in-process against an OM daemon (fake SCM)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest

from pyozone.cli.freon import _duration, _number, _payload
from pyozone.hdds.limits import MAX_ECHO_PAYLOAD_BYTES
from tests.cli_support import Result
from tests.unit.om.om_thread import om_on_thread


@pytest.mark.parametrize(
    ("text", "seconds"), [("10s", 10), ("5m", 300), ("1h", 3600), ("7", 7), ("500ms", 0.5), ("1.5m", 90)]
)
def test_duration_takes_ozones_format(text: str, seconds: float) -> None:
    assert _duration(text) == seconds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", "'abc' is not a duration"),
        ("10 parsecs", "'10 parsecs' has unknown duration unit 'parsecs'"),
        ("0s", "'0s' is not a positive duration"),
        ("-3s", "'-3s' is not a positive duration"),
    ],
)
def test_a_bad_duration_says_why(text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        _duration(text)


@pytest.mark.parametrize(
    ("text", "size"), [("0", 0), ("4", 4096), ("512B", 512), ("1MB", 1 << 20), ("2MB", 2 << 20)]
)
def test_a_payload_is_kb_or_a_size(text: str, size: int) -> None:
    assert _payload(text) == size


@pytest.mark.parametrize(
    ("text", "message"),
    [("3MB", f"above the {MAX_ECHO_PAYLOAD_BYTES}-byte echo limit"), ("2049", "above"), ("x", "not a size")],
)
def test_a_bad_payload_says_why(text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        _payload(text)


def test_the_count_is_1000_unless_a_duration_ends_the_run() -> None:
    def args(number: int | None, duration: float | None) -> argparse.Namespace:
        return argparse.Namespace(number=number, duration=duration)

    assert (_number(args(None, None)), _number(args(None, 5.0)), _number(args(20, 5.0))) == (1000, None, 20)


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("ome", "--duration", "abc"), "argument --duration: 'abc' is not a duration"),
        (("dne", "--duration", "0"), "argument --duration: '0' is not a positive duration"),
        (("omkg", "--duration=-1m"), "argument --duration: '-1m' is not a positive duration"),
        (("ome", "--payload-resp", "3MB"), "argument --payload-resp: '3MB' is above the"),
        (("ockg", "-n", "0"), "argument -n/--number-of-tests: '0' is not a positive whole number"),
        (("omkg", "-t", "x"), "argument -t/--threads: 'x' is not a positive whole number"),
    ],
)
def test_bad_options_are_one_line_errors(
    cli: Callable[..., Result], capsys: pytest.CaptureFixture[str], args: tuple[str, ...], error: str
) -> None:
    with pytest.raises(SystemExit) as usage:
        cli("freon", *args)
    captured = capsys.readouterr()
    assert usage.value.code == 2 and captured.out == ""
    last = captured.err.rstrip("\n").rsplit("\n", 1)[-1]
    assert last.startswith(f"pyozone freon {args[0]}: error: {error}"), captured.err
    assert "Traceback" not in captured.err


def table(result: Result) -> dict[str, str]:
    return dict(line.rsplit(None, 1) for line in result.out.splitlines())


def test_ome_and_omkg_print_their_tables(cli: Callable[..., Result], tmp_path: Path) -> None:
    with om_on_thread(tmp_path) as address:
        echo = cli("freon", "ome", "-n", "30", "-t", "3", "--payload-resp", "1", "--om", address, "-q")
        keys = cli("freon", "omkg", "-n", "12", "-t", "2", "-p", "cli", "--om", address, "-q")
        timed = cli("freon", "ome", "--duration", "200ms", "-t", "2", "--om", address, "-q")
    assert echo.code == 0, echo.err
    rows = table(echo)
    assert (rows["operation"], rows["ops"], rows["failed"], rows["bytes"]) == (
        "ome",
        "30",
        "0",
        str(30 * 1024),
    )
    assert float(rows["ops/s"]) > 0 and {"p50", "p90", "p99", "max"} <= {
        k.split()[1] for k in rows if " " in k
    }
    assert keys.code == 0 and keys.err == "prefix: cli\n", keys.err
    assert (table(keys)["operation"], table(keys)["keys"], table(keys)["failed"]) == ("omkg", "12", "0")
    assert timed.code == 0 and int(table(timed)["ops"]) > 0 and float(table(timed)["seconds"]) >= 0.2
