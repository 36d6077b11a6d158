"""`pyozone scm --init` and `pyozone scm` up to the hand-off to the daemon."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyozone.cli.scm import snapshot_chunks
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import TABLE_NAMES, SCMMetadataStore
from pyozone.scm.store.layout import version_file
from pyozone.scm.store.scm_db import open_scm_db
from pyozone.scm.store.version import SCMStorageConfig, read_scm_storage
from tests.crash_support import crash_after_writes, damage_middle

Cli = Callable[..., Any]  # returns conftest.Result: code, out, err
Snapshot = Callable[[Path], dict[str, bytes | None]]


def md(path: Path) -> str:
    return f"ozone.metadata.dirs={path}"


def assert_one_line_error(result: Any, *fragments: str) -> None:
    assert result.code == 1 and result.out == ""
    assert result.err.count("\n") == 1 and result.err.startswith("pyozone scm: error: ")
    for fragment in fragments:
        assert fragment in result.err


def test_init_then_init_again_reuses_the_cluster_id(cli: Cli, tmp_path: Path) -> None:
    first = cli("scm", "--init", "-D", md(tmp_path))
    storage = read_scm_storage(tmp_path)
    assert first.code == 0 and first.err == ""
    assert first.out == (
        f"SCM initialization succeeded. Current cluster id for sd={tmp_path / 'scm'}; "
        f"cid={storage.cluster_id}; layoutVersion=1\nscmUuid={storage.scm_uuid}\n"
    )
    assert (tmp_path / "scm.db" / "CURRENT").is_file()
    again = cli("scm", "--init", "-D", md(tmp_path))
    assert again.code == 0
    assert again.out == (
        f"SCM already initialized. Reusing existing cluster id for sd={tmp_path / 'scm'}; "
        f"cid={storage.cluster_id}; layoutVersion=1\n"
    )
    assert read_scm_storage(tmp_path) == storage


def test_init_with_cluster_id_and_a_later_different_one_is_ignored(cli: Cli, tmp_path: Path) -> None:
    assert cli("scm", "--init", "--clusterid", "CID-prod", "-D", md(tmp_path)).code == 0
    result = cli("scm", "--init", "--clusterid", "CID-other", "-D", md(tmp_path))
    assert result.code == 0 and "cid=CID-prod;" in result.out
    assert "ignoring --clusterid CID-other" in result.err
    assert read_scm_storage(tmp_path).cluster_id == "CID-prod"


def test_init_creates_every_column_family(cli: Cli, tmp_path: Path) -> None:
    cli("scm", "--init", "-D", md(tmp_path))
    listed = cli("debug", "ldb", "--db", str(tmp_path / "scm.db"), "ls").out.split()
    assert sorted(listed) == sorted(["default", *TABLE_NAMES])


def test_init_without_metadata_dir(cli: Cli) -> None:
    assert_one_line_error(cli("scm", "--init"), "ozone.metadata.dirs is not set")


def test_init_on_a_file(cli: Cli, tmp_path: Path, snapshot: Snapshot) -> None:
    (tmp_path / "meta").write_text("x")
    before = snapshot(tmp_path)
    assert_one_line_error(cli("scm", "--init", "-D", md(tmp_path / "meta")), "is not a directory")
    assert snapshot(tmp_path) == before


def test_init_with_a_bad_cluster_id_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    assert_one_line_error(
        cli("scm", "--init", "--clusterid", "prod", "-D", md(tmp_path)), "invalid cluster id"
    )
    assert list(tmp_path.iterdir()) == []


def test_init_over_a_corrupt_version_writes_nothing(cli: Cli, tmp_path: Path, snapshot: Snapshot) -> None:
    version_file(tmp_path).parent.mkdir(parents=True)
    version_file(tmp_path).write_text("nodeType=SCM\n")
    before = snapshot(tmp_path)
    assert_one_line_error(cli("scm", "--init", "-D", md(tmp_path)), "missing field clusterID")
    assert snapshot(tmp_path) == before


def test_clusterid_needs_init(cli: Cli, tmp_path: Path) -> None:
    assert_one_line_error(cli("scm", "--clusterid", "CID-x", "-D", md(tmp_path)), "--clusterid only applies")


def test_start_before_init_fails_and_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    result = cli("scm", "-D", md(tmp_path))
    assert_one_line_error(result, "SCM is not initialized", "--init")
    assert list(tmp_path.iterdir()) == []


def test_start_while_another_scm_holds_the_db(cli: Cli, tmp_path: Path) -> None:
    cli("scm", "--init", "-D", md(tmp_path))
    running = open_scm_db(tmp_path)
    assert_one_line_error(cli("scm", "-D", md(tmp_path)), "scm.db: locked by another process")
    running.close()


def test_start_runs_the_daemon_and_reports_its_start_error_in_one_line(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyozone.scm import server

    started: list[str] = []

    def start_scm(
        conf: Any, storage: SCMStorageConfig, store: SCMMetadataStore, snapshots: Any, settings: ScmSettings
    ) -> int:
        started.append(storage.cluster_id)
        assert snapshots is snapshot_chunks  # the daemon streams snapshots through analytics
        store.close()
        raise server.ServerStartError("cannot bind the SCM to 127.0.0.1:9861 (ozone.scm.datanode.address)")

    monkeypatch.setattr(server, "start_scm", start_scm)
    cli("scm", "--init", "-D", md(tmp_path))
    assert_one_line_error(cli("scm", "-D", md(tmp_path)), "cannot bind the SCM", "ozone.scm.datanode.address")
    assert started == [read_scm_storage(tmp_path).cluster_id]
    open_scm_db(tmp_path).close()  # the store was closed: its lock is free


def test_start_hands_the_opened_store_to_the_daemon(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Any, SCMStorageConfig, SCMMetadataStore]] = []

    def start_scm(
        conf: Any, storage: SCMStorageConfig, store: SCMMetadataStore, snapshots: Any, settings: ScmSettings
    ) -> int:
        assert settings == ScmSettings.from_conf(conf)  # built once, before the store opened
        calls.append((conf, storage, store))
        store.close()
        return 0

    monkeypatch.setitem(sys.modules, "pyozone.scm.server", types.SimpleNamespace(start_scm=start_scm))
    cli("scm", "--init", "-D", md(tmp_path))
    assert cli("scm", "-D", md(tmp_path)).code == 0
    [(conf, storage, _)] = calls
    assert conf.get("ozone.metadata.dirs") == str(tmp_path)
    assert storage == read_scm_storage(tmp_path)


def test_start_refuses_a_corrupt_write_ahead_log_in_one_line(cli: Cli, tmp_path: Path) -> None:
    """Damage in the middle of scm.db's log stops `pyozone scm`; RocksDB would otherwise replay up to
    the damage and silently forget every later write."""
    assert cli("scm", "--init", "-D", md(tmp_path)).code == 0
    damage_middle(crash_after_writes(tmp_path / "scm.db", "meta", 3000))
    result = cli("scm", "-D", md(tmp_path))
    assert_one_line_error(result, "corrupt RocksDB data", "pyozone repair db --db")
