"""S3 versions in OM (om/versions.py): a versioned bucket keeps every write, a delete adds a marker, a
version removed for good sends its blocks (and only its) to deletedTable, Suspended overwrites the null
version, the listing orders and pages versions, and om.db keeps all of it across a restart."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pyozone.hdds.clock import ManualClock
from pyozone.hdds.ids import BlockID
from pyozone.hdds.om_records import KeyBlock
from pyozone.hdds.om_views import KeyCondition
from pyozone.hdds.s3_versions import NULL_VERSION, BucketVersioning, DeleteOutcome, version_id
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import DELETED_TABLE, OBJECT_VERSION_TABLE, OMMetadataStore, version_key
from pyozone.om.properties import PropertyManager
from pyozone.om.settings import OMSettings
from pyozone.protocol import om_records
from tests.unit.om.om_fakes import BLOCK, FakeScm, make_om

ENABLED = BucketVersioning.ENABLED
SUSPENDED = BucketVersioning.SUSPENDED


@pytest.fixture
def om(tmp_path: Path) -> OzoneManager:
    om = make_om(tmp_path)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    return om


def write(om: OzoneManager, key: str, size: int = 10) -> tuple[str, list[BlockID]]:
    """A committed key of `size` bytes: its version id and its blocks."""
    session = om.keys.open("vol1", "bkt1", key, size)
    blocks = [KeyBlock(b.block_id, 0, size) for b in session.key.blocks[:1]]
    record = om.keys.commit("vol1", "bkt1", key, session.client_id, size, blocks)
    return record.version_id, [b.block_id for b in blocks]


def freed(om: OzoneManager) -> set[BlockID]:
    return {b.block_id for _, v in om.store.scan(DELETED_TABLE) for b in om_records.decode_key(v).blocks}


def listed(om: OzoneManager, **kw: object) -> list[tuple[str, str, bool, bool]]:
    """(key, version id, latest, marker) of each entry."""
    found = om.versions.list("vol1", "bkt1", **kw)  # type: ignore[arg-type]
    return [(r.key, r.version_id, latest, r.delete_marker) for r, latest in found]


def refused(call, *args) -> OMResultCode:  # type: ignore[no-untyped-def]
    with pytest.raises(OMException) as error:
        call(*args)
    return error.value.code


def test_a_put_on_an_enabled_bucket_keeps_the_old_version(om: OzoneManager) -> None:
    old, old_blocks = write(om, "k")
    assert old == NULL_VERSION  # written before versioning: the null version
    om.versions.set_state("vol1", "bkt1", ENABLED)
    new, _ = write(om, "k")
    assert new not in (NULL_VERSION, "")
    assert freed(om) == set()  # the old version's blocks are kept
    assert om.keys.lookup("vol1", "bkt1", "k").key.version_id == new
    kept = om.keys.lookup("vol1", "bkt1", "k", version=NULL_VERSION).key
    assert [b.block_id for b in kept.blocks] == old_blocks
    assert listed(om) == [("k", new, True, False), ("k", NULL_VERSION, False, False)]
    assert om.bucket_info("vol1", "bkt1").used_namespace == 1


def test_version_ids_order_by_time(om: OzoneManager) -> None:
    om.versions.set_state("vol1", "bkt1", ENABLED)
    ids = [write(om, "k")[0] for _ in range(3)]
    assert ids == sorted(ids)
    assert [v for _, v, _, _ in listed(om)] == ids[::-1]


def test_a_delete_adds_a_marker_and_keeps_the_data(om: OzoneManager) -> None:
    om.versions.set_state("vol1", "bkt1", ENABLED)
    v1, blocks = write(om, "k")
    outcome = om.keys.delete("vol1", "bkt1", "k")
    assert outcome.delete_marker and outcome.version_id > v1
    assert refused(om.keys.lookup, "vol1", "bkt1", "k") is OMResultCode.KEY_NOT_FOUND
    marker = om.keys.lookup("vol1", "bkt1", "k", delete_markers=True).key
    assert marker.delete_marker and marker.version_id == outcome.version_id
    assert om.keys.list("vol1", "bkt1") == []  # native listings see no key
    assert freed(om) == set()
    assert om.keys.lookup("vol1", "bkt1", "k", version=v1).key.blocks[0].block_id == blocks[0]
    assert listed(om) == [("k", outcome.version_id, True, True), ("k", v1, False, False)]
    assert om.bucket_info("vol1", "bkt1").used_namespace == 1  # the marker's (R32's F7b), not the key's


def test_a_delete_of_a_missing_key_still_adds_a_marker(om: OzoneManager) -> None:
    om.versions.set_state("vol1", "bkt1", ENABLED)
    outcome = om.keys.delete("vol1", "bkt1", "never")
    assert outcome.delete_marker
    assert listed(om) == [("never", outcome.version_id, True, True)]


def test_removing_a_version_frees_only_its_blocks(om: OzoneManager) -> None:
    om.versions.set_state("vol1", "bkt1", ENABLED)
    v1, b1 = write(om, "k")
    v2, b2 = write(om, "k")
    assert om.keys.delete("vol1", "bkt1", "k", version=v1) == DeleteOutcome(v1, False)
    assert freed(om) == set(b1)
    assert refused(om.keys.lookup, "vol1", "bkt1", "k", "", False, v1) is OMResultCode.NO_SUCH_VERSION
    assert om.keys.delete("vol1", "bkt1", "k", version=v2) == DeleteOutcome(v2, False)
    assert freed(om) == set(b1) | set(b2)
    assert listed(om) == []
    assert om.bucket_info("vol1", "bkt1").used_bytes == 0


def test_removing_the_current_version_makes_the_previous_one_current(om: OzoneManager) -> None:
    om.versions.set_state("vol1", "bkt1", ENABLED)
    v1, _ = write(om, "k")
    v2, b2 = write(om, "k")
    om.keys.delete("vol1", "bkt1", "k", version=v2)
    assert freed(om) == set(b2)
    assert om.keys.lookup("vol1", "bkt1", "k").key.version_id == v1
    assert [k.key for k in om.keys.list("vol1", "bkt1")] == ["k"]
    assert listed(om) == [("k", v1, True, False)]


def test_removing_the_latest_marker_brings_the_object_back(om: OzoneManager) -> None:
    om.versions.set_state("vol1", "bkt1", ENABLED)
    v1, _ = write(om, "k")
    marker = om.keys.delete("vol1", "bkt1", "k").version_id
    assert om.keys.delete("vol1", "bkt1", "k", version=marker) == DeleteOutcome(marker, True)
    assert om.keys.lookup("vol1", "bkt1", "k").key.version_id == v1
    assert om.bucket_info("vol1", "bkt1").used_namespace == 1
    assert freed(om) == set()


def test_a_version_the_key_lacks_is_no_error_and_a_malformed_one_is_refused(om: OzoneManager) -> None:
    om.versions.set_state("vol1", "bkt1", ENABLED)
    write(om, "k")
    missing = "00000000000000ff"
    assert om.keys.delete("vol1", "bkt1", "k", version=missing) == DeleteOutcome(missing, False)
    assert refused(om.keys.delete, "vol1", "bkt1", "k", None, "nope") is OMResultCode.INVALID_REQUEST
    assert refused(om.keys.lookup, "vol1", "bkt1", "k", "", False, missing) is OMResultCode.NO_SUCH_VERSION


def test_suspended_overwrites_the_null_version_and_keeps_the_others(om: OzoneManager) -> None:
    _, null_blocks = write(om, "k")
    om.versions.set_state("vol1", "bkt1", ENABLED)
    v1, _ = write(om, "k")
    om.versions.set_state("vol1", "bkt1", SUSPENDED)
    again, again_blocks = write(om, "k")
    assert again == NULL_VERSION
    assert freed(om) == set(null_blocks)  # the first null version, replaced
    write(om, "k")
    assert freed(om) == set(null_blocks) | set(again_blocks)
    assert [v for _, v, _, _ in listed(om)] == [NULL_VERSION, v1]


def test_a_delete_while_suspended_puts_a_null_marker(om: OzoneManager) -> None:
    _, blocks = write(om, "k")
    om.versions.set_state("vol1", "bkt1", SUSPENDED)
    assert om.keys.delete("vol1", "bkt1", "k") == DeleteOutcome(NULL_VERSION, True)
    assert freed(om) == set(blocks)  # the null version it replaced
    assert listed(om) == [("k", NULL_VERSION, True, True)]


def test_listing_pages_by_key_and_version_marker(om: OzoneManager) -> None:
    om.versions.set_state("vol1", "bkt1", ENABLED)
    a1, _ = write(om, "a")
    a2, _ = write(om, "a")
    b1, _ = write(om, "a/b")
    c1, _ = write(om, "c")
    assert listed(om, max_keys=2) == [("a", a2, True, False), ("a", a1, False, False)]
    assert listed(om, key_marker="a", version_marker=a2, max_keys=2) == [
        ("a", a1, False, False),
        ("a/b", b1, True, False),
    ]
    assert listed(om, key_marker="a") == [("a/b", b1, True, False), ("c", c1, True, False)]
    assert listed(om, prefix="a/") == [("a/b", b1, True, False)]


def test_a_rename_in_a_versioned_bucket_is_refused(om: OzoneManager) -> None:
    write(om, "k")
    om.versions.set_state("vol1", "bkt1", SUSPENDED)
    assert refused(om.keys.rename, "vol1", "bkt1", "k", "moved") is OMResultCode.INVALID_REQUEST
    assert om.keys.lookup("vol1", "bkt1", "k").key.key == "k"


def test_set_state_never_goes_back_to_unversioned(om: OzoneManager) -> None:
    assert om.bucket_info("vol1", "bkt1").versioning is BucketVersioning.UNVERSIONED
    om.versions.set_state("vol1", "bkt1", SUSPENDED)
    assert om.bucket_info("vol1", "bkt1").versioning is SUSPENDED
    assert refused(om.versions.set_state, "vol1", "bkt1", BucketVersioning.UNVERSIONED) is (
        OMResultCode.INVALID_REQUEST
    )


def test_a_bucket_with_versions_or_markers_is_not_empty(om: OzoneManager) -> None:
    om.versions.set_state("vol1", "bkt1", ENABLED)
    v1, _ = write(om, "k")
    marker = om.keys.delete("vol1", "bkt1", "k").version_id
    assert refused(om.buckets.delete, "vol1", "bkt1") is OMResultCode.BUCKET_NOT_EMPTY
    om.keys.delete("vol1", "bkt1", "k", version=v1)
    assert refused(om.buckets.delete, "vol1", "bkt1") is OMResultCode.BUCKET_NOT_EMPTY
    om.keys.delete("vol1", "bkt1", "k", version=marker)
    om.buckets.delete("vol1", "bkt1")


def test_versions_survive_a_restart(tmp_path: Path) -> None:
    scm = FakeScm()
    om = make_om(tmp_path, scm)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt1")
    om.versions.set_state("vol1", "bkt1", ENABLED)
    v1, _ = write(om, "k")
    marker = om.keys.delete("vol1", "bkt1", "k").version_id
    om.store.close()
    again = OzoneManager(
        OMMetadataStore(tmp_path / "om.db"), scm, OMSettings(block_size=BLOCK), ManualClock(), "tester"
    )
    assert again.bucket_info("vol1", "bkt1").versioning is ENABLED
    assert listed(again) == [("k", marker, True, True), ("k", v1, False, False)]
    v2, _ = write(again, "k")
    assert v2 > marker  # ids keep growing across the restart


def test_every_request_naming_a_key_checks_its_name(om: OzoneManager) -> None:
    """R32's F1b: a NUL or another control character is refused whatever the request (a delete wrote a
    marker under `k` NUL ..., inside k's range of objectVersionTable)."""
    om.versions.set_state("vol1", "bkt1", ENABLED)
    write(om, "k")
    for name in ("k\x00" + "0" * 16, "a\x01"):
        assert refused(om.keys.delete, "vol1", "bkt1", name) is OMResultCode.INVALID_KEY_NAME
        assert refused(om.keys.lookup, "vol1", "bkt1", name) is OMResultCode.INVALID_KEY_NAME
        assert refused(om.keys.set_tags, "vol1", "bkt1", name, {}) is OMResultCode.INVALID_KEY_NAME
    assert listed(om) == [("k", listed(om)[0][1], True, False)]


def test_another_keys_row_in_a_keys_range_is_not_its_version(om: OzoneManager) -> None:
    """R32's F1b: a row of key `k` NUL ... (written before names were checked) sorts inside k's versions;
    k's scans skip it, so removing k's current version still brings its previous one back."""
    om.versions.set_state("vol1", "bkt1", ENABLED)
    v1, _ = write(om, "k")
    v2, _ = write(om, "k")
    foreign = replace(
        om.keys.find("vol1", "bkt1", "k"), key="k\x00" + "0" * 16, delete_marker=True, blocks=()
    )
    om.store.write(
        [(OBJECT_VERSION_TABLE, version_key("vol1", "bkt1", foreign.key, 99), om_records.encode_key(foreign))]
    )
    om.keys.delete("vol1", "bkt1", "k", version=v2)
    current = om.keys.find("vol1", "bkt1", "k")
    assert current is not None and current.version_id == v1
    assert om.bucket_info("vol1", "bkt1").used_namespace == 1


def test_a_conditional_delete_of_a_version_is_refused(om: OzoneManager) -> None:
    """R32's F5: If-Match is evaluated on the current version alone (Amazon's conditional deletes); with a
    version named it is refused, never dropped with the version removed whatever its ETag."""
    om.versions.set_state("vol1", "bkt1", ENABLED)
    v1, _ = write(om, "k")
    condition = KeyCondition(expected_etag="not-the-etag")
    assert refused(om.keys.delete, "vol1", "bkt1", "k", condition, v1) is OMResultCode.INVALID_REQUEST
    assert om.versions.find("vol1", "bkt1", "k", v1).version_id == v1
    assert freed(om) == set()


def test_a_page_ending_on_the_null_version_resumes_at_its_place(om: OzoneManager) -> None:
    """R32's F3: the list-then-delete loop. A page ends on k's `null` version, the client deletes it;
    the next page, from the place the gateway answers (version_id of its sequence number), still lists
    k's older version; a `null` marker naming no version any more starts at the key's newest,
    repeating rather than skipping."""
    om.versions.set_state("vol1", "bkt1", ENABLED)
    v1, _ = write(om, "k")
    om.versions.set_state("vol1", "bkt1", SUSPENDED)
    write(om, "k")
    om.versions.set_state("vol1", "bkt1", ENABLED)
    v3, _ = write(om, "k")
    z, _ = write(om, "z")
    page = om.versions.list("vol1", "bkt1", max_keys=2)
    assert [(r.key, r.version_id) for r, _ in page] == [("k", v3), ("k", NULL_VERSION)]
    place = version_id(page[-1][0].version_seq, True)
    om.keys.delete("vol1", "bkt1", "k", version=NULL_VERSION)
    after = [("k", v1, False, False), ("z", z, True, False)]
    assert listed(om, key_marker="k", version_marker=place) == after
    assert listed(om, key_marker="k", version_marker=NULL_VERSION) == [("k", v3, True, False), *after]


def test_is_latest_on_a_page_whose_marker_is_gone(om: OzoneManager) -> None:
    """R32's F6: the first entry of the marker key on a follow-on page is its latest when it is."""
    om.versions.set_state("vol1", "bkt1", ENABLED)
    v1, _ = write(om, "k")
    marker = om.keys.delete("vol1", "bkt1", "k").version_id
    assert listed(om, key_marker="k", version_marker="f" * 16) == [
        ("k", marker, True, True),
        ("k", v1, False, False),
    ]
    assert listed(om, key_marker="k", version_marker=marker) == [("k", v1, False, False)]


def test_the_null_version_is_found_without_a_scan(om: OzoneManager, monkeypatch: pytest.MonkeyPatch) -> None:
    """R32's F2: a Suspended write or delete and versionId=null find the key's null version by its
    pointer row, not by scanning every version of the key (under OM's usage lock)."""
    om.versions.set_state("vol1", "bkt1", ENABLED)
    write(om, "k")
    om.versions.set_state("vol1", "bkt1", SUSPENDED)
    write(om, "k")  # the null version
    om.versions.set_state("vol1", "bkt1", ENABLED)
    for _ in range(5):
        om.keys.delete("vol1", "bkt1", "k")
    om.versions.set_state("vol1", "bkt1", SUSPENDED)
    scanned: list[str] = []
    scan = om.store.scan

    def counted(table: str, prefix: str = "", start_after: str | None = None):  # type: ignore[no-untyped-def]
        if table == OBJECT_VERSION_TABLE:
            scanned.append(prefix)
        return scan(table, prefix, start_after)

    monkeypatch.setattr(om.store, "scan", counted)
    assert om.keys.lookup("vol1", "bkt1", "k", version=NULL_VERSION).key.version_id == NULL_VERSION
    write(om, "k")  # replaces the null version, keeping the others
    om.keys.delete("vol1", "bkt1", "k")  # a null marker replaces it
    assert scanned == []
    monkeypatch.undo()
    assert [v for _, v, _, _ in listed(om)].count(NULL_VERSION) == 1
    assert len(listed(om)) == 7


def test_markers_count_in_the_namespace_quota(om: OzoneManager) -> None:
    """R32's F7b and F7: a delete marker is a row no byte quota bounds, so it counts in usedNamespace
    (a marker for a key that was current takes the key's place); a marker beyond the namespace quota is
    QUOTA_EXCEEDED, and removing a latest marker brings its key back within the quota."""
    om.versions.set_state("vol1", "bkt1", ENABLED)
    PropertyManager(om).set_bucket("vol1", "bkt1", quota_namespace=2)
    write(om, "a")
    marker = om.keys.delete("vol1", "bkt1", "a").version_id  # a's place: still 1
    om.keys.delete("vol1", "bkt1", "never-0")
    assert om.bucket_info("vol1", "bkt1").used_namespace == 2
    assert refused(om.keys.delete, "vol1", "bkt1", "never-1") is OMResultCode.QUOTA_EXCEEDED
    assert refused(write, om, "b") is OMResultCode.QUOTA_EXCEEDED
    om.keys.delete("vol1", "bkt1", "a", version=marker)  # a comes back in the marker's place
    bucket = om.bucket_info("vol1", "bkt1")
    assert om.keys.find("vol1", "bkt1", "a") is not None and bucket.used_namespace == 2
    assert [(key, latest, dm) for key, _, latest, dm in listed(om)] == [
        ("a", True, False),
        ("never-0", True, True),
    ]
