"""S3 bucket policies (issue 33, item 5), written from Amazon's reference: the policy grammar and the
MalformedPolicy answers of PutBucketPolicy, "Policy evaluation logic" (an explicit Deny wins, then an
Allow, else the default), "Bucket policy examples" (public read, a Deny on a prefix, SourceIp, HTTPS
only, Referer) and "Amazon S3 condition key examples" (s3:prefix); property tests of the wildcard matcher
against fnmatch and of Deny's precedence."""

from __future__ import annotations

import fnmatch
import json
import re
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.s3_policy import (
    MAX_POLICY_BYTES,
    Decision,
    PolicyError,
    RequestContext,
    evaluate,
    glob_match,
    is_public,
    parse,
)

BUCKET = "photos"


def doc(*statements: dict[str, Any], version: str = "2012-10-17") -> bytes:
    return json.dumps({"Version": version, "Statement": list(statements)}).encode()


def allow(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                            "Resource": f"arn:aws:s3:::{BUCKET}/*"}  # fmt: skip
    return {**base, **fields}


def deny(**fields: Any) -> dict[str, Any]:
    return allow(Effect="Deny", **fields)


def ask(
    policy: bytes, action: str = "s3:GetObject", key: str | None = "a.jpg", user: str | None = None,
    **values: str,
) -> Decision:  # fmt: skip
    resource = f"arn:aws:s3:::{BUCKET}" + (f"/{key}" if key is not None else "")
    context = {name.replace("__", ":").replace("_", "-").lower(): (v,) for name, v in values.items()}
    return evaluate(parse(policy, BUCKET), RequestContext(user, action, resource, context))


PUBLIC_READ = doc(allow(Sid="PublicRead", Action=["s3:GetObject", "s3:GetObjectVersion"]))
"""Amazon's "Granting read-only permission to a public anonymous user"."""


# ------------------------------------------------------------------ parsing: what PutBucketPolicy refuses
@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json", "Policies must be valid JSON and the first byte must be '{'"),
        (b'["Statement"]', "Policies must be valid JSON and the first byte must be '{'"),
        (
            b'{"Version": "2012-10-17", "Version": "2012-10-17", "Statement": []}',
            "Policies must be valid JSON and the first byte must be '{'",
        ),
        (b'{"Version": "2012-10-17"}', "Missing required field Statement"),
        (doc(), "Could not parse the policy: Statement is empty!"),
        (doc(allow(), version="2020-01-01"), "The policy must contain a valid version string"),
        (json.dumps({"Statement": [allow()], "Extra": 1}).encode(), "Unknown field Extra"),
        (json.dumps({"Statement": "x"}).encode(), "Statements must be either a JSON object or a JSON list"),
        (doc({k: v for k, v in allow().items() if k != "Effect"}), "Missing required field Effect"),
        (doc(allow(Effect="Permit")), "Invalid effect: Permit"),
        (doc({k: v for k, v in allow().items() if k != "Principal"}), "Missing required field Principal"),
        (doc(allow(Principal={"AWS": "arn:aws:iam::123456789012:root"})), "Invalid principal in policy"),
        (doc(allow(Principal={"Service": "cloudfront.amazonaws.com"})), "Invalid principal in policy"),
        (doc(allow(Principal={"AWS": []})), "Invalid principal in policy"),
        (doc(allow(Principal="alice")), "Invalid principal in policy"),
        (doc({k: v for k, v in allow().items() if k != "Action"}), "Missing required field Action"),
        (doc(allow(Action="s3:GetObjects")), "Policy has invalid action"),
        (doc(allow(Action="ec2:RunInstances")), "Policy has invalid action"),
        (doc(allow(Action=[])), "Policy has invalid action"),
        (doc(allow(NotAction="s3:PutObject")), "Policy has invalid action"),  # both Action and NotAction
        (doc({k: v for k, v in allow().items() if k != "Resource"}), "Missing required field Resource"),
        (doc(allow(Resource="*")), "Policy has invalid resource"),
        (doc(allow(Resource="arn:aws:s3:::other/*")), "Policy has invalid resource"),
        (doc(allow(Resource="photos/*")), "Policy has invalid resource"),
        (
            doc(allow(Resource=f"arn:aws:s3:::{BUCKET}")),
            "Action does not apply to any resource(s) in statement",
        ),
        (doc(allow(Action="s3:ListBucket")), "Action does not apply to any resource(s) in statement"),
        (doc(allow(Sid="a"), allow(Sid="a")), "Statement IDs (SID) in a single policy must be unique."),
        (
            doc(allow(Condition={"StringSortOf": {"aws:Referer": "x"}})),
            "Invalid Condition type : StringSortOf",
        ),
        (doc(allow(Condition={"StringEquals": {"Referer": "x"}})), "Policy has an invalid condition key"),
        (
            doc(allow(Condition={"IpAddress": {"aws:SourceIp": "10.0.0.300/8"}})),
            "Invalid IP address in condition",
        ),
        (doc(allow(Condition={"Bool": {"aws:SecureTransport": "yes"}})), "Invalid Condition value for Bool"),
        (doc(allow(Condition="x")), "Policy has an invalid condition block"),
    ],
)
def test_a_malformed_policy_is_refused_in_amazon_s_words(body: bytes, message: str) -> None:
    with pytest.raises(PolicyError) as error:
        parse(body, BUCKET)
    assert error.value.code == "MalformedPolicy"
    assert error.value.message.startswith(message)


@pytest.mark.parametrize(
    "statement",
    [
        allow(NotPrincipal={"AWS": "alice"}, Principal=None),
        allow(Condition={"NumericLessThan": {"s3:max-keys": "10"}}),
        allow(Condition={"ForAnyValue:StringEquals": {"aws:Referer": "x"}}),
        allow(Condition={"StringEquals": {"s3:ExistingObjectTag/team": "x"}}),
        allow(Resource="arn:aws:s3:::photos/${aws:username}/*"),
    ],
)
def test_what_amazon_has_and_pyozone_does_not_is_not_implemented(statement: dict[str, Any]) -> None:
    statement = {k: v for k, v in statement.items() if v is not None}
    with pytest.raises(PolicyError) as error:
        parse(doc(statement), BUCKET)
    assert error.value.code == "NotImplemented"


def test_the_size_bound_is_20_kb_of_the_document_as_sent() -> None:
    body = doc(allow(Sid="x" * (MAX_POLICY_BYTES - len(doc(allow(Sid=""))))))
    assert len(body) == MAX_POLICY_BYTES
    parse(body, BUCKET)
    with pytest.raises(PolicyError, match="less than 20 KB"):
        parse(body + b" ", BUCKET)
    parse(body + b" ", BUCKET, limit=None)  # what OM kept is read whatever its length


def test_the_accepted_shapes() -> None:
    """One statement or a list, 2008-10-17 or no Version, actions in any case and with wildcards, a user
    by name, by ARN or as a canonical user, a resource whose bucket part is a wildcard."""
    one = json.dumps({"Statement": allow(Action="S3:getobject")}).encode()
    assert ask(one) is Decision.ALLOW
    assert ask(doc(allow(), version="2008-10-17")) is Decision.ALLOW
    users = {"AWS": ["alice", "arn:aws:iam:::user/bob"], "CanonicalUser": "carol"}
    named = doc(
        allow(Principal=users, Action="s3:*", Resource=["arn:aws:s3:::pho*", "arn:aws:s3:::photos/*"])
    )
    for user in ("alice", "bob", "carol"):
        assert ask(named, "s3:PutObject", user=user) is Decision.ALLOW
    assert ask(named, "s3:PutObject", user="dave") is Decision.DEFAULT
    assert ask(named, "s3:PutObject") is Decision.DEFAULT  # anonymous: not a named user


# ------------------------------------------------------------------ evaluation
def test_public_read_lets_anyone_get_what_it_names_and_nothing_else() -> None:
    assert ask(PUBLIC_READ) is Decision.ALLOW
    assert ask(PUBLIC_READ, user="alice") is Decision.ALLOW
    assert ask(PUBLIC_READ, "s3:GetObjectVersion") is Decision.ALLOW
    assert ask(PUBLIC_READ, "s3:PutObject") is Decision.DEFAULT
    assert ask(PUBLIC_READ, "s3:ListBucket", key=None) is Decision.DEFAULT
    assert ask(PUBLIC_READ, "s3:GetObjectAcl") is Decision.DEFAULT
    assert is_public(parse(PUBLIC_READ, BUCKET))


def test_an_explicit_deny_wins_over_any_allow() -> None:
    policy = doc(
        allow(Action="s3:*", Resource=[f"arn:aws:s3:::{BUCKET}", f"arn:aws:s3:::{BUCKET}/*"]),
        deny(Action="s3:*", Resource=f"arn:aws:s3:::{BUCKET}/private/*"),
    )
    assert ask(policy, "s3:GetObject", "public/a") is Decision.ALLOW
    assert ask(policy, "s3:GetObject", "private/a") is Decision.DENY
    assert ask(policy, "s3:DeleteObject", "private/a", user="alice") is Decision.DENY
    assert ask(policy, "s3:ListBucket", None) is Decision.ALLOW


def test_not_action_and_not_resource() -> None:
    """ "Deny everything but reads", and "Deny outside the public prefix"."""
    policy = doc(
        deny(NotAction=["s3:Get*", "s3:List*"], Action=None, Principal="*"),
        deny(Action="s3:GetObject", Resource=None, NotResource=f"arn:aws:s3:::{BUCKET}/public/*"),
        allow(Action="s3:GetObject"),
    )
    policy = json.dumps(
        {
            "Statement": [
                {k: v for k, v in s.items() if v is not None} for s in json.loads(policy)["Statement"]
            ]
        }
    ).encode()
    assert ask(policy, "s3:PutObject", "public/a") is Decision.DENY
    assert ask(policy, "s3:GetObject", "public/a") is Decision.ALLOW
    assert ask(policy, "s3:GetObject", "secret/a") is Decision.DENY


def test_source_ip() -> None:
    """ "Restricting access to specific IP addresses": 54.240.143.0/24 except 54.240.143.188."""
    condition = {"IpAddress": {"aws:SourceIp": "54.240.143.0/24"},
                 "NotIpAddress": {"aws:SourceIp": ["54.240.143.188/32", "2001:db8::/32"]}}  # fmt: skip
    policy = doc(allow(Action="s3:*", Condition=condition))
    assert ask(policy, aws__SourceIp="54.240.143.7") is Decision.ALLOW
    assert ask(policy, aws__SourceIp="54.240.143.188") is Decision.DEFAULT
    assert ask(policy, aws__SourceIp="54.240.144.1") is Decision.DEFAULT
    assert ask(policy, aws__SourceIp="not an address") is Decision.DEFAULT
    assert ask(policy) is Decision.DEFAULT  # no address known: IpAddress does not hold
    assert not is_public(parse(policy, BUCKET))
    everywhere = doc(allow(Condition={"IpAddress": {"aws:SourceIp": "0.0.0.0/0"}}))
    assert is_public(parse(everywhere, BUCKET))


def test_https_only_and_referer() -> None:
    """ "Deny requests that do not use HTTPS" and "Restricting access to a specific HTTP referer"."""
    policy = doc(
        allow(
            Condition={"StringLike": {"aws:Referer": ["https://www.example.com/*", "https://example.com/*"]}}
        ),
        deny(Action="s3:*", Condition={"Bool": {"aws:SecureTransport": False}}),
    )
    assert ask(policy, aws__Referer="https://example.com/page", aws__SecureTransport="true") is Decision.ALLOW
    assert ask(policy, aws__Referer="https://evil.example/", aws__SecureTransport="true") is Decision.DEFAULT
    assert ask(policy, aws__Referer="https://example.com/page", aws__SecureTransport="false") is Decision.DENY


def test_prefix_condition_on_listing() -> None:
    """ "Amazon S3 condition key examples": list only under home/alice/."""
    statement = allow(Principal={"AWS": "alice"}, Action="s3:ListBucket", Resource=f"arn:aws:s3:::{BUCKET}",
                      Condition={"StringLike": {"s3:prefix": ["home/alice/*", ""]}})  # fmt: skip
    policy = doc(statement)
    assert ask(policy, "s3:ListBucket", None, "alice", s3__prefix="home/alice/docs") is Decision.ALLOW
    assert ask(policy, "s3:ListBucket", None, "alice", s3__prefix="home/bob/") is Decision.DEFAULT


def test_negated_operators_and_if_exists_on_an_absent_key() -> None:
    """A key the request does not carry: a negated operator holds, a positive one does not unless
    IfExists; Null tests presence."""
    assert ask(doc(allow(Condition={"StringNotEquals": {"aws:Referer": "x"}}))) is Decision.ALLOW
    assert ask(doc(allow(Condition={"StringEquals": {"aws:Referer": "x"}}))) is Decision.DEFAULT
    assert ask(doc(allow(Condition={"StringEqualsIfExists": {"aws:Referer": "x"}}))) is Decision.ALLOW
    assert ask(doc(allow(Condition={"Null": {"aws:Referer": "true"}}))) is Decision.ALLOW
    assert ask(doc(allow(Condition={"Null": {"aws:Referer": "false"}}))) is Decision.DEFAULT
    ignore_case = doc(allow(Condition={"StringEqualsIgnoreCase": {"s3:x-amz-acl": "PUBLIC-READ"}}))
    assert ask(ignore_case, s3__x_amz_acl="public-read") is Decision.ALLOW


def test_conditions_of_one_statement_all_hold() -> None:
    condition = {"StringEquals": {"aws:Referer": "r", "aws:UserAgent": "u"}}
    policy = doc(allow(Condition=condition))
    assert ask(policy, aws__Referer="r", aws__UserAgent="u") is Decision.ALLOW
    assert ask(policy, aws__Referer="r", aws__UserAgent="v") is Decision.DEFAULT


def test_a_fixed_user_condition_is_not_public() -> None:
    fixed = doc(allow(Condition={"StringEquals": {"aws:username": "alice"}}))
    assert not is_public(parse(fixed, BUCKET))
    assert is_public(parse(doc(allow(Condition={"StringLike": {"aws:username": "a*"}})), BUCKET))
    assert not is_public(parse(doc(allow(Principal={"AWS": "alice"})), BUCKET))
    assert not is_public(parse(doc(deny()), BUCKET))


def test_cidrs_that_together_cover_every_address_are_public() -> None:
    """R34's F4: 0.0.0.0/1 and 128.0.0.0/1 are 0.0.0.0/0, which only a literal /0 was taken for."""
    halves = ["0.0.0.0/1", "128.0.0.0/1"]
    assert is_public(parse(doc(allow(Condition={"IpAddress": {"aws:SourceIp": halves}})), BUCKET))
    both = ["10.0.0.0/8", "::/1", "8000::/1"]
    assert is_public(parse(doc(allow(Condition={"IpAddress": {"aws:SourceIp": both}})), BUCKET))
    some = ["0.0.0.0/1", "2001:db8::/32"]
    assert not is_public(parse(doc(allow(Condition={"IpAddress": {"aws:SourceIp": some}})), BUCKET))


def test_a_policy_nested_past_python_s_stack_is_malformed() -> None:
    """R34's F6: 9,000 nested brackets were an uncaught RecursionError (a 500)."""
    with pytest.raises(PolicyError) as e:
        parse(b'{"Statement": ' + b"[" * 9000 + b"]" * 9000 + b"}", BUCKET)
    assert e.value.code == "MalformedPolicy"


def test_long_patterns_against_long_values_match_by_their_pieces() -> None:
    """R34's F1: a pattern of thousands of pieces against a 7,000-character key (seconds of the event loop
    a character at a time) is found by its pieces in order."""
    pattern = "*" + "?a*" * 3000 + "b"
    assert not glob_match(pattern, "xa" * 3500)
    assert glob_match(pattern, "xa" * 3500 + "b")
    assert glob_match("a*b?d*", "a--b-d") and not glob_match("a*b?d", "abd")


# ------------------------------------------------------------------ properties
PATTERN = st.text(alphabet="ab*?/", max_size=12)
TEXT = st.text(alphabet="ab/", max_size=12)


@given(PATTERN, TEXT)
def test_glob_matches_as_fnmatch_does_with_star_and_question_mark(pattern: str, text: str) -> None:
    expected = re.fullmatch(fnmatch.translate(pattern), text, re.DOTALL) is not None
    assert glob_match(pattern, text) is expected


def test_glob_does_not_backtrack_exponentially() -> None:
    started = time.perf_counter()
    assert not glob_match("a*" * 200 + "b", "a" * 5000)
    assert time.perf_counter() - started < 5


ACTION_OF = {"Allow": "s3:GetObject", "Deny": "s3:GetObject", "Other": "s3:PutObject"}
EFFECTS = st.lists(st.sampled_from(["Allow", "Deny", "Other"]), min_size=1, max_size=6)


@given(EFFECTS)
def test_any_applicable_deny_decides_deny_else_any_allow_allow(effects: list[str]) -> None:
    """ "Policy evaluation logic": order does not matter; a statement that does not apply (Other: another
    action) changes nothing."""
    statements = [
        allow(Sid=f"s{i}", Effect="Allow" if e == "Other" else e, Action=ACTION_OF[e])
        for i, e in enumerate(effects)
    ]
    expected = (
        Decision.DENY if "Deny" in effects else Decision.ALLOW if "Allow" in effects else Decision.DEFAULT
    )
    assert ask(doc(*statements)) is expected
    assert ask(doc(*reversed(statements))) is expected
