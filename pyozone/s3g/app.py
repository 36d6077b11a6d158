"""The gateway's aiohttp application: one route takes every request, names its bucket, key and S3
operation, authenticates it, runs the operation's handler as the access id's user (OM's ACLs apply to it)
and turns any refusal into S3's XML error. With metrics, one middleware observes every request
(metrics.py); the operation is recorded on the request as soon as it is named. An OPTIONS preflight is
answered before, and without, authentication; a request with an Origin gets its bucket's CORS headers on
whatever answer it gets (bucket_cors.py). A browser's form upload (POST Object) is authenticated by its
form (post_object.py)."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import replace

from aiohttp import HttpVersion11, hdrs, web

from pyozone.common.http_body import BodyTimeout
from pyozone.hdds.security.acl import S3_ANONYMOUS
from pyozone.s3g import (
    acls,
    attributes,
    bucket_cors,
    bucket_encryption,
    bucket_lifecycle,
    bucket_policy,
    buckets,
    listing,
    multipart,
    object_lock,
    objects,
    ownership,
    policy,
    post_object,
    routing,
    sse,
    xml,
)
from pyozone.s3g.acls import check_requested, expected_owners
from pyozone.s3g.auth.payload import anonymous_payload
from pyozone.s3g.auth.sigv4 import Unsigned
from pyozone.s3g.authenticate import authenticate
from pyozone.s3g.body import CONTINUE, RequestBody
from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.headers import RESPONSE_OVERRIDES, refuse_unimplemented, with_query_headers
from pyozone.s3g.metrics import OPERATION, S3GatewayMetrics
from pyozone.s3g.objects import NotModified, ResponseBroken
from pyozone.s3g.request import Gateway, S3Request
from pyozone.s3g.routing import Operation

log = logging.getLogger(__name__)

Handler = Callable[[S3Request], Awaitable[web.StreamResponse]]

HANDLERS: dict[Operation, Handler] = {
    Operation.LIST_BUCKETS: buckets.list_buckets,
    Operation.CREATE_BUCKET: acls.create_bucket,
    Operation.HEAD_BUCKET: buckets.head_bucket,
    Operation.DELETE_BUCKET: buckets.delete_bucket,
    Operation.GET_BUCKET_LOCATION: buckets.get_bucket_location,
    Operation.GET_BUCKET_VERSIONING: buckets.get_bucket_versioning,
    Operation.PUT_BUCKET_VERSIONING: buckets.put_bucket_versioning,
    Operation.GET_BUCKET_ACL: acls.get_bucket_acl,
    Operation.PUT_BUCKET_ACL: acls.put_bucket_acl,
    Operation.GET_BUCKET_CORS: bucket_cors.get_bucket_cors,
    Operation.PUT_BUCKET_CORS: bucket_cors.put_bucket_cors,
    Operation.DELETE_BUCKET_CORS: bucket_cors.delete_bucket_cors,
    Operation.GET_BUCKET_LIFECYCLE: bucket_lifecycle.get_bucket_lifecycle,
    Operation.PUT_BUCKET_LIFECYCLE: bucket_lifecycle.put_bucket_lifecycle,
    Operation.DELETE_BUCKET_LIFECYCLE: bucket_lifecycle.delete_bucket_lifecycle,
    Operation.GET_BUCKET_POLICY: bucket_policy.get_bucket_policy,
    Operation.PUT_BUCKET_POLICY: bucket_policy.put_bucket_policy,
    Operation.DELETE_BUCKET_POLICY: bucket_policy.delete_bucket_policy,
    Operation.GET_BUCKET_POLICY_STATUS: bucket_policy.get_bucket_policy_status,
    Operation.GET_PUBLIC_ACCESS_BLOCK: bucket_policy.get_public_access_block,
    Operation.PUT_PUBLIC_ACCESS_BLOCK: bucket_policy.put_public_access_block,
    Operation.DELETE_PUBLIC_ACCESS_BLOCK: bucket_policy.delete_public_access_block,
    Operation.GET_BUCKET_ENCRYPTION: bucket_encryption.get_bucket_encryption,
    Operation.PUT_BUCKET_ENCRYPTION: bucket_encryption.put_bucket_encryption,
    Operation.DELETE_BUCKET_ENCRYPTION: bucket_encryption.delete_bucket_encryption,
    Operation.GET_BUCKET_OWNERSHIP_CONTROLS: ownership.get_bucket_ownership_controls,
    Operation.PUT_BUCKET_OWNERSHIP_CONTROLS: ownership.put_bucket_ownership_controls,
    Operation.DELETE_BUCKET_OWNERSHIP_CONTROLS: ownership.delete_bucket_ownership_controls,
    Operation.LIST_OBJECTS: listing.list_objects,
    Operation.LIST_OBJECTS_V2: listing.list_objects_v2,
    Operation.LIST_OBJECT_VERSIONS: listing.list_object_versions,
    Operation.LIST_MULTIPART_UPLOADS: multipart.list_multipart_uploads,
    Operation.DELETE_OBJECTS: objects.delete_objects,
    Operation.PUT_OBJECT: acls.put_object,
    Operation.COPY_OBJECT: acls.copy_object,
    Operation.GET_OBJECT: objects.get_object,
    Operation.HEAD_OBJECT: objects.head_object,
    Operation.DELETE_OBJECT: objects.delete_object,
    Operation.GET_OBJECT_ATTRIBUTES: attributes.get_object_attributes,
    Operation.GET_OBJECT_TAGGING: objects.get_object_tagging,
    Operation.PUT_OBJECT_TAGGING: objects.put_object_tagging,
    Operation.DELETE_OBJECT_TAGGING: objects.delete_object_tagging,
    Operation.GET_OBJECT_ACL: acls.get_object_acl,
    Operation.PUT_OBJECT_ACL: acls.put_object_acl,
    Operation.CREATE_MULTIPART_UPLOAD: multipart.create_multipart_upload,
    Operation.UPLOAD_PART: multipart.upload_part,
    Operation.UPLOAD_PART_COPY: multipart.upload_part_copy,
    Operation.COMPLETE_MULTIPART_UPLOAD: multipart.complete_multipart_upload,
    Operation.ABORT_MULTIPART_UPLOAD: multipart.abort_multipart_upload,
    Operation.LIST_PARTS: multipart.list_parts,
    Operation.GET_OBJECT_LOCK_CONFIGURATION: object_lock.get_object_lock_configuration,
    Operation.PUT_OBJECT_LOCK_CONFIGURATION: object_lock.put_object_lock_configuration,
    Operation.GET_OBJECT_RETENTION: object_lock.get_object_retention,
    Operation.PUT_OBJECT_RETENTION: object_lock.put_object_retention,
    Operation.GET_OBJECT_LEGAL_HOLD: object_lock.get_object_legal_hold,
    Operation.PUT_OBJECT_LEGAL_HOLD: object_lock.put_object_legal_hold,
}

GATEWAY = web.AppKey("gateway", Gateway)
CORS_HEADERS = web.RequestKey("s3_cors_headers", dict[str, str])
"""The CORS headers of the request's answer, added as it is sent (streamed or not: _add_cors_headers)."""


def make_app(gateway: Gateway, metrics: S3GatewayMetrics | None = None) -> web.Application:
    middlewares = [metrics.middleware] if metrics is not None else []
    app = web.Application(client_max_size=xml.MAX_XML_BODY, middlewares=middlewares)
    app[GATEWAY] = gateway
    app.router.add_route("*", "/{tail:.*}", serve, expect_handler=_expect)
    app.on_response_prepare.append(_add_cors_headers)
    return app


async def _add_cors_headers(http: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(http.get(CORS_HEADERS, {}))


async def _expect(http: web.Request) -> None:
    """An Expect other than 100-continue is 417, as aiohttp has it; 100 Continue itself is sent only when
    the handler reads the body (RequestBody), never before the request is authenticated."""
    expect = http.headers.get(hdrs.EXPECT, "")
    if http.version == HttpVersion11 and expect.lower() != CONTINUE:
        raise web.HTTPExpectationFailed(text=f"Unknown Expect: {expect}")


def new_request_id() -> str:
    return secrets.token_hex(8).upper()


async def serve(http: web.Request) -> web.StreamResponse:
    gateway = http.app[GATEWAY]
    request_id = new_request_id()
    where = routing.target(http.raw_path, http.host, gateway.settings.domains)
    try:
        if http.method == "OPTIONS":
            http[OPERATION] = Operation.OPTIONS_OBJECT
            response = await bucket_cors.preflight(gateway, http, where)
        else:
            http[CORS_HEADERS] = await bucket_cors.answer_headers(gateway, http, where)
            response = await _run(gateway, http, where, request_id)
    except S3Error as e:
        response = error_response(e, http.method, http.path, request_id)
    except NotModified as e:
        response = web.Response(status=304, headers=e.headers)
    except BodyTimeout:
        response = error_response(S3Error(S3ErrorCode.RequestTimeout), http.method, http.path, request_id)
    except ResponseBroken as e:
        log.warning("%s %s: %s", http.method, http.path, e.__cause__ or e)
        raise  # aiohttp closes the connection: the only way to tell a client its body is cut short
    except (ConnectionError, web.HTTPException):
        raise
    except Exception:
        log.exception("%s %s failed", http.method, http.path)
        response = error_response(S3Error(S3ErrorCode.InternalError), http.method, http.path, request_id)
    if not response.prepared:
        response.headers["x-amz-request-id"] = request_id
        response.headers["Server"] = "pyozone"
        if http.can_read_body and not http.content.at_eof():
            # a body never read (never asked for with 100 Continue, or refused) would be read as the next
            # request: the connection ends with this response, whatever its status
            response.force_close()
    return response


def _prepared(http: web.Request) -> bool:
    return (
        getattr(http, "_payload_writer", None) is not None
        and http.writer is not None
        and http.writer.output_size > 0
    )


async def _run(
    gateway: Gateway, http: web.Request, where: routing.Target, request_id: str
) -> web.StreamResponse:
    """Authenticates before it answers anything about the request (an operation not served, a key too
    long, a version), so an anonymous caller learns only AccessDenied or NoSuchBucket, unless the bucket's
    policy lets it in. The policy then decides whom the request acts as (policy.acting_user)."""
    unserved: S3Error | None = None
    try:
        operation: Operation | None = routing.operation(http.method, where, http.headers)
        http[OPERATION] = operation
    except S3Error as e:
        operation, unserved = None, e
    headers = with_query_headers(http.headers, http.query)
    try:
        if operation is Operation.POST_OBJECT:  # authenticated by its form, which its body carries
            return await post_object.post_object(gateway, http, where, request_id)
        access_key, payload = await authenticate(
            gateway, http, headers, object_checksum=operation is Operation.COMPLETE_MULTIPART_UPLOAD
        )
    except Unsigned:
        if operation in (None, Operation.CREATE_BUCKET) or where.bucket is None:
            raise
        if operation is Operation.POST_OBJECT:  # an unsigned form, whatever the policy (R34's F3: a 500)
            await policy.refuse_anonymous(gateway, where.bucket)
        acting = await policy.acting_user(gateway, http, where, operation, None, headers)
        if any(name in http.query for name in RESPONSE_OVERRIDES):
            raise S3Error(  # Amazon's answer: an anonymous GET sets no headers of its answer (R34's F12)
                S3ErrorCode.InvalidRequest,
                "Request specific response headers cannot be used for anonymous GET requests.",
            ) from None
        access_key, payload = "", anonymous_payload(headers)
    else:
        acting = None
    if operation is None:  # routing refused it: answered now that the caller is known
        raise unserved or S3Error(S3ErrorCode.MethodNotAllowed)
    if (
        where.key is not None
        and len(where.key.encode()) > routing.MAX_KEY_BYTES
        and operation in routing.WRITES
    ):
        raise S3Error(S3ErrorCode.KeyTooLongError)
    routing.check_version(where, operation)
    if acting is None:  # before the headers not served: a public ACL that is blocked is AccessDenied
        acting = await policy.acting_user(gateway, http, where, operation, access_key, headers)
    refuse_unimplemented(headers, http.query, sse=operation in sse.OPERATIONS)
    body = RequestBody(http, payload, gateway.body_idle_timeout_s, gateway.settings.buffer_size)
    s3 = S3Request(http, where, operation, request_id, access_key, body, gateway, headers, acting)
    check_requested(s3)
    # OM's ACLs see the access id's user (Ozone's S3 auth), or the bucket's owner where its policy grants
    # the request; never nobody, which would be the gateway itself
    assert acting, "authenticate refuses an access id that is not a user name"
    with gateway.client.acting_for(acting):
        await expected_owners(s3)
        try:
            return await HANDLERS[operation](s3)
        except S3Error as e:
            if e.code is not S3ErrorCode.AccessDenied or acting != access_key:
                raise
            if not await policy.read_as_public(gateway, where, operation):
                raise
    with gateway.client.acting_for(S3_ANONYMOUS):  # what a WORLD entry grants anyone: R37's F8
        return await HANDLERS[operation](replace(s3, acting=S3_ANONYMOUS))


def error_response(error: S3Error, method: str, resource: str, request_id: str) -> web.Response:
    status = error.code.status
    if method == "HEAD":  # no body: the status (and its headers) alone speak
        return web.Response(status=status, headers=error.headers)
    body = xml.error_document(error.code.name, error.message, resource, request_id, **error.extra)
    return web.Response(body=body, status=status, content_type="application/xml", headers=error.headers)


def refusal(status: int, message: str) -> web.Response:
    """What the HTTP layer answers before any handler ran (a bad or oversized head): S3's XML."""
    code = S3ErrorCode.RequestHeaderSectionTooLarge if status == 431 else S3ErrorCode.InvalidRequest
    if status >= 500:
        code = S3ErrorCode.InternalError
    body = xml.error_document(code.name, message, "", new_request_id())
    return web.Response(body=body, status=status if status != 431 else 400, content_type="application/xml")
