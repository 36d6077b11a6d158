"""Ozone's URI shapes: ofs://OM/volume/bucket/key and o3fs://bucket.volume.OM/key, parsed without I/O."""

from __future__ import annotations

import pickle

import fsspec
import pytest

from pyozone.fs import clients
from pyozone.fs.ofs import O3FileSystem, OzoneFileSystem
from pyozone.fs.paths import parse_o3fs_authority, parse_ofs, split_url
from pyozone.hdds.addresses import KeyAddress, Level


@pytest.mark.parametrize(
    ("url", "authority", "path"),
    [
        ("ofs://om:9862/vol/bucket/a/b", "om:9862", "vol/bucket/a/b"),
        ("ofs://om/vol/bucket/", "om", "vol/bucket"),
        ("ofs:///vol/bucket/key", "", "vol/bucket/key"),
        ("ofs://om", "om", ""),
        ("ofs:/vol/bucket", None, "vol/bucket"),
        ("/vol/bucket/key", None, "vol/bucket/key"),
        ("vol/bucket", None, "vol/bucket"),
        ("", None, ""),
    ],
)
def test_split_url(url: str, authority: str | None, path: str) -> None:
    assert split_url(url, "ofs") == (authority, path)


@pytest.mark.parametrize(
    ("path", "where", "level"),
    [
        ("", KeyAddress(), Level.ROOT),
        ("vol", KeyAddress("vol"), Level.VOLUME),
        ("vol/bucket", KeyAddress("vol", "bucket"), Level.BUCKET),
        ("vol/bucket/a", KeyAddress("vol", "bucket", "a"), Level.KEY),
        ("/vol/bucket/a/b/c.parquet/", KeyAddress("vol", "bucket", "a/b/c.parquet"), Level.KEY),
    ],
)
def test_parse_ofs(path: str, where: KeyAddress, level: Level) -> None:
    assert parse_ofs(path) == where
    assert where.level is level
    assert parse_ofs(str(where)) == where


def test_prefix_and_child() -> None:
    assert KeyAddress("v", "b").prefix == ""
    assert KeyAddress("v", "b", "a/b").prefix == "a/b/"
    assert KeyAddress("v", "b", "a").child("a/x") == KeyAddress("v", "b", "a/x")


@pytest.mark.parametrize(
    ("authority", "parts"),
    [
        ("bucket.vol", ("bucket", "vol", None)),
        ("bucket.vol.om-host", ("bucket", "vol", "om-host")),
        ("bucket.vol.127.0.0.1:9862", ("bucket", "vol", "127.0.0.1:9862")),
        ("bucket.vol.om.example.com:1234", ("bucket", "vol", "om.example.com:1234")),
    ],
)
def test_o3fs_authority(authority: str, parts: tuple[str, str, str | None]) -> None:
    parsed = parse_o3fs_authority(authority)
    assert (parsed.bucket, parsed.volume, parsed.om_address) == parts


@pytest.mark.parametrize("authority", ["bucket", "bucket.", ".vol", ""])
def test_o3fs_authority_needs_bucket_and_volume(authority: str) -> None:
    with pytest.raises(ValueError, match=r"bucket\.volume"):
        parse_o3fs_authority(authority)


def test_ofs_protocol_methods() -> None:
    assert OzoneFileSystem._strip_protocol("ofs://om:1/vol/b/k") == "vol/b/k"
    assert OzoneFileSystem._strip_protocol(["ofs://om/vol/b/1", "vol/b/2"]) == ["vol/b/1", "vol/b/2"]
    assert OzoneFileSystem._get_kwargs_from_urls("ofs://om:1/vol/b/k") == {"om_address": "om:1"}
    assert OzoneFileSystem._get_kwargs_from_urls("ofs:///vol/b/k") == {}
    assert OzoneFileSystem._parent("ofs://om/vol/b/dir/k") == "vol/b/dir"


def test_o3fs_protocol_methods() -> None:
    assert O3FileSystem._strip_protocol("o3fs://b.v.om:1/dir/k") == "dir/k"
    assert O3FileSystem._get_kwargs_from_urls("o3fs://b.v.om:1/dir/k") == {
        "bucket": "b",
        "volume": "v",
        "om_address": "om:1",
    }
    assert O3FileSystem._get_kwargs_from_urls("o3fs://b.v/k") == {"bucket": "b", "volume": "v"}


def test_url_to_fs_makes_no_connection_and_round_trips() -> None:
    fs, path = fsspec.core.url_to_fs("ofs://om-host:9999/vol/bucket/t.parquet")
    assert isinstance(fs, OzoneFileSystem) and path == "vol/bucket/t.parquet"
    assert fs.unstrip_protocol(path) == "ofs://om-host:9999/vol/bucket/t.parquet"
    assert fs.locate(path) == KeyAddress("vol", "bucket", "t.parquet")

    o3, key = fsspec.core.url_to_fs("o3fs://bucket.vol.om-host:9999/dir/k")
    assert isinstance(o3, O3FileSystem) and key == "dir/k"
    assert o3.locate(key) == KeyAddress("vol", "bucket", "dir/k")
    assert o3.name(o3.locate(key)) == "dir/k"
    assert o3.unstrip_protocol(key) == "o3fs://bucket.vol.om-host:9999/dir/k"


def test_instances_pickle_by_their_options() -> None:
    """Dask and Spark ship filesystems to workers: the instance carries options, never a client."""
    fs = fsspec.filesystem("o3fs", bucket="b", volume="v", om_address="om:1", conf={"k": "v"})
    copy = pickle.loads(pickle.dumps(fs))
    assert (copy.bucket, copy.volume, copy.spec) == (fs.bucket, fs.volume, fs.spec)


def test_a_host_without_a_port_means_oms_default_port() -> None:
    fs = fsspec.filesystem("ofs", om_address="om-host", skip_instance_cache=True)
    try:
        assert str(fs.client.config.om_address) == "om-host:9862"  # no connection is made until a call
    finally:
        clients.close_all()
