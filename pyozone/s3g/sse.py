"""S3 server-side encryption headers: what a request asks for, and what an answer says of an object.

SSE-S3 (`x-amz-server-side-encryption: AES256`) and SSE-C (`x-amz-server-side-encryption-customer-*`,
and a copy source's `x-amz-copy-source-server-side-encryption-customer-*`) are read here, with Amazon's
answers to bad ones; the encryption itself is the client's key streams' (client/crypto_streams.py). SSE-KMS
is NotImplemented. SSE-C travels the customer's key in a header: as Amazon, the gateway takes it over
HTTPS only (ozone.s3g.sse.customer.require.https, true; false for tests on a plain-HTTP cluster).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field

from pyozone.client.crypto_streams import CryptoKeyOutputStream
from pyozone.client.key_output import KeyOutputStream
from pyozone.hdds.security.sse import AES256, KEY_BYTES, KeyEncryption, SseAlgorithm, SseKeyError, key_md5
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.request import S3Request
from pyozone.s3g.routing import Operation

SSE = "x-amz-server-side-encryption"
CUSTOMER = "x-amz-server-side-encryption-customer-"
COPY_CUSTOMER = "x-amz-copy-source-server-side-encryption-customer-"
REQUIRE_HTTPS_KEY = "ozone.s3g.sse.customer.require.https"
_KMS = ("aws:kms", "aws:kms:dsse")
_KMS_HEADERS = (
    "x-amz-server-side-encryption-aws-kms-key-id",
    "x-amz-server-side-encryption-context",
)
BUCKET_KEY = "x-amz-server-side-encryption-bucket-key-enabled"


@dataclass(frozen=True, slots=True)
class WriteEncryption:
    """What a write asks for: SSE-S3 (`sse_s3`) or SSE-C (`customer_key`), or neither."""

    sse_s3: bool = False
    customer_key: bytes | None = field(default=None, repr=False)

    @property
    def asked(self) -> bool:
        return self.sse_s3 or self.customer_key is not None


def write_encryption(headers: Mapping[str, str], secure: bool, require_https: bool) -> WriteEncryption:
    """The encryption a PutObject, CopyObject or CreateMultipartUpload asks for. `secure`: it came over
    HTTPS (SSE-C is refused else, unless `require_https` is off)."""
    for name in _KMS_HEADERS:
        if name in headers:
            raise S3Error(S3ErrorCode.NotImplemented, f"SSE-KMS ({name}) is not implemented.")
    if headers.get(BUCKET_KEY, "").lower() == "true":  # Amazon: S3 Bucket Keys are SSE-KMS's alone
        raise S3Error(S3ErrorCode.NotImplemented, "S3 Bucket Keys (SSE-KMS) are not implemented.")
    customer = customer_key(headers, CUSTOMER, secure, require_https)
    value = headers.get(SSE)
    if value is None:
        return WriteEncryption(customer_key=customer)
    if value in _KMS:
        raise S3Error(
            S3ErrorCode.NotImplemented, f"Server-side encryption {value} (SSE-KMS) is not implemented."
        )
    if value != AES256:
        raise S3Error(
            S3ErrorCode.InvalidArgument, "The encryption method specified is not supported",
            ArgumentName=SSE, ArgumentValue=value,
        )  # fmt: skip
    if customer is not None:
        raise S3Error(
            S3ErrorCode.InvalidArgument,
            "Server Side Encryption with Customer provided key is incompatible with the encryption method "
            "specified",
            ArgumentName=SSE, ArgumentValue=value,
        )  # fmt: skip
    return WriteEncryption(sse_s3=True)


def refuse_sse_s3_on_read(headers: Mapping[str, str]) -> None:
    """x-amz-server-side-encryption belongs to the writes that make an object (PutObject, CopyObject,
    CreateMultipartUpload): Amazon refuses it on a GET or HEAD (400); a part is encrypted as its upload."""
    if SSE in headers:
        raise S3Error(
            S3ErrorCode.InvalidArgument, f"{SSE} is not valid on this request", ArgumentName=SSE,
            ArgumentValue=headers[SSE],
        )  # fmt: skip


def customer_key(headers: Mapping[str, str], prefix: str, secure: bool, require_https: bool) -> bytes | None:
    """The SSE-C key the request carries under `prefix` (its own object's, or a copy source's); None: none.
    Amazon wants all three headers, AES256, a 256-bit key and its MD5, and names the one missing."""
    algorithm = headers.get(prefix + "algorithm")
    key_b64 = headers.get(prefix + "key")
    md5 = headers.get(prefix + "key-md5")
    if algorithm is None and key_b64 is None and md5 is None:
        return None
    if require_https and not secure:
        raise S3Error(
            S3ErrorCode.InvalidRequest,
            "Requests specifying Server Side Encryption with Customer provided keys must be made over a "
            "secure connection.",
        )
    if algorithm is None:
        raise S3Error(
            S3ErrorCode.InvalidArgument,
            "Requests specifying Server Side Encryption with Customer provided keys must provide a valid "
            "encryption algorithm.",
            ArgumentName=prefix + "algorithm", ArgumentValue="null",
        )  # fmt: skip
    if algorithm != AES256:
        raise S3Error(
            S3ErrorCode.InvalidEncryptionAlgorithmError,
            "The encryption request you specified is not valid. The valid value is AES256.",
            ArgumentName=prefix + "algorithm", ArgumentValue=algorithm,
        )  # fmt: skip
    if key_b64 is None:
        raise S3Error(
            S3ErrorCode.InvalidArgument,
            "Requests specifying Server Side Encryption with Customer provided keys must provide an "
            "appropriate secret key.",
            ArgumentName=prefix + "key", ArgumentValue="null",
        )  # fmt: skip
    try:
        key = base64.b64decode(key_b64, validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != KEY_BYTES:
        raise S3Error(
            S3ErrorCode.InvalidArgument, "The secret key was invalid for the specified algorithm.",
            ArgumentName=prefix + "key", ArgumentValue="(redacted)",
        )  # fmt: skip
    if md5 is None:
        raise S3Error(
            S3ErrorCode.InvalidArgument,
            "Requests specifying Server Side Encryption with Customer provided keys must provide the client "
            "calculated MD5 of the secret key.",
            ArgumentName=prefix + "key-MD5", ArgumentValue="null",
        )  # fmt: skip
    if md5 != key_md5(key):
        raise S3Error(
            S3ErrorCode.InvalidArgument,
            "The calculated MD5 hash of the key did not match the hash that was provided.",
            ArgumentName=prefix + "key-MD5", ArgumentValue=md5,
        )  # fmt: skip
    return key


def check_read_key(encryption: KeyEncryption | None, key: bytes | None, copy_source: bool = False) -> None:
    """A read names the key of an SSE-C object, and of no other (Amazon: 400 InvalidRequest for a key
    missing, or given for an object not encrypted with one; 403 AccessDenied for another key)."""
    sse_c = encryption is not None and encryption.algorithm is SseAlgorithm.SSE_C
    if key is None and sse_c:
        raise key_missing("copy source" if copy_source else "object")
    if key is not None and not sse_c:
        raise S3Error(
            S3ErrorCode.InvalidRequest, "The encryption parameters are not applicable to this object."
        )
    if key is not None and encryption is not None and key_md5(key) != encryption.customer_key_md5:
        raise S3Error(S3ErrorCode.AccessDenied)


def part_checksums_shown(algorithm: SseAlgorithm, customer_key_md5: str, key: bytes | None) -> bool:
    """Whether ListParts shows the parts' checksums: an SSE-C upload's are of its plaintext, so only to a
    caller naming its key (Amazon's ListParts takes the SSE-C headers "only when the object was created
    using a checksum algorithm"; a guess of a part's plaintext could be confirmed by them, as the keyed
    ETag prevents); another key 403 AccessDenied, a key for an upload not SSE-C 400 InvalidRequest."""
    if algorithm is not SseAlgorithm.SSE_C:
        if key is not None:
            raise S3Error(
                S3ErrorCode.InvalidRequest, "The encryption parameters are not applicable to this object."
            )
        return True
    if key is None:
        return False
    if key_md5(key) != customer_key_md5:
        raise S3Error(S3ErrorCode.AccessDenied)
    return True


def key_missing(what: str) -> S3Error:
    """Amazon's InvalidRequest for an SSE-C `what` ("object", "copy source", "part") asked without its key."""
    if what == "part":
        return S3Error(
            S3ErrorCode.InvalidRequest,
            "The multipart upload initiate requested encryption. Subsequent part requests must include the "
            "appropriate encryption parameters.",
        )
    return S3Error(
        S3ErrorCode.InvalidRequest,
        f"The {what} was stored using a form of Server Side Encryption. The correct parameters must be "
        f"provided to retrieve the {what}.",
    )


def key_error(e: SseKeyError, what: str = "object") -> S3Error:
    """The client's refusal of an encrypted key read or part written without its key, in Amazon's words
    (check_read_key): never the client's, which names OM's path of the key (R36 F9)."""
    return key_missing(what) if e.missing else S3Error(S3ErrorCode.AccessDenied)


def answer_headers(encryption: KeyEncryption | None) -> dict[str, str]:
    """What an answer about the object says of its encryption (PUT, GET, HEAD, copies, multipart)."""
    if encryption is None:
        return {}
    if encryption.algorithm is SseAlgorithm.SSE_C:
        return {CUSTOMER + "algorithm": AES256, CUSTOMER + "key-MD5": encryption.customer_key_md5}
    return {SSE: AES256}


def started_headers(encryption: WriteEncryption, algorithm: SseAlgorithm) -> dict[str, str]:
    """CreateMultipartUpload's answer_headers: what it asked for, or its bucket's default (`algorithm`)."""
    if encryption.customer_key is not None:
        return {CUSTOMER + "algorithm": AES256, CUSTOMER + "key-MD5": key_md5(encryption.customer_key)}
    return {SSE: AES256} if algorithm is SseAlgorithm.SSE_S3 else {}


async def check_part_key(
    out: KeyOutputStream | CryptoKeyOutputStream, key: bytes | None
) -> KeyEncryption | None:
    """A part's open stream, checked against its upload as check_read_key checks a read (the stream is
    aborted when it fails); the upload's encryption."""
    encryption = out.encryption if isinstance(out, CryptoKeyOutputStream) else None
    try:
        check_read_key(encryption, key)
    except S3Error:  # a key missing was the client's SseKeyError already (key_error(e, "part"))
        await out.abort()
        raise
    return encryption


def etag(md5_hex: str, customer_key: bytes | None) -> str:
    """An object's or a part's ETag from its data's MD5: the MD5 itself, but an SSE-C one's, which is not
    (Amazon's is not either: the MD5 of the plaintext would let anyone confirm a guess of it) but an HMAC of
    it under the customer key, stable for the same data and key, so If-Match and a client's own comparisons
    still work. Every write (PUT, POST, copy, part, part copy) names its ETag here."""
    if customer_key is None:
        return md5_hex
    return hmac.new(customer_key, bytes.fromhex(md5_hex), hashlib.md5).hexdigest()


OPERATIONS = frozenset(
    {Operation.PUT_OBJECT, Operation.GET_OBJECT, Operation.HEAD_OBJECT, Operation.COPY_OBJECT,
     Operation.CREATE_MULTIPART_UPLOAD, Operation.UPLOAD_PART, Operation.UPLOAD_PART_COPY,
     Operation.COMPLETE_MULTIPART_UPLOAD, Operation.GET_OBJECT_ATTRIBUTES, Operation.LIST_PARTS}
)  # fmt: skip
"""The operations that read the encryption headers (the others refuse them: headers.refuse_unimplemented)."""


def requested(s3: S3Request) -> WriteEncryption:
    """write_encryption of the request, over its connection, under the gateway's settings."""
    return write_encryption(s3.headers, s3.http.secure, s3.gateway.settings.sse_customer_require_https)


def request_key(s3: S3Request, prefix: str = CUSTOMER) -> bytes | None:
    """The SSE-C key a read names (`prefix`: COPY_CUSTOMER for a copy's source)."""
    return customer_key(s3.headers, prefix, s3.http.secure, s3.gateway.settings.sse_customer_require_https)
