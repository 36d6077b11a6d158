"""A bucket's CORS rules (issue 33, item 3), written from Amazon's S3 reference (PutBucketCors, CORSRule,
"Using cross-origin resource sharing", the OPTIONS object appendix) and S3's recorded answers: the
document's checks, first-match evaluation and the headers of a preflight's and an actual request's answer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds import s3_cors
from pyozone.hdds.s3_cors import CORSConfiguration, CORSRule
from pyozone.s3g import cors
from pyozone.s3g.errors import S3Error, S3ErrorCode

NS = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'


def document(*rules: str, namespace: bool = True) -> bytes:
    return f"<CORSConfiguration {NS if namespace else ''}>{''.join(rules)}</CORSConfiguration>".encode()


def rule(*members: str) -> str:
    return f"<CORSRule>{''.join(members)}</CORSRule>"


def refusal(body: bytes) -> tuple[S3ErrorCode, str]:
    with pytest.raises(S3Error) as e:
        cors.parse(body)
    return e.value.code, e.value.message


GET_ANY = rule("<AllowedMethod>GET</AllowedMethod>", "<AllowedOrigin>*</AllowedOrigin>")


# ------------------------------------------------------------------ the document
def test_a_document_is_read_with_every_member_in_its_order() -> None:
    config = cors.parse(
        document(
            rule(
                "<ID>first</ID>",
                "<AllowedOrigin>https://b.example</AllowedOrigin>",
                "<AllowedOrigin>http://a.example:80</AllowedOrigin>",
                "<AllowedMethod>PUT</AllowedMethod><AllowedMethod>GET</AllowedMethod>",
                "<AllowedHeader>x-amz-*</AllowedHeader><AllowedHeader>Content-Type</AllowedHeader>",
                "<ExposeHeader>ETag</ExposeHeader>",
                "<MaxAgeSeconds>3000</MaxAgeSeconds>",
            ),
            GET_ANY,
        )
    )
    assert config == CORSConfiguration(
        (
            CORSRule(
                ("PUT", "GET"),
                ("https://b.example", "http://a.example:80"),
                ("x-amz-*", "Content-Type"),
                ("ETag",),
                "first",
                3000,
            ),
            CORSRule(("GET",), ("*",)),
        )
    )


def test_the_namespace_is_optional() -> None:
    assert cors.parse(document(GET_ANY, namespace=False)) == cors.parse(document(GET_ANY))


def test_an_empty_origin_is_kept() -> None:
    config = cors.parse(document(rule("<AllowedMethod>GET</AllowedMethod>", "<AllowedOrigin/>")))
    assert config.rules[0].allowed_origins == ("",)


@pytest.mark.parametrize(
    "body",
    [
        document(),  # no rule
        document("<CORSRule/>"),
        document(rule("<AllowedMethod>GET</AllowedMethod>")),  # no origin
        document(rule("<AllowedOrigin>*</AllowedOrigin>")),  # no method
        document(GET_ANY, "<Other/>"),
        document(rule("<AllowedMethod>GET</AllowedMethod>", "<AllowedOrigin>*</AllowedOrigin>", "<Bad/>")),
        document(
            rule(
                "<AllowedMethod>GET</AllowedMethod>",
                "<AllowedOrigin>*</AllowedOrigin>",
                "<MaxAgeSeconds>soon</MaxAgeSeconds>",
            )
        ),
        document(
            rule(
                "<AllowedMethod>GET</AllowedMethod>",
                "<AllowedOrigin>*</AllowedOrigin>",
                "<MaxAgeSeconds>-1</MaxAgeSeconds>",
            )
        ),
        document(
            rule(
                "<AllowedMethod>GET</AllowedMethod>",
                "<AllowedOrigin>*</AllowedOrigin>",
                "<MaxAgeSeconds>1</MaxAgeSeconds><MaxAgeSeconds>2</MaxAgeSeconds>",
            )
        ),
        document(
            rule(
                "<AllowedMethod>GET</AllowedMethod>",
                "<AllowedOrigin>*</AllowedOrigin>",
                "<ID>a</ID><ID>b</ID>",
            )
        ),
        b"<CORSConfiguration><CORSRule>",
        b"<Other/>",
    ],
)
def test_a_document_off_the_schema_is_malformed(body: bytes) -> None:
    assert refusal(body)[0] is S3ErrorCode.MalformedXML


@pytest.mark.parametrize("method", ["MYMETHOD", "OPTIONS", "get", "PATCH", ""])
def test_a_method_s3_does_not_allow_is_named(method: str) -> None:
    body = document(rule(f"<AllowedMethod>{method}</AllowedMethod>", "<AllowedOrigin>*</AllowedOrigin>"))
    assert refusal(body) == (
        S3ErrorCode.InvalidRequest,
        f"Found unsupported HTTP method in CORS config. Unsupported method is {method}",
    )


def test_an_origin_with_two_wildcards_is_refused() -> None:
    body = document(
        rule("<AllowedMethod>GET</AllowedMethod>", "<AllowedOrigin>*example*.com</AllowedOrigin>")
    )
    assert refusal(body) == (
        S3ErrorCode.InvalidRequest,
        'AllowedOrigin "*example*.com" can not have more than one wildcard.',
    )


def test_an_allowed_header_with_two_wildcards_is_refused() -> None:
    body = document(
        rule("<AllowedMethod>GET</AllowedMethod>", "<AllowedOrigin>*</AllowedOrigin>",
             "<AllowedHeader>x-*-*</AllowedHeader>")
    )  # fmt: skip
    assert refusal(body) == (
        S3ErrorCode.InvalidRequest, 'AllowedHeader "x-*-*" can not have more than one wildcard.'
    )  # fmt: skip


def test_at_most_100_rules() -> None:
    assert len(cors.parse(document(*[GET_ANY] * 100)).rules) == 100
    assert refusal(document(*[GET_ANY] * 101)) == (
        S3ErrorCode.InvalidRequest, "The number of CORS rules should not exceed allowed limit of 100 rules."
    )  # fmt: skip


def test_at_most_64_kb() -> None:
    padded = document(GET_ANY) + b" " * (s3_cors.MAX_CONFIGURATION_BYTES - len(document(GET_ANY)))
    assert len(cors.parse(padded).rules) == 1
    assert refusal(padded + b" ")[0] is S3ErrorCode.MaxMessageLengthExceeded


def test_an_id_of_at_most_255_characters() -> None:
    def with_id(n: int) -> bytes:
        return document(rule(f"<ID>{'i' * n}</ID>", "<AllowedMethod>GET</AllowedMethod>",
                             "<AllowedOrigin>*</AllowedOrigin>"))  # fmt: skip

    assert cors.parse(with_id(255)).rules[0].id == "i" * 255
    assert refusal(with_id(256))[0] is S3ErrorCode.InvalidArgument


# ------------------------------------------------------------------ the document's round trip
_TEXT = st.text(alphabet="abcXYZ019-_.:/ ", max_size=12).map(str.strip)
_ONE_STAR = st.one_of(_TEXT, st.tuples(_TEXT, _TEXT).map(lambda p: f"{p[0]}*{p[1]}".strip()))
_RULES = st.builds(
    CORSRule,
    allowed_methods=st.lists(st.sampled_from(sorted(s3_cors.METHODS)), min_size=1, max_size=5).map(tuple),
    allowed_origins=st.lists(_ONE_STAR, min_size=1, max_size=4).map(tuple),
    allowed_headers=st.lists(_ONE_STAR, max_size=4).map(tuple),
    expose_headers=st.lists(_TEXT, max_size=3).map(tuple),
    id=st.one_of(st.none(), _TEXT),
    max_age_seconds=st.one_of(st.none(), st.integers(0, s3_cors.MAX_AGE_SECONDS)),
)


@given(
    st.lists(_RULES, min_size=1, max_size=s3_cors.MAX_RULES).map(
        lambda rules: CORSConfiguration(tuple(rules))
    )
)
def test_a_configuration_reads_back_as_written(config: CORSConfiguration) -> None:
    assert cors.parse(s3_cors.document(config)) == config
    assert s3_cors.parse(s3_cors.document(config)) == config  # as OM keeps it, as the gateway reads it


# ------------------------------------------------------------------ matching
RULES = CORSConfiguration(
    (
        CORSRule(("GET",), ("*suffix",)),
        CORSRule(("GET",), ("start*end",)),
        CORSRule(("GET",), ("prefix*",)),
        CORSRule(("PUT",), ("*.put",), ("x-amz-*", "Content-Type")),
        CORSRule(("GET", "HEAD"), ("https://app.example",), (), ("ETag",), None, 600),
    )
)


@pytest.mark.parametrize(
    ("origin", "matched"),
    [("foo.suffix", 0), ("startend", 1), ("start1end", 1), ("prefix", 2), ("prefix.suffix", 0),
     ("https://app.example", 4)],
)  # fmt: skip
def test_the_first_rule_matching_origin_and_method_answers(origin: str, matched: int) -> None:
    """s3-tests' test_cors_origin_response: `*` matches any run of characters, none included, and a
    pattern is anchored at both ends."""
    assert RULES.first_match(origin, "GET") is RULES.rules[matched]


NOT_NAMED = ["foo.bar", "foo.suffix.get", "0start12end", "bla.prefix", "foo.put", "https://app.example/",
             "http://app.example", "HTTPS://APP.EXAMPLE"]  # fmt: skip


@pytest.mark.parametrize("origin", NOT_NAMED)
def test_an_origin_no_rule_names_matches_none(origin: str) -> None:
    assert RULES.first_match(origin, "GET") is None


def test_the_method_must_be_one_of_the_rule_s() -> None:
    assert RULES.first_match("foo.put", "PUT") is RULES.rules[3]
    assert RULES.first_match("foo.put", "DELETE") is None
    assert RULES.first_match("https://app.example", "HEAD") is RULES.rules[4]


def test_every_requested_header_must_be_allowed_without_regard_to_case() -> None:
    assert RULES.first_match("a.put", "PUT", ("x-amz-meta-colour", "content-type")) is RULES.rules[3]
    assert RULES.first_match("a.put", "PUT", ("x-amz-meta-colour", "authorization")) is None
    assert RULES.first_match("https://app.example", "GET", ("x-anything",)) is None  # none allowed
    assert cors.requested_headers("X-Amz-Date,Content-Type , ,x-b") == ("x-amz-date", "content-type", "x-b")


# ------------------------------------------------------------------ answers
def test_a_preflight_answer_carries_the_rule_s_headers() -> None:
    headers = {"Origin": "a.put", "Access-Control-Request-Method": "PUT",
               "Access-Control-Request-Headers": "X-Amz-Date, content-type"}  # fmt: skip
    assert cors.preflight(RULES, "a.put", headers, on_object=True) == {
        "Access-Control-Allow-Origin": "a.put",
        "Access-Control-Allow-Credentials": "true",
        "Access-Control-Allow-Methods": "PUT",
        "Access-Control-Allow-Headers": "x-amz-date, content-type",
        "Vary": cors.VARY_VALUE,
    }
    answer = cors.preflight(RULES, "https://app.example", {"Access-Control-Request-Method": "HEAD"}, False)
    assert answer["Access-Control-Allow-Methods"] == "GET, HEAD"
    assert answer["Access-Control-Expose-Headers"] == "ETag"
    assert answer["Access-Control-Max-Age"] == "600"


def test_a_rule_for_any_origin_answers_a_star_without_credentials() -> None:
    config = CORSConfiguration((CORSRule(("GET",), ("https://x.example", "*")),))
    answer = cors.preflight(config, "http://random:1234", {"Access-Control-Request-Method": "GET"}, True)
    assert answer["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in answer


def _refused(config: CORSConfiguration | None, headers: dict[str, str], on_object: bool) -> S3Error:
    with pytest.raises(S3Error) as e:
        cors.preflight(config, headers.get("Origin", ""), headers, on_object)
    return e.value


def test_a_preflight_no_rule_allows_is_403_with_the_method_and_resource_type() -> None:
    error = _refused(RULES, {"Origin": "foo.bar", "Access-Control-Request-Method": "PUT"}, True)
    assert (error.code, error.code.status) == (S3ErrorCode.AccessForbidden, 403)
    assert error.message.startswith("CORSResponse: This CORS request is not allowed.")
    assert error.extra == {"Method": "PUT", "ResourceType": "OBJECT"}
    error = _refused(RULES, {"Origin": "foo.bar", "Access-Control-Request-Method": "PUT"}, False)
    assert error.extra["ResourceType"] == "BUCKET"


def test_a_preflight_to_a_bucket_without_rules_is_403_not_enabled() -> None:
    error = _refused(None, {"Origin": "a", "Access-Control-Request-Method": "PUT"}, True)
    assert (error.code, error.message) == (S3ErrorCode.AccessForbidden, cors.NOT_ENABLED)
    assert error.extra == {"Method": "PUT", "ResourceType": "BUCKET"}
    assert _refused(None, {"Origin": "a"}, True).extra["Method"] == "OPTIONS"


def test_a_preflight_without_origin_or_method_is_400() -> None:
    with pytest.raises(S3Error) as e:
        cors.check_origin({"Access-Control-Request-Method": "GET"})
    assert (e.value.code, e.value.code.status) == (S3ErrorCode.BadRequest, 400)
    assert e.value.message == "Insufficient information. Origin request header needed."
    assert cors.check_origin({"Origin": "a"}) == "a"
    assert _refused(RULES, {"Origin": "foo.suffix"}, True).code is S3ErrorCode.BadRequest


def test_an_actual_request_gets_the_matched_rule_s_headers_and_no_others() -> None:
    answer = cors.actual(RULES, {"Origin": "foo.suffix"}, "GET")
    assert answer == {
        "Access-Control-Allow-Origin": "foo.suffix",
        "Access-Control-Allow-Credentials": "true",
        "Access-Control-Allow-Methods": "GET",
        "Vary": cors.VARY_VALUE,
    }
    # its headers are not checked; Access-Control-Request-Method decides the method when it is sent
    assert cors.actual(RULES, {"Origin": "foo.suffix", "Access-Control-Request-Headers": "x-b"}, "GET")
    assert cors.actual(RULES, {"Origin": "foo.suffix", "Access-Control-Request-Method": "PUT"}, "GET") == {}
    assert cors.actual(RULES, {"Origin": "foo.bar"}, "GET") == {}
    assert cors.actual(RULES, {}, "GET") == {}
    assert cors.actual(None, {"Origin": "foo.suffix"}, "GET") == {}


def test_requested_headers_are_read_once_each_and_bounded() -> None:
    """Review R26 D8: an unauthenticated preflight may not ask for thousands of names."""
    assert cors.requested_headers("X-A, x-a,x-b , ,X-B") == ("x-a", "x-b")
    assert len(cors.requested_headers(",".join(["a"] * 4000))) == 1
    many = ",".join(f"h{i}" for i in range(cors.MAX_REQUESTED_HEADERS + 1))
    with pytest.raises(S3Error) as error:
        cors.requested_headers(many)
    assert error.value.code is S3ErrorCode.BadRequest
