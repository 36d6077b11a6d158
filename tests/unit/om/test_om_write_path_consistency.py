"""What clients and services see while transactions wait for their flush: nothing a crash could take
back, and listings that are one point in time."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyozone.hdds.om_records import KeyBlock
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import KEY_TABLE, OMMetadataStore
from pyozone.om.server.service import OzoneManagerService
from pyozone.om.services import KeyDeletingService
from tests.unit.om.om_fakes import make_om

WAIT_S = 10


def hold_flushes(store: OMMetadataStore) -> threading.Event:
    """Flushes wait for the returned event (a slow disk)."""
    gate = threading.Event()
    write = store._backend.write

    def gated(ops, sync=False):  # type: ignore[no-untyped-def]
        assert gate.wait(WAIT_S)
        write(ops, sync)

    store._backend.write = gated  # type: ignore[method-assign]
    return gate


def om_with_key(tmp_path: Path) -> OzoneManager:
    om = make_om(tmp_path)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    session = om.keys.open("vol1", "bkt1", "k", 10)
    om.keys.commit(
        "vol1", "bkt1", "k", session.client_id, 10, [KeyBlock(session.key.blocks[0].block_id, 0, 10)]
    )
    om.store.sync()
    return om


def test_the_deleting_service_tells_scm_only_of_durable_deletions(tmp_path: Path) -> None:
    om = om_with_key(tmp_path)
    gate = hold_flushes(om.store)
    om.keys.delete("vol1", "bkt1", "k")  # visible, not durable: a crash now brings k back
    done = threading.Event()
    threading.Thread(target=lambda: (KeyDeletingService(om).run_once(), done.set()), daemon=True).start()
    assert not done.wait(0.3)
    assert om.scm.deletes == []
    gate.set()
    assert done.wait(WAIT_S)
    assert len(om.scm.deletes) == 1


def test_a_read_is_answered_only_once_the_writes_it_saw_are_durable(tmp_path: Path) -> None:
    om = om_with_key(tmp_path)
    gate = hold_flushes(om.store)

    async def main() -> None:
        service = OzoneManagerService(om, ThreadPoolExecutor(4), "om", "cid")
        delete = asyncio.ensure_future(service.calls.run(om.keys.delete, "vol1", "bkt1", "k"))
        await asyncio.sleep(0.1)
        lookup = asyncio.ensure_future(service.calls.run(om.keys.lookup, "vol1", "bkt1", "k"))
        await asyncio.sleep(0.2)
        assert not delete.done() and not lookup.done()  # both saw what is not in om.db yet
        gate.set()
        await asyncio.wait_for(delete, WAIT_S)
        try:
            await asyncio.wait_for(lookup, WAIT_S)
            raise AssertionError("the deleted key was found")
        except OMException as e:
            assert e.code is OMResultCode.KEY_NOT_FOUND

    asyncio.run(main())


def test_a_read_with_nothing_unflushed_is_answered_at_once(tmp_path: Path) -> None:
    om = om_with_key(tmp_path)
    hold_flushes(om.store)  # never opened: a read that waited would time out

    async def main() -> None:
        service = OzoneManagerService(om, ThreadPoolExecutor(2), "om", "cid")
        await asyncio.wait_for(service.calls.run(om.keys.lookup, "vol1", "bkt1", "k"), WAIT_S)

    asyncio.run(main())


def test_scans_under_writes_and_flushes_are_points_in_time(tmp_path: Path) -> None:
    """A writer renames /r/a <-> /r/z and adds keys while the flusher runs: every scan shows exactly one of
    the two names, and scanning a cache other threads change never fails."""
    store = OMMetadataStore(tmp_path / "om.db")
    store.write([(KEY_TABLE, "/r/a", b"1")])
    stop = threading.Event()

    def writer() -> None:
        i, name = 0, "/r/a"
        while not stop.is_set():
            other = "/r/z" if name == "/r/a" else "/r/a"
            store.write(
                [(KEY_TABLE, name, None), (KEY_TABLE, other, b"1"), (KEY_TABLE, f"/w/{i % 64:02d}", b"")]
            )
            name, i = other, i + 1

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        for _ in range(300):
            names = [k for k, _ in store.scan(KEY_TABLE, "/r/")]
            assert names in (["/r/a"], ["/r/z"]), names
            assert len(list(store.scan(KEY_TABLE, "/w/"))) <= 64
    finally:
        stop.set()
        thread.join(WAIT_S)
        store.close()


def test_a_failing_flush_listener_does_not_stop_the_flusher(tmp_path: Path) -> None:
    store = OMMetadataStore(tmp_path / "om.db")

    def broken(upto: int) -> None:
        raise RuntimeError("Event loop is closed")

    store.on_flush(broken)
    store.write([(KEY_TABLE, "/a", b"1")])
    store.sync()
    store.write([(KEY_TABLE, "/b", b"1")])
    store.sync()
    store.close()
    again = OMMetadataStore(tmp_path / "om.db")
    assert again.get(KEY_TABLE, "/b") == b"1"
    again.close()
