"""OM's locks: key requests side by side, everything else alone, reentrant, never starving a writer."""

from __future__ import annotations

import threading

import pytest

from pyozone.om.locks import NamespaceLock, OMLocks

WAIT_S = 10


def in_thread(fn) -> threading.Event:  # type: ignore[no-untyped-def]
    done = threading.Event()
    threading.Thread(target=lambda: (fn(), done.set()), daemon=True).start()
    return done


def test_shared_holders_run_together_and_exclusive_waits_for_them() -> None:
    lock = NamespaceLock()
    lock.acquire_shared()
    assert in_thread(lambda: (lock.acquire_shared(), lock.release_shared())).wait(WAIT_S)
    exclusive = in_thread(lambda: (lock.acquire(), lock.release()))
    assert not exclusive.wait(0.1)
    lock.release_shared()
    assert exclusive.wait(WAIT_S)


def test_a_waiting_writer_holds_back_new_readers_but_not_reentering_ones() -> None:
    lock = NamespaceLock()
    lock.acquire_shared()
    writer = in_thread(lambda: (lock.acquire(), lock.release()))
    while not lock._writers_waiting:
        threading.Event().wait(0.001)
    newcomer = in_thread(lambda: (lock.acquire_shared(), lock.release_shared()))
    assert not newcomer.wait(0.1)
    with lock.shared():  # this thread already reads: it re-enters without waiting
        pass
    lock.release_shared()
    assert writer.wait(WAIT_S) and newcomer.wait(WAIT_S)


def test_the_exclusive_holder_reenters_and_may_take_it_shared() -> None:
    lock = NamespaceLock()
    with lock, lock, lock.shared():
        assert not in_thread(lambda: (lock.acquire_shared(), lock.release_shared())).wait(0.1)
    assert in_thread(lambda: (lock.acquire(), lock.release())).wait(WAIT_S)


def test_a_shared_holder_cannot_upgrade() -> None:
    lock = NamespaceLock()
    with lock.shared(), pytest.raises(RuntimeError, match="exclusively"):
        lock.acquire()


def test_key_locks_serialize_one_key_not_two() -> None:
    locks = OMLocks()
    with locks.key("/v/b/k"):
        assert in_thread(lambda: locks.key("/v/b/other").__enter__()).wait(WAIT_S)
        same = threading.Event()

        def take_same() -> None:
            with locks.key("/v/b/k"):
                same.set()

        in_thread(take_same)
        assert not same.wait(0.1)
    assert same.wait(WAIT_S)


def test_a_rename_takes_both_keys_in_one_order() -> None:
    locks = OMLocks(stripes=64)
    finished = []

    def rename(a: str, b: str) -> None:
        for _ in range(300):
            with locks.key(a, b):
                pass
        finished.append(a)

    done = [in_thread(lambda: rename("/v/b/x", "/v/b/y")), in_thread(lambda: rename("/v/b/y", "/v/b/x"))]
    assert all(d.wait(WAIT_S) for d in done)
