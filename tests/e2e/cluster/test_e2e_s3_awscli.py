"""The S3 gateway through the AWS CLI v1 (its own venv, .venv-awscli: it pins its botocore) on a live
cluster: the client scenario of tests/e2e/cluster/s3_scenario.py. `aws s3 cp` uploads in 8 MB parts above
8 MB, downloads in ranged GETs and copies large objects by UploadPartCopy; `aws s3api` makes single calls.
awscli v1 presigns with SigV2 unless `s3.signature_version = s3v4`: the gateway, like S3's newer regions,
refuses SigV2 (InvalidRequest), so the config asks for SigV4."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cluster import s3_scenario as sc
from tests.e2e.cluster.s3_cluster import S3Endpoint, s3_cluster

AWS = sc.REPO / ".venv-awscli" / "bin" / "aws"
CONFIG = """[default]
region = us-east-1
max_attempts = 1
s3 =
    addressing_style = path
    signature_version = s3v4
    multipart_threshold = 8MB
    multipart_chunksize = 8MB
"""

pytestmark = [
    pytest.mark.skipif(not AWS.exists(), reason="no .venv-awscli: run scripts/client_venvs.sh"),
    pytest.mark.slow,  # about 40 `aws` process starts: the default suite's budget goes to the other clients
]


@dataclass(frozen=True, slots=True)
class Aws:
    """`aws` with its own config (path-style addressing) and the cluster user's keys, nothing from ~/.aws."""

    endpoint: S3Endpoint
    home: Path

    def env(self, secret_key: str | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(
            AWS_CONFIG_FILE=str(self.home / "config"),
            AWS_SHARED_CREDENTIALS_FILE=str(self.home / "credentials"),
            AWS_ACCESS_KEY_ID=self.endpoint.access_key,
            AWS_SECRET_ACCESS_KEY=secret_key or self.endpoint.secret_key,
            AWS_EC2_METADATA_DISABLED="true",
            HOME=str(self.home),
        )
        return env

    def run(self, *args: str, secret_key: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(AWS), "--endpoint-url", self.endpoint.url, *args],
            env=self.env(secret_key),
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )

    def ok(self, *args: str) -> str:
        done = self.run(*args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout

    def api(self, operation: str, *args: str) -> Any:
        out = self.ok("s3api", operation, "--bucket", sc.BUCKET, "--output", "json", *args)
        return json.loads(out) if out.strip() else {}


@pytest.fixture(scope="module")
def s3(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    with s3_cluster(request, tmp_path_factory, "s3-awscli") as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def aws(s3: S3Endpoint, tmp_path_factory: pytest.TempPathFactory) -> Aws:
    home = tmp_path_factory.mktemp("aws-home")
    (home / "config").write_text(CONFIG)
    (home / "credentials").write_text("")
    cli = Aws(s3, home)
    cli.api("create-bucket")
    return cli


def uri(key: str) -> str:
    return f"s3://{sc.BUCKET}/{key}"


def test_buckets(aws: Aws) -> None:
    assert sc.BUCKET in aws.ok("s3", "ls").split()
    aws.api("head-bucket")
    assert aws.api("get-bucket-location")["LocationConstraint"] is None


@pytest.mark.parametrize("name", sc.SIZES)
def test_objects_round_trip_with_md5_etags(aws: Aws, tmp_path: Path, name: str) -> None:
    data = sc.payload(name, sc.SIZES[name])
    (tmp_path / "up").write_bytes(data)
    aws.ok("s3", "cp", str(tmp_path / "up"), uri(sc.object_key(name)))
    head = aws.api("head-object", "--key", sc.object_key(name))
    multipart = len(data) >= sc.PART_SIZE
    want = sc.multipart_etag(data, sc.PART_SIZE) if multipart else sc.md5_hex(data)
    assert (head["ContentLength"], head["ETag"]) == (len(data), f'"{want}"')
    aws.ok("s3", "cp", uri(sc.object_key(name)), str(tmp_path / "down"))
    assert sc.md5_hex((tmp_path / "down").read_bytes()) == sc.md5_hex(data)


def test_put_and_get_object_by_s3api(aws: Aws, tmp_path: Path) -> None:
    data = sc.payload("1KB", sc.SIZES["1KB"])
    (tmp_path / "up").write_bytes(data)
    put = aws.api(
        "put-object", "--key", "api/1KB", "--body", str(tmp_path / "up"), "--metadata", "colour=blue"
    )
    assert put["ETag"] == f'"{sc.md5_hex(data)}"'
    got = aws.api("get-object", "--key", "api/1KB", str(tmp_path / "down"))
    assert (got["ContentLength"], got["Metadata"]) == (len(data), {"colour": "blue"})
    assert (tmp_path / "down").read_bytes() == data


def test_ranged_reads(aws: Aws, tmp_path: Path) -> None:
    data = sc.payload("ranges", sc.RANGE_SIZE)
    (tmp_path / "up").write_bytes(data)
    aws.ok("s3", "cp", str(tmp_path / "up"), uri("ranges"))
    for first, last in [*sc.RANGES, (len(data) - 10, len(data) + 100)]:
        got = aws.api(
            "get-object", "--key", "ranges", "--range", f"bytes={first}-{last}", str(tmp_path / "r")
        )
        end = min(last, len(data) - 1)
        assert got["ContentRange"] == f"bytes {first}-{end}/{len(data)}"
        assert (tmp_path / "r").read_bytes() == data[first : end + 1]
    refused = aws.run("s3api", "get-object", "--bucket", sc.BUCKET, "--key", "ranges",
                      "--range", f"bytes={len(data)}-", str(tmp_path / "r"))  # fmt: skip
    assert refused.returncode != 0 and "InvalidRange" in refused.stderr


def test_listing_with_a_delimiter_and_pages(aws: Aws, tmp_path: Path) -> None:
    for key in sc.TREE:
        (tmp_path / key).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / key).write_bytes(key.encode())
    aws.ok("s3", "cp", "--recursive", str(tmp_path / "tree"), uri("tree/"))
    top = aws.api("list-objects-v2", "--prefix", "tree/", "--delimiter", "/")
    assert [p["Prefix"] for p in top["CommonPrefixes"]] == sc.TOP_PREFIXES
    assert [c["Key"] for c in top["Contents"]] == sc.TOP_KEYS
    paged = aws.api("list-objects-v2", "--prefix", "tree/", "--page-size", str(sc.PAGE_SIZE))
    assert [c["Key"] for c in paged["Contents"]] == sorted(sc.TREE)
    first = aws.api("list-objects-v2", "--prefix", "tree/", "--page-size", "3", "--max-items", "5")
    rest = aws.api(
        "list-objects-v2", "--prefix", "tree/", "--page-size", "3", "--starting-token", first["NextToken"]
    )
    assert [c["Key"] for c in first["Contents"] + rest["Contents"]] == sorted(sc.TREE)
    v1 = aws.api("list-objects", "--prefix", "tree/", "--delimiter", "/", "--page-size", "2")
    assert [p["Prefix"] for p in v1["CommonPrefixes"]] == sc.TOP_PREFIXES
    assert [c["Key"] for c in v1["Contents"]] == sc.TOP_KEYS
    listed = aws.ok("s3", "ls", uri("tree/")).splitlines()
    assert sorted(line.split()[-1] for line in listed) == ["a/", "b/", "c/", "top1", "top2"]


def test_copy_and_batch_delete(aws: Aws, tmp_path: Path) -> None:
    (tmp_path / "src").write_bytes(b"copy me")
    aws.ok("s3", "cp", str(tmp_path / "src"), uri("src"))
    aws.api("copy-object", "--key", "dst", "--copy-source", f"{sc.BUCKET}/src")
    aws.api("get-object", "--key", "dst", str(tmp_path / "dst"))
    assert (tmp_path / "dst").read_bytes() == b"copy me"
    data = sc.payload("20MB", sc.SIZES["20MB"])
    (tmp_path / "big").write_bytes(data)
    aws.ok("s3", "cp", str(tmp_path / "big"), uri("big"))
    aws.ok("s3", "cp", uri("big"), uri("copies/big"))  # above 8 MB: UploadPartCopy in ranges of the source
    assert aws.api("head-object", "--key", "copies/big")["ContentLength"] == len(data)
    aws.ok("s3", "cp", uri("copies/big"), str(tmp_path / "big-copy"))
    assert sc.md5_hex((tmp_path / "big-copy").read_bytes()) == sc.md5_hex(data)
    objects = json.dumps({"Objects": [{"Key": k} for k in ("src", "dst", "big", "never-was")]})
    deleted = aws.api("delete-objects", "--delete", objects)
    assert sorted(d["Key"] for d in deleted["Deleted"]) == ["big", "dst", "never-was", "src"]
    aws.ok("s3", "rm", "--recursive", uri("copies/"))
    for prefix in ("src", "dst", "big", "copies/"):
        assert "Contents" not in aws.api("list-objects-v2", "--prefix", prefix)


def test_presigned_get_with_curl(aws: Aws, tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(sc.PRESIGNED_BODY)
    aws.ok("s3", "cp", str(tmp_path / "f"), uri(sc.PRESIGNED_KEY))
    url = aws.ok("s3", "presign", uri(sc.PRESIGNED_KEY), "--expires-in", "300").strip()
    done = sc.curl(url)
    assert done.returncode == 0 and done.stdout == sc.PRESIGNED_BODY, done.stderr
    tampered = sc.curl(url.replace("shared%20file.txt", "other.txt"))
    assert b"<Code>SignatureDoesNotMatch</Code>" in tampered.stdout


def test_a_wrong_secret_is_refused(aws: Aws) -> None:
    done = aws.run("s3api", "list-buckets", secret_key="not-the-secret")
    assert done.returncode != 0 and "SignatureDoesNotMatch" in done.stderr, done.stderr
    done = aws.run("s3", "ls", uri(""), secret_key="not-the-secret")
    assert done.returncode != 0 and "SignatureDoesNotMatch" in done.stderr, done.stderr


def test_get_object_attributes_round_trip(aws: Aws, tmp_path: Path) -> None:
    """`aws s3 cp` uploads 20 MB in 8 MB parts; `aws s3api get-object-attributes` reads its attributes and
    parts, and a part of it back by `get-object --part-number` (issue 33, item 2)."""
    data = sc.payload("attributes", sc.SIZES["20MB"])
    (tmp_path / "up").write_bytes(data)
    aws.ok("s3", "cp", str(tmp_path / "up"), uri("attributes"))
    got = aws.api(
        "get-object-attributes", "--key", "attributes",
        "--object-attributes", "ETag", "ObjectSize", "StorageClass", "ObjectParts",
    )  # fmt: skip
    assert got["ETag"] == sc.multipart_etag(data, sc.PART_SIZE)
    assert (got["ObjectSize"], got["StorageClass"]) == (len(data), "STANDARD")
    assert got["ObjectParts"]["TotalPartsCount"] == 3
    part = aws.api("get-object", "--key", "attributes", "--part-number", "2", str(tmp_path / "part"))
    assert (part["PartsCount"], part["ContentLength"]) == (3, sc.PART_SIZE)
    assert (tmp_path / "part").read_bytes() == data[sc.PART_SIZE : 2 * sc.PART_SIZE]
    done = aws.run("s3api", "get-object-attributes", "--bucket", sc.BUCKET, "--key", "attributes",
                   "--object-attributes", "Colour")  # fmt: skip
    assert done.returncode != 0 and "InvalidArgument" in done.stderr, done.stderr


def test_checksums_round_trip(aws: Aws, tmp_path: Path) -> None:
    """`aws s3 cp --checksum-algorithm`, `s3api put-object --checksum-algorithm` and head-object
    --checksum-mode ENABLED; a multipart upload's composite checksum; a wrong value BadDigest (issue 33,
    item 2)."""
    data = b"checked by the cli"
    (tmp_path / "up").write_bytes(data)
    up = str(tmp_path / "up")
    aws.ok("s3api", "put-object", "--bucket", sc.BUCKET, "--key", "sum-sha256", "--body", up,
           "--checksum-algorithm", "SHA256")  # fmt: skip
    head = aws.api("head-object", "--key", "sum-sha256", "--checksum-mode", "ENABLED")
    assert head["ChecksumSHA256"] == base64.b64encode(hashlib.sha256(data).digest()).decode()
    big = sc.payload("checksums", sc.SIZES["20MB"])
    (tmp_path / "big").write_bytes(big)
    aws.ok("s3", "cp", str(tmp_path / "big"), uri("sum-crc32"), "--checksum-algorithm", "CRC32")
    head = aws.api("head-object", "--key", "sum-crc32", "--checksum-mode", "ENABLED")
    assert head["ChecksumCRC32"].endswith("-3"), head  # COMPOSITE: a CRC of the parts' CRCs, 3 parts
    aws.ok("s3", "cp", uri("sum-crc32"), str(tmp_path / "down"))
    assert (tmp_path / "down").read_bytes() == big
    wrong = aws.run("s3api", "put-object", "--bucket", sc.BUCKET, "--key", "sum-wrong", "--body", up,
                    "--checksum-sha256", "A" * 43 + "=")  # fmt: skip
    assert wrong.returncode != 0 and "BadDigest" in wrong.stderr, wrong.stderr


def test_versioning_round_trip(aws: Aws, tmp_path: Path) -> None:
    """put-bucket-versioning, versioned puts, a delete marker, list-object-versions and a read by version id
    (issue 33, item 1)."""
    bucket = ("--bucket", "versioned-cli")
    aws.ok("s3api", "create-bucket", *bucket)
    aws.ok("s3api", "put-bucket-versioning", *bucket, "--versioning-configuration", "Status=Enabled")
    state = json.loads(aws.ok("s3api", "get-bucket-versioning", *bucket, "--output", "json"))
    assert state == {"Status": "Enabled"}
    ids = []
    for text in (b"one", b"two"):
        (tmp_path / "up").write_bytes(text)
        put = aws.ok(
            "s3api", "put-object", *bucket, "--key", "k", "--body", str(tmp_path / "up"), "--output", "json"
        )
        ids.append(json.loads(put)["VersionId"])
    deleted = json.loads(aws.ok("s3api", "delete-object", *bucket, "--key", "k", "--output", "json"))
    assert deleted["DeleteMarker"] is True
    listed = json.loads(aws.ok("s3api", "list-object-versions", *bucket, "--output", "json"))
    assert [(v["VersionId"], v["IsLatest"]) for v in listed["Versions"]] == [(ids[1], False), (ids[0], False)]
    assert [(m["VersionId"], m["IsLatest"]) for m in listed["DeleteMarkers"]] == [
        (deleted["VersionId"], True)
    ]
    aws.ok("s3api", "get-object", *bucket, "--key", "k", "--version-id", ids[0], str(tmp_path / "down"))
    assert (tmp_path / "down").read_bytes() == b"one"
    missing = aws.run("s3api", "get-object", *bucket, "--key", "k", str(tmp_path / "gone"))
    assert missing.returncode != 0 and "NoSuchKey" in missing.stderr


def test_lifecycle_round_trip(aws: Aws, tmp_path: Path) -> None:
    """put-bucket-lifecycle-configuration, get, delete, and a refusal in Amazon's words (issue 33, item 4)."""
    bucket = ("--bucket", "lifecycle-cli")
    aws.ok("s3api", "create-bucket", *bucket)
    rules = {"Rules": [{"ID": "logs", "Filter": {"Prefix": "logs/"}, "Status": "Enabled",
                        "Expiration": {"Days": 30},
                        "NoncurrentVersionExpiration": {"NoncurrentDays": 7},
                        "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 2}}]}  # fmt: skip
    (tmp_path / "rules.json").write_text(json.dumps(rules))
    config = ("--lifecycle-configuration", f"file://{tmp_path / 'rules.json'}")
    aws.ok("s3api", "put-bucket-lifecycle-configuration", *bucket, *config)
    got = json.loads(aws.ok("s3api", "get-bucket-lifecycle-configuration", *bucket, "--output", "json"))
    assert got["Rules"] == rules["Rules"]
    aws.ok("s3api", "delete-bucket-lifecycle", *bucket)
    missing = aws.run("s3api", "get-bucket-lifecycle-configuration", *bucket)
    assert missing.returncode != 0 and "NoSuchLifecycleConfiguration" in missing.stderr
    rules["Rules"][0]["Expiration"] = {"Days": 0}
    (tmp_path / "rules.json").write_text(json.dumps(rules))
    refused = aws.run("s3api", "put-bucket-lifecycle-configuration", *bucket, *config)
    assert refused.returncode != 0 and "InvalidArgument" in refused.stderr


def test_object_lock_round_trip(aws: Aws, tmp_path: Path) -> None:
    """create-bucket --object-lock-enabled-for-bucket, put/get-object-lock-configuration, a put with
    retention, get-object-retention, a refused delete of the version and the legal hold (issue 33, item 6)."""
    bucket = ("--bucket", "locked-cli")
    aws.ok("s3api", "create-bucket", *bucket, "--object-lock-enabled-for-bucket")
    config = (
        '{"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}}'
    )
    aws.ok("s3api", "put-object-lock-configuration", *bucket, "--object-lock-configuration", config)
    got = json.loads(aws.ok("s3api", "get-object-lock-configuration", *bucket, "--output", "json"))
    assert got["ObjectLockConfiguration"] == json.loads(config)
    (tmp_path / "up").write_bytes(b"locked")
    put = aws.ok(
        "s3api", "put-object", *bucket, "--key", "k", "--body", str(tmp_path / "up"), "--object-lock-mode",
        "COMPLIANCE", "--object-lock-retain-until-date", "2099-01-01T00:00:00Z", "--output", "json",
    )  # fmt: skip
    version = json.loads(put)["VersionId"]
    retention = json.loads(aws.ok("s3api", "get-object-retention", *bucket, "--key", "k", "--output", "json"))
    assert retention["Retention"]["Mode"] == "COMPLIANCE"
    assert retention["Retention"]["RetainUntilDate"].startswith("2099-01-01T00:00:00")
    refused = aws.run("s3api", "delete-object", *bucket, "--key", "k", "--version-id", version)
    assert refused.returncode != 0 and "AccessDenied" in refused.stderr
    aws.ok("s3api", "put-object-legal-hold", *bucket, "--key", "k", "--legal-hold", "Status=ON")
    hold = json.loads(aws.ok("s3api", "get-object-legal-hold", *bucket, "--key", "k", "--output", "json"))
    assert hold == {"LegalHold": {"Status": "ON"}}
    suspended = aws.run(
        "s3api", "put-bucket-versioning", *bucket, "--versioning-configuration", "Status=Suspended"
    )
    assert suspended.returncode != 0 and "InvalidBucketState" in suspended.stderr


def test_object_acl_round_trip(aws: Aws, tmp_path: Path) -> None:
    """Issue 33, item 5: `put-object-acl --acl public-read` where the bucket's ACLs are enabled, read back
    by `get-object-acl`; under BucketOwnerEnforced (a new bucket's) it is AccessControlListNotSupported."""
    body = tmp_path / "acl.txt"
    body.write_bytes(b"acl")
    aws.api("put-object", "--key", "acl.txt", "--body", str(body))
    refused = aws.run(
        "s3api", "put-object-acl", "--bucket", sc.BUCKET, "--key", "acl.txt", "--acl", "public-read"
    )
    assert refused.returncode != 0 and "AccessControlListNotSupported" in refused.stderr
    controls = json.dumps({"Rules": [{"ObjectOwnership": "ObjectWriter"}]})
    aws.api("put-bucket-ownership-controls", "--ownership-controls", controls)
    aws.api("put-object-acl", "--key", "acl.txt", "--acl", "public-read")
    grants = aws.api("get-object-acl", "--key", "acl.txt")["Grants"]
    assert {"Grantee": {"Type": "Group", "URI": "http://acs.amazonaws.com/groups/global/AllUsers"},
            "Permission": "READ"} in grants  # fmt: skip
    aws.api("put-object-acl", "--key", "acl.txt", "--acl", "private")
    assert [g["Permission"] for g in aws.api("get-object-acl", "--key", "acl.txt")["Grants"]] == [
        "FULL_CONTROL"
    ]
    aws.api("delete-bucket-ownership-controls")
    gone = aws.run("s3api", "get-bucket-ownership-controls", "--bucket", sc.BUCKET)
    assert gone.returncode != 0 and "OwnershipControlsNotFoundError" in gone.stderr
