"""Acceptance (issue 4): keys end to end on a live cluster of 3 datanodes with 1 MB blocks and 4 MB
containers, through the client library and `pyozone sh` as real processes.

Keys of 0 B, 1 B, 1 MB-1, 1 MB+1 and 24 MB (24 blocks) read back bit-identical (readall, get_key, `sh key
cat`, `sh key get`); the 24 MB key spans several containers; full containers are closed on the datanode's
close action and every replica ends CLOSED; list/rename/delete, with the deleted blocks' files leaving the
disks; a chunk corrupted on one replica is read from another (also when that replica is listed first); freon
ockg/ockv; bad names and missing volumes/buckets; SCM safe mode (namespace works, writes refused, reads once a
replica's datanode registered) and a restart of OM, SCM and every datanode that keeps every key. A client
killed mid-write: test_e2e_keys_abandoned.py.

The tests share one cluster and run in file order; the restart comes last.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from pyozone.client import OzoneClient, SafeModeException
from pyozone.client.block_input import BlockInputStream
from pyozone.client.config import ClientConfig
from pyozone.cluster.status import om_ready
from tests.e2e.cluster.cluster_helpers import (
    LiveCluster,
    MiB,
    block_files,
    close_open_containers,
    container_replica_states,
    file_sha256,
    om_code,
    one_line_error,
    ozone_client,
    random_file,
    sh,
    sh_here,
    sh_to_file,
    wait_container_closed,
)
from tests.e2e.cluster.keys_cluster import BUCKET, LEASE_S, VOL, keys_cluster
from tests.polling import wait_for

# Blocks and containers a quarter of keys_cluster's (4 MB, 16 MB): the same 24 blocks over several containers,
# every boundary and close, for a quarter of the bytes written 3 times and read 5 times (issue 4 asked for
# 300 MB; larger keys: benchmarks.write_pipeline --size, the chaos suite)
BLOCK = MiB
CONTAINER = 4 * MiB
BIG = 24 * BLOCK
SMALL_SIZES = {"empty": 0, "one-byte": 1, "block-minus-1": BLOCK - 1, "block-plus-1": BLOCK + 1}
LIST_NAMES = [f"list/a/{i}" for i in range(5)] + [f"list/b/{i}" for i in range(3)]


@dataclass
class Keys:
    """What the module wrote: key name -> bytes (small ones) or sha256 (the big one)."""

    small: dict[str, bytes] = field(default_factory=dict)
    big_file: Path | None = None
    big_sha: str = ""
    corrupted_dn: str = ""


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    sizes = {"ozone.scm.block.size": f"{BLOCK // MiB}MB", "ozone.scm.container.size": f"{CONTAINER // MiB}MB"}
    with keys_cluster(request, tmp_path_factory, "keys", sizes) as c:
        yield c


@pytest.fixture(scope="module")
def client(cluster: LiveCluster) -> Iterator[OzoneClient]:
    with ozone_client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    out = Keys()
    out.big_file = tmp_path_factory.mktemp("big") / "big.bin"
    out.big_sha = random_file(out.big_file, BIG)
    return out


@pytest.fixture(scope="module")
def seeded(
    cluster: LiveCluster, client: OzoneClient, keys: Keys, tmp_path_factory: pytest.TempPathFactory
) -> Keys:
    """The small keys, written first so that their containers can be closed early: the later tests then
    find them CLOSED without a lease."""
    for name, size in SMALL_SIZES.items():
        data = os.urandom(size)
        info = client.put_key(VOL, BUCKET, f"sizes/{name}", data)
        assert info.data_size == size
        keys.small[f"sizes/{name}"] = data
    one = tmp_path_factory.mktemp("one") / "one.bin"  # one through `sh key put` too
    one.write_bytes(os.urandom(BLOCK + 1))
    put = sh(cluster, "key", "put", f"/{VOL}/{BUCKET}/sizes/sh-put", str(one), "-q")
    assert put.code == 0, put
    keys.small["sizes/sh-put"] = one.read_bytes()
    keys.small["corrupt/key"] = os.urandom(BLOCK - 12345)  # one block, many checksum pieces
    client.put_key(VOL, BUCKET, "corrupt/key", keys.small["corrupt/key"])
    for name in LIST_NAMES:
        client.put_key(VOL, BUCKET, name, name.encode())
        keys.small[name] = name.encode()
    close_open_containers(cluster)  # their leases run out while the next tests work
    return keys


# ---------------------------------------------------------------------- item 1: sizes and boundaries
def test_keys_of_every_size_round_trip(
    cluster: LiveCluster, client: OzoneClient, seeded: Keys, tmp_path: Path
) -> None:
    keys = seeded
    assert keys.big_file is not None
    started = time.monotonic()
    put = sh(cluster, "key", "put", f"/{VOL}/{BUCKET}/big", str(keys.big_file), "-q", timeout_s=300)
    put_s = time.monotonic() - started
    assert put.code == 0, (put, cluster.logs())

    for name, data in keys.small.items():
        with client.read_key(VOL, BUCKET, name) as reader:
            assert reader.size == len(data) and reader.readall() == data, name
        out = tmp_path / "cat.bin"
        assert sh_to_file(cluster, out, "key", "cat", f"/{VOL}/{BUCKET}/{name}") == 0
        assert out.read_bytes() == data, name
    # the big key: the client's get_key, `sh key get` and `sh key cat`, each into a file
    timings = {}
    for how in ("get_key", "sh get", "sh cat"):
        out = tmp_path / f"big-{how.replace(' ', '-')}.bin"
        started = time.monotonic()
        if how == "get_key":
            client.get_key(VOL, BUCKET, "big", out)
        elif how == "sh get":
            assert sh(cluster, "key", "get", f"/{VOL}/{BUCKET}/big", str(out), "-q", timeout_s=300).code == 0
        else:
            assert sh_to_file(cluster, out, "key", "cat", f"/{VOL}/{BUCKET}/big") == 0
        timings[how] = time.monotonic() - started
        assert out.stat().st_size == BIG and file_sha256(out) == keys.big_sha, how
        out.unlink()
    print(
        f"\n{BIG // MiB} MB: `sh key put` {put_s:.1f} s ({BIG / MiB / put_s:.0f} MB/s); reads "
        + ", ".join(f"{how} {s:.1f} s" for how, s in timings.items())
    )

    # `key info`: every block's container, local id and datanodes (its JSON in this process: the data
    # commands above ran as real processes)
    infos = {
        name: sh_here(cluster, "key", "info", f"/{VOL}/{BUCKET}/{name}").json()
        for name in (*keys.small, "big")
    }
    blocks = {name: info["ozoneKeyLocations"] for name, info in infos.items()}
    assert blocks["sizes/empty"] == [] and len(blocks["sizes/one-byte"]) == 1
    assert len(blocks["sizes/block-minus-1"]) == 1 and len(blocks["sizes/block-plus-1"]) == 2
    assert [b["length"] for b in blocks["sizes/block-plus-1"]] == [BLOCK, 1]
    big = blocks["big"]
    assert len(big) == BIG // BLOCK and sum(b["length"] for b in big) == BIG
    assert [b["offset"] for b in big] == [i * BLOCK for i in range(len(big))]
    for b in big:
        assert b["containerID"] > 0 and b["localID"] > 0 and len(b["datanodes"]) == 3
        assert {d["hostname"] for d in b["datanodes"]} == {"dn1", "dn2", "dn3"}
    containers = {b["containerID"] for b in big}
    # SCM counts what replicas report, not the blocks it handed out (Ozone's ContainerStateManagerImpl):
    # a container takes blocks until its datanodes report it full, so the key spans several, if fewer
    # than BIG over the container size.
    assert len(containers) > 1, containers
    assert len({(b["containerID"], b["localID"]) for b in big}) == len(big)
    print(f"{BIG // MiB} MB key: {len(big)} blocks in {len(containers)} containers")


# ---------------------------------------------------------------------- item 3: containers fill and close
def test_full_containers_close_on_every_replica(cluster: LiveCluster, client: OzoneClient) -> None:
    big = {loc.container_id for loc in client.key_info(VOL, BUCKET, "big").locations}
    asked: set[int] = set()
    for dn in ("dn1", "dn2", "dn3"):
        for line in cluster.log(dn).splitlines():
            if "reached 90% of its size: asking for it to close" in line:
                asked.add(int(line.split("container ")[1].split()[0]))
    asked &= big
    assert asked, "no datanode asked to close a container of the big key"
    started = time.monotonic()
    for cid in sorted(asked):
        wait_container_closed(cluster, cid, LEASE_S + 45)
    print(
        f"\n{len(asked)} full containers CLOSED on SCM and 3 replicas "
        f"(waited {time.monotonic() - started:.1f} s)"
    )
    scm = cluster.log("scm")
    assert all(f"Sent close commands for container {cid}" in scm for cid in asked)
    table = cluster.admin("container", "info", str(min(asked)))
    assert "Container State: CLOSED" in table.out and table.out.count("State: CLOSED;") == 3, table
    with client.read_key(VOL, BUCKET, "sizes/block-plus-1") as reader:  # still readable
        assert reader.read(10) == client_bytes(client, "sizes/block-plus-1")[:10]


def client_bytes(client: OzoneClient, key: str) -> bytes:
    with client.read_key(VOL, BUCKET, key) as reader:
        return reader.readall()


# ---------------------------------------------------------------------- item 2: list, rename, delete
def test_list_rename_and_delete(cluster: LiveCluster, client: OzoneClient, keys: Keys) -> None:
    names = LIST_NAMES

    def ls(*args: str) -> list[str]:
        result = sh(cluster, "key", "ls", f"/{VOL}/{BUCKET}", *args)
        assert result.code == 0, result
        return [k["name"] for k in result.json()]

    assert ls("-p", "list/") == names
    assert ls("-p", "list/a/") == names[:5]
    assert ls("-p", "list/", "-s", "list/a/2", "-l", "2") == ["list/a/3", "list/a/4"]
    assert ls("-p", "list/", "-s", "list/a/4", "-l", "100") == names[5:]
    assert ls("-p", "list/b/", "-a") == names[5:]
    assert ls("-p", "nothing/") == []
    listed = client.list_keys(VOL, BUCKET, prefix="list/")
    assert [k.name for k in listed] == names and all(k.data_size == len(k.name) for k in listed)
    assert [k.name for k in client.list_keys(VOL, BUCKET, prefix="list/", start="list/a/3", limit=3)] == [
        "list/a/4", "list/b/0", "list/b/1",
    ]  # fmt: skip
    everything = [k.name for k in client.list_keys(VOL, BUCKET)]
    assert everything == sorted(everything) and "big" in everything

    # rename: through sh and the client
    renamed = sh(cluster, "key", "rename", f"/{VOL}/{BUCKET}", "list/a/0", "list/c/0")
    assert renamed.code == 0, renamed
    assert client_bytes(client, "list/c/0") == b"list/a/0"
    assert om_code(lambda: client.key_info(VOL, BUCKET, "list/a/0")) == "KEY_NOT_FOUND"
    client.rename_key(VOL, BUCKET, "list/c/0", "list/a/0")
    assert client_bytes(client, "list/a/0") == b"list/a/0"
    assert om_code(lambda: client.rename_key(VOL, BUCKET, "list/a/1", "list/a/2")) == "KEY_ALREADY_EXISTS"
    one_line_error(sh(cluster, "key", "rename", f"/{VOL}/{BUCKET}", "list/zz", "list/yy"), "KEY_NOT_FOUND")

    # delete: through sh and the client; the deleted blocks' files leave every datanode
    victims = {"sizes/block-plus-1": "sh", "list/b/2": "client"}
    files: dict[str, dict[str, Path]] = {}
    for name in victims:
        for loc in client.key_info(VOL, BUCKET, name).locations:
            found = block_files(cluster, loc.container_id, loc.local_id)
            assert set(found) == {"dn1", "dn2", "dn3"}, (name, loc)
            files[f"{name} {loc.block_name}"] = found
    assert sh(cluster, "key", "rm", f"/{VOL}/{BUCKET}/sizes/block-plus-1").code == 0
    client.delete_key(VOL, BUCKET, "list/b/2")
    deleted = time.monotonic()
    del keys.small["sizes/block-plus-1"], keys.small["list/b/2"]
    for name in victims:
        assert om_code(lambda name=name: client.key_info(VOL, BUCKET, name)) == "KEY_NOT_FOUND"
    one_line_error(sh(cluster, "key", "rm", f"/{VOL}/{BUCKET}/list/b/2"), "KEY_NOT_FOUND")
    # SCM deletes from closed containers only (and once the Replication Manager finds them HEALTHY)
    for cid in {int(what.split("conID: ")[1].split()[0]) for what in files}:
        if container_replica_states(cluster, cid)[0] == "OPEN":
            assert cluster.admin("container", "close", str(cid)).code == 0

    def gone() -> bool:
        return not any(path.exists() for found in files.values() for path in found.values())

    wait_for(
        gone,
        LEASE_S + 60,
        f"the deleted keys' block files leaving the disks: {sorted(files)}",
        interval_s=0.5,
    )
    print(
        f"\n{len(files)} deleted blocks' files gone from 3 datanodes "
        f"{time.monotonic() - deleted:.1f} s after the deletes"
    )


# ---------------------------------------------------------------------- item 5: a corrupted replica
def test_a_corrupted_replica_is_read_around(
    cluster: LiveCluster, client: OzoneClient, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = keys.small["corrupt/key"]
    (loc,) = client.key_info(VOL, BUCKET, "corrupt/key").locations
    if container_replica_states(cluster, loc.container_id)[0] == "OPEN":
        assert cluster.admin("container", "close", str(loc.container_id)).code == 0
    wait_container_closed(cluster, loc.container_id, LEASE_S + 30)

    victim = "dn2"
    keys.corrupted_dn = victim
    path = block_files(cluster, loc.container_id, loc.local_id)[victim]
    with open(path, "r+b") as f:  # flip 64 bytes inside the first and the last checksum pieces
        for offset in (100, len(data) - 200):
            f.seek(offset)
            piece = f.read(64)
            f.seek(offset)
            f.write(bytes(b ^ 0xFF for b in piece))
    assert path.read_bytes() != data

    # OM lists the reader's own host first: the corrupted replica first, then second, then wherever
    tried: list[tuple[str, str]] = []  # (datanode host, what happened) for every block fetch
    original = BlockInputStream._fetch_from

    async def recording(self: BlockInputStream, datanode: Any, offset: int) -> Any:
        try:
            result = await original(self, datanode, offset)
        except Exception as e:
            tried.append((datanode.host, type(e).__name__))
            raise
        tried.append((datanode.host, "ok"))
        return result

    monkeypatch.setattr(BlockInputStream, "_fetch_from", recording)
    for near in ("dn2", "dn3", "elsewhere"):
        client.async_client.client_host = near
        tried.clear()
        try:
            with client.read_key(VOL, BUCKET, "corrupt/key") as reader:
                order = [m.host for m in reader.info.locations[0].pipeline.members]
                assert reader.info.locations[0].container_state == "CLOSED"
                started = time.monotonic()
                assert reader.readall() == data, near
                print(
                    f"\nreader near {near}: replicas {order}, read in {time.monotonic() - started:.2f} s; "
                    f"fetches {tried}"
                )
        finally:
            client.async_client.client_host = os.uname().nodename
        if near == "dn2":  # the corrupted replica first: it fails its checksum, the next one serves
            assert order[0] == "dn2" and tried[0][0] == "dn2" and tried[0][1] != "ok", tried
            assert tried[1] == (order[1], "ok"), tried
        elif near == "dn3":
            assert order[0] == "dn3" and tried == [("dn3", "ok")], tried
    out = cluster.data_dir / "corrupt.bin"
    assert sh(cluster, "key", "get", f"/{VOL}/{BUCKET}/corrupt/key", str(out), "-q").code == 0
    assert out.read_bytes() == data
    out.unlink()


# ---------------------------------------------------------------------- item 9: freon
def test_freon_ockg_then_ockv(cluster: LiveCluster) -> None:
    conf = ("--conf", str(cluster.conf_dir))
    started = time.monotonic()
    ockg = cluster.pyozone(
        "freon", "ockg", "-n", "50", "-s", "64KB", "-t", "4", "-p", "freon1", "-q", *conf, timeout_s=180
    )
    generated_s = time.monotonic() - started
    assert ockg.code == 0, (ockg, cluster.logs())
    ockv = cluster.pyozone("freon", "ockv", "-n", "50", "-t", "4", "-p", "freon1", "-q", *conf, timeout_s=180)
    assert ockv.code == 0, (ockv, cluster.logs())
    print(f"\nockg (50 x 64 KB, 4 threads) {generated_s:.1f} s:\n{ockg.out}ockv:\n{ockv.out}")
    for report in (ockg.out, ockv.out):
        assert "50" in report
    listed = sh(cluster, "key", "ls", "/vol1/bucket1", "-p", "freon1/", "-a").json()
    assert len(listed) == 50 and {k["dataSize"] for k in listed} == {64 * 1024}


def test_freon_ome_omkg_and_dne(cluster: LiveCluster, client: OzoneClient) -> None:
    """Each layer's generator as a real process (issue 17): OM's echo, empty keys in OM alone, an echo to
    one datanode of a pipeline; each prints its table with its rate and latency rows."""
    conf = ("--conf", str(cluster.conf_dir))
    runs = {
        "ome": ("-n", "100", "-t", "4", "--payload-req", "1", "--payload-resp", "1"),
        "omkg": ("-n", "40", "-t", "4", "-p", "omkg1"),
        "dne": ("-n", "100", "-t", "4", "--payload-req", "1", "--payload-resp", "1"),
    }
    for tool, args in runs.items():
        result = cluster.pyozone("freon", tool, *args, "-q", *conf, timeout_s=60)
        assert result.code == 0, (tool, result, cluster.logs())
        rows = dict(line.rsplit(None, 1) for line in result.out.splitlines())
        unit, moved = ("keys", 0) if tool == "omkg" else ("ops", 100 * 2048)
        counted = (rows["operation"], rows[unit], rows["failed"], rows["bytes"])
        assert counted == (tool, args[1], "0", str(moved)), result.out
        assert float(rows[f"{unit}/s"]) > 0 and float(rows["latency p99 ms"]) > 0, result.out
    listed = client.list_keys("vol1", "bucket1", "omkg1/")
    assert len(listed) == 40 and {k.data_size for k in listed} == {0}
    assert len({k.object_id for k in listed}) == 40


def test_a_snapshot_with_keys_maps_every_key_to_its_blocks(
    cluster: LiveCluster, client: OzoneClient, tmp_path: Path
) -> None:
    """`admin snapshot --keys` writes OM's keys with their blocks beside SCM's containers (for the
    analytics jobs, e.g. affected-keys): every listed key, with the blocks `key info` shows."""
    out = tmp_path / "snap"
    snap = cluster.admin("snapshot", "--out", str(out), "--keys", "--json")
    assert snap.code == 0, (snap, cluster.logs())
    rows = pq.read_table(out / "keys").to_pylist()
    listed = {(k.volume, k.bucket, k.name) for v in client.list_volumes() for b in client.list_buckets(v.name)
              for k in client.list_keys(v.name, b.name)}  # fmt: skip
    assert {(r["volume"], r["bucket"], r["key"]) for r in rows} == listed and listed
    containers = {c["container_id"] for c in pq.read_table(out / "containers").to_pylist()}
    for row in rows[:20]:
        info = client.key_info(row["volume"], row["bucket"], row["key"])
        expected = [(b.container_id, b.local_id, b.length) for b in info.locations]
        assert [(b["container_id"], b["local_id"], b["length"]) for b in row["blocks"]] == expected
        assert row["size"] == info.data_size and {b["container_id"] for b in row["blocks"]} <= containers
    assert json.loads(snap.out)["rows"]["keys"] == len(rows)


# ---------------------------------------------------------------------- item 8: bad input
def test_bad_names_and_missing_parents(cluster: LiveCluster, client: OzoneClient, tmp_path: Path) -> None:
    small = tmp_path / "small.bin"
    small.write_bytes(b"x")
    cases = [
        (("volume", "create", "/ab"), "INVALID_VOLUME_NAME"),
        (("volume", "create", "/Upper"), "INVALID_VOLUME_NAME"),
        (("volume", "create", "/vol_1"), "INVALID_VOLUME_NAME"),
        (("volume", "create", "/192.168.1.1"), "INVALID_VOLUME_NAME"),
        (("bucket", "create", f"/{VOL}/-bkt"), "INVALID_BUCKET_NAME"),
        (("bucket", "create", f"/{VOL}/a..b"), "INVALID_BUCKET_NAME"),
        (("key", "put", f"/{VOL}/{BUCKET}/bad\x01name", str(small)), "INVALID_KEY_NAME"),
        (("key", "put", f"/{VOL}/{BUCKET}/" + "k" * 1100, str(small)), "INVALID_KEY_NAME"),
        (("bucket", "create", "/novolume/bucket1"), "VOLUME_NOT_FOUND"),
        (("volume", "info", "/novolume"), "VOLUME_NOT_FOUND"),
        (("bucket", "info", f"/{VOL}/nobucket"), "BUCKET_NOT_FOUND"),
        (("key", "put", f"/{VOL}/nobucket/key", str(small)), "BUCKET_NOT_FOUND"),
        (("key", "put", f"/novolume/{BUCKET}/key", str(small)), "NOT_FOUND"),
        (("key", "ls", f"/{VOL}/nobucket"), "BUCKET_NOT_FOUND"),
        (("key", "info", f"/{VOL}/{BUCKET}/nokey"), "KEY_NOT_FOUND"),
        (("key", "cat", f"/{VOL}/{BUCKET}/nokey"), "KEY_NOT_FOUND"),
        (("volume", "create", f"/{VOL}"), "VOLUME_ALREADY_EXISTS"),
        (("volume", "delete", f"/{VOL}"), "VOLUME_NOT_EMPTY"),
        (("bucket", "delete", f"/{VOL}/{BUCKET}"), "BUCKET_NOT_EMPTY"),
    ]
    for i, (args, code) in enumerate(cases):  # a few as real processes, the rest in this one (faster)
        real = i % 4 == 0 or args[1] in ("put", "cat", "get")  # data commands use the real stdout
        one_line_error(sh(cluster, *args) if real else sh_here(cluster, *args), code)
    # addresses that are not addresses never reach OM
    for args in (("key", "put", f"/{VOL}/{BUCKET}", str(small)), ("bucket", "create", "/onlyvolume")):
        result = sh_here(cluster, *args)
        assert result.code != 0 and "address" in result.err and len(result.err.strip().splitlines()) == 1, (
            result
        )

    assert om_code(lambda: client.create_volume("ab")) == "INVALID_VOLUME_NAME"
    assert om_code(lambda: client.create_bucket(VOL, "Bad_Bucket")) == "INVALID_BUCKET_NAME"
    assert om_code(lambda: client.put_key(VOL, BUCKET, "", b"x")) == "INVALID_KEY_NAME"
    assert om_code(lambda: client.put_key(VOL, BUCKET, "nul\x00key", b"x")) == "INVALID_KEY_NAME"
    assert om_code(lambda: client.create_bucket("novolume", "bucket1")) == "VOLUME_NOT_FOUND"
    assert om_code(lambda: client.put_key(VOL, "nobucket", "key", b"x")) == "BUCKET_NOT_FOUND"
    assert om_code(lambda: client.list_keys(VOL, "nobucket")) == "BUCKET_NOT_FOUND"
    assert om_code(lambda: client.read_key(VOL, BUCKET, "nokey")) == "KEY_NOT_FOUND"
    assert om_code(lambda: client.delete_key(VOL, BUCKET, "nokey")) == "KEY_NOT_FOUND"
    assert om_code(lambda: client.delete_bucket(VOL, BUCKET)) == "BUCKET_NOT_EMPTY"
    assert not [k for k in client.list_keys(VOL, BUCKET) if "bad" in k.name or k.name.startswith("kkk")]


# ---------------------------------------------------------------------- items 6 and 7: safe mode, restart
def read_everything(client: OzoneClient, keys: Keys, tmp: Path) -> None:
    for name, data in keys.small.items():
        assert client_bytes(client, name) == data, name
    out = tmp / "big-again.bin"
    client.get_key(VOL, BUCKET, "big", out)
    assert file_sha256(out) == keys.big_sha
    out.unlink()


def test_safe_mode_then_every_key_survives_a_full_restart(
    cluster: LiveCluster, keys: Keys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ozone_client(cluster) as c:
        before = [k.name for k in c.list_keys(VOL, BUCKET)]
        volumes = [v.name for v in c.list_volumes()]
    for name in ("om", "scm", "dn1", "dn2", "dn3"):
        cluster.kill(name)
    for name in ("scm", "om"):
        cluster.start(name)
    restarted = time.monotonic()
    wait_for(lambda: om_ready(cluster.port("om", "http")), 30, "OM ready again")
    status = wait_for(lambda: cluster.poll_json("safemode", "status"), 30, "SCM answering")
    assert status["inSafeMode"], status

    # in safe mode: the namespace works, writes are refused, reads wait for a replica's datanode
    with ozone_client(cluster) as c:
        assert sh(cluster, "volume", "create", "/safevol").code == 0
        assert sh(cluster, "bucket", "create", "/safevol/bucket").code == 0
        c.create_bucket("safevol", "bucket2")
        assert [b["name"] for b in sh(cluster, "bucket", "list", "/safevol").json()] == ["bucket", "bucket2"]
        assert "safevol" in [v["name"] for v in sh(cluster, "volume", "list").json()]
        # A writer retries SCM_IN_SAFE_MODE for ClientConfig.unavailable_budget_s (60 s) before it reports
        # it: the same refusal after 3 s, in this process (a real one cannot be given the budget).
        from_conf = ClientConfig.from_conf
        monkeypatch.setattr(
            ClientConfig,
            "from_conf",
            lambda *a, **kw: dataclasses.replace(from_conf(*a, **kw), unavailable_budget_s=3.0),
        )
        with ozone_client(cluster) as writer, pytest.raises(SafeModeException) as refused:
            writer.put_key("safevol", "bucket", "key", b"not now")
        assert refused.value.result == "SCM_IN_SAFE_MODE"
        small = tmp_path / "small.bin"
        small.write_bytes(b"not now")
        one_line_error(sh_here(cluster, "key", "put", "/safevol/bucket/key", str(small)), "SCM_IN_SAFE_MODE")
        monkeypatch.undo()
        assert om_code(lambda: c.key_info("safevol", "bucket", "key")) == "KEY_NOT_FOUND"

        reader = next(dn for dn in ("dn1", "dn2", "dn3") if dn != keys.corrupted_dn)
        cluster.start(reader)
        started = time.monotonic()
        uuid = wait_for(
            lambda: (n := cluster.datanodes().get(reader)) and n["healthState"] == "HEALTHY" and n["uuid"],
            30,
            f"{reader} registered",
        )
        wait_for(
            lambda: uuid in {r["datanode"] for r in (cluster.container(
                c.key_info(VOL, BUCKET, "corrupt/key").locations[0].container_id) or {}).get("replicas", [])},
            30,
            f"{reader}'s replica reported",
        )  # fmt: skip
        assert client_bytes(c, "corrupt/key") == keys.small["corrupt/key"]
        print(
            f"\nin safe mode with only {reader}: a closed container's key read "
            f"{time.monotonic() - started:.1f} s after its start"
        )
        assert cluster.poll_json("safemode", "status")["inSafeMode"]

    for name in ("dn1", "dn2", "dn3"):
        if name != reader:
            cluster.start(name)
    waited = cluster.admin("safemode", "wait", "-t", "90", timeout_s=120)
    assert waited.code == 0 and "SCM is out of safe mode." in waited.out, (waited, cluster.logs())
    print(f"SCM out of safe mode {time.monotonic() - restarted:.1f} s after the restart")

    with ozone_client(cluster) as c:
        assert [k.name for k in c.list_keys(VOL, BUCKET)] == before
        assert [v.name for v in c.list_volumes()] == sorted({*volumes, "safevol"})
        assert [b.name for b in c.list_buckets(VOL)] == [BUCKET]
        read_everything(c, keys, tmp_path)
        c.put_key("safevol", "bucket", "key", b"now")  # writes work again
        with c.read_key("safevol", "bucket", "key") as r:
            assert r.readall() == b"now"
