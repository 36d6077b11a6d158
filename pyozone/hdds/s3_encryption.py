"""S3's default encryption of a bucket (PutBucketEncryption's ServerSideEncryptionConfiguration): the
document and its checks. Sans-IO and in the kernel because both sides read it: OM keeps it
(om/bucket_documents.py) and encrypts with SSE-S3 every key of the bucket a writer asks no encryption for
(KeyManager.plan_open in om/keys.py), which makes it Ozone's encrypted bucket (bekInfo) in S3's words.

One Rule with ApplyServerSideEncryptionByDefault: SSEAlgorithm AES256 (aws:kms and aws:kms:dsse are
NotImplemented, KMSMasterKeyID belongs to them) and BucketKeyEnabled, which Amazon takes with AES256 and
which changes nothing there (S3 Bucket Keys are SSE-KMS's): kept as sent.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

ROOT = "ServerSideEncryptionConfiguration"
S3_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"
MAX_CONFIGURATION_BYTES = 4 * 1024
AES256 = "AES256"
KMS = ("aws:kms", "aws:kms:dsse")


class EncryptionConfigError(Exception):
    """A document S3 refuses, with its code (MalformedXML, InvalidArgument, NotImplemented)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class BucketEncryption:
    algorithm: str = AES256
    bucket_key_enabled: bool | None = None  # None: not given


def parse(body: bytes) -> BucketEncryption:
    if len(body) > MAX_CONFIGURATION_BYTES:
        raise EncryptionConfigError("MalformedXML", "The configuration is too long.")
    try:
        root = ET.fromstring(body)  # expat: no external entities
    except (ET.ParseError, LookupError, ValueError):
        raise EncryptionConfigError("MalformedXML", "The XML is not well-formed.") from None
    if _local(root.tag) != ROOT:
        raise EncryptionConfigError("MalformedXML", f"The root element must be {ROOT}.")
    rules = list(root)
    if len(rules) != 1 or _local(rules[0].tag) != "Rule":
        raise EncryptionConfigError("MalformedXML", f"{ROOT} holds exactly one Rule.")
    apply: ET.Element | None = None
    bucket_key: bool | None = None
    for child in rules[0]:
        name = _local(child.tag)
        if name == "ApplyServerSideEncryptionByDefault" and apply is None:
            apply = child
        elif name == "BucketKeyEnabled" and bucket_key is None:
            text = (child.text or "").strip().lower()
            if text not in ("true", "false"):
                raise EncryptionConfigError("MalformedXML", "BucketKeyEnabled is true or false.")
            bucket_key = text == "true"
        else:
            raise EncryptionConfigError("MalformedXML", f"{name} is not an element of Rule.")
    if apply is None:
        raise EncryptionConfigError("MalformedXML", "The Rule needs ApplyServerSideEncryptionByDefault.")
    values = {_local(c.tag): (c.text or "").strip() for c in apply}
    if len(values) != len(apply) or set(values) - {"SSEAlgorithm", "KMSMasterKeyID"}:
        raise EncryptionConfigError(
            "MalformedXML", "ApplyServerSideEncryptionByDefault's elements are wrong."
        )
    algorithm = values.get("SSEAlgorithm")
    if algorithm is None:
        raise EncryptionConfigError("MalformedXML", "ApplyServerSideEncryptionByDefault needs SSEAlgorithm.")
    if algorithm in KMS:
        raise EncryptionConfigError(
            "NotImplemented", f"Default encryption with {algorithm} (SSE-KMS) is not implemented."
        )
    if algorithm != AES256:
        raise EncryptionConfigError(
            "MalformedXML", f"SSEAlgorithm {algorithm!r} is not AES256, aws:kms or aws:kms:dsse."
        )
    if "KMSMasterKeyID" in values:
        raise EncryptionConfigError(
            "InvalidArgument",
            "a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms",
        )
    return BucketEncryption(algorithm, bucket_key)


def _local(tag: object) -> str:
    return str(tag).rsplit("}", 1)[-1]


def document(config: BucketEncryption) -> bytes:
    """The configuration as GetBucketEncryption answers it (and OM keeps it)."""
    root = ET.Element(ROOT, {"xmlns": S3_NAMESPACE})
    rule = ET.SubElement(root, "Rule")
    apply = ET.SubElement(rule, "ApplyServerSideEncryptionByDefault")
    ET.SubElement(apply, "SSEAlgorithm").text = config.algorithm
    if config.bucket_key_enabled is not None:
        ET.SubElement(rule, "BucketKeyEnabled").text = "true" if config.bucket_key_enabled else "false"
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8")
