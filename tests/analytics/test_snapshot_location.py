"""`--snapshot ofs://...`: a snapshot stored in pyozone is copied to a local directory for the job, and
every message names the URL; a fake cluster (tests/unit/client/fakes.py) stores it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest

import pyozone.analytics.cli as cli
from pyozone.analytics.schema import SnapshotError
from pyozone.analytics.snapshot_location import is_stored, local_snapshot
from pyozone.analytics.snapshot_reader import open_snapshot_tables
from pyozone.cli.main import main
from pyozone.fs import clients
from tests.analytics.handmade import container, node, replica, write_snapshot
from tests.unit.client.fakes import FakeCluster

EMPTY = "pending_ops"


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A handmade snapshot, locally and in the fake cluster: (its ofs:// URL, its local directory)."""
    rows = {
        "nodes": [node(i) for i in range(1, 5)],
        "containers": [container(1, 10)],
        "replicas": [replica(1, dn) for dn in (1, 2, 3)],
    }
    local = write_snapshot(tmp_path_factory.mktemp("stored") / "snapshot", rows)
    cluster = FakeCluster()
    base = f"ofs://{cluster.om.address}/vol/bucket"
    try:
        fs, _ = fsspec.core.url_to_fs(base)
        fs.makedirs("vol/bucket")
        fs.put(str(local), "vol/bucket/snapshot", recursive=True)
        fs.rm(f"vol/bucket/snapshot/{EMPTY}", recursive=True)  # a table with no file at all
        yield f"{base}/snapshot", local
    finally:
        clients.close_all()
        cluster.stop()


def test_local_paths_are_used_as_they_are(tmp_path: Path) -> None:
    assert not is_stored(str(tmp_path)) and is_stored("ofs://om/v/b/s") and is_stored("o3fs://b.v/s")
    with local_snapshot(str(tmp_path)) as path:
        assert path == tmp_path


def test_a_stored_snapshot_is_copied_for_the_block(stored: tuple[str, Path]) -> None:
    url, local = stored
    with local_snapshot(url + "/") as path:
        tables = open_snapshot_tables(path)
        assert tables["replicas"].count_rows() == 3
        assert (path / EMPTY).is_dir() and not any((path / EMPTY).iterdir())
        assert (path / "replicas" / "part-0.parquet").read_bytes() == (
            local / "replicas" / "part-0.parquet"
        ).read_bytes()
    assert not path.exists()  # removed after the block


def test_messages_name_the_url(stored: tuple[str, Path]) -> None:
    url, _ = stored
    base = url.rsplit("/", 1)[0]
    with pytest.raises(SnapshotError, match="no such snapshot directory"), local_snapshot(f"{base}/none"):
        pass
    with pytest.raises(SnapshotError, match="is a key"), local_snapshot(f"{url}/_SNAPSHOT.json"):
        pass
    with pytest.raises(SnapshotError) as error, local_snapshot(url) as path:
        raise SnapshotError(f"{path}/replicas/part-0.parquet: corrupt Parquet file")
    assert str(error.value) == f"{url}/replicas/part-0.parquet: corrupt Parquet file"
    with (
        pytest.raises(SnapshotError, match="cannot read the snapshot"),
        local_snapshot("ofs://127.0.0.1:1/v/b/s"),
    ):
        pass


@pytest.mark.slow  # a whole analytics job on Spark; the copy itself is tested above
def test_a_job_runs_on_a_stored_snapshot(spark, stored, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    @contextlib.contextmanager
    def session(args, app) -> Iterator:  # type: ignore[no-untyped-def]
        yield spark

    monkeypatch.setattr(cli, "_spark", session)
    url, _ = stored
    assert main(["analytics", "pipelines", "--snapshot", url]) == 0
    assert "Datanodes: 4 healthy in service" in capsys.readouterr().out
    assert main(["analytics", "pipelines", "--snapshot", url + "-missing"]) == 1
    assert capsys.readouterr().err == (
        f"pyozone analytics: error: {url}-missing: no such snapshot directory\n"
    )
