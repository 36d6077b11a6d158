"""S3's PublicAccessBlock of a bucket (PutPublicAccessBlock's PublicAccessBlockConfiguration): the
document, its checks, and what a public ACL is. Sans-IO and in the kernel because both sides read it: OM
refuses a public policy under BlockPublicPolicy in the same step that keeps the policy
(om/bucket_documents.py), and the S3 gateway applies the other settings (s3g/policy.py).

The four settings ("Blocking public access to your Amazon S3 storage"), each false when absent:
BlockPublicAcls (a request that sets a public ACL is AccessDenied), IgnorePublicAcls (public ACLs grant
nothing), BlockPublicPolicy (PutBucketPolicy of a public policy is AccessDenied) and RestrictPublicBuckets
(a public policy grants nothing to anonymous requests).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, fields

ROOT = "PublicAccessBlockConfiguration"
S3_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"
MAX_CONFIGURATION_BYTES = 4 * 1024
"""Four booleans: anything longer is not one Amazon's schema allows."""
PUBLIC_CANNED_ACLS = frozenset({"public-read", "public-read-write", "authenticated-read"})
"""Canned ACLs that grant AllUsers or AuthenticatedUsers: public in Amazon's meaning."""


class PublicAccessBlockError(Exception):
    """A document S3 refuses: MalformedXML."""

    code = "MalformedXML"


@dataclass(frozen=True, slots=True)
class PublicAccessBlock:
    BlockPublicAcls: bool = False
    IgnorePublicAcls: bool = False
    BlockPublicPolicy: bool = False
    RestrictPublicBuckets: bool = False


NONE = PublicAccessBlock()
"""A bucket without a configuration: nothing blocked."""
_NAMES = tuple(f.name for f in fields(PublicAccessBlock))


def parse(body: bytes) -> PublicAccessBlock:
    """PutPublicAccessBlock's body: a PublicAccessBlockConfiguration of at most the four settings, each
    `true` or `false` once; anything else is MalformedXML."""
    if len(body) > MAX_CONFIGURATION_BYTES:
        raise PublicAccessBlockError("The configuration is too long.")
    try:
        root = ET.fromstring(body)  # expat: no external entities
    except (ET.ParseError, LookupError, ValueError):
        raise PublicAccessBlockError("The XML is not well-formed.") from None
    if _local(root.tag) != ROOT or (root.text or "").strip():
        raise PublicAccessBlockError(f"The root element must be {ROOT}.")
    values: dict[str, bool] = {}
    for child in root:
        name = _local(child.tag)
        text = (child.text or "").strip().lower()
        if name not in _NAMES or name in values or len(child) or text not in ("true", "false"):
            raise PublicAccessBlockError(f"{name} is not a setting of {ROOT} with a value true or false.")
        values[name] = text == "true"
    return PublicAccessBlock(**values)


def _local(tag: object) -> str:
    return str(tag).rsplit("}", 1)[-1]


def document(block: PublicAccessBlock) -> bytes:
    """The configuration as GetPublicAccessBlock answers it (and OM keeps it): every setting."""
    root = ET.Element(ROOT, {"xmlns": S3_NAMESPACE})
    for name in _NAMES:
        ET.SubElement(root, name).text = "true" if getattr(block, name) else "false"
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8")
