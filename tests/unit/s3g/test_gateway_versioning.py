"""PutBucketVersioning's documents as no SDK sends them (issue 33, item 1): no body and another root are
MalformedXML, a configuration without Status changes nothing (Status is optional in Amazon's
VersioningConfiguration), MfaDelete Disabled is what every bucket is; and a versioned PUT's answer names
its version."""

from __future__ import annotations

import base64
import hashlib
import xml.etree.ElementTree as ET
from dataclasses import replace

from pyozone.om.metadata import OBJECT_VERSION_TABLE, version_key
from pyozone.protocol.om_records import encode_key
from tests.unit.s3g.gateway_thread import GatewayOnThread

BUCKET = "raw-versioning"
S3_NS = "http://s3.amazonaws.com/doc/2006-03-01/"
NS = f'xmlns="{S3_NS}"'


def test_put_bucket_versioning_documents(gateway: GatewayOnThread) -> None:
    s3 = gateway.boto3()
    s3.create_bucket(Bucket=BUCKET)
    for body in (b"", b"<Versioning><Status>Enabled</Status></Versioning>", b"<VersioningConfiguration>"):
        status, text = gateway.signed_request("PUT", f"/{BUCKET}?versioning", body)
        assert status == 400 and "<Code>MalformedXML</Code>" in text, (body, text)
    status, _ = gateway.signed_request(
        "PUT", f"/{BUCKET}?versioning", f"<VersioningConfiguration {NS}/>".encode()
    )
    assert status == 200
    assert "Status" not in s3.get_bucket_versioning(Bucket=BUCKET)
    document = f"<VersioningConfiguration {NS}><Status>Suspended</Status><MfaDelete>Disabled</MfaDelete>"
    status, _ = gateway.signed_request(
        "PUT", f"/{BUCKET}?versioning", (document + "</VersioningConfiguration>").encode()
    )
    assert status == 200
    assert s3.get_bucket_versioning(Bucket=BUCKET)["Status"] == "Suspended"
    assert s3.put_object(Bucket=BUCKET, Key="k", Body=b"")["VersionId"] == "null"  # no datanodes here


def test_an_empty_version_id_names_no_version(gateway: GatewayOnThread) -> None:
    """R32's F4: `?versionId=` is not "no version": GET, HEAD and DELETE are 400 InvalidArgument ("Version
    id cannot be the empty string", as Amazon answers), and an empty VersionId in DeleteObjects is that
    entry's NoSuchVersion; nothing is read, no marker is added."""
    s3 = gateway.boto3()
    bucket = "empty-version-id"
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    s3.put_object(Bucket=bucket, Key="k", Body=b"")
    for method in ("GET", "HEAD", "DELETE"):
        status, text = gateway.signed_request(method, f"/{bucket}/k?versionId=")
        assert status == 400, (method, status)
        assert method == "HEAD" or "<Code>InvalidArgument</Code>" in text, text
    body = f"<Delete {NS}><Object><Key>k</Key><VersionId></VersionId></Object></Delete>".encode()
    digest = base64.b64encode(hashlib.md5(body).digest()).decode()
    status, text = gateway.signed_request("POST", f"/{bucket}?delete", body, {"Content-MD5": digest})
    assert status == 200 and "<Code>NoSuchVersion</Code>" in text and "<Deleted>" not in text, text
    listed = s3.list_object_versions(Bucket=bucket)
    assert "DeleteMarkers" not in listed and [v["IsLatest"] for v in listed["Versions"]] == [True]


def test_a_conditional_delete_of_a_version_is_not_implemented(gateway: GatewayOnThread) -> None:
    """R32's F5: DeleteObject with a versionId and If-Match is 501 NotImplemented, the version kept."""
    s3 = gateway.boto3()
    bucket = "conditional-version"
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    version = s3.put_object(Bucket=bucket, Key="k", Body=b"")["VersionId"]
    status, text = gateway.signed_request(
        "DELETE", f"/{bucket}/k?versionId={version}", headers={"If-Match": '"not-the-etag"'}
    )
    assert status == 501 and "<Code>NotImplemented</Code>" in text, text
    assert [v["VersionId"] for v in s3.list_object_versions(Bucket=bucket)["Versions"]] == [version]


def test_list_then_delete_pages_reach_every_version(gateway: GatewayOnThread) -> None:
    """R32's F3 and F6: the loop tools run to empty a bucket (list a page, delete what it listed, ask the
    next page from NextKeyMarker/NextVersionIdMarker) reaches every version when a page ends on a `null`
    version, and the key's latest on a follow-on page is IsLatest."""
    s3 = gateway.boto3()
    bucket = "list-then-delete"
    s3.create_bucket(Bucket=bucket)
    for state in ("Enabled", "Suspended", "Enabled"):
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": state})
        s3.put_object(Bucket=bucket, Key="k", Body=b"")
    s3.put_object(Bucket=bucket, Key="z", Body=b"")
    markers: dict[str, str] = {}
    seen = []
    while True:
        page = s3.list_object_versions(Bucket=bucket, MaxKeys=2, **markers)
        listed = page.get("Versions", [])
        seen += [(v["Key"], v["VersionId"], v["IsLatest"]) for v in listed]
        for v in listed:
            s3.delete_object(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"])
        if not page["IsTruncated"]:
            break
        markers = {"KeyMarker": page["NextKeyMarker"], "VersionIdMarker": page["NextVersionIdMarker"]}
    assert [key for key, _, _ in seen] == ["k", "k", "k", "z"]
    assert seen[1][1] == "null" and [latest for _, _, latest in seen] == [True, False, True, True]
    assert "Versions" not in s3.list_object_versions(Bucket=bucket)
    s3.delete_bucket(Bucket=bucket)


def test_a_control_character_never_reaches_the_version_listing(gateway: GatewayOnThread) -> None:
    """R32's F1b: a DELETE of a name holding a control character is refused like its PUT (it wrote a
    marker), and a marker written under one before (put here straight into om.db) is left out of a
    listing without encoding-type=url, which stays well-formed XML, and listed URL-encoded with it."""
    s3 = gateway.boto3()
    bucket = "control-characters"
    s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    s3.put_object(Bucket=bucket, Key="doc", Body=b"")
    for method in ("PUT", "DELETE"):
        status, text = gateway.signed_request(method, f"/{bucket}/a%01")
        assert status == 400 and "<Code>InvalidArgument</Code>" in text, (method, text)
    core = gateway.om.core
    assert core is not None
    volume = gateway.gateway.settings.volume
    current = core.keys.find(volume, bucket, "doc")
    assert current is not None
    legacy = replace(current, key="doc\x00" + "0" * 16, delete_marker=True, version_seq=1 << 40)
    core.store.write(
        [
            (
                OBJECT_VERSION_TABLE,
                version_key(volume, bucket, legacy.key, legacy.version_seq),
                encode_key(legacy),
            )
        ]
    )
    status, text = gateway.signed_request("GET", f"/{bucket}?versions")
    assert status == 200
    entries = [e for e in ET.fromstring(text) if e.tag.endswith(("}Version", "}DeleteMarker"))]
    assert [e.findtext(f"{{{S3_NS}}}Key") for e in entries] == ["doc"]
    listed = s3.list_object_versions(Bucket=bucket, EncodingType="url")
    assert [m["Key"] for m in listed["DeleteMarkers"]] == ["doc%00" + "0" * 16]  # as sent: not decoded
