"""The S3 gateway's metrics (source S3GatewayMetrics), on its web admin port's /prom and /jmx:

  s3g_request_seconds{operation,code}   histogram: every S3 request by its operation (routing.py's names:
                                        PutObject, GetObject, ListObjectsV2, CreateBucket, ...; "Unknown"
                                        when it names none the gateway serves) and the HTTP status answered
  s3g_received_bytes_total{operation}   request body bytes read from clients
  s3g_sent_bytes_total{operation}       response body bytes answered (the Content-Length; HEAD, 204 and 304
                                        send none)

One aiohttp middleware observes every request the S3 application takes, once, when its handler is done:
for a streamed GET, once the last byte is written. A response cut short by a failed read (ResponseBroken)
counts as code 500 with nothing sent, though its 200 head went out: the client got no object.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from aiohttp import web
from prometheus_client import Counter, Histogram

from pyozone.common.web.metrics import LATENCY_BUCKETS_S, MetricsSystem
from pyozone.s3g.routing import Operation

SOURCE = "S3GatewayMetrics"
OPERATION = web.RequestKey("s3_operation", Operation)
"""Where the application records the operation it named (app.py), for the middleware to read."""
UNKNOWN = "Unknown"
_NO_BODY = (204, 304)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class S3GatewayMetrics:
    def __init__(self, system: MetricsSystem) -> None:
        registry = system.source(SOURCE)
        self.seconds = Histogram(
            "s3g_request_seconds", "S3 requests by operation and HTTP status, with their latency",
            ["operation", "code"], registry=registry, buckets=LATENCY_BUCKETS_S,
        )  # fmt: skip
        self.received = Counter(
            "s3g_received_bytes", "Request body bytes read, by S3 operation", ["operation"], registry=registry
        )
        self.sent = Counter(
            "s3g_sent_bytes", "Response body bytes sent, by S3 operation", ["operation"], registry=registry
        )

    def observe(self, operation: str, code: int, seconds: float, received: int, sent: int) -> None:
        self.seconds.labels(operation, str(code)).observe(seconds)
        if received:
            self.received.labels(operation).inc(received)
        if sent:
            self.sent.labels(operation).inc(sent)

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        started = time.perf_counter()
        code, sent = 500, 0
        try:
            response = await handler(request)
            code = response.status
            if request.method != "HEAD" and code not in _NO_BODY:
                sent = response.content_length or 0
            return response
        except web.HTTPException as e:
            code = e.status
            raise
        finally:
            operation = request.get(OPERATION)
            self.observe(
                operation.value if operation is not None else UNKNOWN,
                code,
                time.perf_counter() - started,
                request.content.total_bytes,
                sent,
            )
