"""The Object Lock rules (hdds/s3_object_lock.py), from Amazon's "Locking objects with Object Lock",
PutObjectLockConfiguration, PutObjectRetention and PutObjectLegalHold: who may delete a version when, how
retention may change, and the documents and headers with their errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.s3_object_lock import (
    BEYOND_LATEST,
    DAY_MS,
    LATEST_MS,
    DefaultRetention,
    ObjectLockConfiguration,
    ObjectLockError,
    Retention,
    RetentionMode,
    change_refusal,
    check_future,
    configuration_document,
    delete_refusal,
    iso_date,
    legal_hold_document,
    lock_request,
    parse_configuration,
    parse_date,
    parse_legal_hold,
    parse_retention,
    retention_document,
)

GOV, COMP = RetentionMode.GOVERNANCE, RetentionMode.COMPLIANCE
NOW = 1_800_000_000_000

modes = st.sampled_from(list(RetentionMode))
times = st.integers(0, 4_000_000_000_000)
retentions = st.none() | st.builds(Retention, modes, times)


def test_a_version_under_retention_in_force_is_not_deleted_and_passed_retention_binds_nothing() -> None:
    assert delete_refusal(Retention(COMP, NOW + 1), None, NOW, bypass=True)
    assert delete_refusal(Retention(GOV, NOW + 1), None, NOW, bypass=False)
    assert delete_refusal(Retention(GOV, NOW + 1), None, NOW, bypass=True) == ""
    assert delete_refusal(Retention(COMP, NOW), None, NOW, bypass=False) == ""
    assert delete_refusal(None, False, NOW, bypass=False) == ""


def test_a_legal_hold_refuses_every_delete_even_with_the_bypass() -> None:
    assert delete_refusal(None, True, NOW, bypass=True)
    assert delete_refusal(Retention(GOV, NOW - 1), True, NOW, bypass=True)


@given(retentions, st.booleans(), times, st.booleans())
def test_a_delete_allowed_without_bypass_is_allowed_with_it_and_later(
    retention: Retention | None, hold: bool, now: int, bypass: bool
) -> None:
    if not delete_refusal(retention, hold, now, False):
        assert not delete_refusal(retention, hold, now, bypass)
        assert not delete_refusal(retention, hold, now + DAY_MS, False)


@given(retentions, times)
def test_compliance_in_force_is_never_deleted(retention: Retention | None, now: int) -> None:
    if retention is not None and retention.mode is COMP and retention.binds(now):
        assert delete_refusal(retention, False, now, bypass=True)


def test_compliance_retention_may_be_extended_never_shortened_removed_or_changed() -> None:
    old = Retention(COMP, NOW + DAY_MS)
    assert change_refusal(old, Retention(COMP, NOW + 2 * DAY_MS), NOW, bypass=False) == ""
    assert change_refusal(old, Retention(COMP, NOW + 1), NOW, bypass=True)
    assert change_refusal(old, None, NOW, bypass=True)
    assert change_refusal(old, Retention(GOV, NOW + 3 * DAY_MS), NOW, bypass=True)


def test_governance_retention_is_shortened_or_removed_only_with_the_bypass() -> None:
    old = Retention(GOV, NOW + DAY_MS)
    assert change_refusal(old, Retention(GOV, NOW + 2 * DAY_MS), NOW, bypass=False) == ""
    assert change_refusal(old, Retention(GOV, NOW + 1), NOW, bypass=False)
    assert change_refusal(old, Retention(GOV, NOW + 1), NOW, bypass=True) == ""
    assert change_refusal(old, None, NOW, bypass=False)
    assert change_refusal(old, None, NOW, bypass=True) == ""
    assert change_refusal(old, Retention(COMP, NOW + DAY_MS), NOW, bypass=False)  # another mode


@given(retentions, retentions, times)
def test_passed_or_absent_retention_allows_any_change(
    old: Retention | None, new: Retention | None, now: int
) -> None:
    if old is None or not old.binds(now):
        assert change_refusal(old, new, now, bypass=False) == ""


def test_a_date_in_the_past_is_invalid_argument() -> None:
    with pytest.raises(ObjectLockError) as e:
        check_future(Retention(GOV, NOW), NOW)
    assert e.value.code == "InvalidArgument"
    assert e.value.message == "The retain until date must be in the future!"
    check_future(Retention(GOV, NOW + 1), NOW)


def test_default_retention_counts_days_or_years_from_creation() -> None:
    assert DefaultRetention(GOV, days=2).retention(NOW) == Retention(GOV, NOW + 2 * DAY_MS)
    assert DefaultRetention(COMP, years=1).retention(NOW) == Retention(COMP, NOW + 365 * DAY_MS)


def test_dates_parse_as_iso_8601_and_answer_as_amazon_writes_them() -> None:
    ms = parse_date("2030-01-02T03:04:05.678Z")
    assert iso_date(ms) == "2030-01-02T03:04:05.678Z"
    assert parse_date("2030-01-02") == parse_date("2030-01-02T00:00:00Z")
    assert parse_date("2030-01-02T01:00:00+01:00") == parse_date("2030-01-02T00:00:00Z")
    with pytest.raises(ValueError):
        parse_date("tomorrow")


@given(st.integers(-62_135_596_800_000, LATEST_MS))
def test_every_date_iso_date_writes_parses_back_to_its_millisecond(ms: int) -> None:
    assert parse_date(iso_date(ms)) == ms


def test_a_date_later_than_9999_in_utc_is_invalid_argument_everywhere_it_is_read() -> None:
    """R35's F2 (fails before its fix): 9999-12-31 with a negative offset is year 10000 in UTC, which no
    client and no iso_date writes; the header and PutObjectRetention's document refuse it alike."""
    assert parse_date("9999-12-31T23:59:59.999Z") == LATEST_MS
    late = "9999-12-31T23:59:59-23:59"
    for read in (
        lambda: parse_date(late),
        lambda: lock_request("COMPLIANCE", late, None),
        lambda: parse_retention(
            f"<Retention><Mode>COMPLIANCE</Mode><RetainUntilDate>{late}</RetainUntilDate></Retention>".encode()
        ),
    ):
        with pytest.raises(ObjectLockError) as e:
            read()
        assert (e.value.code, e.value.message) == ("InvalidArgument", BEYOND_LATEST)


@given(st.integers(LATEST_MS + 1, 10**16) | st.integers(-(10**16), -62_135_596_800_001))
def test_iso_date_writes_any_kept_value_as_the_nearest_date_there_is(ms: int) -> None:
    """A value kept before parse_date refused it never fails a read (R35's F2: GET/HEAD answered 500)."""
    assert iso_date(ms) in ("9999-12-31T23:59:59.999Z", "0001-01-01T00:00:00.000Z")


def test_write_headers_need_mode_and_date_together() -> None:
    request = lock_request("COMPLIANCE", "2030-01-02T00:00:00Z", "ON")
    assert request.retention == Retention(COMP, parse_date("2030-01-02"))
    assert request.legal_hold is True
    assert not lock_request(None, None, None).named
    for mode, until in (("GOVERNANCE", None), (None, "2030-01-02")):
        with pytest.raises(ObjectLockError) as e:
            lock_request(mode, until, None)
        assert e.value.code == "InvalidArgument"
        assert "must both be supplied" in e.value.message


@pytest.mark.parametrize(
    ("mode", "until", "hold"),
    [("FOREVER", "2030-01-02", None), ("GOVERNANCE", "soon", None), (None, None, "on"), (None, None, "")],
)
def test_bad_write_headers_are_invalid_argument(
    mode: str | None, until: str | None, hold: str | None
) -> None:
    with pytest.raises(ObjectLockError) as e:
        lock_request(mode, until, hold)
    assert e.value.code == "InvalidArgument"


def _config(rule: str) -> bytes:
    return (
        b'<ObjectLockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        b"<ObjectLockEnabled>Enabled</ObjectLockEnabled>" + rule.encode() + b"</ObjectLockConfiguration>"
    )


def test_a_configuration_round_trips_with_days_years_or_no_rule() -> None:
    for config in (
        ObjectLockConfiguration(),
        ObjectLockConfiguration(DefaultRetention(GOV, days=30)),
        ObjectLockConfiguration(DefaultRetention(COMP, years=2)),
    ):
        assert parse_configuration(configuration_document(config)) == config
    rule = "<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule>"
    assert parse_configuration(_config(rule)).default == DefaultRetention(GOV, days=1)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"<ObjectLockConfiguration/>", "MalformedXML"),
        (b"<ObjectLockConfiguration><ObjectLockEnabled>Disabled</ObjectLockEnabled></ObjectLockConfiguration>",
         "MalformedXML"),
        (b"not xml", "MalformedXML"),
        (_config("<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days><Years>1</Years>"
                 "</DefaultRetention></Rule>"), "MalformedXML"),
        (_config("<Rule><DefaultRetention><Mode>GOVERNANCE</Mode></DefaultRetention></Rule>"),
         "MalformedXML"),
        (_config("<Rule><DefaultRetention><Days>1</Days></DefaultRetention></Rule>"), "MalformedXML"),
        (_config("<Rule><DefaultRetention><Mode>LOCKED</Mode><Days>1</Days></DefaultRetention></Rule>"),
         "MalformedXML"),
        (_config("<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>0</Days></DefaultRetention></Rule>"),
         "InvalidArgument"),
        (_config("<Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Years>-1</Years></DefaultRetention></Rule>"),
         "InvalidArgument"),
        (_config("<Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Years>101</Years></DefaultRetention></Rule>"),
         "InvalidArgument"),
    ],
)  # fmt: skip
def test_a_configuration_amazon_refuses_is_refused(body: bytes, code: str) -> None:
    with pytest.raises(ObjectLockError) as e:
        parse_configuration(body)
    assert e.value.code == code


def test_retention_and_legal_hold_documents_round_trip() -> None:
    retention = Retention(COMP, parse_date("2030-01-02T03:04:05.006Z"))
    assert parse_retention(retention_document(retention)) == retention
    assert parse_retention(b"<Retention/>") is None
    assert parse_legal_hold(legal_hold_document(True)) is True
    assert parse_legal_hold(legal_hold_document(False)) is False
    for body in (b"<Retention><Mode>GOVERNANCE</Mode></Retention>", b"<LegalHold/>", b"<Retention>"):
        with pytest.raises(ObjectLockError):
            (parse_legal_hold if body.startswith(b"<Legal") else parse_retention)(body)
