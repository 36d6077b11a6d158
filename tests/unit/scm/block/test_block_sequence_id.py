"""SequenceIdGenerator: batch reservation, no id handed out twice across crashes (also a real kill -9)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import pyozone
from pyozone.config import OzoneConfiguration
from pyozone.scm.block.sequence_id import CONTAINER_ID, DEL_TXN_ID, LOCAL_ID, SequenceIdGenerator
from pyozone.scm.settings import ScmSettings
from pyozone.scm.store import MemoryBackend, SCMMetadataStore
from pyozone.scm.store.metadata_store import TABLE_NAMES
from pyozone.scm.store.scm_db import open_scm_db
from tests.crash_support import read_lines_then_kill

ALLOCATOR = Path(__file__).with_name("sequence_id_allocator.py")


class CountingBackend(MemoryBackend):
    """Records every write, to count store round trips and check what was durable when."""

    def __init__(self) -> None:
        super().__init__(TABLE_NAMES)
        self.writes: list[list] = []

    def write(self, ops) -> None:
        self.writes.append(list(ops))
        super().write(ops)


def test_ids_are_consecutive_per_name_and_reserved_one_batch_per_write() -> None:
    backend = CountingBackend()
    gen = SequenceIdGenerator(SCMMetadataStore(backend), batch_size=10)
    assert [gen.next_id(LOCAL_ID) for _ in range(25)] == list(range(1, 26))
    assert [gen.next_id(CONTAINER_ID) for _ in range(3)] == [1, 2, 3]
    assert len(backend.writes) == 3 + 1  # batches 1-10, 11-20, 21-30 of localId; 1-10 of containerId
    assert gen.persisted_end(LOCAL_ID) == 30 and gen.persisted_end(CONTAINER_ID) == 10
    assert gen.persisted_end(DEL_TXN_ID) == 0


def test_batch_end_is_durable_before_the_first_id_of_the_batch_is_handed_out() -> None:
    backend = CountingBackend()
    store = SCMMetadataStore(backend)
    gen = SequenceIdGenerator(store, batch_size=5)
    for _ in range(12):
        writes_before = len(backend.writes)
        value = gen.next_id(LOCAL_ID)
        assert SequenceIdGenerator(SCMMetadataStore(backend)).persisted_end(LOCAL_ID) >= value
        assert len(backend.writes) - writes_before == (1 if value % 5 == 1 else 0)


def test_reservation_is_not_deferred_by_an_open_store_batch() -> None:
    backend = CountingBackend()
    store = SCMMetadataStore(backend)
    gen = SequenceIdGenerator(store, batch_size=5)
    with store.batch():
        value = gen.next_id(DEL_TXN_ID)
        assert SequenceIdGenerator(SCMMetadataStore(backend)).persisted_end(DEL_TXN_ID) >= value


def test_after_a_crash_ids_continue_after_the_persisted_batch_end() -> None:
    store = SCMMetadataStore.in_memory()
    first = SequenceIdGenerator(store, batch_size=100)
    handed_out = [first.next_id(LOCAL_ID) for _ in range(130)]
    # no shutdown of `first`: a new generator over the same store is what a restarted SCM builds
    second = SequenceIdGenerator(store, batch_size=100)
    more = [second.next_id(LOCAL_ID) for _ in range(10)]
    assert more == list(range(201, 211))
    assert not set(handed_out) & set(more)


def test_batch_size_comes_from_the_configuration() -> None:
    store = SCMMetadataStore.in_memory()
    gen = SequenceIdGenerator(
        store,
        ScmSettings.from_conf(
            OzoneConfiguration({"ozone.scm.sequence.id.batch.size": "7"})
        ).sequence_id_batch_size,
    )
    gen.next_id(LOCAL_ID)
    assert gen.persisted_end(LOCAL_ID) == 7
    with pytest.raises(ValueError):
        SequenceIdGenerator(store, batch_size=0)


def read_ids_then_kill(proc: subprocess.Popen[bytes], wanted: int, timeout: float) -> list[int]:
    """Every id the child printed was handed out, including those printed after our last read."""
    return [int(line) for line in read_lines_then_kill(proc, wanted, timeout)]


def test_no_id_is_handed_out_twice_across_kill_minus_nine(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(pyozone.__file__).parents[1])}
    seen: list[int] = []
    for round_ in range(3):
        with open(tmp_path / f"stderr-{round_}", "wb") as stderr:
            argv = [sys.executable, str(ALLOCATOR), str(tmp_path), "7"]
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, env=env)
            ids = read_ids_then_kill(proc, 3000, timeout=20.0)
        assert proc.returncode == -signal.SIGKILL, (tmp_path / f"stderr-{round_}").read_text()
        assert len(ids) >= 3000 and ids == sorted(set(ids))
        seen.extend(ids)

    store = open_scm_db(tmp_path)
    try:
        gen = SequenceIdGenerator(store, batch_size=7)
        seen.extend(gen.next_id(LOCAL_ID) for _ in range(100))
    finally:
        store.close()
    assert len(seen) == len(set(seen)), "an id was handed out twice"
    assert seen == sorted(seen), "ids must keep increasing across restarts"
