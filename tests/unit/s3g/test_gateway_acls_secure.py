"""S3 ACLs through the gateway with OM's ozone.acl.enabled true (R37's findings, issue 33 item 5): a write's
ACL committed with it (F1), grants that never carry the bucket's ownership or quotas (F3, F11), WRITE_ACP
alone writing an ACL (F4), a PutAcl that is the whole ACL (F5, F12) and round-trips (F6), an object owner
who keeps its access (F9). s3v grants world::rwl, as an administrator does for S3 users (`ozone sh volume
addacl -a world::rwl /s3v`); alice and bob are both in group staff (ozone.om.group.rights' READ, LIST)."""

from __future__ import annotations

import getpass
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest

from pyozone.client.errors import OzoneClientError
from pyozone.hdds.security.acl import OzoneAcl, ResourceType
from pyozone.om.properties import PropertyManager
from pyozone.protocol.acl import ObjectPath
from tests.unit.s3g.gateway_thread import GatewayOnThread, gateway_on_thread, refused

T = TypeVar("T")
ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"
ACLS_ON = {
    "ozone.acl.enabled": "true",
    "ozone.administrators": getpass.getuser(),
    "hadoop.user.group.static.mapping.overrides": "alice=staff;bob=staff",
}


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayOnThread]:
    with gateway_on_thread(tmp_path_factory.mktemp("s3g-acls"), ACLS_ON) as running:
        world = OzoneAcl.parse("world::rwl")
        volume = ObjectPath(ResourceType.VOLUME, running.gateway.settings.volume)
        PropertyManager(running.om.core).change_acls(volume, lambda acls: (*acls, world))
        yield running


def native(secure: GatewayOnThread, bucket: str, key: str = "") -> list[str]:
    assert secure.gateway.client is not None
    resource = ResourceType.KEY if key else ResourceType.BUCKET
    path = ObjectPath(resource, secure.gateway.settings.volume, bucket, key)
    return [str(a) for a in secure.call(secure.gateway.client.get_acl(path))]


def as_user(secure: GatewayOnThread, user: str, call: Callable[[], Awaitable[T]]) -> T:
    """A native call (`ozone sh ...`) as `user`."""
    client = secure.gateway.client
    assert client is not None

    async def acting() -> T:
        with client.acting_for(user):
            return await call()

    return secure.call(acting())


def test_a_drop_box_writer_commits_bucket_owner_full_control_with_its_object(secure: GatewayOnThread) -> None:
    """carol may only WRITE alice's bucket: her upload naming `bucket-owner-full-control` (the grant Amazon
    documents for exactly this writer) succeeds, her object carrying both entries (on main: 403 for an
    object that was stored)."""
    alice, carol = secure.boto3("alice"), secure.boto3("carol")
    alice.create_bucket(Bucket="drop", ObjectOwnership="ObjectWriter")
    alice.put_bucket_acl(Bucket="drop", GrantWrite='id="carol"', GrantFullControl='id="alice"')
    carol.put_object(Bucket="drop", Key="report", Body=b"", ACL="bucket-owner-full-control")
    assert native(secure, "drop", "report") == ["user:carol:a", "user:alice:a"]
    acl = alice.get_object_acl(Bucket="drop", Key="report")
    assert acl["Owner"]["ID"] == "carol"
    assert [(g["Grantee"]["ID"], g["Permission"]) for g in acl["Grants"]] == [
        ("carol", "FULL_CONTROL"),
        ("alice", "FULL_CONTROL"),
    ]
    assert alice.get_object(Bucket="drop", Key="report")["Body"].read() == b""
    # a public grant the bucket blocks is refused before anything is written
    alice.put_public_access_block(Bucket="drop", PublicAccessBlockConfiguration={"BlockPublicAcls": True})
    assert refused(carol.put_object, Bucket="drop", Key="public", Body=b"", ACL="public-read") == (
        403,
        "AccessDenied",
    )
    assert refused(alice.head_object, Bucket="drop", Key="public") == (404, "404")


def test_a_write_acp_grantee_cannot_take_the_bucket(secure: GatewayOnThread) -> None:
    """S3's WRITE_ACP is Ozone's WRITE_ACL, which Ozone lets change a bucket's owner: here only the owner or
    an administrator may (F3: bob took the bucket and deleted alice's policy)."""
    alice = secure.boto3("alice")
    alice.create_bucket(Bucket="take", ObjectOwnership="ObjectWriter")
    alice.put_bucket_acl(Bucket="take", GrantWriteACP='id="bob"', GrantFullControl='id="alice"')
    client = secure.gateway.client
    assert client is not None
    volume = secure.gateway.settings.volume
    with pytest.raises(OzoneClientError) as e:
        as_user(secure, "bob", lambda: client.set_bucket_owner(volume, "take", "bob"))
    assert e.value.result == "PERMISSION_DENIED"
    assert secure.call(client.bucket_info(volume, "take")).owner == "alice"


def test_a_write_grantee_cannot_change_the_quotas(secure: GatewayOnThread) -> None:
    """public-read-write gives every signed user S3's WRITE (Ozone's CREATE, WRITE, DELETE), never the
    bucket's quotas (F11: carol's namespace quota of 1 stopped alice's writes)."""
    alice = secure.boto3("alice")
    alice.create_bucket(Bucket="quota", ObjectOwnership="ObjectWriter")
    alice.put_bucket_acl(Bucket="quota", ACL="public-read-write")
    client = secure.gateway.client
    assert client is not None
    volume = secure.gateway.settings.volume
    with pytest.raises(OzoneClientError) as e:
        as_user(secure, "carol", lambda: client.set_bucket_quota(volume, "quota", namespace=1))
    assert e.value.result == "PERMISSION_DENIED"
    alice.put_object(Bucket="quota", Key="x1", Body=b"")
    alice.put_object(Bucket="quota", Key="x2", Body=b"")


def test_create_bucket_records_its_acl(secure: GatewayOnThread) -> None:
    alice = secure.boto3("alice")
    alice.create_bucket(Bucket="born-public", ObjectOwnership="ObjectWriter", ACL="public-read")
    assert native(secure, "born-public") == ["user:alice:a", "world::rl"]


def add_native(secure: GatewayOnThread, bucket: str, key: str, *entries: str) -> None:
    """`ozone sh bucket|key addacl` as the administrator."""
    resource = ResourceType.KEY if key else ResourceType.BUCKET
    path = ObjectPath(resource, secure.gateway.settings.volume, bucket, key)
    acls = tuple(OzoneAcl.parse(e) for e in entries)
    PropertyManager(secure.om.core).change_acls(path, lambda current: (*current, *acls))


def grants(acl: dict[str, Any]) -> list[tuple[str, str]]:
    return [(g["Grantee"].get("ID") or g["Grantee"]["URI"], g["Permission"]) for g in acl["Grants"]]


def test_write_acp_alone_writes_an_acl(secure: GatewayOnThread) -> None:
    """R37's F4: the gateway read the ACL first, which OM refuses without READ_ACP."""
    alice, bob, carol = secure.boto3("alice"), secure.boto3("bob"), secure.boto3("carol")
    alice.create_bucket(Bucket="wacp", ObjectOwnership="ObjectWriter")
    alice.put_bucket_acl(Bucket="wacp", GrantWriteACP='id="bob"', GrantFullControl='id="alice"')
    bob.put_bucket_acl(Bucket="wacp", GrantRead='id="bob"', GrantFullControl='id="alice"')
    assert native(secure, "wacp") == ["user:alice:a", "user:bob:rl"]
    alice.put_bucket_acl(Bucket="wacp", ACL="public-read")
    alice.put_object(Bucket="wacp", Key="o", Body=b"", GrantWriteACP='id="carol"')
    carol.put_object_acl(Bucket="wacp", Key="o", GrantRead='id="carol"', GrantFullControl='id="alice"')
    assert native(secure, "wacp", "o") == ["user:alice:a", "user:carol:r"]


def test_an_objects_owner_keeps_its_access(secure: GatewayOnThread) -> None:
    """R37's F9: bob's "share with carol" PutObjectAcl replaced his own entry and locked him out."""
    alice, bob = secure.boto3("alice"), secure.boto3("bob")
    alice.create_bucket(Bucket="lose", ObjectOwnership="ObjectWriter")
    alice.put_bucket_acl(
        Bucket="lose", GrantRead='id="bob"', GrantWrite='id="bob"', GrantFullControl='id="alice"'
    )
    bob.put_object(Bucket="lose", Key="bobs", Body=b"")
    bob.put_object_acl(Bucket="lose", Key="bobs", GrantRead='id="carol"')
    assert native(secure, "lose", "bobs") == ["user:bob:a", "user:carol:r"]
    assert bob.get_object(Bucket="lose", Key="bobs")["Body"].read() == b""
    bob.put_object_acl(Bucket="lose", Key="bobs", ACL="private")


def test_a_put_acl_removes_what_s3_cannot_name_and_shows_what_grants_everyone(
    secure: GatewayOnThread,
) -> None:
    """R37's F5, F12: an ANONYMOUS or CLIENT_IP entry grants every caller in Ozone's check, so S3 shows it
    as AllUsers; `private` leaves the owner alone (no GROUP, ANONYMOUS, CLIENT_IP or DEFAULT entry)."""
    alice, bob = secure.boto3("alice"), secure.boto3("bob")
    alice.create_bucket(Bucket="hidden", ObjectOwnership="ObjectWriter")
    alice.put_object(Bucket="hidden", Key="k", Body=b"")
    add_native(secure, "hidden", "k", "anonymous::r", "ip:10.9.9.9:r")
    add_native(secure, "hidden", "", "world::r[DEFAULT]")
    assert grants(alice.get_object_acl(Bucket="hidden", Key="k"))[1:] == [(ALL_USERS, "READ")]
    assert bob.get_object(Bucket="hidden", Key="k")["Body"].read() == b""  # staff's default rl, and the ip
    alice.put_object_acl(Bucket="hidden", Key="k", ACL="private")
    alice.put_bucket_acl(Bucket="hidden", ACL="private")
    assert native(secure, "hidden", "k") == ["user:alice:a"]
    assert native(secure, "hidden") == ["user:alice:a"]
    assert refused(bob.get_object, Bucket="hidden", Key="k") == (403, "AccessDenied")
    assert refused(bob.list_objects_v2, Bucket="hidden") == (403, "AccessDenied")
    alice.put_object(Bucket="hidden", Key="private", Body=b"", ACL="private")
    assert native(secure, "hidden", "private") == ["user:alice:a"]  # no staff entry: the whole ACL


def test_get_then_put_of_the_same_acl_changes_nothing(secure: GatewayOnThread) -> None:
    """R37's F6: bob's `w` and erin's `r` on a bucket were widened to `wcd` and `rl`."""
    alice = secure.boto3("alice")
    alice.create_bucket(Bucket="round", ObjectOwnership="ObjectWriter", ACL="private")
    add_native(secure, "round", "", "user:bob:w", "world::x", "user:erin:r")
    before = native(secure, "round")
    acl = alice.get_bucket_acl(Bucket="round")
    alice.put_bucket_acl(Bucket="round", AccessControlPolicy={"Owner": acl["Owner"], "Grants": acl["Grants"]})
    assert native(secure, "round") == before == ["user:alice:a", "user:bob:w", "world::x", "user:erin:r"]


def test_a_signed_user_reads_what_an_unsigned_one_may(secure: GatewayOnThread) -> None:
    """R37's F8: Amazon's AllUsers is anyone, authenticated or not; bob (no grant on the bucket) was
    refused a public-read object every unsigned client was served."""
    alice, bob = secure.boto3("alice"), secure.boto3("bob")
    alice.create_bucket(Bucket="inv", ObjectOwnership="ObjectWriter", ACL="private")
    alice.put_object(Bucket="inv", Key="pub", Body=b"", ACL="public-read", Tagging="secret=yes")
    alice.put_object(Bucket="inv", Key="priv", Body=b"", ACL="private")
    assert bob.get_object(Bucket="inv", Key="pub")["Body"].read() == b""
    head = bob.head_object(Bucket="inv", Key="pub")
    assert head["ContentLength"] == 0
    # served as the anonymous caller, with its limits: no tag count (R37's F13 on F8's fallback)
    assert "x-amz-tagging-count" not in head["ResponseMetadata"]["HTTPHeaders"]
    assert (
        alice.head_object(Bucket="inv", Key="pub")["ResponseMetadata"]["HTTPHeaders"]["x-amz-tagging-count"]
        == "1"
    )
    assert refused(bob.get_object, Bucket="inv", Key="priv") == (403, "AccessDenied")
    assert refused(bob.list_objects_v2, Bucket="inv") == (403, "AccessDenied")
    alice.put_public_access_block(Bucket="inv", PublicAccessBlockConfiguration={"IgnorePublicAcls": True})
    assert refused(bob.get_object, Bucket="inv", Key="pub") == (403, "AccessDenied")
