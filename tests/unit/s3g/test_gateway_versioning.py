"""PutBucketVersioning's documents as no SDK sends them (issue 33, item 1): no body and another root are
MalformedXML, a configuration without Status changes nothing (Status is optional in Amazon's
VersioningConfiguration), MfaDelete Disabled is what every bucket is; and a versioned PUT's answer names
its version."""

from __future__ import annotations

from tests.unit.s3g.gateway_thread import GatewayOnThread

BUCKET = "raw-versioning"
NS = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'


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
