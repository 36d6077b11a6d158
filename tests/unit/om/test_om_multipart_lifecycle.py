"""The multipart lifecycle as a state machine (hypothesis): uploads of a few keys initiated, parts written
and rewritten, completed with any part list (right or wrong) and aborted, in any order. Whatever happens,
every block SCM handed out is in exactly one place (a key, a part, an open key or deletedTable), the
uploads OM lists are the ones in progress, each key holds what its completion listed, and the bucket's
usage is its keys and the parts of its uploads in progress."""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from pyozone.hdds.ids import BlockID
from pyozone.hdds.om_records import KeyBlock
from pyozone.om.exceptions import OMException
from pyozone.om.metadata import DELETED_TABLE, KEY_TABLE, MULTIPART_INFO_TABLE, OPEN_KEY_TABLE
from pyozone.om.multipart import MultipartManager
from pyozone.protocol import om_records
from tests.unit.om.om_fakes import BLOCK, FakeScm, make_om

MIN = 1200
KEYS = ("k", "k/a", "k-b")


class MultipartLifecycle(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="pyozone-mpu-"))
        self.scm = FakeScm()
        self.om = make_om(self.dir, self.scm, multipart_min_size=MIN)
        self.om.volumes.create("vol1")
        self.om.buckets.create("vol1", "bkt1")
        self.mpu = MultipartManager(self.om)
        self.uploads: dict[str, str] = {}  # upload id -> key, of every upload made
        self.parts: dict[str, dict[int, int]] = {}  # upload id -> part number -> size, in progress
        self.keys: dict[str, int] = {}  # key -> size

    def teardown(self) -> None:
        self.om.store.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _pick(self, data: st.DataObject) -> tuple[str, str]:
        """An upload, mostly one in progress (ended ones too: they must be refused)."""
        live = sorted(self.parts)
        pool = live if live and data.draw(st.integers(0, 4)) else sorted(self.uploads)
        upload_id = data.draw(st.sampled_from(pool))
        return self.uploads[upload_id], upload_id

    @rule(key=st.sampled_from(KEYS))
    def initiate(self, key: str) -> None:
        upload = self.mpu.initiate("vol1", "bkt1", key)
        self.uploads[upload.upload_id] = key
        self.parts[upload.upload_id] = {}

    @precondition(lambda self: self.uploads)
    @rule(
        data=st.data(),
        number=st.integers(1, 4),
        size=st.sampled_from([MIN, 2 * BLOCK + 10, MIN + 1, MIN - 1, 7, 0]),
    )
    def write_part(self, data: st.DataObject, number: int, size: int) -> None:
        key, upload_id = self._pick(data)
        try:
            session = self.mpu.open_part("vol1", "bkt1", key, upload_id, number, size)
        except OMException:
            assert upload_id not in self.parts
            return
        blocks, offset = [], 0
        for block in session.key.blocks:
            length = min(BLOCK, size - offset)
            blocks.append(KeyBlock(block.block_id, offset, length))
            offset += length
        etag = {"ETag": f"{number}-{size}"}
        self.mpu.commit_part("vol1", "bkt1", key, session.client_id, upload_id, number, size, blocks, etag)
        self.parts[upload_id][number] = size

    @precondition(lambda self: self.uploads)
    @rule(
        data=st.data(),
        written=st.sampled_from([True, True, False]),
        picks=st.lists(st.integers(1, 5), max_size=4),
        wrong=st.sampled_from([False, False, False, True]),
    )
    def complete(self, data: st.DataObject, written: bool, picks: list[int], wrong: bool) -> None:
        """`written`: the parts written so far, in order (else `picks`); `wrong`: with a wrong ETag."""
        key, upload_id = self._pick(data)
        parts = self.parts.get(upload_id, {})
        if written:
            picks = sorted(parts)
        listed = [(n, f"{n}-{parts.get(n, 0)}" + ("x" if wrong else "")) for n in picks]
        sizes = [parts.get(n) for n in picks]
        valid = (
            bool(picks)
            and picks == sorted(set(picks))
            and not wrong
            and all(s is not None for s in sizes)
            and all(s >= MIN for s in sizes[:-1])
            and upload_id in self.parts
        )
        try:
            record = self.mpu.complete("vol1", "bkt1", key, upload_id, listed)
        except OMException:
            assert not valid
            return
        assert valid
        assert record.data_size == sum(sizes)
        self.keys[key] = record.data_size
        del self.parts[upload_id]

    @precondition(lambda self: self.uploads)
    @rule(data=st.data())
    def abort(self, data: st.DataObject) -> None:
        key, upload_id = self._pick(data)
        try:
            self.mpu.abort("vol1", "bkt1", key, upload_id)
        except OMException:
            assert upload_id not in self.parts
            return
        del self.parts[upload_id]

    @invariant()
    def every_block_is_in_one_place(self) -> None:
        held: Counter[BlockID] = Counter()
        for table in (KEY_TABLE, DELETED_TABLE, OPEN_KEY_TABLE):
            for _, value in self.om.store.scan(table):
                held.update(b.block_id for b in om_records.decode_key(value).blocks)
        for _, value in self.om.store.scan(MULTIPART_INFO_TABLE):
            for part in om_records.decode_multipart(value).parts:
                held.update(b.block_id for b in part.key.blocks)
        allocated = {BlockID(self.scm.container, i) for i in range(1, self.scm.next_local)}
        assert set(held) == allocated
        assert all(n == 1 for n in held.values())

    @invariant()
    def listings_match(self) -> None:
        listed = {u.upload_id: u for u in self.mpu.list_uploads("vol1", "bkt1")}
        assert set(listed) == set(self.parts)
        for upload_id, upload in listed.items():
            assert {p.part_number: p.key.data_size for p in upload.parts} == self.parts[upload_id]
        keys = {k.key: k.data_size for k in self.om.keys.list("vol1", "bkt1")}
        assert keys == self.keys
        bucket = self.om.bucket_info("vol1", "bkt1")
        in_progress = sum(sum(parts.values()) for parts in self.parts.values())
        assert bucket.used_bytes == 3 * (sum(self.keys.values()) + in_progress)  # parts count until they end


MultipartLifecycle.TestCase.settings = settings(max_examples=20, stateful_step_count=25, deadline=None)
test_multipart_lifecycle = MultipartLifecycle.TestCase
