"""The ofs and o3fs filesystems on a fake cluster: listing with pseudo-directories, info, ranged reads,
writes that commit on close only, put/get, rm, mkdir, mv, Python's errors, the shared client."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from pyozone.fs import clients
from pyozone.fs.arrow import arrow_filesystem
from pyozone.fs.ofs import O3FileSystem, OzoneFileSystem
from tests.unit.client.fakes import BLOCK, FakeCluster
from tests.unit.fs.conftest import CONF

DATA = os.urandom(2 * BLOCK + 123)


@pytest.fixture
def tree(fs: OzoneFileSystem) -> OzoneFileSystem:
    for key in ("top.bin", "dir/a.txt", "dir/sub/b.txt", "dir/sub/deeper/c.txt"):
        fs.pipe_file(f"vol/bucket/{key}", key.encode())
    fs.pipe_file("vol/bucket/big.bin", DATA)
    return fs


def test_ls_volumes_buckets_and_pseudo_directories(tree: OzoneFileSystem) -> None:
    assert tree.ls("", detail=False) == ["vol"]
    assert tree.ls("vol", detail=False) == ["vol/bucket"]
    assert tree.ls("vol/bucket", detail=False) == [
        "vol/bucket/big.bin",
        "vol/bucket/dir",
        "vol/bucket/top.bin",
    ]
    listing = {e["name"]: e for e in tree.ls("ofs://ignored-host/vol/bucket/dir")}
    assert listing["vol/bucket/dir/a.txt"]["type"] == "file"
    assert listing["vol/bucket/dir/a.txt"]["size"] == len(b"dir/a.txt")
    assert listing["vol/bucket/dir/sub"] == {"name": "vol/bucket/dir/sub", "size": 0, "type": "directory"}
    assert tree.ls("vol/bucket/top.bin", detail=False) == ["vol/bucket/top.bin"]  # a file lists as itself
    with pytest.raises(FileNotFoundError):
        tree.ls("vol/bucket/nothing")
    with pytest.raises(FileNotFoundError):
        tree.ls("vol/nobucket")
    with pytest.raises(FileNotFoundError):
        tree.ls("novol")


def test_info_and_times(tree: OzoneFileSystem) -> None:
    info = tree.info("vol/bucket/big.bin")
    assert (info["type"], info["size"], info["name"]) == ("file", len(DATA), "vol/bucket/big.bin")
    assert tree.created("vol/bucket/big.bin") <= tree.modified("vol/bucket/big.bin")
    assert tree.info("vol/bucket/dir/sub")["type"] == "directory"
    assert tree.info("vol/bucket")["type"] == "directory" and tree.info("vol")["type"] == "directory"
    assert tree.modified("vol/bucket") == tree.info("vol/bucket")["mtime"]
    assert tree.isdir("vol/bucket/dir") and tree.isfile("vol/bucket/top.bin")
    assert not tree.exists("vol/bucket/di")  # a prefix of a directory's name is nothing
    assert not tree.exists("vol/bucket/dir/sub/b")
    with pytest.raises(FileNotFoundError):
        tree.info("vol/bucket/nothing")
    with pytest.raises(IsADirectoryError):
        tree.modified("vol/bucket/dir")  # pseudo-directories have no times


def test_find_from_one_listing(tree: OzoneFileSystem) -> None:
    assert tree.find("vol/bucket/dir") == [
        "vol/bucket/dir/a.txt",
        "vol/bucket/dir/sub/b.txt",
        "vol/bucket/dir/sub/deeper/c.txt",
    ]
    assert tree.find("vol/bucket/dir", maxdepth=1) == ["vol/bucket/dir/a.txt"]
    assert tree.find("vol/bucket/dir", maxdepth=2, withdirs=True) == [
        "vol/bucket/dir",
        "vol/bucket/dir/a.txt",
        "vol/bucket/dir/sub",
        "vol/bucket/dir/sub/b.txt",
        "vol/bucket/dir/sub/deeper",
    ]
    assert tree.find("vol/bucket/top.bin") == ["vol/bucket/top.bin"]
    assert tree.find("vol/bucket/nothing") == []
    assert tree.find("vol", detail=False)[0] == "vol/bucket/big.bin"  # volumes: fsspec's walk
    assert tree.glob("vol/bucket/dir/**/*.txt") == [
        "vol/bucket/dir/a.txt",
        "vol/bucket/dir/sub/b.txt",
        "vol/bucket/dir/sub/deeper/c.txt",
    ]
    assert tree.du("vol/bucket/dir") == len(b"dir/a.txt") + len(b"dir/sub/b.txt") + len(
        b"dir/sub/deeper/c.txt"
    )


def test_ranged_reads(tree: OzoneFileSystem) -> None:
    path = "vol/bucket/big.bin"
    assert tree.cat_file(path) == DATA
    assert tree.cat_file(path, BLOCK - 3, BLOCK + 3) == DATA[BLOCK - 3 : BLOCK + 3]
    assert tree.cat_file(path, -5) == DATA[-5:]
    assert tree.cat_file(path, 10, -10) == DATA[10:-10]
    assert tree.cat_file(path, len(DATA) + 5) == b""
    assert tree.read_block(path, 100, 50) == DATA[100:150]
    with tree.open(path, "rb", block_size=1000) as f:
        f.seek(-20, os.SEEK_END)
        assert f.read() == DATA[-20:]
        f.seek(BLOCK + 7)
        assert f.read(9) == DATA[BLOCK + 7 : BLOCK + 16]
        assert f.info()["size"] == len(DATA)
    with fsspec.open(tree.unstrip_protocol(path), "rb", conf=CONF) as f:  # the URL names the fake OM
        assert f.read(4) == DATA[:4]


def test_write_commits_on_close_only(fs: OzoneFileSystem) -> None:
    path = "vol/bucket/out/w.bin"
    with fs.open(path, "wb", block_size=BLOCK) as f:
        f.write(DATA)  # more than a buffer: the key is open and written, not yet visible
        assert not fs.exists(path)
        f.write(b"tail")
    assert fs.cat_file(path) == DATA + b"tail"
    with fs.open("vol/bucket/empty", "wb"):
        pass
    assert fs.info("vol/bucket/empty")["size"] == 0
    with fs.open("vol/bucket/t.csv", "w") as text:
        text.write("a,b\n1,2\n")
    assert fs.cat("vol/bucket/t.csv") == b"a,b\n1,2\n"


def test_write_aborted_on_exception_or_discard(fs: OzoneFileSystem) -> None:
    with pytest.raises(RuntimeError), fs.open("vol/bucket/never", "wb", block_size=BLOCK) as f:
        f.write(DATA)
        raise RuntimeError("the writer failed")
    assert not fs.exists("vol/bucket/never")
    f = fs.open("vol/bucket/dropped", "wb", block_size=BLOCK)
    f.write(DATA)
    del f  # dropped unclosed: nothing is committed
    assert not fs.exists("vol/bucket/dropped")
    with fs.transaction:  # fsspec's transactions: files commit at its end
        with fs.open("vol/bucket/in-transaction", "wb") as f:
            f.write(b"x")
        assert not fs.exists("vol/bucket/in-transaction")
    assert fs.cat("vol/bucket/in-transaction") == b"x"


def test_open_modes(tree: OzoneFileSystem) -> None:
    with pytest.raises(NotImplementedError, match="appended"):
        tree.open("vol/bucket/top.bin", "ab")
    with pytest.raises(FileExistsError):
        tree.open("vol/bucket/top.bin", "xb")
    with pytest.raises(IsADirectoryError):
        tree.open("vol/bucket", "rb")
    with pytest.raises(FileNotFoundError):
        tree.open("vol/bucket/nothing", "rb")
    with pytest.raises(FileNotFoundError):
        tree.open("vol/nobucket/k", "wb")
    with pytest.raises(FileExistsError):
        tree.pipe_file("vol/bucket/top.bin", b"", mode="create")


def test_put_get_and_copy(fs: OzoneFileSystem, tmp_path: Path) -> None:
    local = tmp_path / "src"
    (local / "nested").mkdir(parents=True)
    (local / "one.bin").write_bytes(DATA)
    (local / "nested" / "two.txt").write_text("two")
    fs.put(str(local), "vol/bucket/up", recursive=True)
    assert fs.find("vol/bucket/up") == ["vol/bucket/up/nested/two.txt", "vol/bucket/up/one.bin"]
    fs.get("vol/bucket/up", str(tmp_path / "down"), recursive=True)
    assert (tmp_path / "down" / "one.bin").read_bytes() == DATA
    assert (tmp_path / "down" / "nested" / "two.txt").read_text() == "two"
    fs.put_file(str(local / "one.bin"), "vol/bucket/single.bin")
    fs.get_file("vol/bucket/single.bin", str(tmp_path / "single.bin"))
    assert (tmp_path / "single.bin").read_bytes() == DATA
    fs.copy("vol/bucket/single.bin", "vol/bucket/copy.bin")
    assert fs.cat("vol/bucket/copy.bin") == DATA


def test_mkdir_creates_volumes_and_buckets(fs: OzoneFileSystem) -> None:
    fs.mkdir("newvol")
    fs.mkdir("newvol/newbucket")
    fs.mkdir("othervol/otherbucket/dir")  # parents made; the pseudo-directory itself is nothing
    assert fs.isdir("othervol/otherbucket") and not fs.exists("othervol/otherbucket/dir")
    with pytest.raises(FileExistsError):
        fs.mkdir("newvol")
    with pytest.raises(FileExistsError):
        fs.makedirs("newvol/newbucket")
    fs.makedirs("newvol/newbucket", exist_ok=True)
    fs.makedirs("thirdvol/bkt3/x/y", exist_ok=True)
    assert fs.isdir("thirdvol/bkt3")
    with pytest.raises(FileNotFoundError):
        fs.mkdir("missing/bucket", create_parents=False)
    with pytest.raises(OSError) as bad:
        fs.mkdir("BAD_NAME")
    assert bad.value.errno == errno.EINVAL


def test_rm(tree: OzoneFileSystem) -> None:
    tree.rm("vol/bucket/top.bin")
    assert not tree.exists("vol/bucket/top.bin")
    with pytest.raises(FileNotFoundError):
        tree.rm("vol/bucket/top.bin")
    with pytest.raises(IsADirectoryError):
        tree.rm("vol/bucket/dir")
    tree.rm("vol/bucket/dir/sub", recursive=True)
    assert tree.find("vol/bucket/dir") == ["vol/bucket/dir/a.txt"]
    tree.rm("vol/bucket/dir/*.txt")  # globs
    assert not tree.exists("vol/bucket/dir")
    with pytest.raises(OSError) as not_empty:
        tree.rmdir("vol/bucket")
    assert not_empty.value.errno == errno.ENOTEMPTY
    with pytest.raises(OSError) as volume_not_empty:
        tree.rm("vol")
    assert volume_not_empty.value.errno == errno.ENOTEMPTY
    tree.rm("vol", recursive=True)  # keys, buckets, then the volume
    assert tree.ls("") == []
    with pytest.raises(PermissionError):
        tree.rm("", recursive=True)


def test_mv_renames_within_a_bucket(tree: OzoneFileSystem, cluster: FakeCluster) -> None:
    commits = len(cluster.om.commits)
    tree.mv("vol/bucket/top.bin", "vol/bucket/moved.bin")
    tree.mv("vol/bucket/dir", "vol/bucket/renamed", recursive=True)
    assert len(cluster.om.commits) == commits  # OM renamed: no data was written again
    assert tree.cat("vol/bucket/moved.bin") == b"top.bin"
    assert tree.find("vol/bucket/renamed") == [
        "vol/bucket/renamed/a.txt",
        "vol/bucket/renamed/sub/b.txt",
        "vol/bucket/renamed/sub/deeper/c.txt",
    ]
    tree.mv("vol/bucket/moved.bin", "vol/bucket/renamed")  # into an existing directory
    assert tree.isfile("vol/bucket/renamed/moved.bin")
    tree.pipe_file("vol/bucket/target", b"old")
    tree.mv("vol/bucket/renamed/moved.bin", "vol/bucket/target")  # replaces, as POSIX rename
    assert tree.cat("vol/bucket/target") == b"top.bin"
    with pytest.raises(IsADirectoryError):
        tree.mv("vol/bucket/renamed", "vol/bucket/elsewhere")
    tree.mkdir("vol/other")
    tree.mv("vol/bucket/big.bin", "vol/other/big.bin")  # another bucket: copied, then removed
    assert tree.cat("vol/other/big.bin") == DATA and not tree.exists("vol/bucket/big.bin")


def test_o3fs_is_one_bucket(fs: OzoneFileSystem, cluster: FakeCluster) -> None:
    o3 = fsspec.filesystem("o3fs", bucket="bucket", volume="vol", om_address=cluster.om.address, conf=CONF)
    assert isinstance(o3, O3FileSystem)
    o3.pipe_file("dir/k", b"v")
    assert o3.ls("", detail=False) == ["dir"] and o3.ls("dir", detail=False) == ["dir/k"]
    assert fs.cat("vol/bucket/dir/k") == b"v"
    url = f"o3fs://bucket.vol.{cluster.om.address}/dir/k"
    with fsspec.open(url, "rb", conf=CONF) as f:
        assert f.read() == b"v"
    assert fsspec.core.url_to_fs(url, conf=CONF)[0].info("dir/k")["size"] == 1
    assert o3.find("") == ["dir/k"]


def test_one_client_per_configuration(fs: OzoneFileSystem, cluster: FakeCluster) -> None:
    other = fsspec.filesystem("ofs", om_address=cluster.om.address, conf=CONF, skip_instance_cache=True)
    assert other is not fs and other.client is fs.client
    different = fsspec.filesystem(
        "ofs", om_address=cluster.om.address, conf={**CONF, "ozone.client.max.retries": "2"}
    )
    assert different.client is not fs.client
    client = fs.client
    clients.close_all()
    assert fs.client is not client  # a closed client is replaced on next use
    assert fs.ls("vol", detail=False) == ["vol/bucket"]


def test_works_after_fork() -> None:
    """A worker forked after the parent used the filesystem and opened a file (multiprocessing, Spark, Dask)
    reads through both; fork_scenario.py runs it in processes of its own."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.unit.fs.fork_scenario"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parents[3],
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == [True] * 9, done.stderr[-3000:]


def test_pyarrow_takes_urls_through_the_arrow_handler(fs: OzoneFileSystem) -> None:
    table = pa.table({"n": list(range(100))})
    for i in range(2):
        pq.write_table(table, f"vol/bucket/ds/part-{i}.parquet", filesystem=fs)
    url = fs.unstrip_protocol("vol/bucket/ds")
    assert ds.dataset(url, filesystem=arrow_filesystem(fs)).count_rows() == 200
    assert ds.dataset("vol/bucket/ds", filesystem=fs).count_rows() == 200
