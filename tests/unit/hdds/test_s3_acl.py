"""S3 grants <-> Ozone's native ACLs (hdds/s3_acl.py; issue 33, item 5), from Amazon's "Access control list
(ACL) overview" (canned ACLs, grant headers, AccessControlPolicy) and Apache Ozone's S3Acl mapping."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.s3_acl import (
    ALL_USERS,
    AUTHENTICATED_USERS,
    EVERYONE,
    AclError,
    Grant,
    Grantee,
    Permission,
    canned,
    document,
    from_ozone,
    header_grants,
    owner_only,
    parse_policy,
    replace_shown,
    to_ozone,
    with_owner,
)
from pyozone.hdds.security.acl import OzoneAcl, ResourceType, parse_acls

BUCKET, KEY = ResourceType.BUCKET, ResourceType.KEY


def texts(acls: tuple[OzoneAcl, ...]) -> list[str]:
    return [str(a) for a in acls]


def test_each_permission_maps_as_ozones_gateway_maps_it() -> None:
    for permission, on_bucket, on_key in (
        (Permission.READ, "rl", "r"),
        (Permission.WRITE, "wcd", "w"),
        (Permission.READ_ACP, "x", "x"),
        (Permission.WRITE_ACP, "y", "y"),
        (Permission.FULL_CONTROL, "a", "a"),
    ):
        grants = [Grant(Grantee("bob"), permission)]
        assert texts(to_ozone(grants, BUCKET)) == [str(OzoneAcl.parse(f"user:bob:{on_bucket}"))]
        assert texts(to_ozone(grants, KEY)) == [str(OzoneAcl.parse(f"user:bob:{on_key}"))]
    assert texts(to_ozone([Grant(EVERYONE, Permission.READ)], BUCKET)) == ["world::rl"]


def test_a_grantees_grants_make_one_entry() -> None:
    grants = [Grant(Grantee("bob"), Permission.READ), Grant(Grantee("bob"), Permission.READ_ACP)]
    assert texts(to_ozone(grants, KEY)) == ["user:bob:rx"]


def test_native_entries_show_as_grants_and_the_owner_always_has_full_control() -> None:
    acls = parse_acls("user:alice:r,user:bob:rw,world::r,group:staff:a,user:carol:a[DEFAULT],user:dan:n")
    assert from_ozone(acls, "alice") == (
        Grant(Grantee("alice"), Permission.FULL_CONTROL),
        Grant(Grantee("bob"), Permission.READ),
        Grant(Grantee("bob"), Permission.WRITE),
        Grant(EVERYONE, Permission.READ),
    )


def test_a_put_is_the_whole_acl() -> None:
    """R37's F5, F12: what S3 cannot name (GROUP, DEFAULT scope) is removed, not kept granting."""
    current = parse_acls("user:alice:a,group:staff:r,world::r,user:bob:a[DEFAULT],anonymous::r,ip:10.0.0.1:r")
    kept = replace_shown(current, [Grant(Grantee("carol"), Permission.READ)], BUCKET)
    assert texts(kept) == ["user:carol:rl"]


def test_anonymous_and_ip_entries_show_as_all_users() -> None:
    """Ozone's check matches them for every caller (R37's F5): S3 shows them as the AllUsers they grant."""
    acls = parse_acls("user:alice:a,anonymous::r,ip:10.0.0.1:rx,world::r")
    assert from_ozone(acls, "alice") == (
        Grant(Grantee("alice"), Permission.FULL_CONTROL),
        Grant(EVERYONE, Permission.READ),
        Grant(EVERYONE, Permission.READ_ACP),
    )


def test_writing_back_what_get_answered_changes_nothing() -> None:
    """R37's F6: a bucket's `w` stays `w` and `r` stays `r`; a new permission gets its full mapping."""
    current = parse_acls("user:alice:a,user:bob:w,world::x,user:erin:r")
    shown_grants = from_ozone(current, "alice")
    assert replace_shown(current, shown_grants, BUCKET) == current
    more = (*shown_grants, Grant(Grantee("erin"), Permission.WRITE))
    assert texts(replace_shown(current, more, BUCKET)) == [
        "user:alice:a", "user:bob:w", "world::x", str(OzoneAcl.parse("user:erin:rwcd"))
    ]  # fmt: skip
    assert texts(replace_shown(current, [Grant(Grantee("bob"), Permission.READ)], BUCKET)) == ["user:bob:rl"]


def test_with_owner_puts_the_owners_full_control_first() -> None:
    """R37's F9: an ACL written without its owner still holds the owner's FULL_CONTROL."""
    carol = Grant(Grantee("carol"), Permission.READ)
    owner = Grant(Grantee("bob"), Permission.FULL_CONTROL)
    assert with_owner([carol], "bob") == (owner, carol)
    assert with_owner([carol, owner], "bob") == (owner, carol)


grantees = st.one_of(st.sampled_from(["bob", "carol", "dave"]).map(Grantee), st.just(EVERYONE))
grant_lists = st.lists(st.builds(Grant, grantees, st.sampled_from(list(Permission))), max_size=8)


@given(grant_lists, st.sampled_from([BUCKET, KEY]))
def test_round_trip(grants: list[Grant], resource: ResourceType) -> None:
    """Grants -> entries -> grants -> entries: the entries are the same (the grants, normalised)."""
    acls = to_ozone(grants, resource)
    shown = from_ozone(acls, "alice")
    assert to_ozone([g for g in shown if g.grantee != Grantee("alice")], resource) == acls
    assert from_ozone(to_ozone(shown, resource), "alice") == shown


@pytest.mark.parametrize(
    ("name", "resource", "expected"),
    [
        ("private", KEY, []),
        ("public-read", BUCKET, [Grant(EVERYONE, Permission.READ)]),
        ("public-read-write", BUCKET, [Grant(EVERYONE, Permission.READ), Grant(EVERYONE, Permission.WRITE)]),
        ("bucket-owner-read", KEY, [Grant(Grantee("bob"), Permission.READ)]),
        ("bucket-owner-full-control", KEY, [Grant(Grantee("bob"), Permission.FULL_CONTROL)]),
        ("bucket-owner-full-control", BUCKET, []),
    ],
)
def test_canned_acls(name: str, resource: ResourceType, expected: list[Grant]) -> None:
    assert canned(name, "alice", "bob", resource) == (
        Grant(Grantee("alice"), Permission.FULL_CONTROL),
        *expected,
    )


@pytest.mark.parametrize(
    ("name", "code"),
    [("authenticated-read", "NotImplemented"), ("aws-exec-read", "NotImplemented"),
     ("log-delivery-write", "NotImplemented"), ("public", "InvalidArgument")],
)  # fmt: skip
def test_canned_acls_without_a_grantee_or_unknown_are_refused(name: str, code: str) -> None:
    with pytest.raises(AclError) as e:
        canned(name, "alice", "alice", BUCKET)
    assert e.value.code == code


def test_grant_headers() -> None:
    headers = {
        "x-amz-grant-read": f'id="bob", uri="{ALL_USERS}"',
        "X-Amz-Grant-Full-Control": "id=carol",
    }
    assert header_grants(headers) == (
        Grant(Grantee("bob"), Permission.READ),
        Grant(EVERYONE, Permission.READ),
        Grant(Grantee("carol"), Permission.FULL_CONTROL),
    )


@pytest.mark.parametrize(
    ("headers", "code"),
    [
        ({"x-amz-grant-read": 'emailAddress="a@example.com"'}, "NotImplemented"),
        ({"x-amz-grant-read": f'uri="{AUTHENTICATED_USERS}"'}, "NotImplemented"),
        ({"x-amz-grant-read": 'uri="http://example.com/group"'}, "InvalidArgument"),
        ({"x-amz-grant-read": "bob"}, "InvalidArgument"),
        ({"x-amz-grant-read": ""}, "InvalidArgument"),
        ({"x-amz-grant-read": 'id="a/b"'}, "InvalidArgument"),
        ({"x-amz-grant-delete": 'id="bob"'}, "InvalidArgument"),
        ({"x-amz-grant-read": 'id="bob,id=carol"'}, "InvalidArgument"),  # one quoted id: R37's F15
        ({"x-amz-grant-read": ",".join(f'id="u{i}"' for i in range(101))}, "InvalidArgument"),
    ],
)
def test_bad_grant_headers(headers: dict[str, str], code: str) -> None:
    with pytest.raises(AclError) as e:
        header_grants(headers)
    assert e.value.code == code


def test_document_round_trips() -> None:
    grants = (Grant(Grantee("alice"), Permission.FULL_CONTROL), Grant(EVERYONE, Permission.READ))
    policy = parse_policy(document("alice", grants))
    assert (policy.owner, policy.grants) == ("alice", grants)


@pytest.mark.parametrize(
    "body",
    [
        b"not xml",
        b"<AccessControlPolicy/>",
        b"<Other><Owner><ID>a</ID></Owner><AccessControlList/></Other>",
        b"<AccessControlPolicy><Owner><ID>alice</ID></Owner></AccessControlPolicy>",
        b"<AccessControlPolicy><Owner><ID>alice</ID></Owner><AccessControlList><Grant><Grantee "
        b'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>bob</ID>'
        b"</Grantee><Permission>READ_ALL</Permission></Grant></AccessControlList></AccessControlPolicy>",
        b"<AccessControlPolicy><Owner><ID>alice</ID></Owner><AccessControlList><Grant><Grantee>"
        b"<ID>bob</ID></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>",
    ],
)
def test_a_malformed_policy_is_malformed_acl_error(body: bytes) -> None:
    with pytest.raises(AclError) as e:
        parse_policy(body)
    assert e.value.code == "MalformedACLError"


def test_owner_only() -> None:
    assert owner_only([Grant(Grantee("alice"), Permission.FULL_CONTROL)], "alice")
    assert owner_only([], "alice")
    assert not owner_only([Grant(Grantee("alice"), Permission.READ)], "alice")
    assert not owner_only([Grant(EVERYONE, Permission.READ)], "alice")
