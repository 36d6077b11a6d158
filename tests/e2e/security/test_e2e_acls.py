"""Users, ACLs, administrators and quotas on a live cluster with ozone.acl.enabled (issue 15's acceptance):
a user without an ACL cannot list, read, overwrite or delete another user's key (PERMISSION_DENIED), and
can once granted; a non-administrator cannot decommission; a write past a quota is refused and nothing
partial remains; through the S3 gateway each access id is its user, so ACLs apply through SigV4.

Every test runs on two clusters: a plaintext one, where a user is who HADOOP_USER_NAME says (OM and SCM
believe it without TLS, as Ozone's simple authentication does) and the daemons' login user is the
administrator, and a secure one (`cluster up --secure`: mutual TLS everywhere), where a user is whom their
certificate names (`admin cert issue-user`), the administrator is not the daemons' login user, and the S3
gateway makes its volume as itself and acts for each request's access id with its own certificate. Every
command is the real CLI, acting as the user it names.
"""

from __future__ import annotations

import contextlib
import datetime
import http.client
import io
import json
import os
import ssl
import sys
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from pyozone.cli.main import main
from pyozone.cluster.layout import HOST
from pyozone.config.site import SITE_FILE, read_site_xml, write_site_xml
from pyozone.hdds.security.users import login_user
from tests.e2e.cluster.cluster_helpers import LiveCluster, Result, live_cluster
from tests.e2e.cluster.s3_cluster import REGION
from tests.e2e.security.secure_cluster import CLIENT_KEYS, SecureCluster, secure_cluster
from tests.polling import wait_for

ADMINS = {"plaintext": login_user(), "secure": "ozadmin"}
"""Plaintext: the daemons' login user, as the S3 gateway names itself by it. Secure: another, so that only
the gateway's certificate lets it make its volume."""
MiB = 1 << 20
OVERRIDES = {
    "ozone.acl.enabled": "true",
    "hadoop.user.group.static.mapping.overrides": "bob=staff;carol=staff",
    "ozone.scm.block.size": "1MB",
    "ozone.scm.container.size": "16MB",
    "ozone.block.deleting.service.interval": "1s",
}


class Users:
    """Runs the CLI as a user, in this process (the command line a new process would run, without its half
    a second of start-up): with HADOOP_USER_NAME=user, and on a secure cluster with the user's certificate."""

    def __init__(self, cluster: LiveCluster, admin: str) -> None:
        self.cluster = cluster
        self.admin = admin
        self.secure = isinstance(cluster, SecureCluster)

    def conf_dir(self, user: str) -> Path:
        if isinstance(self.cluster, SecureCluster) and user != self.admin:
            return self.cluster.user_conf(user)
        return self.cluster.conf_dir

    def run(
        self, user: str, *args: str, stdin: bytes | None = None, conf_dir: Path | None = None,
        user_name: str | None = None,
    ) -> Result:  # fmt: skip
        """`conf_dir`: another configuration than the user's; `user_name`: HADOOP_USER_NAME (default
        `user`)."""
        out, err = io.TextIOWrapper(io.BytesIO()), io.StringIO()
        with (
            mock.patch.dict(os.environ, {"HADOOP_USER_NAME": user_name or user}),
            mock.patch.object(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin or b""))),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            code = main([*args, "--conf", str(conf_dir or self.conf_dir(user))])
            out.flush()
        return Result(code, out.buffer.getvalue().decode(errors="replace"), err.getvalue())  # type: ignore[attr-defined]

    def s3(self, user: str, access_key: str | None, secret: str | None):  # type: ignore[no-untyped-def]
        """boto3 for the user's S3 key pair (None: unsigned, anonymous); on a secure cluster over https with
        the user's certificate."""
        import boto3
        from botocore import UNSIGNED

        tls: dict[str, object] = {}
        verify: str | None = None
        scheme = "http"
        if self.secure:
            site = read_site_xml(self.conf_dir(user) / SITE_FILE)
            cert, key, verify = (site[k] for k in CLIENT_KEYS)
            tls, scheme = {"client_cert": (cert, key)}, "https"
        signature = "s3v4" if access_key is not None else UNSIGNED
        config = Config(
            s3={"addressing_style": "path"}, signature_version=signature, retries={"max_attempts": 1}, **tls
        )
        return boto3.client(
            "s3",
            endpoint_url=f"{scheme}://{HOST}:{self.cluster.port('s3g', 'http')}",
            aws_access_key_id=access_key,
            aws_secret_access_key=secret,
            region_name=REGION,
            config=config,
            verify=verify,
        )

    def preflight(self, path: str, origin: str, method: str) -> tuple[int, dict[str, str]]:
        """An OPTIONS preflight to the S3 gateway, unsigned as a browser sends it."""
        status, headers, _ = self.http(
            "OPTIONS", path, {"Origin": origin, "Access-Control-Request-Method": method}
        )
        return status, headers

    def http(
        self, method: str, path: str, headers: dict[str, str], body: bytes = b""
    ) -> tuple[int, dict[str, str], bytes]:
        """A request to the S3 gateway as a browser sends it, unsigned (on a secure cluster over https, with
        alice's certificate for the transport)."""
        port = self.cluster.port("s3g", "http")
        connection: http.client.HTTPConnection = http.client.HTTPConnection(HOST, port, timeout=30)
        if self.secure:
            site = read_site_xml(self.conf_dir("alice") / SITE_FILE)
            cert, key, ca = (site[k] for k in CLIENT_KEYS)
            context = ssl.create_default_context(cafile=ca)
            context.load_cert_chain(cert, key)
            connection = http.client.HTTPSConnection(HOST, port, timeout=30, context=context)
        try:
            connection.request(method, path, body or None, headers=headers)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def sh(self, user: str, *args: str, stdin: bytes | None = None) -> Result:
        return self.run(user, "sh", *args, stdin=stdin)

    def ok(self, user: str, *args: str, stdin: bytes | None = None) -> Result:
        result = self.sh(user, *args, stdin=stdin)
        assert result.code == 0, result
        return result

    def refused(
        self, user: str, *args: str, code: str = "PERMISSION_DENIED", stdin: bytes | None = None
    ) -> str:
        result = self.sh(user, *args, stdin=stdin)
        assert result.code != 0 and code in result.err, result
        return result.err


@pytest.fixture(scope="module", params=["plaintext", "secure"])
def users(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Users]:
    make = live_cluster if request.param == "plaintext" else secure_cluster
    admin = ADMINS[request.param]
    overrides = {**OVERRIDES, "ozone.administrators": admin}
    with make(request, tmp_path_factory, f"acls-{request.param}", 3, overrides=overrides) as cluster:
        users = Users(cluster, admin)
        users.ok(admin, "volume", "create", "/vol", "-u", "alice")
        users.ok("alice", "bucket", "create", "/vol/data")
        users.ok("alice", "key", "put", "/vol/data/secret", "-", stdin=b"alice's data")
        yield users


def test_a_user_without_an_acl_cannot_touch_anothers_key(users: Users) -> None:
    key = "/vol/data/secret"
    message = users.refused("bob", "key", "cat", key)
    assert (
        "User bob doesn't have READ permission to access VOLUME Volume:vol Bucket:data Key:secret" in message
    )
    users.refused("bob", "key", "list", "/vol/data")
    users.refused("bob", "key", "put", key, "-", stdin=b"bob was here")
    users.refused("bob", "key", "delete", key)
    users.refused("bob", "key", "rename", "/vol/data", "secret", "mine")
    users.refused("bob", "volume", "create", "/bobs")  # administrators only
    assert users.ok("alice", "key", "cat", key).out == "alice's data"


def test_after_addacl_they_can(users: Users) -> None:
    users.ok("alice", "volume", "addacl", "-a", "user:bob:r", "/vol")
    users.ok("alice", "bucket", "addacl", "-a", "group:staff:rl", "/vol/data")
    users.refused("bob", "key", "cat", "/vol/data/secret")  # the key itself grants bob nothing yet
    users.ok("alice", "key", "addacl", "-a", "user:bob:r", "/vol/data/secret")
    assert users.ok("bob", "key", "cat", "/vol/data/secret").out == "alice's data"
    listed = users.ok("bob", "key", "list", "/vol/data").json()
    assert [k["name"] for k in listed] == ["secret"]
    users.refused("bob", "key", "getacl", "/vol/data/secret")  # READ is not READ_ACL
    assert users.ok("alice", "key", "getacl", "/vol/data/secret").json() == [
        {"type": "USER", "name": "alice", "aclScope": "ACCESS", "aclList": ["ALL"]},
        {"type": "USER", "name": "bob", "aclScope": "ACCESS", "aclList": ["READ"]},
    ]
    # reading is not writing: no overwrite, no delete
    users.refused("bob", "key", "put", "/vol/data/secret", "-", stdin=b"bob was here")
    users.refused("bob", "key", "delete", "/vol/data/secret")
    users.ok("alice", "key", "removeacl", "-a", "user:bob:r", "/vol/data/secret")
    users.refused("bob", "key", "cat", "/vol/data/secret")


def test_acls_are_shown_and_replaced_as_ozone_does(users: Users) -> None:
    users.ok("alice", "bucket", "create", "/vol/shared")
    users.ok("alice", "bucket", "setacl", "-al", "user:alice:a,user:carol:rwl[DEFAULT]", "/vol/shared")
    assert users.ok("alice", "bucket", "getacl", "/vol/shared").json() == [
        {"type": "USER", "name": "alice", "aclScope": "ACCESS", "aclList": ["ALL"]},
        {"type": "USER", "name": "carol", "aclScope": "DEFAULT", "aclList": ["READ", "WRITE", "LIST"]},
    ]
    users.ok("alice", "key", "put", "/vol/shared/k", "-", stdin=b"x")
    acls = users.ok("alice", "key", "getacl", "/vol/shared/k").json()
    assert {
        "type": "USER",
        "name": "carol",
        "aclScope": "ACCESS",
        "aclList": ["READ", "WRITE", "LIST"],
    } in acls
    users.refused("carol", "key", "getacl", "/vol/shared/k")  # the DEFAULT entry grants no READ_ACL
    message = users.sh("alice", "key", "addacl", "-a", "user:bob:q", "/vol/shared/k").err
    assert "[q] ACL right is not recognized" in message


def test_a_non_administrator_cannot_decommission(users: Users) -> None:
    refused = users.run("bob", "admin", "datanode", "decommission", "dn1")
    assert refused.code != 0, refused
    assert "Access denied for user bob. SCM superuser privilege is required." in refused.err
    for call in (("safemode", "exit"), ("replicationmanager", "stop")):
        result = users.run("bob", "admin", *call)
        assert result.code != 0 and "SCM superuser privilege is required" in result.err, result
    allowed = users.run(users.admin, "admin", "datanode", "decommission", "no-such-host")
    assert "no registered datanode no-such-host" in allowed.out + allowed.err, allowed
    assert "superuser" not in allowed.err


def test_a_write_past_a_quota_is_refused_and_nothing_partial_remains(users: Users, tmp_path: Path) -> None:
    users.ok("alice", "bucket", "create", "/vol/quota")
    users.ok("alice", "bucket", "setquota", "--space-quota", "4MB", "--namespace-quota", "10", "/vol/quota")
    info = users.ok("alice", "bucket", "info", "/vol/quota").json()
    assert (info["quotaInBytes"], info["quotaInNamespace"], info["usedBytes"]) == (4 * MiB, 10, 0)
    users.refused("bob", "bucket", "setquota", "--space-quota", "1GB", "/vol/quota")

    big = tmp_path / "big"
    big.write_bytes(os.urandom(2 * MiB))  # 6 MB replicated: refused at openKey, before any data is sent
    message = users.refused("alice", "key", "put", "/vol/quota/known", str(big), code="QUOTA_EXCEEDED")
    assert "The DiskSpace quota of bucket:quota exceeded quotaInBytes: 4194304 Bytes" in message
    # of unknown size (stdin) it passes openKey and allocateBlock (a block fits) and is refused at commit
    users.refused(
        "alice", "key", "put", "/vol/quota/streamed", "-", code="QUOTA_EXCEEDED", stdin=big.read_bytes()
    )
    assert users.ok("alice", "key", "list", "/vol/quota").json() == []
    info = users.ok("alice", "bucket", "info", "/vol/quota").json()
    assert (info["usedBytes"], info["usedNamespace"]) == (0, 0)
    om_log = users.cluster.log
    wait_for(
        lambda: "commit of /vol/quota/streamed refused" in om_log("om"), 10, "OM logs the refused commit"
    )
    wait_for(lambda: "entries taken by SCM" in om_log("om"), 30, "OM hands the refused key's blocks to SCM")

    small = tmp_path / "small"
    small.write_bytes(os.urandom(MiB))
    # of unknown size, its block allocated whole: charged what the datanodes store (OM finalized the block
    # through its pipeline's leader, with its own WRITE token on the secure cluster), not the allocation
    users.ok("alice", "key", "put", "/vol/quota/streamed-small", "-", stdin=os.urandom(100_000))
    assert users.ok("alice", "bucket", "info", "/vol/quota").json()["usedBytes"] == 300_000
    assert "charged its allocation" not in om_log("om")
    assert "not finalized" not in om_log("om")
    users.ok("alice", "key", "delete", "/vol/quota/streamed-small")
    users.ok("alice", "key", "put", "/vol/quota/fits", str(small))
    assert users.ok("alice", "bucket", "info", "/vol/quota").json()["usedBytes"] == 3 * MiB
    users.ok("alice", "bucket", "clrquota", "--space-quota", "/vol/quota")
    users.ok("alice", "key", "put", "/vol/quota/known", str(big))
    info = users.ok("alice", "bucket", "info", "/vol/quota").json()
    assert (info["quotaInBytes"], info["usedBytes"], info["usedNamespace"]) == (-1, 9 * MiB, 2)


def test_s3_users_are_their_access_ids(users: Users) -> None:
    def secret(user: str, as_user: str) -> Result:
        return users.run(as_user, "s3", "getsecret", "-u", user)

    refused = secret("alice", "bob")
    assert refused.code != 0 and "PERMISSION_DENIED" in refused.err, refused
    keys = {}
    for user in ("alice", "bob"):
        result = secret(user, user)
        assert result.code == 0, result
        fields = dict(line.split("=", 1) for line in result.out.split())
        keys[user] = (fields["awsAccessKey"], fields["awsSecret"])
    users.ok(users.admin, "volume", "addacl", "-a", "world::rwl", "/s3v")  # anyone may make buckets in S3
    alice, bob = users.s3("alice", *keys["alice"]), users.s3("bob", *keys["bob"])
    alice.create_bucket(Bucket="alices")
    alice.put_object(Bucket="alices", Key="diary", Body=b"dear diary")
    assert alice.get_object(Bucket="alices", Key="diary")["Body"].read() == b"dear diary"
    for attempt in (
        lambda: bob.get_object(Bucket="alices", Key="diary"),
        lambda: bob.list_objects_v2(Bucket="alices"),
        lambda: bob.put_object(Bucket="alices", Key="diary", Body=b"bob was here"),
        lambda: bob.delete_object(Bucket="alices", Key="diary"),
    ):
        with pytest.raises(ClientError) as error:
            attempt()
        assert error.value.response["Error"]["Code"] == "AccessDenied"
    bob.create_bucket(Bucket="bobs")
    bob.put_object(Bucket="bobs", Key="note", Body=b"mine")
    assert alice.get_object(Bucket="alices", Key="diary")["Body"].read() == b"dear diary"


def s3_client(users: Users, user: str):  # type: ignore[no-untyped-def]
    """boto3 for the user's S3 key pair (their own secret, made if missing)."""
    result = users.run(user, "s3", "getsecret", "-u", user)
    assert result.code == 0, result
    fields = dict(line.split("=", 1) for line in result.out.split())
    return users.s3(user, fields["awsAccessKey"], fields["awsSecret"])


def test_s3_parts_count_against_quotas_and_only_writers_abort(users: Users) -> None:
    """Through the gateway: a part past a bucket's quota is QuotaExceeded with OM's reason (Ozone's S3
    answer), open uploads' parts count in the usage until aborted, and a user who may only read and list
    the bucket cannot abort another's upload."""
    users.ok(users.admin, "volume", "addacl", "-a", "world::rwl", "/s3v")
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="uploads")
    users.ok("alice", "bucket", "setquota", "--space-quota", "6MB", "/s3v/uploads")  # 2 MiB, three copies
    users.ok("alice", "bucket", "addacl", "-a", "user:bob:rl", "/s3v/uploads")
    upload = alice.create_multipart_upload(Bucket="uploads", Key="video")["UploadId"]
    for number in (1, 2):
        alice.upload_part(
            Bucket="uploads", Key="video", UploadId=upload, PartNumber=number, Body=os.urandom(MiB)
        )
    with pytest.raises(ClientError) as error:
        alice.upload_part(Bucket="uploads", Key="video", UploadId=upload, PartNumber=3, Body=b"x" * 1024)
    refusal = error.value.response
    assert (refusal["Error"]["Code"], refusal["ResponseMetadata"]["HTTPStatusCode"]) == ("QuotaExceeded", 403)
    assert "The DiskSpace quota of bucket:uploads exceeded" in refusal["Error"]["Message"]
    assert users.ok("alice", "bucket", "info", "/s3v/uploads").json()["usedBytes"] == 6 * MiB

    assert [u["UploadId"] for u in bob.list_multipart_uploads(Bucket="uploads")["Uploads"]] == [upload]
    with pytest.raises(ClientError) as error:
        bob.abort_multipart_upload(Bucket="uploads", Key="video", UploadId=upload)
    assert error.value.response["Error"]["Code"] == "AccessDenied"
    alice.abort_multipart_upload(Bucket="uploads", Key="video", UploadId=upload)
    assert users.ok("alice", "bucket", "info", "/s3v/uploads").json()["usedBytes"] == 0


def test_a_certificate_names_its_holder_to_om(users: Users, tmp_path: Path) -> None:
    """Secure only: a datanode's certificate is nobody to OM (no administrator: it can neither read a user's
    key nor make a volume), and a user's certificate is its user whatever HADOOP_USER_NAME says, even a
    name no certificate could carry."""
    if not isinstance(users.cluster, SecureCluster):
        pytest.skip("certificates name callers on the secure cluster only")
    meta = users.cluster.data_dir / "dn1" / "meta"
    dn_files = (meta / "certs" / "certificate.crt", meta / "keys" / "private.pem", meta / "certs" / "ca.crt")
    site = read_site_xml(users.cluster.conf_dir / SITE_FILE)
    site |= {key: str(path) for key, path in zip(CLIENT_KEYS, dn_files, strict=True)}
    write_site_xml(tmp_path / SITE_FILE, site)
    as_dn = users.run("dn", "sh", "key", "cat", "/vol/data/secret", conf_dir=tmp_path)
    assert as_dn.code != 0 and "User dr.who doesn't have READ permission" in as_dn.err, as_dn
    as_dn = users.run("dn", "sh", "volume", "create", "/dnvol", conf_dir=tmp_path)
    assert as_dn.code != 0 and "Only admin users are authorized to create Ozone volumes" in as_dn.err, as_dn

    kerberos = users.run("alice", "sh", "key", "cat", "/vol/data/secret", user_name="hdfs/nn1@EXAMPLE.COM")
    assert (kerberos.code, kerberos.out) == (0, "alice's data"), kerberos


def test_s3_cors_is_the_owner_s_alone(users: Users) -> None:
    """Issue 33: a bucket's CORS configuration is read and changed by its owner alone (Amazon's default),
    whatever Ozone ACLs grant others; OM keeps it apart from the bucket's record (`bucket info` does not
    show it) and checks the owner too."""
    users.ok(users.admin, "volume", "addacl", "-a", "world::rwl", "/s3v")
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="site")
    rules = {"CORSRules": [{"AllowedOrigins": ["https://site.example"], "AllowedMethods": ["GET"]}]}
    alice.put_bucket_cors(Bucket="site", CORSConfiguration=rules)
    assert alice.get_bucket_cors(Bucket="site")["CORSRules"] == rules["CORSRules"]
    assert users.ok("alice", "bucket", "info", "/s3v/site").json()["metadata"] == {}
    status, headers = users.preflight("/site/page", "https://site.example", "GET")  # read by the gateway
    assert status == 200 and headers["Access-Control-Allow-Origin"] == "https://site.example"
    assert users.preflight("/site/page", "https://other.example", "GET")[0] == 403
    for attempt in (
        lambda: bob.get_bucket_cors(Bucket="site"),
        lambda: bob.put_bucket_cors(Bucket="site", CORSConfiguration=rules),
        lambda: bob.delete_bucket_cors(Bucket="site"),
    ):
        with pytest.raises(ClientError) as error:
            attempt()
        assert error.value.response["Error"]["Code"] == "AccessDenied"
    users.ok("alice", "bucket", "addacl", "-a", "user:bob:a", "/s3v/site")  # an Ozone ACL is not S3's grant
    with pytest.raises(ClientError) as error:
        bob.delete_bucket_cors(Bucket="site")
    assert error.value.response["Error"]["Code"] == "AccessDenied"
    alice.delete_bucket_cors(Bucket="site")
    with pytest.raises(ClientError) as error:
        alice.get_bucket_cors(Bucket="site")
    assert error.value.response["Error"]["Code"] == "NoSuchCORSConfiguration"


def test_s3_lifecycle_is_the_owner_s_alone(users: Users) -> None:
    """Issue 33, item 4: a bucket's lifecycle configuration is read and changed by its owner alone
    (Amazon's default), whatever Ozone ACLs grant others; OM checks the owner too."""
    users.ok(users.admin, "volume", "addacl", "-a", "world::rwl", "/s3v")
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="logs")
    rules = {
        "Rules": [{"ID": "old", "Filter": {"Prefix": "tmp/"}, "Status": "Enabled", "Expiration": {"Days": 7}}]
    }
    alice.put_bucket_lifecycle_configuration(Bucket="logs", LifecycleConfiguration=rules)
    assert alice.get_bucket_lifecycle_configuration(Bucket="logs")["Rules"] == rules["Rules"]
    users.ok("alice", "bucket", "addacl", "-a", "user:bob:a", "/s3v/logs")  # an Ozone ACL is not S3's grant
    for attempt in (
        lambda: bob.get_bucket_lifecycle_configuration(Bucket="logs"),
        lambda: bob.put_bucket_lifecycle_configuration(Bucket="logs", LifecycleConfiguration=rules),
        lambda: bob.delete_bucket_lifecycle(Bucket="logs"),
    ):
        with pytest.raises(ClientError) as error:
            attempt()
        assert error.value.response["Error"]["Code"] == "AccessDenied"
    alice.delete_bucket_lifecycle(Bucket="logs")
    with pytest.raises(ClientError) as error:
        alice.get_bucket_lifecycle_configuration(Bucket="logs")
    assert error.value.response["Error"]["Code"] == "NoSuchLifecycleConfiguration"


def test_s3_object_attributes_and_parts_are_read_as_a_get(users: Users) -> None:
    """Issue 33: GetObjectAttributes and GET/HEAD by partNumber read the key through OM as a GET does, so
    a user whom no ACL lets read it is AccessDenied, never shown its size, ETag or parts."""
    users.ok(users.admin, "volume", "addacl", "-a", "world::rwl", "/s3v")
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="attrs")
    alice.put_object(Bucket="attrs", Key="ledger", Body=b"private figures")
    for attempt in (
        lambda: bob.get_object_attributes(Bucket="attrs", Key="ledger", ObjectAttributes=["ObjectSize"]),
        lambda: bob.get_object(Bucket="attrs", Key="ledger", PartNumber=1),
    ):
        with pytest.raises(ClientError) as error:
            attempt()
        assert error.value.response["Error"]["Code"] == "AccessDenied"
    got = alice.get_object_attributes(Bucket="attrs", Key="ledger", ObjectAttributes=["ObjectSize"])
    assert got["ObjectSize"] == len(b"private figures")


def test_s3_versions_are_checked_as_their_key(users: Users) -> None:
    """Issue 33, item 1: a bucket's versioning is its owner's alone, and a version is read, listed and
    deleted under the Ozone ACLs of its key and bucket: bob, with none on alice's bucket, does none of it;
    `bucket info` shows the state as Ozone's `versioning` flag."""
    users.ok(users.admin, "volume", "addacl", "-a", "world::rwl", "/s3v")
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="history")
    enabled = {"Status": "Enabled"}
    for attempt in (
        lambda: bob.put_bucket_versioning(Bucket="history", VersioningConfiguration=enabled),
        lambda: bob.get_bucket_versioning(Bucket="history"),
    ):
        with pytest.raises(ClientError) as error:
            attempt()
        assert error.value.response["Error"]["Code"] == "AccessDenied"
    alice.put_bucket_versioning(Bucket="history", VersioningConfiguration=enabled)
    assert users.ok("alice", "bucket", "info", "/s3v/history").json()["versioning"] is True
    first = alice.put_object(Bucket="history", Key="page", Body=b"first")["VersionId"]
    alice.put_object(Bucket="history", Key="page", Body=b"second")
    for attempt in (
        lambda: bob.get_object(Bucket="history", Key="page", VersionId=first),
        lambda: bob.list_object_versions(Bucket="history"),
        lambda: bob.delete_object(Bucket="history", Key="page", VersionId=first),
        lambda: bob.delete_object(Bucket="history", Key="page"),
    ):
        with pytest.raises(ClientError) as error:
            attempt()
        assert error.value.response["Error"]["Code"] == "AccessDenied"
    assert alice.get_object(Bucket="history", Key="page", VersionId=first)["Body"].read() == b"first"
    assert len(alice.list_object_versions(Bucket="history")["Versions"]) == 2
    # R32's F1: with READ on the bucket (rl) bob lists the versions, and once a delete marker is the
    # latest he still reads and removes none of them, nor adds a marker (that needs WRITE on the bucket)
    users.ok("alice", "bucket", "addacl", "-a", "user:bob:rl", "/s3v/history")
    assert len(bob.list_object_versions(Bucket="history")["Versions"]) == 2
    alice.delete_object(Bucket="history", Key="page")
    for attempt in (
        lambda: bob.get_object(Bucket="history", Key="page", VersionId=first),
        lambda: bob.head_object(Bucket="history", Key="page", VersionId=first),
        lambda: bob.delete_object(Bucket="history", Key="page", VersionId=first),
        lambda: bob.delete_object(Bucket="history", Key="page"),
        lambda: bob.delete_object(Bucket="history", Key="never-written"),
    ):
        with pytest.raises(ClientError) as error:
            attempt()
        assert error.value.response["Error"]["Code"] in ("AccessDenied", "403")
    refused = bob.delete_objects(Bucket="history", Delete={"Objects": [{"Key": "page", "VersionId": first}]})
    assert [e["Code"] for e in refused.get("Errors", [])] == ["AccessDenied"]
    assert alice.get_object(Bucket="history", Key="page", VersionId=first)["Body"].read() == b"first"
    assert len(alice.list_object_versions(Bucket="history")["DeleteMarkers"]) == 1


def test_s3_object_lock_bypass_and_configuration_are_the_owner_s(users: Users) -> None:
    """Issue 33, item 6: bob, granted every Ozone right on alice's Object Lock bucket and keys, neither
    changes its configuration nor bypasses GOVERNANCE retention (the owner's or an administrator's); his
    native delete only adds a delete marker; alice's bypass removes the version."""
    users.ok(users.admin, "volume", "addacl", "-a", "world::rwl", "/s3v")
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="vault", ObjectLockEnabledForBucket=True)
    users.ok("alice", "bucket", "addacl", "-a", "user:bob:a", "/s3v/vault")
    until = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=1)
    version = alice.put_object(
        Bucket="vault", Key="doc", Body=b"kept", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=until
    )["VersionId"]
    free = alice.put_object(Bucket="vault", Key="free", Body=b"x")["VersionId"]
    for key in ("doc", "free"):  # bob may delete them as far as Ozone's ACLs go
        users.ok("alice", "key", "addacl", "-a", "user:bob:a", f"/s3v/vault/{key}")
    bob.delete_object(Bucket="vault", Key="free", VersionId=free)  # no lock: his rights suffice
    config = {"ObjectLockEnabled": "Enabled"}
    shorter = {"Mode": "GOVERNANCE", "RetainUntilDate": until - datetime.timedelta(hours=1)}
    for attempt in (
        lambda: bob.put_object_lock_configuration(Bucket="vault", ObjectLockConfiguration=config),
        lambda: bob.delete_object(
            Bucket="vault", Key="doc", VersionId=version, BypassGovernanceRetention=True
        ),
        lambda: bob.put_object_retention(
            Bucket="vault", Key="doc", VersionId=version, Retention=shorter, BypassGovernanceRetention=True
        ),
    ):
        with pytest.raises(ClientError) as error:
            attempt()
        assert error.value.response["Error"]["Code"] == "AccessDenied"
    users.ok("bob", "key", "delete", "/s3v/vault/doc")  # a delete marker: the version stays
    assert alice.get_object(Bucket="vault", Key="doc", VersionId=version)["Body"].read() == b"kept"
    alice.delete_object(Bucket="vault", Key="doc", VersionId=version, BypassGovernanceRetention=True)


def test_s3_object_lock_is_set_by_the_owner_or_whom_the_policy_allows(users: Users) -> None:
    """R35's F1 and F3 (they fail before their fix): bob, granted every Ozone right on alice's Object Lock
    bucket, writes plain versions (which get its default retention) but locks none, his own or alice's:
    Amazon's s3:PutObjectRetention and s3:PutObjectLegalHold are no ACL's; a policy allowing s3:PutObject
    alone does not change that, one allowing s3:PutObjectRetention too runs his locking write as alice."""
    users.ok(users.admin, "volume", "addacl", "-a", "world::rwl", "/s3v")
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="locker", ObjectLockEnabledForBucket=True)
    users.ok("alice", "bucket", "addacl", "-a", "user:bob:a", "/s3v/locker")
    lock = {
        "ObjectLockMode": "COMPLIANCE",
        "ObjectLockRetainUntilDate": datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=1),
    }
    theirs = alice.put_object(Bucket="locker", Key="doc", Body=b"a")["VersionId"]
    bob.put_object(Bucket="locker", Key="doc", Body=b"b")  # his own current version

    def code(call, **kwargs) -> str:  # type: ignore[no-untyped-def]
        with pytest.raises(ClientError) as error:
            call(**kwargs)
        return str(error.value.response["Error"]["Code"])

    hold = {"Bucket": "locker", "Key": "doc", "LegalHold": {"Status": "ON"}}
    assert code(bob.put_object_legal_hold, **hold) == "AccessDenied"
    assert code(bob.put_object_legal_hold, VersionId=theirs, **hold) == "AccessDenied"
    assert code(bob.put_object, Bucket="locker", Key="mine", Body=b"m", **lock) == "AccessDenied"
    arn = "arn:aws:s3:::locker/*"
    bobs = {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam:::user/bob"}, "Resource": arn}
    put_only = {"Version": "2012-10-17", "Statement": [{**bobs, "Action": "s3:PutObject"}]}
    alice.put_bucket_policy(Bucket="locker", Policy=json.dumps(put_only))
    assert code(bob.put_object, Bucket="locker", Key="mine", Body=b"m", **lock) == "AccessDenied"
    both = {
        "Version": "2012-10-17",
        "Statement": [{**bobs, "Action": ["s3:PutObject", "s3:PutObjectRetention"]}],
    }
    alice.put_bucket_policy(Bucket="locker", Policy=json.dumps(both))
    version = bob.put_object(Bucket="locker", Key="mine", Body=b"m", **lock)["VersionId"]
    assert alice.head_object(Bucket="locker", Key="mine", VersionId=version)["ObjectLockMode"] == "COMPLIANCE"
    alice.delete_bucket_policy(Bucket="locker")


def test_s3_post_object_is_checked_as_a_put(users: Users) -> None:
    """Issue 33: a browser's form upload (POST Object) is written as its policy's signer, so OM's ACLs
    decide it as they decide that user's PUT: bob's signed form to alice's bucket is AccessDenied until an
    Ozone ACL lets bob write there."""
    users.ok(users.admin, "volume", "addacl", "-a", "world::rwl", "/s3v")
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="inbox")

    def post(client, key: str) -> tuple[int, bytes]:  # type: ignore[no-untyped-def]
        fields = client.generate_presigned_post("inbox", key)["fields"]
        boundary = "form-boundary-0"
        parts = [
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
            for name, value in fields.items()
        ]
        body = (
            "".join(parts).encode()
            + (
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\n'
                f"{key}'s data\r\n--{boundary}--\r\n"
            ).encode()
        )
        content_type = f"multipart/form-data; boundary={boundary}"
        status, _, answer = users.http("POST", "/inbox", {"Content-Type": content_type}, body)
        return status, answer

    assert post(alice, "from-alice")[0] == 204
    assert alice.get_object(Bucket="inbox", Key="from-alice")["Body"].read() == b"from-alice's data"
    status, answer = post(bob, "from-bob")
    assert status == 403 and b"<Code>AccessDenied</Code>" in answer, answer
    users.ok("alice", "bucket", "addacl", "-a", "user:bob:rwlc", "/s3v/inbox")
    assert post(bob, "from-bob")[0] == 204
    assert alice.get_object(Bucket="inbox", Key="from-bob")["Body"].read() == b"from-bob's data"


def test_s3_bucket_policies_over_ozone_acls(users: Users) -> None:
    """Issue 33, item 5: with ACLs on, a bucket policy's Allow lets bob read alice's object though no Ozone
    ACL grants it (the gateway acts as the owner, within the owner's rights) and grants nothing it does not
    name; its Deny wins over its Allow; an anonymous request reads only what a public statement names; only
    alice reads or changes the policy."""
    users.ok(users.admin, "volume", "addacl", "-a", "world::rwl", "/s3v")
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="album")
    alice.put_object(Bucket="album", Key="photo", Body=b"smile")
    alice.put_object(Bucket="album", Key="raw/photo", Body=b"raw")

    def code(call, **kwargs) -> str:  # type: ignore[no-untyped-def]
        with pytest.raises(ClientError) as error:
            call(**kwargs)
        return str(error.value.response["Error"]["Code"])

    assert code(bob.get_object, Bucket="album", Key="photo") == "AccessDenied"  # OM's ACLs: not bob's
    bobs = {"Principal": {"AWS": "arn:aws:iam:::user/bob"}, "Action": "s3:GetObject"}
    statements = [
        {"Effect": "Allow", **bobs, "Resource": "arn:aws:s3:::album/*"},
        {"Effect": "Deny", **bobs, "Resource": "arn:aws:s3:::album/raw/*"},
        {
            "Effect": "Allow",
            "Principal": "*",
            "Action": "s3:GetObject",
            "Resource": "arn:aws:s3:::album/photo",
        },
    ]
    document = json.dumps({"Version": "2012-10-17", "Statement": statements})
    assert code(bob.put_bucket_policy, Bucket="album", Policy=document) == "AccessDenied"
    alice.put_bucket_policy(Bucket="album", Policy=document)
    assert bob.get_object(Bucket="album", Key="photo")["Body"].read() == b"smile"
    assert code(bob.get_object, Bucket="album", Key="raw/photo") == "AccessDenied"
    assert code(bob.put_object, Bucket="album", Key="photo", Body=b"frown") == "AccessDenied"
    assert code(bob.get_bucket_policy, Bucket="album") == "AccessDenied"
    assert users.http("GET", "/album/photo", {})[::2] == (200, b"smile")
    assert users.http("GET", "/album/raw/photo", {})[0] == 403
    assert users.http("PUT", "/album/new", {}, b"x")[0] == 403
    alice.delete_bucket_policy(Bucket="album")
    assert code(bob.get_object, Bucket="album", Key="photo") == "AccessDenied"
    assert users.http("GET", "/album/photo", {})[0] == 403


def test_s3_acls_are_ozones_acls(users: Users) -> None:
    """Issue 33, item 5: S3 ACLs are OM's native ACLs. A PutBucketAcl grant shows in `bucket getacl`, a
    native `addacl` in GetBucketAcl, and OM decides by them: bob reads what a grant gives him and nothing
    else; an object's public-read is WORLD READ, which lets every user, signed or not, read it (in a private
    bucket too). Amazon's refusals
    hold (MalformedACLError, AccessControlListNotSupported under BucketOwnerEnforced, AccessDenied for a
    user without WRITE_ACP). An unsigned GET reads the public-read object (OM's anonymous caller: the
    key's WORLD entry alone decides) and nothing else; a public-read bucket is listed."""
    users.ok(users.admin, "volume", "addacl", "-a", "world::rwl", "/s3v")
    alice, bob, carol = s3_client(users, "alice"), s3_client(users, "bob"), s3_client(users, "carol")
    alice.create_bucket(Bucket="gallery", ObjectOwnership="ObjectWriter")
    alice.put_object(Bucket="gallery", Key="private.jpg", Body=b"mine")
    alice.put_object(Bucket="gallery", Key="public.jpg", Body=b"ours", ACL="public-read")
    # WORLD READ on the key, none on the bucket: served to a signed user as to an unsigned one (R37's F8)
    assert bob.get_object(Bucket="gallery", Key="public.jpg")["Body"].read() == b"ours"
    for attempt in (
        lambda: bob.list_objects_v2(Bucket="gallery"),
        lambda: bob.get_object(Bucket="gallery", Key="private.jpg"),
        lambda: bob.get_bucket_acl(Bucket="gallery"),
        lambda: bob.put_bucket_acl(Bucket="gallery", ACL="public-read"),
    ):
        with pytest.raises(ClientError) as error:
            attempt()
        assert error.value.response["Error"]["Code"] == "AccessDenied"
    alice.put_bucket_acl(Bucket="gallery", GrantRead='id="bob"', GrantFullControl='id="alice"')
    acls = users.ok("alice", "bucket", "getacl", "/s3v/gallery").json()
    assert {"type": "USER", "name": "bob", "aclScope": "ACCESS", "aclList": ["READ", "LIST"]} in acls
    assert [o["Key"] for o in bob.list_objects_v2(Bucket="gallery")["Contents"]] == [
        "private.jpg",
        "public.jpg",
    ]
    assert bob.get_object(Bucket="gallery", Key="public.jpg")["Body"].read() == b"ours"
    with pytest.raises(ClientError) as error:
        bob.get_object(Bucket="gallery", Key="private.jpg")
    assert error.value.response["Error"]["Code"] == "AccessDenied"
    key_acls = users.ok("alice", "key", "getacl", "/s3v/gallery/public.jpg").json()
    assert {"type": "WORLD", "name": "WORLD", "aclScope": "ACCESS", "aclList": ["READ"]} in key_acls
    users.ok("alice", "bucket", "addacl", "-a", "user:carol:r", "/s3v/gallery")
    grants = [
        (g["Grantee"].get("ID"), g["Permission"]) for g in alice.get_bucket_acl(Bucket="gallery")["Grants"]
    ]
    assert (
        ("carol", "READ") in grants and ("bob", "READ") in grants and grants[0] == ("alice", "FULL_CONTROL")
    )
    alice.put_object_acl(Bucket="gallery", Key="private.jpg", GrantRead='id="carol"')
    assert carol.get_object(Bucket="gallery", Key="private.jpg")["Body"].read() == b"mine"
    status, _, body = users.http("GET", "/gallery/public.jpg", {})  # unsigned: OM's anonymous caller
    assert (status, body) == (200, b"ours")  # WORLD READ on the key alone, as Amazon's public-read object
    assert users.http("HEAD", "/gallery/public.jpg", {})[0] == 200
    assert users.http("GET", "/gallery/private.jpg", {})[0] == 403
    assert users.http("GET", "/gallery/missing.jpg", {})[0] == 403
    assert users.http("GET", "/gallery?list-type=2", {})[0] == 403
    assert users.http("PUT", "/gallery/public.jpg", {}, b"theirs")[0] == 403
    assert users.http("DELETE", "/gallery/public.jpg", {})[0] == 403
    anonymous = users.s3("alice", None, None)  # botocore's UNSIGNED client (alice's certificate for TLS)
    assert anonymous.get_object(Bucket="gallery", Key="public.jpg")["Body"].read() == b"ours"
    with pytest.raises(ClientError) as error:
        anonymous.get_object(Bucket="gallery", Key="private.jpg")
    assert error.value.response["Error"]["Code"] == "AccessDenied"
    alice.put_bucket_acl(Bucket="gallery", ACL="public-read")
    status, _, body = users.http("GET", "/gallery?list-type=2", {})
    assert status == 200 and b"<Key>private.jpg</Key>" in body
    assert users.http("GET", "/gallery/private.jpg", {})[0] == 403
    no_id = {"Grantee": {"Type": "CanonicalUser"}, "Permission": "READ"}
    with pytest.raises(ClientError) as error:
        alice.put_bucket_acl(
            Bucket="gallery", AccessControlPolicy={"Owner": {"ID": "alice"}, "Grants": [no_id]}
        )
    assert error.value.response["Error"]["Code"] == "MalformedACLError"
    alice.create_bucket(Bucket="enforced")
    with pytest.raises(ClientError) as error:
        alice.put_object(Bucket="enforced", Key="k", Body=b"", ACL="public-read")
    assert error.value.response["Error"]["Code"] == "AccessControlListNotSupported"


def test_s3_bucket_configuration_by_policy_and_by_administrators(users: Users) -> None:
    """R34's F10: a bucket policy's Allow of s3:PutBucketCORS to bob is honoured (he acts as the owner in OM,
    which checks the owner); its Allow of s3:GetBucketPolicy is not (the owner's account's alone). R34's F8:
    an administrator reads and removes another user's policy through the gateway, as OM lets them."""
    users.ok(users.admin, "volume", "addacl", "-a", "world::rwl", "/s3v")
    alice, bob = s3_client(users, "alice"), s3_client(users, "bob")
    alice.create_bucket(Bucket="configured")
    grant = {"Effect": "Allow", "Principal": {"AWS": "bob"}, "Resource": "arn:aws:s3:::configured",
             "Action": ["s3:PutBucketCORS", "s3:GetBucketCORS", "s3:GetBucketPolicy"]}  # fmt: skip
    document = json.dumps({"Version": "2012-10-17", "Statement": [grant]})
    alice.put_bucket_policy(Bucket="configured", Policy=document)
    rules = {"CORSRules": [{"AllowedOrigins": ["https://site.example"], "AllowedMethods": ["GET"]}]}
    bob.put_bucket_cors(Bucket="configured", CORSConfiguration=rules)
    assert alice.get_bucket_cors(Bucket="configured")["CORSRules"] == rules["CORSRules"]
    with pytest.raises(ClientError) as error:
        bob.get_bucket_policy(Bucket="configured")
    assert error.value.response["Error"]["Code"] == "AccessDenied"
    admin = s3_client(users, users.admin)
    assert json.loads(admin.get_bucket_policy(Bucket="configured")["Policy"]) == json.loads(document)
    admin.delete_bucket_policy(Bucket="configured")
    with pytest.raises(ClientError) as error:
        alice.get_bucket_policy(Bucket="configured")
    assert error.value.response["Error"]["Code"] == "NoSuchBucketPolicy"
