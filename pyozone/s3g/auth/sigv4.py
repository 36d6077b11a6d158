"""AWS Signature Version 4 as S3 checks it: header auth and presigned URLs, pure functions, no I/O.

`parse` reads the request's auth elements and refuses what S3 refuses before any secret is needed (shape,
dates, skew, expiry, unsigned x-amz-* headers). The gateway then looks the signing key up by the parsed
(access key, date, region, service) -- the secret stays in OM -- and `verify` rebuilds the canonical request
and compares signatures in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

from pyozone.s3g.auth.canonical import (
    Headers,
    canonical_headers,
    canonical_query,
    canonical_uri,
    header_value,
    query_pairs,
)
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.numbers import decimal

ALGORITHM = "AWS4-HMAC-SHA256"
TERMINATOR = "aws4_request"
SERVICE = "s3"
MAX_SKEW = timedelta(minutes=15)
MAX_EXPIRES = 604800  # a week, S3's limit for X-Amz-Expires

UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
STREAMING_PAYLOAD = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
STREAMING_PAYLOAD_TRAILER = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
STREAMING_UNSIGNED_PAYLOAD_TRAILER = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
_SIGV4A_PAYLOADS = frozenset(
    {"STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD", "STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER"}
)
PAYLOAD_KEYWORDS = frozenset(
    {UNSIGNED_PAYLOAD, STREAMING_PAYLOAD, STREAMING_PAYLOAD_TRAILER, STREAMING_UNSIGNED_PAYLOAD_TRAILER}
)

_AMZ_DATE = re.compile(r"\d{8}T\d{6}Z")
_SCOPE_DATE = re.compile(r"\d{8}")
_SHA256_HEX = re.compile(r"[0-9a-fA-F]{64}")
PRESIGN_PARAMS = (
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Signature",
    "X-Amz-Date",
    "X-Amz-SignedHeaders",
    "X-Amz-Expires",
)
_SIGV4A = "AWS4-ECDSA-P256-SHA256"
_NOT_SUPPORTED = (
    "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256."
)
_NO_DATE = "AWS authentication requires a valid Date or x-amz-date header"
_Refusal = Callable[[str], S3Error]


@dataclass(frozen=True)
class SignedRequest:
    """A request's SigV4 elements, checked for shape and time but not yet for the signature."""

    access_key: str
    date: str  # YYYYMMDD, the credential scope's date
    region: str
    service: str
    signed_headers: tuple[str, ...]
    signature: str
    amz_date: str  # YYYYMMDDTHHMMSSZ, the timestamp the string to sign carries
    payload_hash: str  # a hex SHA-256 or one of PAYLOAD_KEYWORDS
    presigned: bool
    expires: int | None  # seconds, presigned URLs only

    @property
    def scope(self) -> str:
        return f"{self.date}/{self.region}/{self.service}/{TERMINATOR}"


@dataclass(frozen=True)
class PostSignature:
    """A browser form's SigV4 elements (POST Object): the string to sign is the base64 policy itself,
    signed with the key of the credential's date, region and service."""

    access_key: str
    date: str
    region: str
    service: str
    amz_date: str
    signature: str


class Unsigned(S3Error):
    """A request with no signature at all (anonymous): AccessDenied, unless the gateway can say more (S3
    answers NoSuchBucket for a bucket that does not exist, signed or not)."""

    def __init__(self) -> None:
        super().__init__(S3ErrorCode.AccessDenied)


def signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    """The key derived from the secret for one day, region and service (what OM may hand out)."""
    key = _hmac(f"AWS4{secret}".encode(), date)
    for part in (region, service, TERMINATOR):
        key = _hmac(key, part)
    return key


def parse(raw_query: str, headers: Headers, now: datetime, *, region: str | None = None) -> SignedRequest:
    """Read the auth elements of a request (header or presigned URL); `region`, if given, must match."""
    params = {name.decode("utf-8", "replace"): value for name, value in query_pairs(raw_query)}
    authorization = header_value(headers, "authorization")
    if "Signature" in params and "AWSAccessKeyId" in params:
        raise S3Error(S3ErrorCode.InvalidRequest, _NOT_SUPPORTED)
    if any(name in params for name in PRESIGN_PARAMS):
        if authorization is not None:
            raise S3Error(
                S3ErrorCode.InvalidArgument,
                "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, Signature query "
                "string parameter or the Authorization header should be specified",
                ArgumentName="Authorization",
                ArgumentValue=authorization,
            )
        signed = _parse_presigned({name: value.decode("utf-8", "replace") for name, value in params.items()})
        _check_presigned_time(signed, now)
    elif authorization is not None:
        signed = _parse_header_auth(authorization, headers)
        _check_skew(signed.amz_date, now)
    else:
        raise Unsigned
    _check_scope(signed.service, signed.region, region, _query_error if signed.presigned else _malformed)
    _check_headers_signed(signed, headers)
    return signed


def verify(
    signed: SignedRequest, key: bytes, method: str, raw_path: str, raw_query: str, headers: Headers
) -> None:
    """Refuse with SignatureDoesNotMatch unless the signature is the one `key` gives this request."""
    request = canonical_request(signed, method, raw_path, raw_query, headers)
    to_sign = string_to_sign(signed, request)
    _match(key, to_sign, signed.access_key, signed.signature, CanonicalRequest=request)


def _match(key: bytes, to_sign: str, access_key: str, provided: str, **details: str) -> None:
    """SignatureDoesNotMatch (with what S3 shows of it) unless `provided` is the HMAC of `to_sign`."""
    expected = _hmac(key, to_sign).hex()
    if not hmac.compare_digest(expected.encode(), provided.encode("utf-8", "replace")):
        raise S3Error(
            S3ErrorCode.SignatureDoesNotMatch,
            AWSAccessKeyId=access_key,
            StringToSign=to_sign,
            SignatureProvided=provided,
            **details,
        )


POST_FIELDS = ("x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature")
"""The form fields of a SigV4 POST besides the policy (Amazon's "Browser-Based Uploads Using POST")."""


def parse_post(fields: Mapping[str, str], *, region: str | None = None) -> PostSignature:
    """A POST form's SigV4 fields (`fields`: lower-case names), refused as S3 refuses them; their time is
    the policy's expiration, checked with its conditions, so no skew applies."""
    for name in POST_FIELDS:
        if name not in fields:
            raise missing_form_field(name)
    if fields["x-amz-algorithm"] != ALGORITHM:
        raise S3Error(
            S3ErrorCode.InvalidArgument,
            f'X-Amz-Algorithm only supports "{ALGORITHM}"',
            ArgumentName="x-amz-algorithm",
            ArgumentValue=fields["x-amz-algorithm"],
        )
    access_key, date, scope_region, service = _credential(fields["x-amz-credential"], _form_error)
    amz_date = fields["x-amz-date"]
    if not _AMZ_DATE.fullmatch(amz_date):
        raise _form_error(
            "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"", "x-amz-date"
        )
    if date != amz_date[:8]:
        raise _form_error("Invalid credential date. Date is not the same as X-Amz-Date.", "x-amz-date")
    _check_scope(service, scope_region, region, _form_error)
    return PostSignature(access_key, date, scope_region, service, amz_date, fields["x-amz-signature"])


def verify_post(signed: PostSignature, key: bytes, policy: str) -> None:
    """Refuse with SignatureDoesNotMatch unless `signed.signature` is the HMAC of the base64 policy."""
    _match(key, policy, signed.access_key, signed.signature)


def missing_form_field(name: str) -> S3Error:
    """S3's answer to a POST form without a field it needs before the file."""
    return S3Error(
        S3ErrorCode.InvalidArgument,
        f"Bucket POST must contain a field named '{name}'.  If it is specified, please check the order of "
        "the fields.",
        ArgumentName=name,
        ArgumentValue="",
    )


def canonical_request(
    signed: SignedRequest, method: str, raw_path: str, raw_query: str, headers: Headers
) -> str:
    return "\n".join(
        (
            method.upper(),
            canonical_uri(raw_path),
            canonical_query(raw_query, exclude="X-Amz-Signature" if signed.presigned else None),
            canonical_headers(headers, signed.signed_headers),
            ";".join(signed.signed_headers),
            signed.payload_hash,
        )
    )


def string_to_sign(signed: SignedRequest, canonical: str) -> str:
    digest = hashlib.sha256(_utf8(canonical)).hexdigest()
    return f"{ALGORITHM}\n{signed.amz_date}\n{signed.scope}\n{digest}"


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, _utf8(message), hashlib.sha256).digest()


def _utf8(text: str) -> bytes:
    """UTF-8, with the undecodable bytes aiohttp kept as surrogates given back as they came."""
    return text.encode("utf-8", "surrogateescape")


def _parse_header_auth(authorization: str, headers: Headers) -> SignedRequest:
    algorithm, _, rest = authorization.strip().partition(" ")
    if algorithm == "AWS":
        raise S3Error(S3ErrorCode.InvalidRequest, _NOT_SUPPORTED)
    if algorithm == _SIGV4A:
        raise S3Error(S3ErrorCode.NotImplemented, "SigV4a (AWS4-ECDSA-P256-SHA256) is not implemented.")
    if algorithm != ALGORITHM:
        raise S3Error(
            S3ErrorCode.InvalidArgument,
            "Unsupported Authorization Type",
            ArgumentName="Authorization",
            ArgumentValue=authorization,
        )
    fields: dict[str, str] = {}
    for element in rest.split(","):
        name, sep, value = element.strip().partition("=")
        if not sep or name in fields:
            raise _malformed(f"the element '{element.strip()}' is not name=value or is repeated")
        fields[name] = value.strip()
    missing = [name for name in ("Credential", "SignedHeaders", "Signature") if name not in fields]
    if missing:
        raise _malformed(f"missing {', '.join(missing)}")
    access_key, date, scope_region, service = _credential(fields["Credential"], _malformed)
    amz_date = _request_time(headers)
    if date != amz_date[:8]:
        raise _malformed("Invalid credential date. Date is not the same as X-Amz-Date.")
    payload_hash = header_value(headers, "x-amz-content-sha256")
    if payload_hash is None:
        raise S3Error(
            S3ErrorCode.InvalidRequest, "Missing required header for this request: x-amz-content-sha256"
        )
    _check_payload_hash(payload_hash)
    return SignedRequest(
        access_key=access_key,
        date=date,
        region=scope_region,
        service=service,
        signed_headers=_signed_headers(fields["SignedHeaders"], _malformed),
        signature=fields["Signature"],
        amz_date=amz_date,
        payload_hash=payload_hash,
        presigned=False,
        expires=None,
    )


def _parse_presigned(params: dict[str, str]) -> SignedRequest:
    if any(name not in params for name in PRESIGN_PARAMS):
        raise _query_error(
            "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, "
            "X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters."
        )
    if params["X-Amz-Algorithm"] != ALGORITHM:
        raise _query_error(f'X-Amz-Algorithm only supports "{ALGORITHM}"')
    access_key, date, scope_region, service = _credential(params["X-Amz-Credential"], _query_error)
    amz_date = params["X-Amz-Date"]
    if not _AMZ_DATE.fullmatch(amz_date):
        raise _query_error("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"")
    if date != amz_date[:8]:
        raise _query_error("Invalid credential date. Date is not the same as X-Amz-Date.")
    expires = params["X-Amz-Expires"]
    seconds = decimal(expires)
    if seconds is None:
        raise _query_error("X-Amz-Expires should be a number")
    if not 0 < seconds <= MAX_EXPIRES:
        raise _query_error(
            "X-Amz-Expires must be less than a week (in seconds) that is 604800"
            if seconds > MAX_EXPIRES
            else "X-Amz-Expires must be non-negative"
        )
    payload_hash = params.get("X-Amz-Content-Sha256", UNSIGNED_PAYLOAD)
    _check_payload_hash(payload_hash)
    return SignedRequest(
        access_key=access_key,
        date=date,
        region=scope_region,
        service=service,
        signed_headers=_signed_headers(params["X-Amz-SignedHeaders"], _query_error),
        signature=params["X-Amz-Signature"],
        amz_date=amz_date,
        payload_hash=payload_hash,
        presigned=True,
        expires=seconds,
    )


def _credential(credential: str, error: _Refusal) -> tuple[str, str, str, str]:
    parts = credential.rsplit("/", 4)
    if len(parts) != 5 or not parts[0] or not _SCOPE_DATE.fullmatch(parts[1]) or parts[4] != TERMINATOR:
        raise error(
            f'the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/{TERMINATOR}".'
        )
    return parts[0], parts[1], parts[2], parts[3]


def _signed_headers(value: str, error: _Refusal) -> tuple[str, ...]:
    names = tuple(value.split(";"))
    if not value or any(not name or name != name.strip().lower() for name in names):
        raise error(f"SignedHeaders '{value}' is not a ';'-separated list of lower-case names")
    return names


def _request_time(headers: Headers) -> str:
    """x-amz-date, or else Date (RFC 1123) as the ISO 8601 basic timestamp the signer put in its string."""
    amz_date = header_value(headers, "x-amz-date")
    if amz_date is not None:
        if not _AMZ_DATE.fullmatch(amz_date):
            raise S3Error(S3ErrorCode.AccessDenied, _NO_DATE)
        return amz_date
    date = header_value(headers, "date")
    try:
        when = parsedate_to_datetime(date) if date else None
    except (TypeError, ValueError):
        when = None
    if when is None:
        raise S3Error(S3ErrorCode.AccessDenied, _NO_DATE)
    return when.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ") if when.tzinfo else when.strftime("%Y%m%dT%H%M%SZ")


def _when(amz_date: str) -> datetime:
    try:
        return datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise S3Error(S3ErrorCode.AccessDenied, _NO_DATE) from None


def _check_skew(amz_date: str, now: datetime) -> None:
    when = _when(amz_date)
    if abs(now - when) > MAX_SKEW:
        raise S3Error(
            S3ErrorCode.RequestTimeTooSkewed,
            RequestTime=amz_date,
            ServerTime=_iso(now),
            MaxAllowedSkewMilliseconds=str(int(MAX_SKEW.total_seconds() * 1000)),
        )


def _check_presigned_time(signed: SignedRequest, now: datetime) -> None:
    when = _when(signed.amz_date)
    if when - now > MAX_SKEW:
        raise S3Error(S3ErrorCode.AccessDenied, "Request is not valid yet")
    if now > when + timedelta(seconds=signed.expires or 0):
        raise S3Error(
            S3ErrorCode.AccessDenied,
            "Request has expired",
            **{
                "X-Amz-Expires": str(signed.expires),
                "Expires": _iso(when + timedelta(seconds=signed.expires or 0)),
                "ServerTime": _iso(now),
            },
        )


def _check_scope(
    service: str, scope_region: str, region: str | None, error: Callable[[str], S3Error]
) -> None:
    """The credential's scope names S3 and this gateway's region (None: any), each way of signing
    answering with its own error."""
    if service != SERVICE:
        raise error(f"incorrect service '{service}'. This endpoint belongs to '{SERVICE}'.")
    if region is not None and scope_region != region:
        exc = error(f"the region '{scope_region}' is wrong; expecting '{region}'")
        exc.extra["Region"] = region
        raise exc


def _check_headers_signed(signed: SignedRequest, headers: Headers) -> None:
    """S3 refuses a request whose host or x-amz-* headers are present but not signed."""
    present = {name.lower() for name in headers}
    unsigned = sorted(
        name
        for name in present
        if (name == "host" or name.startswith("x-amz-")) and name not in signed.signed_headers
    )
    if unsigned or "host" not in signed.signed_headers:
        raise S3Error(
            S3ErrorCode.AccessDenied,
            "There were headers present in the request which were not signed",
            HeadersNotSigned=", ".join(unsigned or ["host"]),
        )


def _check_payload_hash(value: str) -> None:
    if value in _SIGV4A_PAYLOADS:
        raise S3Error(S3ErrorCode.NotImplemented, f"x-amz-content-sha256 {value} (SigV4a) is not supported.")
    if value not in PAYLOAD_KEYWORDS and not _SHA256_HEX.fullmatch(value):
        raise S3Error(
            S3ErrorCode.InvalidArgument,
            "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, "
            "STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER or a valid "
            "sha256 value.",
            ArgumentName="x-amz-content-sha256",
            ArgumentValue=value,
        )


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _malformed(detail: str) -> S3Error:
    message = f"The authorization header is malformed; {detail}"
    return S3Error(S3ErrorCode.AuthorizationHeaderMalformed, message)


def _form_error(detail: str, name: str = "x-amz-credential") -> S3Error:
    return S3Error(S3ErrorCode.InvalidArgument, detail, ArgumentName=name)


def _query_error(detail: str) -> S3Error:
    return S3Error(S3ErrorCode.AuthorizationQueryParametersError, detail)
