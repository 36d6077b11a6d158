"""The keys table of a snapshot: every key of every bucket with its blocks, paged out of OM.

OM is read after SCM's snapshot, so a key written in between may name a container the snapshot does not
have; the analytics jobs treat such a block like any block of an unknown container.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pyozone.client.config import ClientConfig
from pyozone.config import OzoneConfiguration
from pyozone.framework.om import OM_SERVICE
from pyozone.framework.scm_errors import ScmClientError
from pyozone.hdds.limits import MAX_DATA_MESSAGE_BYTES
from pyozone.hdds.security.x509 import CertRole
from pyozone.protocol import om as wire
from pyozone.protocol import om_records
from pyozone.rpc import ChannelSettings, RpcError, Stub, SyncChannel
from pyozone.rpc.metadata import user_metadata

if TYPE_CHECKING:
    from pyozone.proto import OmClientProtocol_pb2 as pb

PAGE = 1000
T = TypeVar("T")


def snapshot_keys(
    conf: OzoneConfiguration, page: int = PAGE, timeout_s: float = 60
) -> Iterator[dict[str, Any]]:
    """Rows of the snapshot's keys table, volume by volume, bucket by bucket, in key order. The client's
    configuration is checked now, before SCM's part of the snapshot streams; OM is asked as rows are read."""
    return _keys(ClientConfig.from_conf(conf), page, timeout_s)


def _keys(config: ClientConfig, page: int, timeout_s: float) -> Iterator[dict[str, Any]]:
    target = f"{config.om_address.host}:{config.om_address.port}"
    metadata = user_metadata(config.tls)
    settings = ChannelSettings(max_message_bytes=MAX_DATA_MESSAGE_BYTES)
    with SyncChannel(config.om_address, settings, config.tls, CertRole.OM) as channel:
        om = Stub(channel, OM_SERVICE)

        def call(method: Callable[..., Any], request: Any) -> Any:
            try:
                return method(request, timeout=timeout_s, metadata=metadata)
            except RpcError as e:
                raise ScmClientError(f"OM at {target}: {e.details() or e.code().name}") from None

        volumes = _paged(
            lambda start: call(om.listVolumes, wire.list_volumes_request("", start, page)).volumes,
            lambda v: v.volume,
        )
        for volume in volumes:
            buckets = _paged(
                lambda start, v=volume.volume: (
                    call(om.listBuckets, wire.list_buckets_request(v, "", start, page)).buckets
                ),
                lambda b: b.bucket,
            )
            for bucket in buckets:
                keys = _paged(
                    lambda start, v=volume.volume, b=bucket.bucket: (
                        call(
                            om.listKeys,
                            wire.list_keys_request(v, b, "", start, page, with_blocks=True),
                        ).keys
                    ),
                    lambda k: k.key,
                )
                for key in keys:
                    yield _row(key)


def _paged(fetch: Callable[[str], Sequence[T]], name: Callable[[T], str]) -> Iterator[T]:
    start = ""
    while True:
        page = fetch(start)
        yield from page
        if not page:
            return
        start = name(page[-1])


def _row(key: pb.KeyInfo) -> dict[str, Any]:
    return {
        "volume": key.volume,
        "bucket": key.bucket,
        "key": key.key,
        "size": key.dataSize,
        "replication_config": str(om_records.stored_replication(key)),
        "created_ms": key.creationTime,
        "blocks": [
            {
                "container_id": loc.blockID.containerBlockID.containerID,
                "local_id": loc.blockID.containerBlockID.localID,
                "length": loc.length,
            }
            for loc in key.locations
        ],
    }
