"""S3's conditional writes in OM (issue 28, defect 11): the condition is checked against the committed key in
the step that commits or deletes it, so a write that passed it at openKey is refused at its commit when
another writer committed the key meanwhile, and its open key's blocks go to deletion."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.hdds.om_records import KeyBlock
from pyozone.hdds.om_views import KeyCondition
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import OPEN_KEY_TABLE
from pyozone.om.multipart import MultipartManager
from tests.unit.om.om_fakes import FakeScm, make_om
from tests.unit.om.test_om_keys import deleted

CREATE_ONLY = KeyCondition(must_not_exist=True)


@pytest.fixture
def om(tmp_path: Path) -> OzoneManager:
    om = make_om(tmp_path, FakeScm())
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    return om


def put(om: OzoneManager, key: str, etag: str, condition: KeyCondition | None = None) -> None:
    session = om.keys.open("vol1", "bkt1", key, 10, condition=condition)
    block = KeyBlock(session.key.blocks[0].block_id, 0, 10, bcsid=1)
    om.keys.commit("vol1", "bkt1", key, session.client_id, 10, [block], {"ETag": etag}, condition)


def refused(call, *args, **kwargs) -> OMResultCode:
    with pytest.raises(OMException) as e:
        call(*args, **kwargs)
    return e.value.code


def test_two_create_only_writers_race_and_one_wins(om: OzoneManager) -> None:
    first = om.keys.open("vol1", "bkt1", "k", 10, condition=CREATE_ONLY)
    second = om.keys.open("vol1", "bkt1", "k", 10, condition=CREATE_ONLY)  # both pass at openKey
    for session, etag in ((first, "a"), (second, "b")):
        session_blocks = [KeyBlock(session.key.blocks[0].block_id, 0, 10, bcsid=1)]
        args = ("vol1", "bkt1", "k", session.client_id, 10, session_blocks, {"ETag": etag}, CREATE_ONLY)
        if session is first:
            om.keys.commit(*args)
        else:
            assert refused(om.keys.commit, *args) is OMResultCode.KEY_ALREADY_EXISTS
    assert dict(om.keys.record("vol1", "bkt1", "k").metadata)["ETag"] == "a"
    assert next(om.store.scan(OPEN_KEY_TABLE), None) is None  # the loser's open key is gone
    assert [second.key.blocks[0].block_id] in deleted(om).values()  # and its block goes to deletion
    assert (
        refused(om.keys.open, "vol1", "bkt1", "k", 10, condition=CREATE_ONLY)
        is OMResultCode.KEY_ALREADY_EXISTS
    )


def test_if_match_compares_the_etag_at_commit(om: OzoneManager) -> None:
    assert refused(put, om, "k", "a", KeyCondition(expected_etag="*")) is OMResultCode.ETAG_MISMATCH
    put(om, "k", "a")
    session = om.keys.open("vol1", "bkt1", "k", 10, condition=KeyCondition(expected_etag="a"))
    put(om, "k", "b")  # a concurrent overwrite
    blocks = [KeyBlock(session.key.blocks[0].block_id, 0, 10, bcsid=1)]
    assert (
        refused(om.keys.commit, "vol1", "bkt1", "k", session.client_id, 10, blocks, {"ETag": "c"},
                KeyCondition(expected_etag="a"))
        is OMResultCode.ETAG_MISMATCH
    )  # fmt: skip
    put(om, "k", "c", KeyCondition(expected_etag="b"))
    assert dict(om.keys.record("vol1", "bkt1", "k").metadata)["ETag"] == "c"


def test_delete_and_complete_check_their_condition(om: OzoneManager) -> None:
    put(om, "k", "a")
    assert (
        refused(om.keys.delete, "vol1", "bkt1", "k", KeyCondition(expected_etag="b"))
        is OMResultCode.ETAG_MISMATCH
    )
    om.keys.delete("vol1", "bkt1", "k", KeyCondition(expected_etag="a"))
    assert (
        refused(om.keys.delete, "vol1", "bkt1", "k", KeyCondition(expected_etag="*"))
        is OMResultCode.KEY_NOT_FOUND
    )

    multipart = MultipartManager(om)
    put(om, "m", "old")
    upload = multipart.initiate("vol1", "bkt1", "m")
    session = multipart.open_part("vol1", "bkt1", "m", upload.upload_id, 1, 10)
    block = KeyBlock(session.key.blocks[0].block_id, 0, 10, bcsid=1)
    multipart.commit_part(
        "vol1", "bkt1", "m", session.client_id, upload.upload_id, 1, 10, [block], {"ETag": "p1"}
    )
    assert (
        refused(multipart.complete, "vol1", "bkt1", "m", upload.upload_id, [(1, "p1")], None, CREATE_ONLY)
        is OMResultCode.KEY_ALREADY_EXISTS
    )
    multipart.complete(
        "vol1", "bkt1", "m", upload.upload_id, [(1, "p1")], None, KeyCondition(expected_etag="old")
    )
