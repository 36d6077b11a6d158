"""Bad planner inventories: one line on stderr naming the problem, exit 1, no stdout, nothing written."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pyozone

Cli = Callable[..., Any]
Snapshot = Callable[[Path], dict[str, bytes | None]]

HEADER = "id,rack,data_disks,metadata_disks\n"
GOOD = "dn1,/r1,1,1\ndn2,/r1,1,1\ndn3,/r2,1,1\n"

# name -> (file name, bytes, fragments the one-line error must contain)
CASES: dict[str, tuple[str, bytes, tuple[str, ...]]] = {
    "empty file": ("inv.csv", b"", ("inv.csv", "line 1", "header")),
    "blank lines only": ("inv.csv", b"\n\n", ("inv.csv", "line 1", "header")),
    "wrong header": ("inv.csv", b"id,rack,disks\ndn1,/r1,1\n", ("inv.csv", "line 1", "header must be")),
    "header in another order": (
        "inv.csv",
        b"id,rack,metadata_disks,data_disks\ndn1,/r1,1,1\n",
        ("line 1", "id,rack,data_disks,metadata_disks"),
    ),
    "header only": ("inv.csv", HEADER.encode(), ("inv.csv", "no datanodes")),
    "too few fields": (
        "inv.csv",
        (HEADER + "dn1,/r1,1,1\ndn2,/r1,1\n").encode(),
        ("inv.csv", "line 3", "expected 4 fields, got 3"),
    ),
    "too many fields": (
        "inv.csv",
        (HEADER + "dn1,/r1,1,1,9\n").encode(),
        ("inv.csv", "line 2", "expected 4 fields, got 5"),
    ),
    "too few fields after a blank line": (
        "inv.csv",
        (HEADER + "dn1,/r1,1,1\n\n\ndn2\n").encode(),
        ("line 5", "expected 4 fields, got 1"),
    ),
    "non-integer data disks": (
        "inv.csv",
        (HEADER + "dn1,/r1,two,1\n").encode(),
        ("inv.csv", "line 2", "data_disks", "'two'"),
    ),
    "fractional metadata disks": (
        "inv.csv",
        (HEADER + "dn1,/r1,1,1\ndn2,/r1,1,1.5\n").encode(),
        ("line 3", "metadata_disks", "'1.5'"),
    ),
    "negative metadata disks": (
        "inv.csv",
        (HEADER + "dn1,/r1,1,1\ndn2,/r1,1,1\ndn3,/r1,1,-2\n").encode(),
        ("line 4", "metadata_disks", "'-2'"),
    ),
    "negative data disks": ("inv.csv", (HEADER + "dn1,/r1,-1,1\n").encode(), ("line 2", "data_disks")),
    "empty disk count": ("inv.csv", (HEADER + "dn1,/r1,,1\n").encode(), ("line 2", "data_disks")),
    "empty id": ("inv.csv", (HEADER + " ,/r1,1,1\n").encode(), ("line 2", "empty id")),
    "empty rack": ("inv.csv", (HEADER + "dn1, ,1,1\n").encode(), ("line 2", "empty rack")),
    "duplicate ids": (
        "inv.csv",
        (HEADER + "dn1,/r1,1,1\ndn2,/r1,1,1\ndn1,/r2,2,2\n").encode(),
        ("inv.csv", "line 4", "duplicate", "'dn1'"),
    ),
    "JSON object, not a list": (
        "inv.json",
        b'{"id": "dn1", "rack": "/r1", "data_disks": 1, "metadata_disks": 1}',
        ("inv.json", "JSON list"),
    ),
    "JSON scalar": ("inv.json", b"42", ("inv.json", "JSON list")),
    "JSON empty list": ("inv.json", b"[]", ("inv.json", "no datanodes")),
    "JSON syntax error": ("inv.json", b'[{"id": "dn1",]', ("inv.json", "not valid JSON", "line 1")),
    "JSON item missing a key": (
        "inv.json",
        b'[{"id": "dn1", "rack": "/r1", "data_disks": 1, "metadata_disks": 1},'
        b' {"id": "dn2", "rack": "/r1", "data_disks": 1}]',
        ("inv.json", "item 2", "missing metadata_disks"),
    ),
    "JSON item not an object": ("inv.json", b'["dn1"]', ("inv.json", "item 1", "object")),
    "JSON string disk count": (
        "inv.json",
        b'[{"id": "dn1", "rack": "/r1", "data_disks": "x", "metadata_disks": 1}]',
        ("item 1", "data_disks", "'x'"),
    ),
    "JSON boolean disk count": (
        "inv.json",
        b'[{"id": "dn1", "rack": "/r1", "data_disks": true, "metadata_disks": 1}]',
        ("item 1", "data_disks", "True"),
    ),
    "JSON float disk count": (
        "inv.json",
        b'[{"id": "dn1", "rack": "/r1", "data_disks": 1.5, "metadata_disks": 1}]',
        ("item 1", "data_disks", "1.5"),
    ),
    "JSON duplicate ids": (
        "inv.json",
        b'[{"id": "a", "rack": "/r", "data_disks": 1, "metadata_disks": 1},'
        b' {"id": "a", "rack": "/r", "data_disks": 1, "metadata_disks": 1}]',
        ("item 2", "duplicate", "'a'"),
    ),
}


def assert_one_line_error(result: Any, *fragments: str, command: str = "plan") -> None:
    assert result.code == 1, result
    assert result.out == ""
    assert result.err.endswith("\n") and result.err.count("\n") == 1, result.err
    assert result.err.startswith(f"pyozone {command}: error: "), result.err
    assert "Traceback" not in result.err
    for fragment in fragments:
        assert fragment in result.err, (fragment, result.err)


@pytest.mark.parametrize("case", list(CASES))
def test_bad_inventory(
    case: str, cli: Cli, snapshot: Snapshot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, data, fragments = CASES[case]
    (tmp_path / name).write_bytes(data)
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    assert_one_line_error(cli("plan", "pipelines", "--inventory", name), *fragments)
    assert snapshot(tmp_path) == before


def test_missing_inventory_file(cli: Cli, snapshot: Snapshot, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert_one_line_error(
        cli("plan", "pipelines", "--inventory", "nope.csv"), "nope.csv", "cannot read", "No such file"
    )
    assert snapshot(tmp_path) == {}


def test_inventory_is_a_directory(cli: Cli, snapshot: Snapshot, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "inv").mkdir()
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    assert_one_line_error(cli("plan", "pipelines", "--inventory", "inv"), "inv", "cannot read")
    assert snapshot(tmp_path) == before


def test_bad_configuration_is_reported_before_the_inventory_is_planned(
    cli: Cli, snapshot: Snapshot, tmp_path: Path, monkeypatch
) -> None:
    (tmp_path / "inv.csv").write_text(HEADER + GOOD)
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    result = cli("plan", "pipelines", "--inventory", "inv.csv", "-D", "ozone.scm.datanode.pipeline.limit=-1")
    assert_one_line_error(result, "ozone.scm.datanode.pipeline.limit", "must be >= 0")
    result = cli("plan", "pipelines", "--inventory", "inv.csv", "-D", "ozone.scm.ratis.pipeline.limit=lots")
    assert_one_line_error(result, "ozone.scm.ratis.pipeline.limit", "'lots'")
    assert snapshot(tmp_path) == before


# ------------------------------------------------------------ real processes
class Proc:
    def __init__(self, completed: subprocess.CompletedProcess[str]) -> None:
        self.code, self.out, self.err = completed.returncode, completed.stdout, completed.stderr

    def __repr__(self) -> str:
        return f"Proc(code={self.code}, out={self.out[-500:]!r}, err={self.err[-2000:]!r})"


def pyozone_process(cwd: Path, *args: str, timeout: float = 30, **kwargs: Any) -> Proc:
    env = {k: v for k, v in os.environ.items() if k != "OZONE_CONF_DIR"}
    env["PYTHONPATH"] = str(Path(pyozone.__file__).parents[1])
    completed = subprocess.run(
        [sys.executable, "-m", "pyozone", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )
    return Proc(completed)


@pytest.mark.parametrize("case", ["too few fields", "negative metadata disks", "JSON item missing a key"])
def test_bad_inventory_in_a_real_process(case: str, snapshot: Snapshot, tmp_path: Path) -> None:
    name, data, fragments = CASES[case]
    (tmp_path / name).write_bytes(data)
    before = snapshot(tmp_path)
    assert_one_line_error(pyozone_process(tmp_path, "plan", "pipelines", "--inventory", name), *fragments)
    assert snapshot(tmp_path) == before


def test_missing_inventory_in_a_real_process(snapshot: Snapshot, tmp_path: Path) -> None:
    result = pyozone_process(tmp_path, "plan", "pipelines", "--inventory", "missing.csv")
    assert_one_line_error(result, "missing.csv", "No such file")
    assert snapshot(tmp_path) == {}


# ------------------------------------------------------------ bugs
def test_non_ascii_digit_disk_count(cli: Cli, snapshot: Snapshot, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "inv.csv").write_text(HEADER + "dn1,/r1,\u00b2,1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    try:
        result = cli("plan", "pipelines", "--inventory", "inv.csv")
    except ValueError as e:  # escapes main(): the process would print a traceback
        pytest.fail(f"uncaught {e!r}")
    assert_one_line_error(result, "line 2", "data_disks")
    assert snapshot(tmp_path) == before


def test_inventory_that_is_not_utf8(snapshot: Snapshot, tmp_path: Path) -> None:
    (tmp_path / "inv.csv").write_bytes(HEADER.encode() + b"dn1,/r\xff,1,1\n")
    before = snapshot(tmp_path)
    assert_one_line_error(pyozone_process(tmp_path, "plan", "pipelines", "--inventory", "inv.csv"), "inv.csv")
    assert snapshot(tmp_path) == before


def test_negative_disk_count_in_json(cli: Cli, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "inv.json").write_text(
        '[{"id": "a", "rack": "/r", "data_disks": -3, "metadata_disks": -1},'
        ' {"id": "b", "rack": "/r", "data_disks": 1, "metadata_disks": 1}]'
    )
    monkeypatch.chdir(tmp_path)
    assert_one_line_error(cli("plan", "pipelines", "--inventory", "inv.json"), "item 1", "data_disks")


def test_csv_with_a_byte_order_mark(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "inv.csv"
    path.write_bytes(b"\xef\xbb\xbf" + (HEADER + GOOD).encode())
    result = cli("plan", "pipelines", "--inventory", str(path))
    assert result.code == 0, result.err
    assert result.out.rstrip().rsplit("\n", 1)[-1] == "2"


def _limit_memory() -> None:  # runs in the child before exec: a runaway planner cannot take the machine
    resource.setrlimit(resource.RLIMIT_AS, (1 << 28, 1 << 28))


def test_absurd_disk_count_is_rejected_quickly(snapshot: Snapshot, tmp_path: Path) -> None:
    (tmp_path / "inv.csv").write_text(HEADER + "dn1,/r1,1,1000000000000\n")
    before = snapshot(tmp_path)
    try:
        result = pyozone_process(
            tmp_path, "plan", "pipelines", "--inventory", "inv.csv", timeout=5, preexec_fn=_limit_memory
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the planner ran for more than 5 s")
    assert_one_line_error(result, "line 2", "metadata_disks")
    assert snapshot(tmp_path) == before
