"""S3's XML: building response documents and reading request bodies.

Request bodies are parsed whole (they are small: at most a few MB for 10,000 parts or 1,000 keys) with
the namespace stripped, since clients differ in whether they send S3's namespace. Anything that is not
the document S3 expects is MalformedXML, never a traceback.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from datetime import UTC, datetime
from email.utils import format_datetime

from pyozone.s3g.errors import S3Error, S3ErrorCode

S3_NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/"
MAX_XML_BODY = 4 << 20


def document(root: str, *children: ET.Element | None, namespace: bool = True) -> bytes:
    element = ET.Element(root, {"xmlns": S3_NAMESPACE} if namespace else {})
    element.extend(c for c in children if c is not None)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(element, encoding="utf-8")


def el(tag: str, text: object = None, *children: ET.Element | None) -> ET.Element:
    """An element with text (str() of it; booleans as S3 writes them) or with children."""
    element = ET.Element(tag)
    if text is not None:
        element.text = ("true" if text else "false") if isinstance(text, bool) else str(text)
    element.extend(c for c in children if c is not None)
    return element


def group(tag: str, children: Iterable[ET.Element | None]) -> ET.Element:
    element = ET.Element(tag)
    element.extend(c for c in children if c is not None)
    return element


def iso_time(ms: int) -> str:
    """S3's timestamps in XML: ISO 8601 with milliseconds, UTC."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def http_time(ms: int) -> str:
    """Last-Modified and friends: RFC 7231's IMF-fixdate."""
    return format_datetime(datetime.fromtimestamp(ms // 1000, UTC), usegmt=True)


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""What XML 1.0 cannot carry, even as a character reference (its Char production)."""


def _escaped(value: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", value)


def error_document(code: str, message: str, resource: str, request_id: str, **extra: str) -> bytes:
    """An error's document. What it echoes of the request (a field's name, a header's value, the path) is
    written with any character XML 1.0 cannot carry as `\\xNN`, so every SDK can read the code (R30's P3)."""
    children = [el("Code", code), el("Message", _escaped(message))]
    children += [el(name, _escaped(str(value))) for name, value in extra.items()]
    children += [el("Resource", _escaped(resource)), el("RequestId", request_id)]
    return document("Error", *children, namespace=False)


def parse(body: bytes, root: str) -> ET.Element:
    """The request document, namespaces stripped; its root must be `root`."""
    if len(body) > MAX_XML_BODY:
        raise S3Error(S3ErrorCode.MaxMessageLengthExceeded)
    try:
        element = ET.fromstring(body)
    except ET.ParseError:
        raise S3Error(S3ErrorCode.MalformedXML) from None
    for node in element.iter():
        if isinstance(node.tag, str) and "}" in node.tag:
            node.tag = node.tag.rsplit("}", 1)[1]
    if element.tag != root:
        raise S3Error(S3ErrorCode.MalformedXML)
    return element


def text(node: ET.Element, tag: str, required: bool = True) -> str | None:
    child = node.find(tag)
    if child is None:
        if required:
            raise S3Error(S3ErrorCode.MalformedXML)
        return None
    return child.text or ""
