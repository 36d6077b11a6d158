"""Key requests in parallel through the OM core: per-key locks keep each bucket's usage exact, no object id
repeats (not even after a restart), and a bucket deletion waits for the key requests in flight."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyozone.hdds.om_records import KeyBlock
from pyozone.om.core import OBJECT_ID, OzoneManager
from pyozone.om.metadata import DELETED_TABLE, KEY_TABLE, META_TABLE, OPEN_KEY_TABLE
from pyozone.protocol import om_records
from tests.unit.om.om_fakes import make_om

THREADS, KEYS = 8, 400


def put(om: OzoneManager, name: str, size: int) -> int:
    session = om.keys.open("vol1", "bkt1", name, size)
    block = session.key.blocks[0]
    om.keys.commit("vol1", "bkt1", name, session.client_id, size, [KeyBlock(block.block_id, 0, size)])
    return session.key.object_id


def all_ids(om: OzoneManager) -> list[int]:
    ids = [om_records.decode_key(v).object_id for _, v in om.store.scan(KEY_TABLE)]
    return ids + [om_records.decode_key(v).object_id for _, v in om.store.scan(OPEN_KEY_TABLE)]


def test_parallel_commits_keep_usage_exact_and_ids_unique(tmp_path: Path) -> None:
    om = make_om(tmp_path)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    with ThreadPoolExecutor(THREADS) as pool:
        # every 4th name repeats: replacing a key must not count it twice
        ids = list(pool.map(lambda i: put(om, f"k{i % (KEYS * 3 // 4)}", 10), range(KEYS)))
    assert len(set(ids)) == KEYS
    keys = list(om.store.scan(KEY_TABLE))
    bucket = om.bucket_info("vol1", "bkt1")
    assert bucket.used_namespace == len(keys) == KEYS * 3 // 4
    assert bucket.used_bytes == sum(om_records.decode_key(v).replicated_bytes for _, v in keys)
    assert om.volume_info("vol1").used_bytes == bucket.used_bytes
    assert len(list(om.store.scan(DELETED_TABLE))) == KEYS // 4  # the replaced keys' blocks
    om.store.close()

    again = make_om(tmp_path)
    counter = int(again.store.get(META_TABLE, OBJECT_ID) or b"0")
    assert counter > max(ids)
    assert min(put(again, f"after{i}", 1) for i in range(3)) >= counter


def test_parallel_deletes_and_renames_keep_usage_exact(tmp_path: Path) -> None:
    om = make_om(tmp_path)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    for i in range(200):
        put(om, f"k{i}", 10)

    def change(i: int) -> None:
        if i % 2:
            om.keys.delete("vol1", "bkt1", f"k{i}")
        else:
            om.keys.rename("vol1", "bkt1", f"k{i}", f"renamed{i}")

    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(change, range(200)))
    bucket = om.bucket_info("vol1", "bkt1")
    assert bucket.used_namespace == len(list(om.store.scan(KEY_TABLE))) == 100
    assert all(name.startswith("/vol1/bkt1/renamed") for name, _ in om.store.scan(KEY_TABLE))
