"""OM's JSON APIs (docs/web.md): the namespace to browse, its counts and usage, open keys and the deleting
services' progress.

    /api/v1/overview                                          ids, counts, usage, requests by type
    /api/v1/ratis                                             this OM in its HA service (OmReplication
                                                              .report), {"ha": false} on a lone OM
    /api/v1/volumes                                           volumes, a cursor page of volume_dict
    /api/v1/volumes/{volume}                                  volume_dict
    /api/v1/volumes/{volume}/buckets                          a cursor page of bucket_dict
    /api/v1/volumes/{volume}/buckets/{bucket}                 bucket_dict
    /api/v1/volumes/{volume}/buckets/{bucket}/keys            a cursor page of key_dict (?prefix=)
    /api/v1/volumes/{volume}/buckets/{bucket}/key?name=KEY    key_dict with ozoneKeyLocations (a query
                                                              parameter: a key may hold "." or ".." parts)
    /api/v1/openkeys                                          open keys: key_dict + openKey, clientID, blocks
    /api/v1/services                                          the deleting services' progress

Items are what `pyozone sh volume|bucket|key list --json` prints (client/json_views.py). om.db is RocksDB,
so a list is a range scan from a name, not an offset: `?prefix=P&startAfter=NAME&limit=N` answers
`{"items", "prefix", "startAfter", "limit", "next", "total"}`, where `next` is the startAfter of the
following page (null on the last) and `total` the count OM keeps when there is one (a volume's buckets, a
bucket's keys; null otherwise or under a prefix). Every read of om.db runs on OM's executor.

Until OM has bound to its cluster (no core yet) every API answers 503. Names are what OM's ACLs guard:
over mutual TLS only administrators list or read volumes, buckets and keys (403), as only they may set a
log level.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyozone.client.json_views import bucket_dict, key_dict, volume_dict
from pyozone.common.web.api import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    ApiHandler,
    BadQuery,
    Forbidden,
    NotFound,
    Query,
    Unavailable,
)
from pyozone.common.web.ops import administrators_only
from pyozone.hdds.om_records import BucketRecord, KeyRecord, VolumeRecord
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import OPEN_KEY_TABLE
from pyozone.protocol import om as wire
from pyozone.protocol import om_records

if TYPE_CHECKING:
    from pyozone.om.server.daemon import OmDaemon

OVERVIEW_MAX_AGE_S = 30.0
"""The overview's counts are current (counts.py) and at most this old."""
MAX_NAME = 1024
_NOT_FOUND = (OMResultCode.VOLUME_NOT_FOUND, OMResultCode.BUCKET_NOT_FOUND, OMResultCode.KEY_NOT_FOUND)
_VOLUME = "/api/v1/volumes/{volume}"
_BUCKET = _VOLUME + "/buckets/{bucket}"


@dataclass(frozen=True, slots=True)
class Cursor:
    prefix: str
    start_after: str
    limit: int


def om_api(daemon: OmDaemon) -> dict[str, ApiHandler]:
    may_browse = administrators_only(daemon.conf)

    def core() -> OzoneManager:
        if daemon.core is None:
            raise Unavailable("OM has not bound to its cluster yet")
        return daemon.core

    def browsing(q: Query) -> OzoneManager:
        om = core()
        if not may_browse(q.request):
            raise Forbidden("only administrators may browse the namespace over the web UI")
        return om

    async def read(call: Callable[..., Any], *args: object) -> Any:
        try:
            return await daemon.off_loop(call, *args)
        except OMException as e:
            if e.code in _NOT_FOUND:
                raise NotFound(e.message) from None
            if e.code is OMResultCode.SCM_UNAVAILABLE:
                raise Unavailable(f"SCM is unreachable: {e.message}") from None
            raise

    async def overview(q: Query) -> dict[str, Any]:
        core()
        assert daemon.counter is not None and daemon.storage is not None  # set before the core
        counts = await daemon.counter.current(OVERVIEW_MAX_AGE_S)
        stats = daemon.om_metrics.by_type()
        return {
            "clusterId": daemon.storage.cluster_id,
            "omId": daemon.storage.om_uuid,
            "rpcAddress": f"{daemon.rpc_address.host}:{daemon.rpc_port}",
            "serving": daemon.serving,
            "volumes": counts.volumes,
            "buckets": counts.buckets,
            "keys": counts.keys,
            "usedBytes": counts.used_bytes,
            "openKeys": counts.open_keys,
            "openKeysCapped": counts.open_keys_capped,
            "pendingDeletions": counts.pending_deletions,
            "pendingDeletionsCapped": counts.pending_deletions_capped,
            "countedAt": counts.counted_ms,
            "countSeconds": round(counts.seconds, 4),
            "requests": [
                {"type": kind, "count": s.count, "failures": s.failures, "seconds": round(s.seconds, 6)}
                for kind, s in sorted(stats.items())
            ],
        }

    async def volumes(q: Query) -> dict[str, Any]:
        om, at = browsing(q), cursor(q)
        records = await read(om.volumes.list, at.prefix, at.start_after, at.limit + 1)
        return page(records, at, lambda r: r.volume, render_volume, None)

    async def volume(q: Query) -> dict[str, Any]:
        om = browsing(q)
        return render_volume(await read(om.volume_info, q.path("volume")))

    async def buckets(q: Query) -> dict[str, Any]:
        om, at, name = browsing(q), cursor(q), q.path("volume")
        parent: VolumeRecord = await read(om.volume_info, name)
        records = await read(om.buckets.list, name, at.prefix, at.start_after, at.limit + 1)
        total = None if at.prefix else parent.used_namespace
        return page(records, at, lambda r: r.bucket, render_bucket, total)

    async def bucket(q: Query) -> dict[str, Any]:
        om = browsing(q)
        return render_bucket(await read(om.bucket_info, q.path("volume"), q.path("bucket")))

    async def keys(q: Query) -> dict[str, Any]:
        om, at = browsing(q), cursor(q)
        name = (q.path("volume"), q.path("bucket"))
        parent: BucketRecord = await read(om.bucket_info, *name)
        records = await read(om.keys.list, *name, at.prefix, at.start_after, at.limit + 1)
        total = None if at.prefix else parent.used_namespace
        return page(records, at, lambda r: r.key, render_key, total)

    async def key(q: Query) -> dict[str, Any]:
        om = browsing(q)
        name = q.str("name")
        if not name:
            raise BadQuery("name: the key's name is required")
        located = await read(om.keys.lookup, q.path("volume"), q.path("bucket"), name)
        return key_dict(wire.located_key_view(located.key, located.where()), locations=True)

    async def open_keys(q: Query) -> dict[str, Any]:
        om, at = browsing(q), cursor(q)
        entries = await read(_scan_open_keys, om, at)
        return page(entries, at, lambda e: e[0], render_open_key, None)

    async def services(q: Query) -> dict[str, Any]:
        om = core()
        assert daemon.counter is not None and daemon.key_deleting is not None
        assert daemon.open_key_cleanup is not None and daemon.s3_lifecycle is not None
        counts = await daemon.counter.current(OVERVIEW_MAX_AGE_S)
        deleting, cleanup, lifecycle, settings = (
            daemon.key_deleting.progress,
            daemon.open_key_cleanup.progress,
            daemon.s3_lifecycle.progress,
            om.settings,
        )
        return {
            "keyDeleting": {
                "intervalMs": settings.key_deleting_interval_ms,
                "limitPerRun": settings.key_deleting_limit,
                "runs": deleting.runs,
                "failedRuns": deleting.failed_runs,
                "keysProcessed": deleting.keys_processed,
                "keysPurged": deleting.keys_purged,
                "lastRun": deleting.last_run_ms,
                "lastError": deleting.last_error,
                "pendingKeys": counts.pending_deletions,
                "pendingKeysCapped": counts.pending_deletions_capped,
            },
            "openKeyCleanup": {
                "intervalMs": settings.open_key_cleanup_interval_ms,
                "expireThresholdMs": settings.open_key_expire_ms,
                "limitPerRun": settings.open_key_cleanup_limit,
                "runs": cleanup.runs,
                "keysExpired": cleanup.keys_expired,
                "lastRun": cleanup.last_run_ms,
                "openKeys": counts.open_keys,
                "openKeysCapped": counts.open_keys_capped,
            },
            "s3Lifecycle": {
                "intervalMs": settings.s3_lifecycle_interval_ms,
                "limitPerRun": settings.s3_lifecycle_limit,
                "runs": lifecycle.runs,
                "keysExpired": lifecycle.keys_expired,
                "versionsExpired": lifecycle.versions_expired,
                "markersRemoved": lifecycle.markers_removed,
                "uploadsAborted": lifecycle.uploads_aborted,
                "lastRun": lifecycle.last_run_ms,
                "lastRunDurationMs": lifecycle.last_run_duration_ms,
            },
            "countedAt": counts.counted_ms,
        }

    async def ratis(q: Query) -> dict[str, Any]:
        """This OM's member of its HA service's Raft group; {"ha": false} for a lone OM."""
        core()
        if daemon.replication is None:
            return {"ha": False}
        return {"ha": True, **daemon.replication.report()}

    return {
        "/api/v1/overview": overview,
        "/api/v1/ratis": ratis,
        "/api/v1/volumes": volumes,
        _VOLUME: volume,
        _VOLUME + "/buckets": buckets,
        _BUCKET: bucket,
        _BUCKET + "/keys": keys,
        _BUCKET + "/key": key,
        "/api/v1/openkeys": open_keys,
        "/api/v1/services": services,
    }


def cursor(q: Query) -> Cursor:
    return Cursor(_name(q, "prefix"), _name(q, "startAfter"), q.int("limit", DEFAULT_LIMIT, 1, MAX_LIMIT))


def _name(q: Query, param: str) -> str:
    value = q.str(param) or ""
    if len(value) > MAX_NAME:
        raise BadQuery(f"{param}: {len(value)} characters, at most {MAX_NAME}")
    return value


def page(
    found: Sequence[Any],
    at: Cursor,
    name: Callable[[Any], str],
    render: Callable[[Any], Any],
    total: int | None,
) -> dict[str, Any]:
    """One cursor page of `found` (read with a limit of one more than the page's, to know if more follow)."""
    shown = found[: at.limit]
    return {
        "items": [render(item) for item in shown],
        "prefix": at.prefix,
        "startAfter": at.start_after,
        "limit": at.limit,
        "next": name(shown[-1]) if len(found) > at.limit else None,
        "total": total,
    }


def render_volume(record: VolumeRecord) -> dict[str, Any]:
    return volume_dict(wire.volume_view(record))


def render_bucket(record: BucketRecord) -> dict[str, Any]:
    return bucket_dict(wire.bucket_view(record))


def render_key(record: KeyRecord) -> dict[str, Any]:
    return key_dict(wire.key_view(record))


def render_open_key(entry: tuple[str, KeyRecord]) -> dict[str, Any]:
    """An open key as a key, with its openKeyTable name, the writer's client id and its blocks so far."""
    name, record = entry
    return {
        **render_key(record),
        "openKey": name,
        "clientID": int(name.rpartition("/")[2]),
        "blocks": len(record.blocks),
    }


def _scan_open_keys(om: OzoneManager, at: Cursor) -> list[tuple[str, KeyRecord]]:
    entries = om.store.scan(OPEN_KEY_TABLE, at.prefix, at.start_after or None)
    found = []
    for name, value in entries:
        found.append((name, om_records.decode_key(value)))
        if len(found) > at.limit:
            break
    return found
