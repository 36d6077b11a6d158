"""Volumes, buckets and key metadata through OM, and OMException codes."""

from __future__ import annotations

import pytest

from pyozone.client import OMException, OMUnavailableError, OzoneClient
from pyozone.config import OzoneConfiguration
from pyozone.hdds.ids import RATIS_ONE
from tests.unit.client.fakes import FakeCluster, small_conf


def code(fn, *args) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(OMException) as e:
        fn(*args)
    return e.value.result


def test_volumes_and_buckets(make_client) -> None:  # type: ignore[no-untyped-def]
    client = make_client()
    info = client.create_volume("vol", owner="alice")
    assert (info.name, info.owner) == ("vol", "alice")
    assert code(client.create_volume, "vol") == "VOLUME_ALREADY_EXISTS"
    assert code(client.volume_info, "nope") == "VOLUME_NOT_FOUND"
    assert code(client.create_volume, "X") == "INVALID_VOLUME_NAME"
    bucket = client.create_bucket("vol", "bucket", "RATIS/ONE")
    assert bucket.replication == RATIS_ONE  # a name at the client's edge, a ReplicationConfig above it
    assert client.bucket_info("vol", "bucket").name == "bucket"
    assert code(client.create_bucket, "nope", "bucket") == "VOLUME_NOT_FOUND"
    assert code(client.delete_volume, "vol") == "VOLUME_NOT_EMPTY"
    client.put_key("vol", "bucket", "k", b"x")
    assert code(client.delete_bucket, "vol", "bucket") == "BUCKET_NOT_EMPTY"
    client.delete_key("vol", "bucket", "k")
    client.delete_bucket("vol", "bucket")
    client.delete_volume("vol")
    assert client.list_volumes() == []


def test_list_paging(make_client) -> None:  # type: ignore[no-untyped-def]
    client = make_client()
    for i in range(12):
        client.create_volume(f"vol{i:02d}")
    assert [v.name for v in client.list_volumes(limit=5)] == [f"vol{i:02d}" for i in range(5)]
    assert [v.name for v in client.list_volumes(start="vol09")] == ["vol10", "vol11"]
    client.create_bucket("vol00", "bucket")
    for i in range(7):
        client.put_key("vol00", "bucket", f"a/{i}", b"")
    client.put_key("vol00", "bucket", "b/0", b"")
    keys = client.list_keys("vol00", "bucket", prefix="a/", start="a/2", limit=3)
    assert [k.name for k in keys] == ["a/3", "a/4", "a/5"]
    assert len(client.list_keys("vol00", "bucket")) == 8


def test_list_pages_through_om(make_client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import pyozone.client.client as module

    monkeypatch.setattr(module, "_PAGE", 2)
    client = make_client()
    client.create_volume("vol")
    client.create_bucket("vol", "bucket")
    for i in range(5):
        client.put_key("vol", "bucket", f"k{i}", b"")
    assert [k.name for k in client.list_keys("vol", "bucket")] == [f"k{i}" for i in range(5)]
    assert [k.name for k in client.list_keys("vol", "bucket", limit=3)] == ["k0", "k1", "k2"]


def test_rename_delete_and_key_info(client: OzoneClient) -> None:
    client.put_key("vol", "bucket", "a", b"hello")
    client.put_key("vol", "bucket", "b", b"x")
    assert code(client.rename_key, "vol", "bucket", "a", "b") == "KEY_ALREADY_EXISTS"
    client.rename_key("vol", "bucket", "a", "c")
    assert code(client.key_info, "vol", "bucket", "a") == "KEY_NOT_FOUND"
    info = client.key_info("vol", "bucket", "c")
    assert info.data_size == 5
    (loc,) = info.locations
    assert loc.length == 5 and loc.bcsid > 0 and len(loc.pipeline.members) == 3
    assert client.read_key("vol", "bucket", "c").readall() == b"hello"
    client.delete_key("vol", "bucket", "c")
    assert code(client.delete_key, "vol", "bucket", "c") == "KEY_NOT_FOUND"
    assert code(client.key_info, "vol", "nope", "c") == "BUCKET_NOT_FOUND"


def test_om_down_is_unavailable(cluster: FakeCluster) -> None:
    cluster.om.server.stop()
    with OzoneClient(small_conf(cluster.om.address)) as client, pytest.raises(OMUnavailableError) as e:
        client.volume_info("vol")
    assert cluster.om.address in str(e.value)


def test_address_from_conf_or_argument() -> None:
    conf = OzoneConfiguration({"ozone.om.address": "0.0.0.0:1234"})
    assert str(OzoneClient(conf).config.om_address) == "127.0.0.1:1234"
    assert str(OzoneClient(conf, om_address="h:9").config.om_address) == "h:9"
    assert str(OzoneClient("host").config.om_address) == "host:9862"
