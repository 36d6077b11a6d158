"""S3's object ownership controls of a bucket (PutBucketOwnershipControls' OwnershipControls): the document
and its checks. Sans-IO and in the kernel because OM checks a document before it keeps one
(om/bucket_documents.py) and the S3 gateway reads it to decide whether ACLs apply (s3g/acls.py).

Amazon's three ObjectOwnership values ("Controlling ownership of objects and disabling ACLs"):
BucketOwnerEnforced (ACLs disabled: the bucket's owner owns every object and only the owner-only ACLs may be
written), BucketOwnerPreferred and ObjectWriter (ACLs enabled). A bucket without controls (after
DeleteBucketOwnershipControls) has ACLs enabled, as ObjectWriter.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from enum import Enum

ROOT = "OwnershipControls"
S3_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"
MAX_CONFIGURATION_BYTES = 4 * 1024
"""One rule of one value: anything longer is not one Amazon's schema allows."""


class ObjectOwnership(Enum):
    BUCKET_OWNER_ENFORCED = "BucketOwnerEnforced"
    BUCKET_OWNER_PREFERRED = "BucketOwnerPreferred"
    OBJECT_WRITER = "ObjectWriter"

    @property
    def acls_enabled(self) -> bool:
        return self is not ObjectOwnership.BUCKET_OWNER_ENFORCED


DEFAULT = ObjectOwnership.BUCKET_OWNER_ENFORCED
"""A new bucket's, as Amazon's since April 2023 ("Default settings for new S3 buckets")."""


class OwnershipControlsError(Exception):
    """A document S3 refuses: MalformedXML."""

    code = "MalformedXML"


def ownership(value: str) -> ObjectOwnership:
    """x-amz-object-ownership's value, or an ObjectOwnership element's text (OwnershipControlsError)."""
    try:
        return ObjectOwnership(value.strip())
    except ValueError:
        raise OwnershipControlsError(f"{value!r} is not an ObjectOwnership.") from None


def parse(body: bytes) -> ObjectOwnership:
    """An OwnershipControls of one Rule holding one ObjectOwnership of Amazon's values; else MalformedXML."""
    if len(body) > MAX_CONFIGURATION_BYTES:
        raise OwnershipControlsError("The configuration is too long.")
    try:
        root = ET.fromstring(body)  # expat: no external entities
    except (ET.ParseError, LookupError, ValueError):
        raise OwnershipControlsError("The XML is not well-formed.") from None
    rules = list(root)
    if _local(root.tag) != ROOT or len(rules) != 1 or _local(rules[0].tag) != "Rule":
        raise OwnershipControlsError(f"{ROOT} holds one Rule.")
    values = list(rules[0])
    if len(values) != 1 or _local(values[0].tag) != "ObjectOwnership" or len(values[0]):
        raise OwnershipControlsError("A Rule holds one ObjectOwnership.")
    return ownership(values[0].text or "")


def _local(tag: object) -> str:
    return str(tag).rsplit("}", 1)[-1]


def document(value: ObjectOwnership) -> bytes:
    """The controls as GetBucketOwnershipControls answers them (and OM keeps them)."""
    root = ET.Element(ROOT, {"xmlns": S3_NAMESPACE})
    ET.SubElement(ET.SubElement(root, "Rule"), "ObjectOwnership").text = value.value
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8")
