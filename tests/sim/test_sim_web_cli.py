"""`pyozone sim --containers / --serve / --serve-for / --speed` through the CLI, in-process."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Run = Callable[..., Any]


def test_containers_are_placed_when_scm_leaves_safe_mode(cli: Run) -> None:
    result = cli("sim", "--datanodes", "6", "--racks", "3", "--containers", "500", "--minutes", "4")
    assert result.code == 0 and result.err == ""
    lines = result.out.splitlines()
    placed = [
        i for i, line in enumerate(lines) if line.startswith("-- 500 closed containers placed at minute")
    ]
    assert len(placed) == 1
    rows = [line.split() for line in lines[1:] if not line.startswith("--")]
    assert [int(r[-1]) for r in rows[: placed[0] - 1]] == [0] * (placed[0] - 1)
    assert all(int(r[-1]) == 500 for r in rows[placed[0] - 1 :])  # the row after the placement on


def test_json_runs_say_when_containers_were_placed(cli: Run) -> None:
    result = cli("sim", "--json", "--containers", "30", "--minutes", "3")
    events = [json.loads(line) for line in result.out.splitlines()]
    placed = [e for e in events if e.get("event") == "placed"]
    assert len(placed) == 1 and placed[0]["containers"] == 30
    assert events[-1]["containers"] == 30


def test_serve_prints_the_url_and_stops_after_serve_for(cli: Run) -> None:
    result = cli("sim", "--minutes", "1", "--serve", "127.0.0.1:0", "--serve-for", "0.2", "--json")
    assert result.code == 0, result
    last = json.loads(result.out.splitlines()[-1])
    assert last["event"] == "serving" and last["url"].startswith("http://127.0.0.1:")
    text = cli("sim", "--minutes", "1", "--serve", "0", "--serve-for", "0.2", "--speed", "5")
    assert text.code == 0 and "-- serving SCM's web UI at http://127.0.0.1:" in text.out
    assert text.out.rstrip().endswith("until 0.2 s or Ctrl-C")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--containers", "-1"), "--containers must not be negative"),
        (("--containers", "5", "--datanodes", "2"), "at least 3 --datanodes"),
        (("--serve-for", "10"), "--serve-for needs --serve"),
        (("--serve", "0", "--serve-for", "0"), "--serve-for must be positive"),
        (("--serve", "host:port"), "--serve: 'host:port' has an invalid port"),
        (("--serve", "127.0.0.1:70000"), "invalid port"),
        (("--speed", "0"), "--speed must be positive"),
    ],
)
def test_bad_options_are_refused_before_anything_runs(cli: Run, args: tuple[str, ...], message: str) -> None:
    result = cli("sim", *args)
    assert result.code != 0 and result.out == ""
    assert message in result.err


def test_containers_are_not_placed_in_a_persistent_scm(cli: Run, tmp_path: Path) -> None:
    result = cli("sim", "--containers", "5", "--data-dir", str(tmp_path))
    assert result.code != 0 and "cannot be used with --data-dir" in result.err
