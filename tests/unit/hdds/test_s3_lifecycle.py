"""S3 lifecycle rules (hdds/s3_lifecycle.py), from Amazon's "Lifecycle configuration elements", the
LifecycleExpiration reference and "Managing delete markers": the document's checks and errors, the
document written back, and when each action falls due (days rounded up to the next midnight UTC)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.s3_lifecycle import (
    DAY_MS,
    MAX_RULES,
    LifecycleConfiguration,
    LifecycleError,
    ObjectFacts,
    document,
    due_ms,
    parse,
)


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


def doc(*rules: str) -> bytes:
    return (
        '<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        + "".join(f"<Rule>{r}</Rule>" for r in rules)
        + "</LifecycleConfiguration>"
    ).encode()


EXPIRE_3 = (
    "<ID>r</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status>"
    "<Expiration><Days>3</Days></Expiration>"
)


def refusal(body: bytes) -> tuple[str, str]:
    with pytest.raises(LifecycleError) as error:
        parse(body)
    return error.value.code, error.value.message


# ------------------------------------------------------------------ the document
def test_a_rule_reads_and_writes_back() -> None:
    config = parse(doc(EXPIRE_3))
    (rule,) = config.rules
    assert (rule.id, rule.enabled, rule.filter.prefix, rule.expiration_days) == ("r", True, "logs/", 3)
    assert parse(document(config), limit=None) == config


def test_every_action_and_filter_round_trips() -> None:
    body = doc(
        "<ID>a</ID><Filter><And><Prefix>p/</Prefix><Tag><Key>k</Key><Value>v</Value></Tag>"
        "<ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>100</ObjectSizeLessThan></And>"
        "</Filter><Status>Disabled</Status><Expiration><Date>2030-01-01T00:00:00Z</Date></Expiration>"
        "<NoncurrentVersionExpiration><NoncurrentDays>5</NoncurrentDays>"
        "<NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration>",
        "<ID>b</ID><Filter/><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true"
        "</ExpiredObjectDeleteMarker></Expiration><AbortIncompleteMultipartUpload><DaysAfterInitiation>7"
        "</DaysAfterInitiation></AbortIncompleteMultipartUpload>",
        "<ID>c</ID><Filter><Tag><Key>t</Key><Value>1</Value></Tag></Filter><Status>Enabled</Status>"
        "<Expiration><Days>1</Days></Expiration>",
    )
    config = parse(body)
    a, b, c = config.rules
    assert a.filter.tags == (("k", "v"),) and a.filter.conjunction and not a.enabled
    assert (a.filter.size_greater_than, a.filter.size_less_than) == (10, 100)
    assert a.expiration_date_ms == ms("2030-01-01") and (a.noncurrent_days, a.newer_noncurrent_versions) == (
        5,
        2,
    )
    assert b.expired_object_delete_marker and b.abort_days == 7
    assert c.filter.tags == (("t", "1"),) and not c.filter.conjunction
    written = document(config)
    assert b"<Date>2030-01-01T00:00:00.000Z</Date>" in written
    assert parse(written, limit=None) == config


def test_the_legacy_prefix_reads_and_writes_back() -> None:
    config = parse(
        doc("<ID>x</ID><Prefix>a/</Prefix><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>")
    )
    assert config.rules[0].filter.legacy and b"<Prefix>a/</Prefix><Status>" in document(config)


@pytest.mark.parametrize("prefix", [" tmp/", "logs ", " ", "\ttabs/"])
def test_the_legacy_prefix_is_read_as_sent_spaces_and_all(prefix: str) -> None:
    """R33 F1: S3 matches a prefix byte for byte; a stripped legacy Prefix named other keys."""
    escaped = prefix.replace("\t", "&#9;")
    config = parse(
        doc(
            f"<ID>x</ID><Prefix>{escaped}</Prefix><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"
        )
    )
    assert config.rules[0].filter.prefix == prefix
    assert parse(document(config), limit=None).rules[0].filter.prefix == prefix


@pytest.mark.parametrize(
    ("filter_xml", "answered"),
    [
        ("<Filter><Prefix></Prefix></Filter>", b"<Filter><Prefix /></Filter>"),
        ("<Filter><Prefix/></Filter>", b"<Filter><Prefix /></Filter>"),
        ("<Filter/>", b"<Filter />"),
        ("<Filter><And><Prefix></Prefix><Tag><Key>a</Key><Value>b</Value></Tag></And></Filter>",
         b"<Filter><And><Prefix /><Tag>"),
    ],
)  # fmt: skip
def test_an_empty_prefix_is_answered_back_as_sent(filter_xml: str, answered: bytes) -> None:
    """R33 F9: `<Filter><Prefix></Prefix></Filter>` was answered `<Filter />`; Amazon answers the filter
    as sent (clients comparing what they put with what they get saw a change)."""
    config = parse(
        doc(f"<ID>x</ID>{filter_xml}<Status>Enabled</Status><Expiration><Days>1</Days></Expiration>")
    )
    written = document(config)
    assert answered in written
    assert parse(written, limit=None) == config


def test_a_rule_without_an_id_gets_one() -> None:
    config = parse(doc("<Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"))
    assert config.rules[0].id and parse(document(config), limit=None).rules[0].id == config.rules[0].id


@pytest.mark.parametrize(
    "body",
    [
        b"not xml",
        b"<Other/>",
        doc(),  # no rule
        b"<LifecycleConfiguration><Other/></LifecycleConfiguration>",
        doc("<Filter/><Status>On</Status><Expiration><Days>1</Days></Expiration>"),  # a bad Status
        doc("<Filter/><Expiration><Days>1</Days></Expiration>"),  # no Status
        doc("<Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"),  # no Filter nor Prefix
        doc("<Filter/><Prefix/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"),  # both
        doc("<Filter/><Status>Enabled</Status><Expiration/>"),  # an empty Expiration
        doc(
            "<Filter/><Status>Enabled</Status><Expiration><Days>1</Days><Date>2030-01-01T00:00:00Z</Date></Expiration>"
        ),
        doc(
            "<Filter/><Status>Enabled</Status><Expiration><Days>1</Days>"
            "<ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>"
        ),
        doc("<Filter/><Status>Enabled</Status><Expiration><Days>x</Days></Expiration>"),
        doc("<Filter/><Status>Enabled</Status><Expiration><Date>soon</Date></Expiration>"),
        doc(
            "<Filter/><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>yes</ExpiredObjectDeleteMarker></Expiration>"
        ),
        doc(
            "<Filter><Prefix>a</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"
        ),
        doc("<Filter/><Status>Enabled</Status><NoncurrentVersionExpiration/>"),
        doc("<Filter/><Status>Enabled</Status><AbortIncompleteMultipartUpload/>"),
        doc("<Filter/><Status>Enabled</Status><Unknown/><Expiration><Days>1</Days></Expiration>"),
    ],
)
def test_documents_off_the_schema_are_malformed_xml(body: bytes) -> None:
    assert refusal(body)[0] == "MalformedXML"


@pytest.mark.parametrize(
    "and_xml",
    [
        "<And></And>",
        "<And/>",
        "<And><Prefix></Prefix></And>",
        "<And><Prefix>logs/</Prefix></And>",
        "<And><Tag><Key>a</Key><Value>b</Value></Tag></And>",
        "<And><ObjectSizeGreaterThan>1</ObjectSizeGreaterThan></And>",
    ],
)
def test_an_and_of_fewer_than_two_predicates_is_malformed_xml(and_xml: str) -> None:
    """R33 F4: Amazon's LifecycleRuleAndOperator joins "two or more predicates"; an empty And was a
    rule over the whole bucket."""
    body = doc(f"<Filter>{and_xml}</Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>")
    assert refusal(body)[0] == "MalformedXML"


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("<Filter/><Status>Enabled</Status><Expiration><Days>0</Days></Expiration>",
         "'Days' for Expiration action must be a positive integer"),
        ("<Filter/><Status>Enabled</Status><Expiration><Days>-1</Days></Expiration>",
         "'Days' for Expiration action must be a positive integer"),
        ("<Filter/><Status>Enabled</Status><Expiration><Date>2030-01-01T10:00:00Z</Date></Expiration>",
         "'Date' must be at midnight GMT"),
        ("<Filter/><Status>Enabled</Status><Expiration><Date>2026-01-01T00:00:00.0004Z</Date></Expiration>",
         "'Date' must be at midnight GMT"),  # R33 F8: the 0.4 ms was truncated away
        ("<Filter/><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>0</NoncurrentDays>"
         "</NoncurrentVersionExpiration>",
         "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer"),
        ("<Filter/><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>0"
         "</DaysAfterInitiation></AbortIncompleteMultipartUpload>",
         "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer"),
        (f"<ID>{'i' * 256}</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>",
         "ID length should not exceed allowed limit of 255"),
    ],
)  # fmt: skip
def test_values_out_of_range_are_invalid_argument(rule: str, message: str) -> None:
    assert refusal(doc(rule)) == ("InvalidArgument", message)


@pytest.mark.parametrize(
    "action",
    [
        "<Expiration><Days>{n}</Days></Expiration>",
        "<NoncurrentVersionExpiration><NoncurrentDays>{n}</NoncurrentDays></NoncurrentVersionExpiration>",
        "<AbortIncompleteMultipartUpload><DaysAfterInitiation>{n}</DaysAfterInitiation>"
        "</AbortIncompleteMultipartUpload>",
    ],
)
def test_days_are_amazon_s_integer_at_most_2_31_minus_1(action: str) -> None:
    """R33 F8: Days 2^31 and beyond were kept; Amazon's Days is an Integer (a Java int): MalformedXML."""
    assert parse(doc("<Filter/><Status>Enabled</Status>" + action.format(n=2**31 - 1))).rules
    for n in (2**31, 9999999999999999999):
        assert refusal(doc("<Filter/><Status>Enabled</Status>" + action.format(n=n)))[0] == "MalformedXML"


def test_a_date_at_midnight_gmt_in_another_zone_is_that_midnight() -> None:
    body = doc(
        "<Filter/><Status>Enabled</Status><Expiration><Date>2026-01-01T01:00:00+01:00</Date></Expiration>"
    )
    assert parse(body).rules[0].expiration_date_ms == ms("2026-01-01T00:00:00")


def test_a_tag_without_a_value_selects_the_objects_whose_tag_has_no_value() -> None:
    """Amazon's user guide ("Adding filters to Lifecycle rules"): "If you specify only a Key element and
    no Value element, the rule will apply only to objects that match the tag key and that do not have a
    value specified" (its API reference's Tag says Value is required; the guide's behaviour is kept)."""
    config = parse(
        doc(
            "<Filter><Tag><Key>a</Key></Tag></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"
        )
    )
    scope = config.rules[0].filter
    assert scope.matches("k", 1, (("a", ""),)) and not scope.matches("k", 1, (("a", "b"),))


def test_a_repeated_id_is_invalid_argument() -> None:
    assert refusal(doc(EXPIRE_3, EXPIRE_3)) == (
        "InvalidArgument",
        "Rule ID must be unique. Found same ID for more than one rule",
    )


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        (["<Filter/><Status>Enabled</Status>"], "At least one action needs to be specified in a rule"),
        (["<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><Expiration>"
          "<ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>"],
         "ExpiredObjectDeleteMarker cannot be specified with Tags."),
        (["<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status>"
          "<AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation>"
          "</AbortIncompleteMultipartUpload>"],
         "AbortIncompleteMultipartUpload cannot be specified with Tags."),
        (["<Filter><ObjectSizeLessThan>5</ObjectSizeLessThan></Filter><Status>Enabled</Status>"
          "<AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation>"
          "</AbortIncompleteMultipartUpload>"],
         "AbortIncompleteMultipartUpload cannot be specified with Object Size."),
        (["<Filter><And><Tag><Key>k</Key><Value>1</Value></Tag><Tag><Key>k</Key><Value>2</Value></Tag></And>"
          "</Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"],
         "Duplicate Tag Keys are not allowed."),
        (["<Filter><And><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>10"
          "</ObjectSizeLessThan></And></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"],
         "'ObjectSizeLessThan' has to be a value greater than 'ObjectSizeGreaterThan'."),
        (["<ID>a</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>",
          "<ID>b</ID><Prefix/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"],
         "Base level prefix cannot be used in Lifecycle V2, prefixes are only supported in the Filter."),
        (["<ID>a</ID><Prefix/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>",
          "<ID>b</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"],
         "Filter element can only be used in Lifecycle V2."),
    ],
)  # fmt: skip
def test_rules_s3_cannot_apply_are_invalid_request(rules: list[str], message: str) -> None:
    assert refusal(doc(*rules)) == ("InvalidRequest", message)


def test_legacy_rules_with_overlapping_prefixes_for_one_action_are_refused() -> None:
    legacy = "<ID>{}</ID><Prefix>{}</Prefix><Status>Enabled</Status>{}"
    days = "<Expiration><Days>1</Days></Expiration>"
    noncurrent = (
        "<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration>"
    )
    assert refusal(doc(legacy.format("a", "logs/", days), legacy.format("b", "logs/old/", days))) == (
        "InvalidRequest",
        "Found overlapping prefixes 'logs/' and 'logs/old/' for same action type 'Expiration'",
    )
    assert refusal(doc(legacy.format("a", "", days), legacy.format("b", "x", days)))[0] == "InvalidRequest"
    # different actions, or disjoint prefixes, may overlap; so may Filter rules
    assert (
        len(parse(doc(legacy.format("a", "logs/", days), legacy.format("b", "logs/old/", noncurrent))).rules)
        == 2
    )
    assert len(parse(doc(legacy.format("a", "logs/", days), legacy.format("b", "data/", days))).rules) == 2
    v2 = "<ID>{}</ID><Filter><Prefix>{}</Prefix></Filter><Status>Enabled</Status>" + days
    assert len(parse(doc(v2.format("a", "logs/"), v2.format("b", "logs/old/"))).rules) == 2


def test_at_most_1000_rules() -> None:
    rule = "<ID>{}</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>"
    assert len(parse(doc(*(rule.format(i) for i in range(MAX_RULES)))).rules) == MAX_RULES
    code, _ = refusal(doc(*(rule.format(i) for i in range(MAX_RULES + 1))))
    assert code == "InvalidRequest"


def test_transitions_are_not_implemented_once_the_rest_is_valid() -> None:
    transition = "<Transition><Days>30</Days><StorageClass>GLACIER</StorageClass></Transition>"
    assert refusal(doc(f"<Filter/><Status>Enabled</Status>{transition}"))[0] == "NotImplemented"
    noncurrent = (
        "<NoncurrentVersionTransition><NoncurrentDays>30</NoncurrentDays><StorageClass>GLACIER</StorageClass>"
        "</NoncurrentVersionTransition>"
    )
    assert refusal(doc(f"<Filter/><Status>Enabled</Status>{noncurrent}"))[0] == "NotImplemented"
    # an invalid rule beside it is answered first
    assert (
        refusal(doc(f"<Filter/><Status>Enabled</Status>{transition}", EXPIRE_3, EXPIRE_3))[0]
        == "InvalidArgument"
    )


def test_an_oversized_document_is_refused() -> None:
    assert refusal(b" " * (1024 * 1024 + 1))[0] == "MaxMessageLengthExceeded"


# ------------------------------------------------------------------ when actions fall due
def test_days_round_up_to_the_next_midnight_utc() -> None:
    # Amazon's example: created 2014-01-15 10:30 UTC, Days 3: expires 2014-01-19 00:00 UTC
    assert due_ms(ms("2014-01-15T10:30:00"), 3) == ms("2014-01-19")
    assert due_ms(ms("2014-01-15T00:00:00"), 3) == ms("2014-01-18")  # a midnight stays


@given(st.integers(0, 4_000_000_000_000), st.integers(1, 3650))
def test_due_is_a_midnight_at_least_days_after_and_within_a_day_of_it(start: int, days: int) -> None:
    due = due_ms(start, days)
    assert due % DAY_MS == 0
    assert start + days * DAY_MS <= due < start + (days + 1) * DAY_MS


@given(st.integers(0, 4_000_000_000_000), st.integers(1, 3650), st.integers(-2 * DAY_MS, 2 * DAY_MS))
def test_a_current_version_expires_from_its_due_time_on(start: int, days: int, offset: int) -> None:
    config = parse(doc(f"<Filter/><Status>Enabled</Status><Expiration><Days>{days}</Days></Expiration>"))
    obj = ObjectFacts("k", 1, (), start)
    now = due_ms(start, days) + offset
    assert config.current_expires(obj, now) is (offset >= 0)


def test_a_date_expires_every_matching_current_version_from_then_on() -> None:
    config = parse(
        doc("<Filter/><Status>Enabled</Status><Expiration><Date>2030-01-01T00:00:00Z</Date></Expiration>")
    )
    young = ObjectFacts("k", 1, (), ms("2029-12-31T23:59:00"))
    assert not config.current_expires(young, ms("2029-12-31T23:59:59"))
    assert config.current_expires(young, ms("2030-01-01"))


def test_disabled_rules_take_no_action() -> None:
    config = parse(doc("<Filter/><Status>Disabled</Status><Expiration><Days>1</Days></Expiration>"))
    assert not config.current_expires(ObjectFacts("k", 1, (), 0), 100 * DAY_MS)


def rule_with_filter(filter_xml: str) -> LifecycleConfiguration:
    return parse(
        doc(f"<Filter>{filter_xml}</Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>")
    )


@pytest.mark.parametrize(
    ("filter_xml", "key", "size", "tags", "expires"),
    [
        ("<Prefix>logs/</Prefix>", "logs/a", 1, (), True),
        ("<Prefix>logs/</Prefix>", "data/a", 1, (), False),
        ("<Tag><Key>t</Key><Value>1</Value></Tag>", "a", 1, (("t", "1"),), True),
        ("<Tag><Key>t</Key><Value>1</Value></Tag>", "a", 1, (("t", "2"),), False),
        ("<ObjectSizeGreaterThan>10</ObjectSizeGreaterThan>", "a", 10, (), False),
        ("<ObjectSizeGreaterThan>10</ObjectSizeGreaterThan>", "a", 11, (), True),
        ("<ObjectSizeLessThan>10</ObjectSizeLessThan>", "a", 10, (), False),
        ("<ObjectSizeLessThan>10</ObjectSizeLessThan>", "a", 9, (), True),
        ("<And><Prefix>p</Prefix><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>b</Key><Value>2</Value>"
         "</Tag></And>", "p1", 1, (("a", "1"), ("b", "2"), ("c", "3")), True),
        ("<And><Prefix>p</Prefix><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>b</Key><Value>2</Value>"
         "</Tag></And>", "p1", 1, (("a", "1"),), False),
    ],
)  # fmt: skip
def test_filters_select_by_prefix_tags_and_size(
    filter_xml: str, key: str, size: int, tags: tuple[tuple[str, str], ...], expires: bool
) -> None:
    assert (
        rule_with_filter(filter_xml).current_expires(ObjectFacts(key, size, tags, 0), 10 * DAY_MS) is expires
    )


def test_noncurrent_versions_expire_after_noncurrent_days_beyond_the_newer_kept() -> None:
    config = parse(
        doc(
            "<Filter/><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>2</NoncurrentDays>"
            "<NewerNoncurrentVersions>1</NewerNoncurrentVersions></NoncurrentVersionExpiration>"
        )
    )
    old = ObjectFacts("k", 1, (), 0)  # created long before it became noncurrent
    since = ms("2030-01-01T12:00:00")
    due = ms("2030-01-04")
    assert not config.noncurrent_expires(old, since, 1, due - 1)
    assert config.noncurrent_expires(old, since, 1, due)
    assert not config.noncurrent_expires(
        old, since, 0, due + 100 * DAY_MS
    )  # the newest noncurrent one is kept
    assert not config.current_expires(old, due)  # no Expiration: current versions stay


def test_expired_object_delete_markers_go_at_once_or_by_days() -> None:
    marker_rule = parse(
        doc(
            "<Filter><Prefix>a</Prefix></Filter><Status>Enabled</Status><Expiration>"
            "<ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>"
        )
    )
    assert marker_rule.removes_marker("a1", 0, 0) and not marker_rule.removes_marker("b1", 0, 0)
    off = parse(doc("<Filter/><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>false"
                    "</ExpiredObjectDeleteMarker></Expiration>"))  # fmt: skip
    assert not off.removes_marker("a", 0, 100 * DAY_MS)
    days = parse(doc("<Filter/><Status>Enabled</Status><Expiration><Days>2</Days></Expiration>"))
    assert not days.removes_marker("a", 0, 2 * DAY_MS - 1) and days.removes_marker("a", 0, 2 * DAY_MS)


def test_incomplete_uploads_abort_days_after_initiation() -> None:
    config = parse(
        doc(
            "<Filter><Prefix>up/</Prefix></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload>"
            "<DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>"
        )
    )
    started = ms("2030-01-01T23:00:00")
    assert not config.upload_aborts("up/x", started, ms("2030-01-02T23:59:59"))
    assert config.upload_aborts("up/x", started, ms("2030-01-03"))
    assert not config.upload_aborts("other", started, ms("2031-01-01"))


def test_the_service_looks_only_under_the_outermost_prefixes_of_rules_that_act() -> None:
    config = parse(
        doc(
            "<ID>a</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status>"
            "<Expiration><Days>1</Days></Expiration>",
            "<ID>b</ID><Filter><Prefix>logs/old/</Prefix></Filter><Status>Enabled</Status>"
            "<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration>",
            "<ID>c</ID><Filter><Prefix>data/</Prefix></Filter><Status>Disabled</Status>"
            "<Expiration><Days>1</Days></Expiration>",
            "<ID>d</ID><Filter><Prefix>up/</Prefix></Filter><Status>Enabled</Status>"
            "<AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation>"
            "</AbortIncompleteMultipartUpload>",
            "<ID>e</ID><Filter><Prefix>logs-</Prefix></Filter><Status>Enabled</Status>"
            "<Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>",
        )
    )
    assert config.key_prefixes() == ("logs-", "logs/")
    assert config.upload_prefixes() == ("up/",)
    every = parse(doc("<Filter/><Status>Enabled</Status><Expiration><Days>1</Days></Expiration>", EXPIRE_3))
    assert every.key_prefixes() == ("",) and every.upload_prefixes() == ()


@given(st.lists(st.text("ab/", max_size=4), max_size=6))
def test_outermost_prefixes_are_disjoint_in_order_and_cover_the_same_keys(prefixes: list[str]) -> None:
    rules = [
        f"<ID>{i}</ID><Filter><Prefix>{p}</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days>"
        "</Expiration>"
        for i, p in enumerate(prefixes)
    ]
    kept = parse(doc(*rules)).key_prefixes() if rules else ()
    assert list(kept) == sorted(kept)
    assert not any(b.startswith(a) for a in kept for b in kept if a != b)
    for key in ("", "a", "ab", "a/b", "b/a", "bb/", "/a"):
        assert any(key.startswith(p) for p in prefixes) == any(key.startswith(p) for p in kept)
