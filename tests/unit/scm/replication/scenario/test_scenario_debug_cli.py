"""`pyozone debug rm-scenario`: PASS/FAIL per scenario with the differences; exit 0, 1 on a failure, 2 on
a malformed file (the other files still run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pyozone.cli.main import main

UNDER = {
    "description": "C C is under-replicated",
    "containerState": "CLOSED",
    "replicationConfig": "RATIS:THREE",
    "sequenceId": 12,
    "replicas": [
        {"state": "CLOSED", "index": 0, "datanode": "d1", "sequenceId": 12, "isEmpty": False, "origin": "o1"},
        {"state": "CLOSED", "index": 0, "datanode": "d2", "sequenceId": 12, "isEmpty": False, "origin": "o2"},
    ],
    "expectation": {"underReplicated": 1, "underReplicatedQueue": 1},
    "commands": [{"type": "replicateContainerCommand", "datanode": "d1|d2"}],
}


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def run(capsys: pytest.CaptureFixture[str], *paths: Path) -> tuple[int, str, str]:
    code = main(["debug", "rm-scenario", *map(str, paths)])
    out, err = capsys.readouterr()
    return code, out, err


def test_passing_scenarios_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path / "good.json", [UNDER, {**UNDER, "description": "again"}])
    code, out, _ = run(capsys, good)
    assert code == 0
    assert f"PASS  {good} #1: C C is under-replicated" in out
    assert f"PASS  {good} #2: again" in out
    assert out.rstrip().endswith("2 scenario(s) in 1 file(s): 2 passed, 0 failed")


def test_a_failing_scenario_shows_its_differences_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    wrong = {**UNDER, "expectation": {"underReplicated": 1}, "commands": []}
    path = write(tmp_path / "wrong.json", [UNDER, {**wrong, "description": "wrong"}])
    code, out, _ = run(capsys, path)
    assert code == 1
    lines = out.splitlines()
    assert lines[1] == f"FAIL  {path} #2: wrong"
    assert lines[2] == "      check: underReplicatedQueue: expected 0, got 1"
    assert lines[3].startswith("      processing commands: expected [], got [replicateContainerCommand@d")
    assert "1 passed, 1 failed" in lines[-1]


def test_a_malformed_file_is_reported_the_rest_run_and_the_exit_is_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path / "bad.json", {**UNDER, "replicationConfig": "RATIS:SEVEN"})
    good = write(tmp_path / "good.json", UNDER)
    code, out, err = run(capsys, bad, good)
    assert code == 2
    assert (
        f"error: {bad}: scenario #1 ('C C is under-replicated'): replicationConfig: unknown replication"
        in err
    )
    assert f"PASS  {good} #1" in out
    assert "1 scenario(s) in 1 file(s): 1 passed, 0 failed; 1 malformed file(s)" in out


def test_a_directory_stands_for_its_json_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "b.json", {**UNDER, "description": "from b"})
    write(tmp_path / "a.json", {**UNDER, "description": "from a"})
    (tmp_path / "notes.txt").write_text("not a scenario")
    code, out, _ = run(capsys, tmp_path)
    assert code == 0
    assert out.index("from a") < out.index("from b")
    (tmp_path / "empty").mkdir()
    code, _, err = run(capsys, tmp_path / "empty")
    assert code == 1 and "no *.json scenario files" in err


def test_the_shipped_scenario_directory_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, Path(__file__).parents[5] / "scenarios" / "rm")
    assert code == 0, out
    assert "FAIL" not in out
