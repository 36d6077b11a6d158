"""Which bucket, key and S3 operation a request names: path style, virtual-host style, subresources."""

from __future__ import annotations

import pytest

from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.routing import Operation, check_version, operation, target

DOMAINS = ("s3g.internal",)


@pytest.mark.parametrize(
    ("raw_path", "host", "bucket", "key"),
    [
        ("/", "127.0.0.1:9878", None, None),
        ("/bucket1", "127.0.0.1:9878", "bucket1", None),
        ("/bucket1/", "127.0.0.1:9878", "bucket1", None),
        ("/bucket1/a/b.txt", "127.0.0.1:9878", "bucket1", "a/b.txt"),
        ("/bucket1/dir/", "127.0.0.1:9878", "bucket1", "dir/"),
        ("/bucket1/a//b", "127.0.0.1:9878", "bucket1", "a//b"),
        ("/bucket1/with%20space%2Bplus", "127.0.0.1:9878", "bucket1", "with space+plus"),
        ("/bucket1/caf%C3%A9?tagging", "127.0.0.1:9878", "bucket1", "café"),
        ("/", "bucket1.s3g.internal:9878", "bucket1", None),
        ("/key/in/vhost", "bucket1.s3g.internal", "bucket1", "key/in/vhost"),
        ("/bucket1/k", "other.example:9878", "bucket1", "k"),
    ],
)
def test_bucket_and_key_from_path_or_host(
    raw_path: str, host: str, bucket: str | None, key: str | None
) -> None:
    where = target(raw_path, host, DOMAINS)
    assert (where.bucket, where.key) == (bucket, key)


def test_query_keeps_blank_subresources() -> None:
    where = target("/b/k?uploads&x-id=CreateMultipartUpload", "h", ())
    assert where.query == {"uploads": "", "x-id": "CreateMultipartUpload"}


@pytest.mark.parametrize(
    ("method", "path", "headers", "expected"),
    [
        ("GET", "/", {}, Operation.LIST_BUCKETS),
        ("PUT", "/b", {}, Operation.CREATE_BUCKET),
        ("HEAD", "/b", {}, Operation.HEAD_BUCKET),
        ("DELETE", "/b", {}, Operation.DELETE_BUCKET),
        ("GET", "/b?location", {}, Operation.GET_BUCKET_LOCATION),
        ("GET", "/b?list-type=2&prefix=a", {}, Operation.LIST_OBJECTS_V2),
        ("GET", "/b?prefix=a", {}, Operation.LIST_OBJECTS),
        ("GET", "/b?uploads", {}, Operation.LIST_MULTIPART_UPLOADS),
        ("POST", "/b?delete", {}, Operation.DELETE_OBJECTS),
        ("POST", "/b", {}, Operation.POST_OBJECT),  # a browser form upload
        ("POST", "/b/", {}, Operation.POST_OBJECT),
        ("PUT", "/b/k", {}, Operation.PUT_OBJECT),
        ("PUT", "/b/k", {"x-amz-copy-source": "/b/src"}, Operation.COPY_OBJECT),
        ("PUT", "/b/k?partNumber=1&uploadId=u", {}, Operation.UPLOAD_PART),
        ("PUT", "/b/k?partNumber=1&uploadId=u", {"x-amz-copy-source": "b/s"}, Operation.UPLOAD_PART_COPY),
        ("POST", "/b/k?uploads", {}, Operation.CREATE_MULTIPART_UPLOAD),
        ("POST", "/b/k?uploadId=u", {}, Operation.COMPLETE_MULTIPART_UPLOAD),
        ("DELETE", "/b/k?uploadId=u", {}, Operation.ABORT_MULTIPART_UPLOAD),
        ("GET", "/b/k?uploadId=u", {}, Operation.LIST_PARTS),
        ("GET", "/b/k", {}, Operation.GET_OBJECT),
        ("GET", "/b/k?response-content-type=x", {}, Operation.GET_OBJECT),
        ("HEAD", "/b/k", {}, Operation.HEAD_OBJECT),
        ("DELETE", "/b/k", {}, Operation.DELETE_OBJECT),
        ("GET", "/b/k?tagging", {}, Operation.GET_OBJECT_TAGGING),
        ("PUT", "/b/k?tagging", {}, Operation.PUT_OBJECT_TAGGING),
        ("DELETE", "/b/k?tagging", {}, Operation.DELETE_OBJECT_TAGGING),
        ("GET", "/b?versions", {}, Operation.LIST_OBJECT_VERSIONS),
        ("GET", "/b?versions&key-marker=k&version-id-marker=null", {}, Operation.LIST_OBJECT_VERSIONS),
        ("PUT", "/b?acl", {}, Operation.PUT_BUCKET_ACL),
        ("GET", "/b/k?acl", {}, Operation.GET_OBJECT_ACL),
        ("PUT", "/b/k?acl", {}, Operation.PUT_OBJECT_ACL),
        ("DELETE", "/b/k?versionId=null", {}, Operation.DELETE_OBJECT),
        ("GET", "/b/k?versionId=null", {}, Operation.GET_OBJECT),
        ("GET", "/b?cors", {}, Operation.GET_BUCKET_CORS),
        ("PUT", "/b?cors", {}, Operation.PUT_BUCKET_CORS),
        ("DELETE", "/b?cors", {}, Operation.DELETE_BUCKET_CORS),
        ("GET", "/b?lifecycle", {}, Operation.GET_BUCKET_LIFECYCLE),
        ("PUT", "/b?lifecycle", {}, Operation.PUT_BUCKET_LIFECYCLE),
        ("DELETE", "/b?lifecycle", {}, Operation.DELETE_BUCKET_LIFECYCLE),
        ("GET", "/b?policy", {}, Operation.GET_BUCKET_POLICY),
        ("PUT", "/b?policy", {}, Operation.PUT_BUCKET_POLICY),
        ("DELETE", "/b?policy", {}, Operation.DELETE_BUCKET_POLICY),
        ("GET", "/b?policyStatus", {}, Operation.GET_BUCKET_POLICY_STATUS),
        ("GET", "/b?publicAccessBlock", {}, Operation.GET_PUBLIC_ACCESS_BLOCK),
        ("GET", "/b?encryption", {}, Operation.GET_BUCKET_ENCRYPTION),
        ("PUT", "/b?encryption", {}, Operation.PUT_BUCKET_ENCRYPTION),
        ("DELETE", "/b?encryption", {}, Operation.DELETE_BUCKET_ENCRYPTION),
        ("PUT", "/b?publicAccessBlock", {}, Operation.PUT_PUBLIC_ACCESS_BLOCK),
        ("DELETE", "/b?publicAccessBlock", {}, Operation.DELETE_PUBLIC_ACCESS_BLOCK),
        ("GET", "/b?ownershipControls", {}, Operation.GET_BUCKET_OWNERSHIP_CONTROLS),
        ("PUT", "/b?ownershipControls", {}, Operation.PUT_BUCKET_OWNERSHIP_CONTROLS),
        ("DELETE", "/b?ownershipControls", {}, Operation.DELETE_BUCKET_OWNERSHIP_CONTROLS),
        ("GET", "/b?object-lock", {}, Operation.GET_OBJECT_LOCK_CONFIGURATION),
        ("PUT", "/b?object-lock", {}, Operation.PUT_OBJECT_LOCK_CONFIGURATION),
        ("GET", "/b/k?retention&versionId=v", {}, Operation.GET_OBJECT_RETENTION),
        ("PUT", "/b/k?retention", {}, Operation.PUT_OBJECT_RETENTION),
        ("GET", "/b/k?legal-hold", {}, Operation.GET_OBJECT_LEGAL_HOLD),
        ("PUT", "/b/k?legal-hold", {}, Operation.PUT_OBJECT_LEGAL_HOLD),
    ],
)
def test_operation(method: str, path: str, headers: dict[str, str], expected: Operation) -> None:
    assert operation(method, target(path, "h", ()), headers) is expected


@pytest.mark.parametrize(
    ("method", "path", "code"),
    [
        ("PUT", "/", S3ErrorCode.MethodNotAllowed),
        ("POST", "/b/k", S3ErrorCode.MethodNotAllowed),
        ("GET", "/b?website", S3ErrorCode.NotImplemented),
        ("DELETE", "/b/k?acl", S3ErrorCode.MethodNotAllowed),
        ("PUT", "/b?website", S3ErrorCode.NotImplemented),
        ("GET", "/b/k?encryption", S3ErrorCode.NotImplemented),  # a bucket's subresource only
        ("GET", "/b?retention", S3ErrorCode.NotImplemented),  # an object's subresource only
        ("PUT", "/b?legal-hold", S3ErrorCode.NotImplemented),
        ("GET", "/b/k?object-lock", S3ErrorCode.NotImplemented),  # a bucket's subresource only
        ("DELETE", "/b?object-lock", S3ErrorCode.MethodNotAllowed),
        ("DELETE", "/b/k?retention", S3ErrorCode.MethodNotAllowed),
        ("GET", "/b/k?cors", S3ErrorCode.NotImplemented),  # a bucket's subresource only
        ("PUT", "/b/k?policy", S3ErrorCode.NotImplemented),
        ("GET", "/b/k?publicAccessBlock", S3ErrorCode.NotImplemented),
        ("GET", "/b/k?ownershipControls", S3ErrorCode.NotImplemented),
        ("POST", "/b?cors", S3ErrorCode.MethodNotAllowed),
        ("PUT", "/b/k?attributes", S3ErrorCode.MethodNotAllowed),  # R31's F2: it overwrote the object
        ("DELETE", "/b/k?attributes", S3ErrorCode.MethodNotAllowed),
        ("HEAD", "/b/k?attributes", S3ErrorCode.MethodNotAllowed),
        ("GET", "/b?attributes", S3ErrorCode.NotImplemented),  # an object's subresource only
        ("GET", "/b/k?lifecycle", S3ErrorCode.NotImplemented),  # a bucket's subresource only
        ("PUT", "/b/k?lifecycle", S3ErrorCode.NotImplemented),
        ("POST", "/b?lifecycle", S3ErrorCode.MethodNotAllowed),
    ],
)
def test_unsupported_requests_get_s3_codes(method: str, path: str, code: S3ErrorCode) -> None:
    with pytest.raises(S3Error) as e:
        operation(method, target(path, "h", ()), {})
    assert e.value.code is code


@pytest.mark.parametrize(
    ("path", "op"),
    [("/b/k?versionId=null&tagging", Operation.GET_OBJECT_TAGGING),
     ("/b/k?versionId=abc&uploadId=u&partNumber=1", Operation.UPLOAD_PART)],
)  # fmt: skip
def test_a_version_id_on_an_operation_without_versions_is_not_implemented(path: str, op: Operation) -> None:
    with pytest.raises(S3Error) as e:
        check_version(target(path, "h", ()), op)
    assert e.value.code is S3ErrorCode.NotImplemented


def test_get_head_and_delete_take_a_version_id() -> None:
    for op in (Operation.GET_OBJECT, Operation.HEAD_OBJECT, Operation.DELETE_OBJECT):
        check_version(target("/b/k?versionId=abc", "h", ()), op)
    check_version(target("/b?versionId=abc", "h", ()), Operation.LIST_OBJECTS)  # a bucket has no versions
    assert operation("PUT", target("/b?versioning", "h", ()), {}) is Operation.PUT_BUCKET_VERSIONING
