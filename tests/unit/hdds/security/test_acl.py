"""Ozone's ACL entries (text form, merging, inheritance) and the native authorizer's decision."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.hdds.security.acl import (
    ACLIdentityType,
    AclScope,
    ACLType,
    Caller,
    Ownership,
    OzoneAcl,
    ResourceType,
    Target,
    add_acl,
    caller_name,
    certificate_caller,
    check_access,
    default_acls,
    inherit_defaults,
    parse_acls,
    parse_rights_names,
    remove_acl,
    rights_from_mask,
    rights_mask,
)
from pyozone.hdds.security.x509 import CertRole, Identity

A = OzoneAcl.parse

names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=12)
rights = st.frozensets(st.sampled_from(list(ACLType)), min_size=1)
named = st.sampled_from([t for t in ACLIdentityType if t.named])
everybody = st.sampled_from([t for t in ACLIdentityType if not t.named])
scopes = st.sampled_from(list(AclScope))
acls = st.one_of(
    st.builds(OzoneAcl, named, names, rights, scopes),
    st.builds(OzoneAcl, everybody, st.sampled_from(["", "WORLD", "ANONYMOUS"]), rights, scopes),
)


@given(acls)
def test_text_form_round_trips(acl: OzoneAcl) -> None:
    assert OzoneAcl.parse(str(acl)) == acl


@given(rights)
def test_rights_mask_round_trips(r: frozenset[ACLType]) -> None:
    assert rights_from_mask(rights_mask(r)) == r


def test_ozone_text_forms() -> None:
    assert A("user:alice:rw") == OzoneAcl(
        ACLIdentityType.USER, "alice", frozenset({ACLType.READ, ACLType.WRITE})
    )
    assert str(A("group:staff:a")) == "group:staff:a"
    assert A("world::r").name == "WORLD" and str(A("world::r")) == "world::r"
    assert A("WORLD:WORLD:r") == A("world::r")
    assert A("user:bob:rw[DEFAULT]").scope is AclScope.DEFAULT
    assert str(A("user:bob:wr[DEFAULT]")) == "user:bob:rw[DEFAULT]"
    assert A("user:bob:rw[ACCESS]") == A("user:bob:rw")
    assert str(A("ip:10.0.0.1:r")) == "ip:10.0.0.1:r"
    assert [str(a) for a in parse_acls("user:a:r,group:g:rl")] == ["user:a:r", "group:g:rl"]
    assert A("user:a:rwcldxyan").rights == frozenset(ACLType)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("user:alice", "TYPE:NAME:RIGHTS"),
        ("user:alice:rw:x", "TYPE:NAME:RIGHTS"),
        ("robot:alice:r", "not an ACL identity type"),
        ("user:alice:rq", "[q] ACL right is not recognized"),
        ("user::r", "needs a name"),
        ("world:bob:r", "names nobody"),
        ("user:alice:", "names no rights"),
        ("user:alice:r[SOMETIMES]", "[ACCESS] or [DEFAULT]"),
        ("user:al ice:r", "a space"),
    ],
)
def test_bad_text_is_refused_clearly(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=__import__("re").escape(why)):
        OzoneAcl.parse(text)


def test_grants_all_and_none() -> None:
    assert A("user:a:a").grants(ACLType.WRITE_ACL)
    assert A("user:a:r").grants(ACLType.READ) and not A("user:a:r").grants(ACLType.WRITE)
    assert not A("user:a:an").grants(ACLType.READ)  # NONE wins


def test_add_remove_merge_by_subject_and_scope() -> None:
    acls = (A("user:a:r"),)
    acls = add_acl(acls, A("user:a:w"))
    assert acls == (A("user:a:rw"),)
    acls = add_acl(acls, A("user:a:r[DEFAULT]"))
    assert acls == (A("user:a:rw"), A("user:a:r[DEFAULT]"))
    assert remove_acl(acls, A("user:a:r")) == (A("user:a:w"), A("user:a:r[DEFAULT]"))
    assert remove_acl(acls, A("user:a:rw")) == (A("user:a:r[DEFAULT]"),)
    assert remove_acl(acls, A("user:b:r")) == acls


def test_defaults_and_inheritance() -> None:
    mine = default_acls("alice", ("staff",), parse_rights_names("ALL"), parse_rights_names("READ,LIST"))
    assert mine == (A("user:alice:a"), A("group:staff:rl"))
    parent = (A("user:owner:a"), A("user:bob:r[DEFAULT]"), A("user:alice:w[DEFAULT]"))
    assert inherit_defaults(mine, parent) == (A("user:alice:wa"), A("group:staff:rl"), A("user:bob:r"))
    with pytest.raises(ValueError, match="not an ACL right"):
        parse_rights_names("READ,SING")


def test_caller_name_by_contract_4() -> None:
    assert caller_name(None, "alice", tls=False) == ("alice", False)
    assert caller_name(None, None, tls=False) == ("dr.who", False)
    user = Identity(CertRole.USER, "bob")
    assert caller_name(user, "alice", tls=True) == (
        "bob",
        False,
    )  # a user's certificate cannot act for another
    assert caller_name(None, "alice", tls=True) == ("dr.who", False)  # over TLS a claim alone is nobody
    s3g = Identity(CertRole.S3G, "s3g", "host")
    assert caller_name(s3g, "alice", tls=True) == ("alice", False)
    assert caller_name(s3g, None, tls=True) == ("s3g", True)
    assert caller_name(Identity(CertRole.OM, "om", "h"), "alice", tls=True) == ("om", True)
    assert caller_name(user, "alice") == ("bob", False)  # TLS unsaid: a certificate means TLS
    assert caller_name(None, "alice") == ("alice", False)
    with pytest.raises(ValueError):
        caller_name(None, "a@b", tls=False)


def test_a_certificate_caller_is_its_certificate_whatever_it_claims() -> None:
    """SCM takes no proxied user: the gateway's certificate is "s3g" even when it names root (issue 28
    defect 3)."""
    s3g = Identity(CertRole.S3G, "s3g", "host")
    assert certificate_caller(s3g, "root", tls=True) == "s3g"
    assert certificate_caller(Identity(CertRole.USER, "bob"), "root", tls=True) == "bob"
    assert certificate_caller(None, "root", tls=True) == "dr.who"
    assert certificate_caller(None, "root", tls=False) == "root"
    assert certificate_caller(None, None, tls=False) == "dr.who"
    with pytest.raises(ValueError):
        certificate_caller(None, "a@b", tls=False)


@pytest.mark.parametrize("role", [CertRole.DATANODE, CertRole.SCM, CertRole.JOIN])
def test_other_services_are_nobody(role: CertRole) -> None:
    """Only OM and the S3 gateway are services to OM: a datanode's certificate is no administrator."""
    peer = Identity(role, role.value, "host")
    assert caller_name(peer, None, tls=True) == ("dr.who", False)
    assert caller_name(peer, "root", tls=True) == ("dr.who", False)


def test_a_claim_is_checked_only_where_it_is_believed() -> None:
    kerberos = "hdfs/nn1@EXAMPLE.COM"  # a HADOOP_USER_NAME no certificate could carry
    assert caller_name(Identity(CertRole.USER, "bob"), kerberos, tls=True) == ("bob", False)
    assert caller_name(Identity(CertRole.DATANODE, "dn", "h"), kerberos, tls=True) == ("dr.who", False)
    assert caller_name(None, kerberos, tls=True) == ("dr.who", False)
    for peer, tls in ((Identity(CertRole.S3G, "s3g", "h"), True), (None, False)):
        with pytest.raises(ValueError, match="not a valid user name"):
            caller_name(peer, kerberos, tls=tls)


# ---------------------------------------------------------------------- the authorizer
ALICE = Caller("alice")
BOB = Caller("bob", ("staff",))
ADMIN = Caller("root", admin=True)
VOL = Ownership("alice", (A("user:alice:a"),))
BUCKET = Ownership("alice", (A("user:alice:a"),))
KEY = Ownership("alice", (A("user:alice:a"),))


def key_target(vol: Ownership = VOL, bucket: Ownership = BUCKET, key: Ownership | None = KEY) -> Target:
    return Target(ResourceType.KEY, "vol", vol, "b", bucket, "k", key)


def with_acl(o: Ownership, *entries: str) -> Ownership:
    return Ownership(o.owner, o.acls + tuple(A(e) for e in entries))


def test_admins_and_owners_pass() -> None:
    for right in ACLType:
        assert check_access(ADMIN, right, key_target()) is None
        assert check_access(ALICE, right, key_target()) is None  # the volume's owner
    bucket_owner = Caller("carol")
    target = key_target(vol=with_acl(VOL, "user:carol:r"), bucket=Ownership("carol"))
    assert check_access(bucket_owner, ACLType.DELETE, target) is None


def test_a_stranger_is_refused_naming_what_they_lacked() -> None:
    denial = check_access(BOB, ACLType.READ, key_target())
    assert denial is not None
    assert (
        denial.message() == "User bob doesn't have READ permission to access VOLUME Volume:vol Bucket:b Key:k"
    )
    vol = with_acl(VOL, "user:bob:r")
    denial = check_access(BOB, ACLType.READ, key_target(vol=vol))
    assert denial is not None and denial.resource is ResourceType.KEY
    assert "doesn't have READ permission to access KEY Volume:vol Bucket:b Key:k" in denial.message()


@pytest.mark.parametrize(
    ("right", "vol", "bucket", "key", "allowed"),
    [
        # READ: volume READ, bucket READ, key READ
        (ACLType.READ, "user:bob:r", "user:bob:r", "user:bob:r", True),
        (ACLType.READ, "user:bob:r", "user:bob:r", "", False),
        (ACLType.READ, "user:bob:r", "", "user:bob:r", False),
        (ACLType.READ, "", "user:bob:r", "user:bob:r", False),
        # groups and the world speak for bob too
        (ACLType.READ, "world::r", "group:staff:r", "group:staff:a", True),
        # WRITE: bucket WRITE too
        (ACLType.WRITE, "user:bob:r", "user:bob:r", "user:bob:w", False),
        (ACLType.WRITE, "user:bob:r", "user:bob:w", "user:bob:w", True),
        # DELETE: the key's DELETE, the bucket's READ
        (ACLType.DELETE, "user:bob:r", "user:bob:r", "user:bob:d", True),
        (ACLType.DELETE, "user:bob:r", "user:bob:r", "user:bob:r", False),
        # CREATE: bucket WRITE, the key's own entries do not count
        (ACLType.CREATE, "user:bob:r", "user:bob:w", "", True),
        (ACLType.CREATE, "user:bob:r", "user:bob:r", "user:bob:a", False),
        # NONE in an entry denies what that entry says; ALL grants all
        (ACLType.READ, "user:bob:r", "user:bob:r", "user:bob:an", False),
        (ACLType.WRITE_ACL, "user:bob:r", "user:bob:r", "user:bob:a", True),
        (ACLType.READ_ACL, "user:bob:r", "user:bob:r", "user:bob:x", True),
    ],
)
def test_key_rights_table(right: ACLType, vol: str, bucket: str, key: str, allowed: bool) -> None:
    target = key_target(
        vol=with_acl(VOL, *filter(None, [vol])),
        bucket=with_acl(BUCKET, *filter(None, [bucket])),
        key=with_acl(KEY, *filter(None, [key])),
    )
    assert (check_access(BOB, right, target) is None) is allowed


def test_a_missing_key_is_left_to_its_parents() -> None:
    target = key_target(vol=with_acl(VOL, "user:bob:r"), bucket=with_acl(BUCKET, "user:bob:r"), key=None)
    assert check_access(BOB, ACLType.READ, target) is None


def test_volumes_and_buckets() -> None:
    vol_target = Target(ResourceType.VOLUME, "vol", with_acl(VOL, "user:bob:l"))
    assert check_access(BOB, ACLType.LIST, vol_target) is None
    assert check_access(BOB, ACLType.DELETE, vol_target) is not None
    assert check_access(ALICE, ACLType.DELETE, vol_target) is None  # the owner
    assert check_access(ALICE, ACLType.CREATE, vol_target) is not None  # volumes: administrators only
    assert check_access(ADMIN, ACLType.CREATE, vol_target) is None
    new_bucket = Target(ResourceType.BUCKET, "vol", with_acl(VOL, "user:bob:w"), "b", None)
    assert check_access(BOB, ACLType.CREATE, new_bucket) is None
    assert (
        check_access(BOB, ACLType.CREATE, Target(ResourceType.BUCKET, "vol", with_acl(VOL, "user:bob:r")))
        is not None
    )
    bucket = Target(
        ResourceType.BUCKET, "vol", with_acl(VOL, "user:bob:r"), "b", with_acl(BUCKET, "user:bob:l")
    )
    assert check_access(BOB, ACLType.LIST, bucket) is None
    assert check_access(BOB, ACLType.DELETE, bucket) is not None
    with pytest.raises(ValueError, match="needs its bucket"):
        Target(ResourceType.KEY, "vol", VOL, "b", None, "k")


# ---------------------------------------------------------------------- the S3 gateway's anonymous caller
def test_an_anonymous_caller_reads_only_what_the_objects_own_world_entry_grants() -> None:
    """Issue 33, item 5: S3's AllUsers READ on an object lets an unsigned request read it whatever its
    bucket and volume grant (Amazon's public-read object in a private bucket); nothing else does."""
    from pyozone.hdds.security.acl import ANONYMOUS_CALLER

    public_key = with_acl(KEY, "world::r")
    assert check_access(ANONYMOUS_CALLER, ACLType.READ, key_target(key=public_key)) is None
    assert check_access(ANONYMOUS_CALLER, ACLType.READ, key_target()) is not None
    assert (
        check_access(ANONYMOUS_CALLER, ACLType.WRITE, key_target(key=with_acl(KEY, "world::a"))) is not None
    )
    assert check_access(ANONYMOUS_CALLER, ACLType.READ, key_target(key=None)) is not None  # no such key
    named = with_acl(KEY, "user:@anonymous:r", "group:staff:r", "ip:0.0.0.0:r")
    assert check_access(ANONYMOUS_CALLER, ACLType.READ, key_target(key=named)) is not None
    public_bucket = Target(ResourceType.BUCKET, "vol", VOL, "b", with_acl(BUCKET, "world::rl"))
    assert check_access(ANONYMOUS_CALLER, ACLType.LIST, public_bucket) is None
    assert check_access(ANONYMOUS_CALLER, ACLType.DELETE, public_bucket) is not None
    owned = Target(ResourceType.BUCKET, "vol", Ownership("@anonymous"), "b", Ownership("@anonymous"))
    assert check_access(ANONYMOUS_CALLER, ACLType.READ, owned) is not None  # never an owner
