"""`pyozone debug ldb`: listing and scanning scm.db read-only."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyozone.scm.store import TABLE_NAMES, JsonCodec
from pyozone.scm.store.scm_db import open_scm_db

Cli = Callable[..., Any]  # returns conftest.Result: code, out, err
Snapshot = Callable[[Path], dict[str, bytes | None]]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """An scm.db with a few records written the way the managers write them."""
    store = open_scm_db(tmp_path)
    containers = store.int_table("containers", JsonCodec())
    with store.batch():
        for cid in (256, 1, 70000):
            containers.put(cid, {"containerID": cid, "state": "OPEN"})
        store.int_table("deletedBlocks", JsonCodec()).put(5, {"txID": 5, "localIDs": [1, 2]})
        store.sequence_id.put("containerId", 70000)
        store.meta.put("layout", {"version": 1})
    store.backend.write([("meta", b"\xff\x00", b"\x00not json"), ("containers", b"short", b"[]")])
    store.close()
    return tmp_path / "scm.db"


def records(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def assert_one_line_error(result: Any, *fragments: str) -> None:
    assert result.code == 1 and result.out == ""
    assert result.err.count("\n") == 1 and result.err.startswith("pyozone debug: error: ")
    for fragment in fragments:
        assert fragment in result.err


def test_ls_lists_column_families(cli: Cli, db: Path) -> None:
    result = cli("debug", "ldb", "--db", str(db), "ls")
    assert result.code == 0
    assert result.out.splitlines() == sorted(["default", *TABLE_NAMES])


def test_scan_decodes_integer_keys_in_numeric_order(cli: Cli, db: Path) -> None:
    result = cli("debug", "ldb", "--db", str(db), "scan", "--column-family", "containers")
    assert result.code == 0
    assert records(result.out) == [
        {"key": 1, "value": {"containerID": 1, "state": "OPEN"}},
        {"key": 256, "value": {"containerID": 256, "state": "OPEN"}},
        {"key": 70000, "value": {"containerID": 70000, "state": "OPEN"}},
        {"key": "0x" + b"short".hex(), "value": []},  # not an 8-byte id
    ]


def test_scan_string_keys_and_values_that_are_not_json(cli: Cli, db: Path) -> None:
    result = cli("debug", "ldb", "--db", str(db), "scan", "--cf", "meta")
    assert records(result.out) == [
        {"key": "layout", "value": {"version": 1}},
        {"key": "0xff00", "value": {"hex": "006e6f74206a736f6e"}},
    ]
    deleted = cli("debug", "ldb", "--db", str(db), "scan", "--column_family", "deletedBlocks")
    assert records(deleted.out) == [{"key": 5, "value": {"txID": 5, "localIDs": [1, 2]}}]


def test_scan_limit(cli: Cli, db: Path) -> None:
    result = cli("debug", "ldb", "--db", str(db), "scan", "--cf", "containers", "--limit", "2")
    assert [r["key"] for r in records(result.out)] == [1, 256]


def test_scan_while_the_scm_holds_the_db(cli: Cli, db: Path) -> None:
    store = open_scm_db(db.parent)
    store.sequence_id.put("localId", 42)  # in the WAL only
    result = cli("debug", "ldb", "--db", str(db), "scan", "--cf", "sequenceId")
    assert records(result.out) == [{"key": "containerId", "value": 70000}, {"key": "localId", "value": 42}]
    store.close()


def test_scan_of_an_empty_family_prints_nothing(cli: Cli, db: Path) -> None:
    result = cli("debug", "ldb", "--db", str(db), "scan", "--cf", "pipelines")
    assert (result.code, result.out) == (0, "")


def test_unknown_column_family_lists_the_valid_ones(cli: Cli, db: Path) -> None:
    result = cli("debug", "ldb", "--db", str(db), "scan", "--cf", "keyTable")
    valid = "valid: containers, datanodeOpStates, default, deletedBlocks"
    assert_one_line_error(result, "no column family 'keyTable'", valid)


@pytest.mark.parametrize("action", [["ls"], ["scan", "--cf", "meta"]])
def test_missing_db_is_an_error_and_creates_nothing(cli: Cli, tmp_path: Path, action: list[str]) -> None:
    assert_one_line_error(cli("debug", "ldb", "--db", str(tmp_path / "scm.db"), *action), "no such RocksDB")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("action", [["ls"], ["scan", "--cf", "meta"]])
def test_not_a_rocksdb_is_an_error_and_left_alone(
    cli: Cli, tmp_path: Path, snapshot: Snapshot, action: list[str]
) -> None:
    (tmp_path / "notes").write_text("hello")
    before = snapshot(tmp_path)
    assert_one_line_error(cli("debug", "ldb", "--db", str(tmp_path), *action), "not a RocksDB database")
    assert snapshot(tmp_path) == before


def test_limit_must_be_positive(cli: Cli, db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli("debug", "ldb", "--db", str(db), "scan", "--cf", "meta", "--limit", "0")
    assert info.value.code == 2
    assert "not a positive integer" in capsys.readouterr().err
