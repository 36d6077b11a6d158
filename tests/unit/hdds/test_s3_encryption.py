"""A bucket's default encryption document (issue 33, item 7), checked from Amazon's PutBucketEncryption:
one Rule, AES256 kept, SSE-KMS NotImplemented, a KMS key with AES256 InvalidArgument, the rest
MalformedXML."""

from __future__ import annotations

import pytest

from pyozone.hdds.s3_encryption import BucketEncryption, EncryptionConfigError, document, parse

NS = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'


def config(rule: str, rules: int = 1) -> bytes:
    body = f"<Rule>{rule}</Rule>" * rules
    return f"<ServerSideEncryptionConfiguration {NS}>{body}</ServerSideEncryptionConfiguration>".encode()


AES = (
    "<ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm>"
    "</ApplyServerSideEncryptionByDefault>"
)


def test_aes256_is_kept_with_bucket_key_enabled_as_sent() -> None:
    assert parse(config(AES)) == BucketEncryption("AES256", None)
    kept = parse(config(AES + "<BucketKeyEnabled>true</BucketKeyEnabled>"))
    assert kept == BucketEncryption("AES256", True)
    assert parse(document(kept)) == kept
    assert b"BucketKeyEnabled" not in document(BucketEncryption())


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (config(AES.replace("AES256", "aws:kms")), "NotImplemented"),
        (config(AES.replace("AES256", "aws:kms:dsse")), "NotImplemented"),
        (
            config(AES.replace("</SSEAlgorithm>", "</SSEAlgorithm><KMSMasterKeyID>k</KMSMasterKeyID>")),
            "InvalidArgument",
        ),
        (config(AES.replace("AES256", "AES128")), "MalformedXML"),
        (config(AES, rules=2), "MalformedXML"),
        (config(AES, rules=0), "MalformedXML"),
        (config(""), "MalformedXML"),
        (config(AES + "<BucketKeyEnabled>maybe</BucketKeyEnabled>"), "MalformedXML"),
        (config(AES + "<Other/>"), "MalformedXML"),
        (b"<Nope/>", "MalformedXML"),
        (b"not xml", "MalformedXML"),
        (config(AES) + b" " * 5000, "MalformedXML"),
    ],
)
def test_what_amazon_refuses_is_refused_with_its_code(body: bytes, code: str) -> None:
    with pytest.raises(EncryptionConfigError) as e:
        parse(body)
    assert e.value.code == code
