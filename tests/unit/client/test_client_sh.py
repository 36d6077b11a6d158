"""`pyozone sh` and `pyozone freon` against the fakes, in-process."""

from __future__ import annotations

import json
import os

import pytest

from pyozone.cli.sh import bucket_dict, om_authority, parse_path
from pyozone.common.cli_options import CLIError
from pyozone.hdds.addresses import KeyAddress
from pyozone.proto import OmClientProtocol_pb2 as om_pb
from pyozone.protocol.om import bucket_info_from_proto
from tests.unit.client.fakes import BLOCK, SMALL, FakeCluster


@pytest.fixture
def sh(cli, cluster: FakeCluster):  # type: ignore[no-untyped-def]
    overrides = [
        x for k, v in {**SMALL, "ozone.om.address": cluster.om.address}.items() for x in ("-D", f"{k}={v}")
    ]
    return lambda *args: cli(*overrides, "sh", *args)


def test_volume_and_bucket_commands(sh) -> None:  # type: ignore[no-untyped-def]
    assert sh("volume", "create", "/vol", "--user", "alice").code == 0
    info = json.loads(sh("volume", "info", "/vol").out)
    assert (info["volumeName"], info["owner"]) == ("vol", "alice")
    assert info["creationTime"].endswith("Z")
    assert [v["name"] for v in json.loads(sh("volume", "list").out)] == ["vol"]
    assert sh("bucket", "create", "/vol/bucket", "-r", "ONE").code == 0
    bucket = json.loads(sh("bucket", "info", "/vol/bucket").out)
    assert bucket["replicationConfig"] == {
        "replicationFactor": "ONE",
        "requiredNodes": 1,
        "replicationType": "RATIS",
    }
    assert [b["name"] for b in json.loads(sh("bucket", "list", "/vol").out)] == ["bucket"]
    result = sh("volume", "create", "/vol")
    assert (result.code, result.err) == (1, "pyozone sh: error: VOLUME_ALREADY_EXISTS: vol\n")
    assert sh("volume", "delete", "/vol").err.startswith("pyozone sh: error: VOLUME_NOT_EMPTY")
    assert sh("bucket", "delete", "/vol/bucket").code == 0
    assert sh("volume", "delete", "/vol").code == 0


def test_lists_show_quotas(sh) -> None:  # type: ignore[no-untyped-def]
    """Every volume and bucket a list or info shows carries its quotas (-1: none), as Ozone prints them."""
    assert sh("volume", "create", "/vol", "--space-quota", "1GB", "--namespace-quota", "5").code == 0
    assert sh("volume", "create", "/open").code == 0
    shown = {
        v["name"]: (v["quotaInBytes"], v["quotaInNamespace"]) for v in json.loads(sh("volume", "list").out)
    }
    assert shown == {"vol": (1 << 30, 5), "open": (-1, -1)}
    info = json.loads(sh("volume", "info", "/vol").out)
    assert (info["quotaInBytes"], info["quotaInNamespace"]) == (1 << 30, 5)
    proto = om_pb.BucketInfo(volume="vol", bucket="b", quotaInBytes=300, quotaInNamespace=7)
    assert bucket_dict(bucket_info_from_proto(proto))["quotaInBytes"] == 300
    assert bucket_dict(bucket_info_from_proto(proto))["quotaInNamespace"] == 7


def test_key_commands(sh, tmp_path) -> None:  # type: ignore[no-untyped-def]
    sh("volume", "create", "/vol")
    sh("bucket", "create", "/vol/bucket")
    data = os.urandom(BLOCK + 100)
    source, target = tmp_path / "in", tmp_path / "out"
    source.write_bytes(data)
    assert sh("key", "put", "/vol/bucket/dir/k", str(source), "--quiet").code == 0
    assert sh("key", "get", "/vol/bucket/dir/k", str(target)).code == 0
    assert target.read_bytes() == data
    refused = sh("key", "get", "/vol/bucket/dir/k", str(target))
    assert refused.code == 1 and "--force" in refused.err
    assert sh("key", "get", "/vol/bucket/dir/k", str(target), "--force").code == 0
    assert sh("key", "get", "/vol/bucket/dir/k", str(tmp_path)).code == 0  # into a directory: its name
    assert (tmp_path / "k").read_bytes() == data
    listing = json.loads(sh("key", "ls", "/vol/bucket").out)
    assert [(k["name"], k["dataSize"]) for k in listing] == [("dir/k", BLOCK + 100)]
    assert set(listing[0]) >= {
        "volumeName",
        "bucketName",
        "name",
        "dataSize",
        "creationTime",
        "modificationTime",
        "replicationConfig",
    }
    info = json.loads(sh("key", "info", "/vol/bucket/dir/k").out)
    locations = info["ozoneKeyLocations"]
    assert [(loc["offset"], loc["length"]) for loc in locations] == [(0, BLOCK), (BLOCK, 100)]
    assert all(len(loc["datanodes"]) == 3 and loc["containerID"] and loc["localID"] for loc in locations)
    assert sh("key", "rename", "/vol/bucket", "dir/k", "k2").code == 0
    assert sh("key", "rm", "/vol/bucket/k2").code == 0
    assert sh("key", "info", "/vol/bucket/k2").err.startswith("pyozone sh: error: KEY_NOT_FOUND")


def test_key_cat_is_binary_safe(cluster: FakeCluster, capsysbinary, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pyozone.cli.main import main

    overrides = [
        x for k, v in {**SMALL, "ozone.om.address": cluster.om.address}.items() for x in ("-D", f"{k}={v}")
    ]
    data = bytes(range(256)) * 100
    (tmp_path / "f").write_bytes(data)
    assert main([*overrides, "sh", "volume", "create", "/vol"]) == 0
    assert main([*overrides, "sh", "bucket", "create", "/vol/bucket"]) == 0
    assert main([*overrides, "sh", "key", "put", "/vol/bucket/k", str(tmp_path / "f"), "-q"]) == 0
    capsysbinary.readouterr()
    assert main([*overrides, "sh", "key", "cat", "/vol/bucket/k"]) == 0
    assert capsysbinary.readouterr().out == data


@pytest.mark.parametrize(
    ("args", "shape"),
    [
        (("volume", "info", "/vol/bucket"), "/VOLUME"),
        (("bucket", "info", "/vol"), "/VOLUME/BUCKET"),
        (("key", "info", "/vol/bucket"), "/VOLUME/BUCKET/KEY"),
        (("key", "put", "/vol/bucket/", "x"), "/VOLUME/BUCKET/KEY"),
        (("bucket", "list", "/vol/bucket"), "/VOLUME"),
    ],
)
def test_bad_paths_are_one_line_errors(sh, args, shape) -> None:  # type: ignore[no-untyped-def]
    result = sh(*args)
    assert result.code == 1
    assert result.err.count("\n") == 1 and f"expected {shape}" in result.err


def test_parse_path() -> None:
    assert parse_path("/v/b/a/b/c", "key").key == "a/b/c"
    assert parse_path("o3://om:9862/v/b", "bucket") == KeyAddress("v", "b")
    assert (om_authority("o3://om:9862/v/b"), om_authority("/v/b")) == ("om:9862", None)
    with pytest.raises(CLIError):
        parse_path("/", "volume")


def test_freon_ockg_then_ockv(cli, cluster: FakeCluster) -> None:  # type: ignore[no-untyped-def]
    overrides = [
        x for k, v in {**SMALL, "ozone.om.address": cluster.om.address}.items() for x in ("-D", f"{k}={v}")
    ]
    result = cli(*overrides, "freon", "ockg", "-n", "12", "-s", "9KB", "-t", "4", "-p", "pre", "-q")
    assert result.code == 0, result.err
    table = dict(line.rsplit(None, 1) for line in result.out.splitlines())
    assert table["keys"] == "12" and table["bytes"] == str(12 * 9 * 1024) and table["failed"] == "0"
    assert "latency p99 ms" in result.out
    verified = cli(*overrides, "freon", "ockv", "-n", "12", "-t", "3", "-p", "pre", "-s", "9KB", "-q")
    assert verified.code == 0, verified.err
    # damage one key: ockv reports it and fails
    from pyozone.client import OzoneClient
    from tests.unit.client.fakes import small_conf

    with OzoneClient(small_conf(cluster.om.address)) as client:
        client.put_key("vol1", "bucket1", "pre/5", b"x" * 9 * 1024)
    bad = cli(*overrides, "freon", "ockv", "-n", "12", "-p", "pre", "-q")
    assert bad.code == 1
    assert "FAILED pre/5: content differs from byte 0" in bad.err


def test_freon_failures_exit_1(cli, cluster: FakeCluster) -> None:  # type: ignore[no-untyped-def]
    overrides = [
        x for k, v in {**SMALL, "ozone.om.address": cluster.om.address}.items() for x in ("-D", f"{k}={v}")
    ]
    result = cli(*overrides, "freon", "ockv", "-n", "2", "-p", "missing", "-q")
    assert result.code == 1
    assert (
        "KEY_NOT_FOUND" in result.err or "BUCKET_NOT_FOUND" in result.err or "VOLUME_NOT_FOUND" in result.err
    )


def one_line_error(result, *fragments: str) -> None:  # type: ignore[no-untyped-def]
    assert result.code == 1 and result.out == "", result
    assert result.err.startswith("pyozone sh: error: ") and result.err.count("\n") == 1, result.err
    for fragment in fragments:
        assert fragment in result.err, (fragment, result.err)


def test_key_get_local_file_problems_are_one_line_errors(sh, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Where key get cannot write: a file the filesystem refuses (/proc/version), a missing directory, and
    keys `.`, `..`, `x/..` whose last part names no file of its own: refused, nothing written anywhere."""
    sh("volume", "create", "/vol")
    sh("bucket", "create", "/vol/bucket")
    source = tmp_path / "in"
    source.write_bytes(b"data")
    for key in ("k", ".", "..", "x/.."):
        assert sh("key", "put", f"/vol/bucket/{key}", str(source), "-q").code == 0  # OBS keys, as in Ozone
    one_line_error(
        sh("key", "get", "/vol/bucket/k", "/proc/version", "--force"), "/proc/version", "cannot write"
    )
    one_line_error(sh("key", "get", "/vol/bucket/k", str(tmp_path / "no" / "dir" / "f")), "does not exist")
    into = tmp_path / "into"
    into.mkdir()
    for key in (".", "..", "x/.."):
        one_line_error(sh("key", "get", f"/vol/bucket/{key}", str(into), "--force"), "not a local file name")
    assert sh("key", "get", "/vol/bucket/x/..", str(into / "named")).code == 0  # a FILE name: fine
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["in", "into", "named"]


def test_key_put_of_a_directory_or_a_device(sh, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A directory is refused as such (it was "no such file"); a device or FIFO is read to its end like
    stdin, as Ozone's key put does: /dev/null is an empty key."""
    sh("volume", "create", "/vol")
    sh("bucket", "create", "/vol/bucket")
    one_line_error(sh("key", "put", "/vol/bucket/d", str(tmp_path)), str(tmp_path), "is a directory")
    one_line_error(sh("key", "put", "/vol/bucket/m", str(tmp_path / "missing")), "no such file")
    assert sh("key", "put", "/vol/bucket/empty", "/dev/null", "-q").code == 0
    assert json.loads(sh("key", "info", "/vol/bucket/empty").out)["dataSize"] == 0


def test_bad_replication_and_names_are_one_line_errors(sh, tmp_path) -> None:  # type: ignore[no-untyped-def]
    sh("volume", "create", "/vol")
    source = tmp_path / "in"
    source.write_bytes(b"data")
    one_line_error(sh("bucket", "create", "/vol/bucket", "-r", "FIVE"), "-r FIVE", "ONE, THREE")
    sh("bucket", "create", "/vol/bucket")
    one_line_error(sh("key", "put", "/vol/bucket/k", str(source), "-r", "FIVE"), "-r FIVE", "ONE, THREE")
    one_line_error(sh("key", "put", "/vol/bucket/k", str(source), "-t", "RATIS", "-r", "5"), "ONE or THREE")
    one_line_error(sh("key", "put", "/vol/bucket/\udcff", str(source)), "INVALID_KEY_NAME", "UTF-8")
    one_line_error(sh("key", "rename", "/vol/bucket", "k", "\udcffx"), "INVALID_KEY_NAME")
    one_line_error(sh("volume", "create", "/vol\udcfe"), "INVALID_VOLUME_NAME")
    assert json.loads(sh("key", "ls", "/vol/bucket").out) == []


def test_freon_streams_keys_in_bounded_memory(cli, cluster: FakeCluster, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """ockg writes a key piece by piece (no piece larger than 64 KiB is ever built), and ockv checks it so."""
    from pyozone.client import sync
    from pyozone.freon import content

    monkeypatch.setattr(content, "key_content", None)  # the whole-key builder must not be used
    pieces: list[int] = []
    write = sync.KeyWriter.write
    monkeypatch.setattr(
        sync.KeyWriter, "write", lambda self, data: pieces.append(len(data)) or write(self, data)
    )
    overrides = [
        x for k, v in {**SMALL, "ozone.om.address": cluster.om.address}.items() for x in ("-D", f"{k}={v}")
    ]
    size = 3 * 64 * 1024 + 5
    assert cli(*overrides, "freon", "ockg", "-n", "2", "-s", f"{size}B", "-p", "big", "-q").code == 0
    assert sum(pieces) == 2 * size and max(pieces) <= 64 * 1024
    assert cli(*overrides, "freon", "ockv", "-n", "2", "-s", f"{size}B", "-p", "big", "-q").code == 0
