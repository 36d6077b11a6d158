"""`pyozone sim`: the real SCM core with simulated datanodes on virtual time, through the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyozone.sim.status import HEADER

Run = Callable[..., Any]

FIELDS = {
    "minute",
    "safe_mode",
    "healthy",
    "healthy_readonly",
    "stale",
    "dead",
    "three_open",
    "three_allocated",
    "one_open",
    "closed",
    "containers",
}
COLUMNS = [
    "minute",
    "safe_mode",
    "HEALTHY",
    "READONLY",
    "STALE",
    "DEAD",
    "THREE_open",
    "THREE_alloc",
    "ONE_open",
    "closed",
    "containers",
]


def rows(out: str) -> list[dict[str, Any]]:
    """The text table as dicts keyed by header column (fault lines `-- ...` skipped)."""
    lines = out.splitlines()
    assert lines[0] == HEADER
    header = HEADER.replace("safe mode", "safe_mode")
    for multi in ("THREE open", "THREE alloc", "ONE open"):
        header = header.replace(multi, multi.replace(" ", "_"))
    assert header.split() == COLUMNS
    table = []
    for line in lines[1:]:
        if line.startswith("-- "):
            continue
        values = line.split()
        assert len(values) == len(COLUMNS), line
        table.append(
            {
                c: (v if c == "safe_mode" else float(v) if c == "minute" else int(v))
                for c, v in zip(COLUMNS, values, strict=True)
            }
        )
    return table


def json_rows(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_default_run_prints_a_header_and_a_row_per_minute(cli: Run) -> None:
    result = cli("sim")
    assert result.code == 0 and result.err == ""
    table = rows(result.out)
    assert [r["minute"] for r in table] == [float(m) for m in range(1, 16)]
    assert all(r["HEALTHY"] == 5 and r["STALE"] == r["DEAD"] == 0 for r in table)
    assert table[-1]["safe_mode"] == "OUT_OF_SAFE_MODE"
    assert table[-1]["THREE_open"] >= 1 and table[-1]["ONE_open"] == 5


def test_text_and_json_agree(cli: Run) -> None:
    text = rows(cli("sim", "--minutes", "4").out)
    data = json_rows(cli("sim", "--minutes", "4", "--json").out)
    assert [(r["minute"], r["safe_mode"], r["HEALTHY"], r["DEAD"]) for r in text] == [
        (d["minute"], d["safe_mode"], d["healthy"], d["dead"]) for d in data
    ]


def test_json_rows_parse(cli: Run) -> None:
    result = cli("sim", "--json", "--minutes", "6", "--every", "2")
    assert result.code == 0 and result.err == ""
    data = json_rows(result.out)
    assert [d["minute"] for d in data] == [2.0, 4.0, 6.0]
    for d in data:
        assert set(d) == FIELDS
        assert d["healthy"] + d["healthy_readonly"] + d["stale"] + d["dead"] == 5
    assert data[-1]["safe_mode"] == "OUT_OF_SAFE_MODE" and data[-1]["three_open"] >= 1


def test_every_that_does_not_divide_the_run_ends_on_the_last_minute(cli: Run) -> None:
    data = json_rows(cli("sim", "--json", "--minutes", "2.5", "--every", "1").out)
    assert [d["minute"] for d in data] == [1.0, 2.0, 2.5]


def test_same_seed_same_run(cli: Run) -> None:
    args = ("sim", "--json", "--minutes", "8", "--datanodes", "7", "--racks", "2", "--kill", "3@2")
    args += ("--seed", "5")
    assert cli(*args).out == cli(*args).out


def first_minute(data: list[dict[str, Any]], predicate: Callable[[dict[str, Any]], bool]) -> float | None:
    return next((d["minute"] for d in data if predicate(d)), None)


@pytest.mark.parametrize("kill_at", [1, 3])
def test_kill_then_restart_goes_stale_dead_and_healthy_again(cli: Run, kill_at: int) -> None:
    restart_at, minutes = kill_at + 11, kill_at + 13
    faults = ("--kill", f"2@{kill_at}", "--restart", f"2@{restart_at}")
    args = (*faults, "--minutes", str(minutes), "--every", "1")
    result = cli("sim", "--json", *args)
    assert result.code == 0 and result.err == ""
    data = json_rows(result.out)
    assert [d["minute"] for d in data] == [float(m) for m in range(1, minutes + 1)]

    stale_at = first_minute(data, lambda d: d["stale"] == 1)
    dead_at = first_minute(data, lambda d: d["dead"] == 1)
    # ozone.scm.stale.node.interval 5m and dead.node.interval 10m after the last heartbeat, one row of slack.
    assert stale_at in (kill_at + 5, kill_at + 6), data
    assert dead_at in (kill_at + 10, kill_at + 11), data
    for d in data:
        if d["minute"] < stale_at:
            assert (d["stale"], d["dead"]) == (0, 0), d
        elif d["minute"] < dead_at:
            assert (d["stale"], d["dead"], d["healthy"]) == (1, 0, 4), d
        elif d["minute"] < restart_at:
            assert (d["stale"], d["dead"], d["healthy"]) == (0, 1, 4), d
    assert (data[-1]["healthy"], data[-1]["stale"], data[-1]["dead"]) == (5, 0, 0)

    # The text view shows the same, and says when each fault happened.
    text = cli("sim", *args).out
    assert f"-- kill datanode 2 at minute {kill_at}\n" in text
    assert f"-- restart datanode 2 at minute {restart_at}\n" in text
    assert [(r["STALE"], r["DEAD"]) for r in rows(text)] == [(d["stale"], d["dead"]) for d in data]


def test_partition_and_heal(cli: Run) -> None:
    data = json_rows(cli("sim", "--json", "--partition", "1@1", "--heal", "1@8", "--minutes", "10").out)
    assert first_minute(data, lambda d: d["stale"] == 1) in (6.0, 7.0)
    assert all(d["dead"] == 0 for d in data)
    assert (data[-1]["healthy"], data[-1]["stale"]) == (5, 0)


# ------------------------------------------------------------ --data-dir
def ldb_pipelines(cli: Run, db: Path) -> list[dict[str, Any]]:
    listed = cli("debug", "ldb", "--db", str(db), "ls")
    assert listed.code == 0 and "pipelines" in listed.out.split()
    scan = cli("debug", "ldb", "--db", str(db), "scan", "--column-family", "pipelines")
    assert scan.code == 0 and scan.err == ""
    return [json.loads(line) for line in scan.out.splitlines()]


def test_data_dir_persists_pipelines_across_runs(cli: Run, tmp_path: Path) -> None:
    meta, db = tmp_path / "meta", tmp_path / "meta" / "scm.db"
    assert cli("scm", "--init", "-D", f"ozone.metadata.dirs={meta}").code == 0
    assert ldb_pipelines(cli, db) == []

    first = cli("sim", "--data-dir", str(meta), "--minutes", "3", "--json")
    assert first.code == 0 and first.err == ""
    assert json_rows(first.out)[-1]["three_open"] >= 1
    after_first = ldb_pipelines(cli, db)
    assert after_first, "the pipelines table is empty after a run"
    for record in after_first:
        assert record["key"] == record["value"]["id"]
        assert record["value"]["replicationConfig"] in ("RATIS/THREE", "RATIS/ONE")
        assert record["value"]["state"] in ("ALLOCATED", "OPEN", "DORMANT", "CLOSED")
    three = [r for r in after_first if r["value"]["replicationConfig"] == "RATIS/THREE"]
    assert three and all(len(r["value"]["nodes"]) == 3 for r in three)

    second = cli("sim", "--data-dir", str(meta), "--minutes", "3", "--json")
    assert second.code == 0 and second.err == ""
    # The restarted SCM reloaded them: they are counted from its first row on.
    assert json_rows(second.out)[0]["three_open"] == sum(r["value"]["state"] == "OPEN" for r in three)
    after_second = ldb_pipelines(cli, db)
    assert {r["key"] for r in after_first} <= {r["key"] for r in after_second}


def test_ldb_scan_limit(cli: Run, tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    cli("scm", "--init", "-D", f"ozone.metadata.dirs={meta}")
    cli("sim", "--data-dir", str(meta), "--minutes", "3")
    scan = cli("debug", "ldb", "--db", str(meta / "scm.db"), "scan", "--cf", "pipelines", "-l", "1")
    assert scan.code == 0 and len(scan.out.splitlines()) == 1


def test_second_run_on_a_data_dir_leaves_safe_mode(cli: Run, tmp_path: Path) -> None:
    meta = tmp_path / "meta"
    cli("scm", "--init", "-D", f"ozone.metadata.dirs={meta}")
    first = json_rows(cli("sim", "--data-dir", str(meta), "--minutes", "3", "--json").out)
    assert first[-1]["safe_mode"] == "OUT_OF_SAFE_MODE"
    second = json_rows(cli("sim", "--data-dir", str(meta), "--minutes", "15", "--json").out)
    assert second[-1]["safe_mode"] == "OUT_OF_SAFE_MODE"
