"""The gateway's short memory of buckets' CORS configurations (review R26 D10) and what it makes of one it
cannot read (D4): one OM read per bucket and period, whatever the number of requests with an Origin."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from pyozone.client.errors import OMException
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.s3_cors import CORSConfiguration, CORSRule
from pyozone.s3g.bucket_cors import configuration
from pyozone.s3g.cors_cache import NO_BUCKET, BucketCors, CorsCache

ANY = BucketCors(CORSConfiguration((CORSRule(("GET",), ("*",)),)))
NONE = BucketCors(None)
GOOD = (
    b"<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
    b"</CORSRule></CORSConfiguration>"
)


def test_an_entry_lives_its_period_and_no_longer() -> None:
    clock = ManualClock()
    cache = CorsCache(clock, ttl_ms=3000)
    assert cache.get("b") is None
    cache.put("b", ANY)
    cache.put("none", NONE)
    clock.advance(2999)
    assert cache.get("b") == ANY
    assert cache.get("none") == NONE  # "no configuration" is remembered too
    clock.advance(1)
    assert cache.get("b") is None


def test_the_oldest_bucket_is_forgotten_first_and_forget_is_at_once() -> None:
    cache = CorsCache(ManualClock(), max_buckets=2)
    cache.put("a", ANY)
    cache.put("b", ANY)
    cache.put("c", ANY)
    assert len(cache) == 2 and cache.get("a") is None
    cache.forget("b")
    assert cache.get("b") is None and cache.get("c") == ANY


class FakeClient:
    def __init__(self, text: bytes | None) -> None:
        self.text = text
        self.reads = 0
        self.buckets: set[str] | None = None  # None: every bucket exists

    async def get_bucket_cors(self, volume: str, bucket: str) -> bytes | None:
        self.reads += 1
        if self.buckets is not None and bucket not in self.buckets:
            raise OMException("BUCKET_NOT_FOUND", bucket)
        return self.text


def gateway(text: bytes | None, clock: ManualClock) -> SimpleNamespace:
    return SimpleNamespace(client=FakeClient(text), volume="s3v", cors=CorsCache(clock))


def test_requests_with_an_origin_cost_one_om_read_per_period() -> None:
    clock = ManualClock()
    gw = gateway(GOOD, clock)

    async def reads() -> None:
        for _ in range(50):
            assert await configuration(gw, "web") == ANY  # type: ignore[arg-type]
        clock.advance(3000)
        await configuration(gw, "web")  # type: ignore[arg-type]

    asyncio.run(reads())
    assert gw.client.reads == 2


def test_requests_for_a_missing_bucket_cost_one_om_read_per_period() -> None:
    """Reread B1: a missing bucket was never remembered, so every Origin or preflight naming one (anyone
    may send them, unauthenticated) cost OM a read."""
    clock = ManualClock()
    gw = gateway(GOOD, clock)
    gw.client.buckets = set()

    async def reads() -> None:
        for _ in range(50):
            assert await configuration(gw, "nobody") is NO_BUCKET  # type: ignore[arg-type]
        clock.advance(3000)
        await configuration(gw, "nobody")  # type: ignore[arg-type]

    asyncio.run(reads())
    assert gw.client.reads == 2


def test_the_documents_bytes_are_bounded_too() -> None:
    cache = CorsCache(ManualClock(), max_bytes=100)
    cache.put("a", ANY, 60)
    cache.put("b", ANY, 30)
    cache.put("a", ANY, 60)  # replaced: counted once
    assert len(cache) == 2
    cache.put("c", ANY, 20)
    assert cache.get("b") is None and cache.get("a") == ANY and cache.get("c") == ANY


def test_a_configuration_the_gateway_cannot_read_counts_as_none() -> None:
    """R26 D4: a document kept by an OM whose checks differ never fails the bucket's requests."""
    gw = gateway(b"<x/>", ManualClock())
    assert asyncio.run(configuration(gw, "web")) == NONE  # type: ignore[arg-type]


def test_a_read_begun_before_this_gateway_s_change_is_not_remembered() -> None:
    """R29 N5: OM answered with the old rules, this gateway's DeleteBucketCors forgot the bucket, then the
    answer arrived: it was cached for a whole period."""
    clock = ManualClock()
    gw = gateway(GOOD, clock)
    answered, release = asyncio.Event(), asyncio.Event()

    async def held_read(volume: str, bucket: str) -> bytes | None:
        text = gw.client.text  # OM's answer, before the change
        answered.set()
        await release.wait()
        return text

    gw.client.get_bucket_cors = held_read

    async def race() -> None:
        reader = asyncio.create_task(configuration(gw, "web"))  # type: ignore[arg-type]
        await answered.wait()
        gw.client.text = None  # this gateway's DeleteBucketCors: OM deletes, then the gateway forgets
        gw.cors.forget("web")
        release.set()
        assert await reader == ANY  # that request answers with what it read
        assert gw.cors.get("web") is None  # but the next one asks OM again

    asyncio.run(race())


def test_concurrent_requests_for_a_bucket_not_remembered_share_one_om_read() -> None:
    """R29 N5: on expiry every concurrent request with an Origin asked OM (a ReadIndex round each in HA)."""
    gw = gateway(GOOD, ManualClock())
    release = asyncio.Event()
    read = gw.client.get_bucket_cors

    async def held_read(volume: str, bucket: str) -> bytes | None:
        await release.wait()
        return await read(volume, bucket)

    gw.client.get_bucket_cors = held_read

    async def requests() -> None:
        waiting = [asyncio.create_task(configuration(gw, "web")) for _ in range(50)]  # type: ignore[arg-type]
        await asyncio.sleep(0)  # each has asked; none has an answer
        waiting[0].cancel()  # a client gone: the read goes on for the others
        release.set()
        answers = await asyncio.gather(*waiting[1:])
        assert answers == [ANY] * 49

    asyncio.run(requests())
    assert gw.client.reads == 1 and gw.cors.reading == {}
