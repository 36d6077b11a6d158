"""Acceptance (issue 13, item 2): pandas, pyarrow and fsspec on `ofs://` and `o3fs://` URLs against a live
cluster of 3 datanodes with 4 MB blocks, through the native client.

pandas round-trips a DataFrame as Parquet (large enough for several blocks and write pipeline V2) and as
CSV; pyarrow.dataset reads a directory of Parquet files; ranged reads cross block boundaries; a write that
fails commits nothing; listing, moving and removing work on OM's namespace. Dask is not installed here: its
test is skipped unless it is.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import fsspec
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from pyozone.fs import clients
from pyozone.fs.arrow import arrow_filesystem
from pyozone.fs.ofs import OzoneFileSystem
from tests.e2e.cluster.cluster_helpers import HOST, LiveCluster, MiB
from tests.e2e.cluster.keys_cluster import BLOCK, BUCKET, VOL, keys_cluster


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    with keys_cluster(request, tmp_path_factory, "fsspec") as c:
        yield c
        clients.close_all()


@pytest.fixture(scope="module")
def om(cluster: LiveCluster) -> str:
    return f"{HOST}:{cluster.port('om', 'rpc')}"


@pytest.fixture(scope="module")
def fs(om: str) -> OzoneFileSystem:
    fs, _ = fsspec.core.url_to_fs(f"ofs://{om}/")
    return fs


def frame(rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "id": np.arange(rows, dtype=np.int64),
            "value": rng.random(rows),
            "name": [f"key-{i % 1000}" for i in range(rows)],
        }
    )


def test_pandas_parquet_round_trip_over_several_blocks(om: str, fs: OzoneFileSystem) -> None:
    df = frame(1_000_000)
    url = f"ofs://{om}/{VOL}/{BUCKET}/pandas/table.parquet"
    df.to_parquet(url, compression=None)
    assert fs.info(url)["size"] > 2 * BLOCK  # blocks cross, and the writer took pipeline V2
    pd.testing.assert_frame_equal(pd.read_parquet(url), df)
    pd.testing.assert_frame_equal(pd.read_parquet(url, columns=["value"]), df[["value"]])


def test_pandas_csv_round_trip(om: str) -> None:
    df = frame(20_000, seed=1)
    url = f"ofs://{om}/{VOL}/{BUCKET}/pandas/table.csv"
    df.to_csv(url, index=False)
    pd.testing.assert_frame_equal(pd.read_csv(url), df)


def test_pyarrow_dataset_over_several_files(om: str, fs: OzoneFileSystem) -> None:
    parts = [pa.Table.from_pandas(frame(50_000, seed=i), preserve_index=False) for i in range(3)]
    for i, part in enumerate(parts):
        pq.write_table(part, f"{VOL}/{BUCKET}/dataset/part-{i}.parquet", filesystem=fs)
    fs.pipe_file(f"{VOL}/{BUCKET}/dataset/_SUCCESS", b"")
    by_path = ds.dataset(f"{VOL}/{BUCKET}/dataset", filesystem=fs, format="parquet")
    assert sorted(os.path.basename(f) for f in by_path.files) == [f"part-{i}.parquet" for i in range(3)]
    assert by_path.to_table().sort_by("id").equals(pa.concat_tables(parts).sort_by("id"))
    by_url = ds.dataset(
        f"ofs://{om}/{VOL}/{BUCKET}/dataset", filesystem=arrow_filesystem(fs), format="parquet"
    )
    assert by_url.count_rows(filter=ds.field("id") < 10) == 30


def test_o3fs_urls(om: str) -> None:
    df = frame(1000, seed=2)
    url = f"o3fs://{BUCKET}.{VOL}.{om}/o3fs/table.parquet"
    df.to_parquet(url)
    pd.testing.assert_frame_equal(pd.read_parquet(url), df)
    o3, key = fsspec.core.url_to_fs(url)
    assert key == "o3fs/table.parquet" and o3.ls("o3fs", detail=False) == [key]
    with fsspec.open(f"ofs://{om}/{VOL}/{BUCKET}/o3fs/table.parquet", "rb") as f:  # the same key by ofs
        assert f.read(4) == b"PAR1"


def test_ranged_reads_across_blocks(om: str, fs: OzoneFileSystem) -> None:
    data = os.urandom(2 * BLOCK + MiB + 5)
    url = f"ofs://{om}/{VOL}/{BUCKET}/ranges/data.bin"
    with fsspec.open(url, "wb") as f:
        f.write(data)
    for start, end in [
        (0, 1),
        (BLOCK - 10, BLOCK + 10),
        (2 * BLOCK - 1, 2 * BLOCK + MiB),
        (len(data) - 3, None),
    ]:
        assert fs.cat_file(url, start, end) == data[start:end]
    assert fs.cat_file(url, -100) == data[-100:]
    with fsspec.open(url, "rb", block_size=64 * 1024) as f:
        f.seek(-8, os.SEEK_END)
        assert f.read() == data[-8:]
        f.seek(BLOCK + 12345)
        assert f.read(100_000) == data[BLOCK + 12345 : BLOCK + 112345]
    assert fs.read_block(url, BLOCK - 5, 10) == data[BLOCK - 5 : BLOCK + 5]


def test_a_failed_write_commits_nothing(fs: OzoneFileSystem) -> None:
    path = f"{VOL}/{BUCKET}/failed/never.bin"
    with pytest.raises(RuntimeError), fs.open(path, "wb") as f:
        f.write(os.urandom(6 * MiB))  # one buffer went out: the key is open, and not visible
        assert not fs.exists(path)
        raise RuntimeError("the producer failed")
    assert not fs.exists(path) and not fs.exists(f"{VOL}/{BUCKET}/failed")


def test_namespace_operations(fs: OzoneFileSystem, tmp_path) -> None:  # type: ignore[no-untyped-def]
    fs.mkdir("fsvol/fsbucket")
    assert fs.isdir("fsvol") and fs.info("fsvol/fsbucket")["type"] == "directory"
    for name in ("a/1.txt", "a/b/2.txt", "c.txt"):
        fs.pipe_file(f"fsvol/fsbucket/{name}", name.encode())
    assert fs.ls("fsvol/fsbucket", detail=False) == ["fsvol/fsbucket/a", "fsvol/fsbucket/c.txt"]
    assert fs.created("fsvol/fsbucket/c.txt") <= fs.modified("fsvol/fsbucket/c.txt")
    fs.mv("fsvol/fsbucket/a", "fsvol/fsbucket/moved", recursive=True)
    assert fs.find("fsvol/fsbucket/moved") == ["fsvol/fsbucket/moved/1.txt", "fsvol/fsbucket/moved/b/2.txt"]
    fs.get("fsvol/fsbucket/moved", str(tmp_path / "down"), recursive=True)
    assert (tmp_path / "down" / "b" / "2.txt").read_bytes() == b"a/b/2.txt"
    with pytest.raises(FileNotFoundError):
        fs.info("fsvol/fsbucket/a")
    with pytest.raises(FileNotFoundError):
        fs.open("fsvol/nobucket/k", "rb")
    with pytest.raises(FileExistsError):
        fs.mkdir("fsvol/fsbucket")
    with pytest.raises(OSError, match="BUCKET_NOT_EMPTY"):
        fs.rmdir("fsvol/fsbucket")
    fs.rm("fsvol", recursive=True)
    assert not fs.exists("fsvol")


def test_dask_reads_and_writes(om: str) -> None:
    dd = pytest.importorskip("dask.dataframe")
    url = f"ofs://{om}/{VOL}/{BUCKET}/dask"
    dd.from_pandas(frame(10_000, seed=3), npartitions=3).to_parquet(url)
    assert len(dd.read_parquet(url)) == 10_000
