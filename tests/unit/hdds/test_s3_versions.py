"""The S3 version rules (hdds/s3_versions.py): ids and their order, and what a write or delete does to the
current version under each bucket state (Amazon's "Managing objects in a versioning-suspended bucket")."""

from __future__ import annotations

import pytest

from pyozone.hdds.s3_versions import (
    NULL_VERSION,
    BucketVersioning,
    VersionIdError,
    WritePlan,
    order_suffix,
    parse_version_id,
    seq_of_suffix,
    version_id,
    write_plan,
)


def test_version_ids_round_trip_and_null_is_its_own() -> None:
    assert version_id(0x2A, True) == "000000000000002a"
    assert parse_version_id("000000000000002a") == 0x2A
    assert version_id(0x2A, False) == NULL_VERSION
    assert parse_version_id(NULL_VERSION) is None


@pytest.mark.parametrize("text", ["", "abc", "3HL4kqtJlcpXroDTDmJ", "000000000000002A", "0" * 17, " " * 16])
def test_a_malformed_version_id_is_refused(text: str) -> None:
    with pytest.raises(VersionIdError):
        parse_version_id(text)


def test_newer_versions_sort_first_after_the_key_name() -> None:
    suffixes = [order_suffix(seq) for seq in (0, 1, 2, 1 << 40)]
    assert sorted(suffixes) == suffixes[::-1]
    assert [seq_of_suffix(s) for s in suffixes] == [0, 1, 2, 1 << 40]
    assert all(s.startswith("\x00") for s in suffixes)  # before any longer key name's next character


def test_enabled_keeps_every_version() -> None:
    for current_versioned in (True, False):
        assert write_plan(BucketVersioning.ENABLED, current_versioned) == WritePlan(True, True)
    assert not WritePlan(True, True).drops_null


def test_suspended_writes_null_and_overwrites_only_a_null_current() -> None:
    assert write_plan(BucketVersioning.SUSPENDED, False) == WritePlan(False, False)  # a null one: replaced
    assert write_plan(BucketVersioning.SUSPENDED, True) == WritePlan(False, True)  # a versioned one: kept
    assert WritePlan(False, True).drops_null


def test_the_states_are_named_as_s3_names_them() -> None:
    assert [s.value for s in BucketVersioning] == ["", "Enabled", "Suspended"]
    with pytest.raises(ValueError):
        BucketVersioning.of("Disabled")
