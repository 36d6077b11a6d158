"""S3's error codes with their HTTP statuses, as Amazon defines them, and the error S3 handlers raise.

Every refusal the gateway makes is an `S3Error`; the application turns it into S3's XML error body, so a
client sees the code its SDK knows (never a traceback).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum


class S3ErrorCode(Enum):
    """(HTTP status, default message) per code; the member name is the code on the wire."""

    AccessDenied = (403, "Access Denied")
    AccessControlListNotSupported = (400, "The bucket does not allow ACLs")
    AccessForbidden = (  # a preflight no CORS rule allows: the wire's words, spelling included
        403,
        "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, "
        "request method / Access-Control-Request-Method or Access-Control-Request-Headers are not "
        "whitelisted by the resource's CORS spec.",
    )
    AuthorizationHeaderMalformed = (400, "The authorization header is malformed.")
    AuthorizationQueryParametersError = (400, "The query-string authentication parameters are malformed.")
    BadRequest = (400, "Insufficient information. Origin request header needed.")  # a preflight's
    BadDigest = (400, "The Content-MD5 or checksum you specified did not match what we received.")
    BucketAlreadyExists = (409, "The requested bucket name is not available.")
    BucketNotEmpty = (409, "The bucket you tried to delete is not empty.")
    ConditionalRequestConflict = (
        409,
        "A conflicting operation occurred during the request. Retry it (a multipart upload: initiate it "
        "again and upload each part).",
    )
    EntityTooLarge = (400, "Your proposed upload exceeds the maximum allowed object size.")
    EntityTooSmall = (400, "Your proposed upload is smaller than the minimum allowed object size.")
    ExpiredToken = (400, "The provided token has expired.")
    IncompleteBody = (400, "You did not provide the number of bytes specified by the Content-Length.")
    IncorrectNumberOfFilesInPostRequest = (400, "POST requires exactly one file upload per request.")
    InternalError = (500, "We encountered an internal error. Please try again.")
    InvalidAccessKeyId = (403, "The AWS access key Id you provided does not exist in our records.")
    InvalidArgument = (400, "Invalid Argument")
    InvalidBucketName = (400, "The specified bucket is not valid.")
    InvalidBucketState = (409, "The request is not valid with the current state of the bucket.")
    InvalidEncryptionAlgorithmError = (400, "The encryption request you specified is not valid.")
    InvalidDigest = (400, "The Content-MD5 you specified is not valid.")
    InvalidPolicyDocument = (
        400,
        "The content of the form does not meet the conditions specified in the policy document.",
    )
    InvalidPart = (400, "One or more of the specified parts could not be found.")
    InvalidPartOrder = (400, "The list of parts was not in ascending order.")
    InvalidPartNumber = (416, "The requested partnumber is not satisfiable")
    InvalidRange = (416, "The requested range is not satisfiable")
    InvalidRequest = (400, "Invalid Request")
    InvalidStorageClass = (400, "The storage class you specified is not valid.")
    InvalidTag = (400, "The tag provided was not a valid tag.")
    InvalidToken = (400, "The provided token is malformed or otherwise invalid.")
    KeyTooLongError = (400, "Your key is too long.")
    MalformedXML = (400, "The XML you provided was not well-formed or did not validate against our schema.")
    MalformedPolicy = (400, "Policies must be valid JSON and the first byte must be '{'")
    MalformedPOSTRequest = (400, "The body of your POST request is not well-formed multipart/form-data.")
    InvalidBucketAclWithObjectOwnership = (
        400,
        "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting",
    )
    MalformedACLError = (
        400,
        "The XML you provided was not well-formed or did not validate against our published schema",
    )
    MaxMessageLengthExceeded = (400, "Your request was too big.")
    MaxPostPreDataLengthExceededError = (
        400,
        "Your POST request fields preceding the upload file were too large.",
    )
    MetadataTooLarge = (400, "Your metadata headers exceed the maximum allowed metadata size.")
    MethodNotAllowed = (405, "The specified method is not allowed against this resource.")
    MissingContentLength = (411, "You must provide the Content-Length HTTP header.")
    MissingSecurityHeader = (400, "Your request is missing a required header.")
    UnexpectedContent = (400, "This request does not support content")
    NoSuchBucket = (404, "The specified bucket does not exist")
    NoSuchCORSConfiguration = (404, "The CORS configuration does not exist")
    NoSuchBucketPolicy = (404, "The bucket policy does not exist")
    NoSuchPublicAccessBlockConfiguration = (404, "The public access block configuration was not found")
    OwnershipControlsNotFoundError = (404, "The bucket ownership controls were not found")
    NoSuchKey = (404, "The specified key does not exist.")
    NoSuchObjectLockConfiguration = (404, "The specified object does not have a ObjectLock configuration")
    NoSuchLifecycleConfiguration = (404, "The lifecycle configuration does not exist")
    NoSuchVersion = (404, "The specified version does not exist.")
    NoSuchTagSet = (404, "The TagSet does not exist.")
    NoSuchUpload = (
        404,
        "The specified multipart upload does not exist. The upload ID might be invalid, or the multipart "
        "upload might have been aborted or completed.",
    )
    ObjectLockConfigurationNotFoundError = (404, "Object Lock configuration does not exist for this bucket")
    NotImplemented = (501, "A header you provided implies functionality that is not implemented.")
    PreconditionFailed = (412, "At least one of the preconditions you specified did not hold.")
    QuotaExceeded = (  # Ozone's S3ErrorTable.QUOTA_EXCEEDED
        403,
        "The quota has been exceeded. Please review your disk space or namespace usage and adjust "
        "accordingly.",
    )
    RequestHeaderSectionTooLarge = (400, "Your request header section exceeds the maximum allowed size.")
    RequestTimeout = (
        400,
        "Your socket connection to the server was not read from or written to within the timeout period.",
    )
    RequestTimeTooSkewed = (
        403,
        "The difference between the request time and the server's time is too large.",
    )
    ServerSideEncryptionConfigurationNotFoundError = (
        404,
        "The server side encryption configuration was not found",
    )
    ServiceUnavailable = (503, "Please reduce your request rate.")
    SignatureDoesNotMatch = (
        403,
        "The request signature we calculated does not match the signature you provided. Check your key "
        "and signing method.",
    )
    XAmzContentSHA256Mismatch = (
        400,
        "The provided 'x-amz-content-sha256' header does not match what was computed.",
    )

    @property
    def status(self) -> int:
        return self.value[0]

    @property
    def default_message(self) -> str:
        return self.value[1]


class S3Error(Exception):
    """A refusal with S3's code; `extra` adds elements to the XML body (e.g. ArgumentName, Key, UploadId),
    `headers` to the answer (a delete marker's x-amz-delete-marker)."""

    def __init__(
        self, code: S3ErrorCode, message: str | None = None, headers: Mapping[str, str] | None = None,
        **extra: str,
    ) -> None:  # fmt: skip
        super().__init__(message or code.default_message)
        self.code = code
        self.message = message or code.default_message
        self.headers = dict(headers or {})
        self.extra = extra
