"""AsyncOzoneClient: volumes, buckets and keys over OM and the datanodes, on asyncio (pyozone.rpc).

This is the one implementation; OzoneClient (pyozone.client.sync) runs it on a private event-loop thread
for synchronous callers. Channels are made lazily on first use, because a channel's connection is bound
to the event loop that is running when it is made.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pyozone.client import steps
from pyozone.client.config import ClientConfig
from pyozone.client.crypto_streams import CryptoKeyInputStream, CryptoKeyOutputStream, data_key_of
from pyozone.client.ec_output import ECKeyOutputStream
from pyozone.client.key_input import KeyInputStream
from pyozone.client.key_output import KeyOutputStream
from pyozone.client.routing import chain_order
from pyozone.config import OzoneConfiguration
from pyozone.framework.datanode import ChannelPool
from pyozone.framework.om import OmClient, acting_for
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.locations import DatanodeRef, KeyLocation
from pyozone.hdds.om_views import (
    BucketInfo,
    InitiatedUpload,
    KeyCondition,
    KeyInfo,
    MultipartPartList,
    MultipartUploadInfo,
    OpenedKey,
    VolumeInfo,
)
from pyozone.hdds.security.acl import Acls, OzoneAcl
from pyozone.hdds.security.sse import SseAlgorithm, SseKeyError, SseRequest, key_md5
from pyozone.protocol.acl import ObjectPath

Progress = Callable[[int], None]
"""Called with the number of bytes just transferred."""

Source = bytes | bytearray | memoryview | str | os.PathLike[str] | BinaryIO

_PAGE = 1000  # OM's largest page
_CLEAR = -1  # a quota of -1 clears it (Ozone's QUOTA_RESET)


class AsyncOzoneClient:
    acting_for = staticmethod(acting_for)
    """`with client.acting_for(user):` OM calls in this task (and tasks it starts) act for `user`: how the
    S3 gateway makes each request its user's. OM honours it without TLS, and from an S3 gateway's
    certificate."""

    def __init__(
        self,
        conf: OzoneConfiguration | str | None = None,
        om_address: str | None = None,
        *,
        config: ClientConfig | None = None,
    ) -> None:
        """`AsyncOzoneClient(conf)`, `AsyncOzoneClient("host:port")` or
        `AsyncOzoneClient(conf, om_address=...)`: OM is at `om_address`, else ozone.om.address. The client's
        edge: `conf` is read here, once, into `config` (ClientConfig), which everything below takes; a given
        `config` is taken as it is."""
        if isinstance(conf, str):
            conf, om_address = None, conf
        self.config = config or ClientConfig.from_conf(conf or OzoneConfiguration(), om_address)
        self.client_host = socket.gethostname()
        self.client_rack = self.config.rack
        self._om: OmClient | None = None
        self._pool: ChannelPool | None = None

    @property
    def om(self) -> OmClient:
        if self._om is None:
            self._om = OmClient(self.config, steps.current)
        return self._om

    @property
    def pool(self) -> ChannelPool:
        if self._pool is None:
            self._pool = ChannelPool(self.config.tls)
        return self._pool

    async def close(self) -> None:
        if self._om is not None:
            await self._om.close()
            self._om = None
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    async def __aenter__(self) -> AsyncOzoneClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ volumes
    async def create_volume(
        self, volume: str, owner: str = "", quota_bytes: int = 0, quota_namespace: int = 0
    ) -> VolumeInfo:
        """`owner`: default the login user. Only administrators create volumes (with ozone.acl.enabled)."""
        return await self.om.create_volume(volume, owner, quota_bytes, quota_namespace)

    async def volume_info(self, volume: str) -> VolumeInfo:
        return await self.om.volume_info(volume)

    async def set_volume_owner(self, volume: str, owner: str) -> VolumeInfo:
        return await self.om.set_volume_property(volume, owner=owner)

    async def set_volume_quota(self, volume: str, space_bytes: int = 0, namespace: int = 0) -> VolumeInfo:
        """Sets the quotas given (0: leaves one as it is): replicated bytes, buckets."""
        return await self.om.set_volume_property(volume, quota_bytes=space_bytes, quota_namespace=namespace)

    async def clear_volume_quota(
        self, volume: str, space: bool = False, namespace: bool = False
    ) -> VolumeInfo:
        return await self.om.set_volume_property(
            volume, quota_bytes=_CLEAR if space else 0, quota_namespace=_CLEAR if namespace else 0
        )

    async def list_volumes(
        self, prefix: str = "", start: str = "", limit: int | None = None
    ) -> list[VolumeInfo]:
        return await _paged(lambda s, n: self.om.list_volumes(prefix, s, n), start, limit, lambda v: v.name)

    async def delete_volume(self, volume: str) -> None:
        await self.om.delete_volume(volume)

    # ------------------------------------------------------------------ buckets
    async def create_bucket(
        self, volume: str, bucket: str, replication: ReplicationConfig | str | None = None, owner: str = "",
        object_lock: bool = False, acls: Acls = (), ownership_controls: bytes = b"",
    ) -> BucketInfo:  # fmt: skip
        """`replication`: its keys' default, a ReplicationConfig or any name parse takes ("RATIS/ONE",
        "rs-3-2-1024k"; unset: OM's default). `object_lock`: versioned, with S3 Object Lock enabled;
        `acls`: its whole ACL, recorded by the create itself (unset: its creator's default entries);
        `ownership_controls`: its S3 ownership controls document, kept by the create itself."""
        return await self.om.create_bucket(
            volume, bucket, ReplicationConfig.of(replication), owner, object_lock, acls, ownership_controls
        )

    async def bucket_info(self, volume: str, bucket: str) -> BucketInfo:
        return await self.om.bucket_info(volume, bucket)

    async def set_bucket_owner(self, volume: str, bucket: str, owner: str) -> BucketInfo:
        return await self.om.set_bucket_property(volume, bucket, owner=owner)

    async def set_bucket_quota(
        self, volume: str, bucket: str, space_bytes: int = 0, namespace: int = 0
    ) -> BucketInfo:
        """As set_volume_quota; a bucket's namespace is its keys."""
        return await self.om.set_bucket_property(
            volume, bucket, quota_bytes=space_bytes, quota_namespace=namespace
        )

    async def clear_bucket_quota(
        self, volume: str, bucket: str, space: bool = False, namespace: bool = False
    ) -> BucketInfo:
        return await self.om.set_bucket_property(
            volume, bucket, quota_bytes=_CLEAR if space else 0, quota_namespace=_CLEAR if namespace else 0
        )

    async def list_buckets(
        self, volume: str, prefix: str = "", start: str = "", limit: int | None = None, owner: str = ""
    ) -> list[BucketInfo]:
        """`owner`: only that user's buckets (S3's ListBuckets)."""
        return await _paged(
            lambda s, n: self.om.list_buckets(volume, prefix, s, n, owner), start, limit, lambda b: b.name
        )

    async def delete_bucket(self, volume: str, bucket: str) -> None:
        await self.om.delete_bucket(volume, bucket)

    # ------------------------------------------------------------------ keys
    async def create_key(
        self,
        volume: str,
        bucket: str,
        key: str,
        size_hint: int = 0,
        replication: ReplicationConfig | str | None = None,
        datastream: bool | None = None,
        metadata: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
        condition: KeyCondition | None = None,
        sse_s3: bool = False,
        customer_key: bytes | None = None,
        acls: Acls = (),
    ) -> KeyOutputStream | CryptoKeyOutputStream:
        """An open key; nothing is visible until its close() commits it. `datastream`: write by pipeline
        V2 (True) or V1 (False); None decides by ozone.fs.datastream.enabled and the auto threshold.
        The key gets `tags` and `metadata`, with what the stream's `metadata` holds at close().
        `condition`: checked at once and again by the commit (OMException KEY_ALREADY_EXISTS or
        ETAG_MISMATCH). `sse_s3`: its data is encrypted under a data key OM makes (SSE-S3);
        `customer_key`: under this 32-byte key (SSE-C), of which OM keeps the MD5 alone. OM may encrypt a
        key nobody asked to (its bucket's default encryption): the stream encrypts whatever OM answers.
        `acls`: the key's whole ACL, committed with its data (unset: its writer's default entries).
        `replication`: as create_bucket's (unset: the bucket's)."""
        opened = await self.om.open_key(
            volume, bucket, key, size_hint, ReplicationConfig.of(replication), metadata=metadata, tags=tags,
            condition=condition, sse=_sse_request(sse_s3, customer_key), acls=acls,
        )  # fmt: skip
        out = self._output(
            volume, bucket, key, opened.client_id, opened.blocks, size_hint, datastream, metadata
        )
        out.condition = condition
        try:
            return _encrypting(out, opened, customer_key, f"/{volume}/{bucket}/{key}")
        except SseKeyError:  # its block streams closed, as create_multipart_key does
            await out.abort()
            raise

    def _output(
        self, volume: str, bucket: str, key: str, client_id: int, blocks: list[KeyLocation], size_hint: int,
        datastream: bool | None, metadata: Mapping[str, str] | None = None,
        part: tuple[str, int] | None = None,
    ) -> KeyOutputStream:  # fmt: skip
        """The writer of an open key: striped when OM allocated it EC blocks (OM pre-allocates at least
        one), else by pipeline V1 or V2 (uses_datastream)."""
        if blocks and blocks[0].pipeline.ec is not None:
            return ECKeyOutputStream(
                self.om, self.pool, self.config, volume, bucket, key, client_id, blocks, metadata=metadata,
                part=part, datastream=self.config.uses_datastream(size_hint, datastream),
            )  # fmt: skip
        route = self._route if self.config.uses_datastream(size_hint, datastream) else None
        return KeyOutputStream(
            self.om, self.pool, self.config, volume, bucket, key, client_id, blocks, route=route,
            metadata=metadata, part=part,
        )  # fmt: skip

    def _route(self, members: tuple[DatanodeRef, ...]) -> tuple[DatanodeRef, ...]:
        return chain_order(members, self.client_host, self.client_rack)

    async def read_key(
        self, volume: str, bucket: str, key: str, version: str = "", delete_markers: bool = False,
        customer_key: bytes | None = None,
    ) -> KeyInputStream | CryptoKeyInputStream:  # fmt: skip
        """`version`, `delete_markers`: as key_info (a delete marker reads as no bytes). An encrypted key
        reads as its plaintext: SSE-S3's with the data key OM answers, SSE-C's with `customer_key`
        (SseKeyError without it, or with another)."""
        info = await self.om.lookup_key(
            volume, bucket, key, self.client_host, version=version, delete_markers=delete_markers
        )
        stream = KeyInputStream(self.om, self.pool, self.config, info, self.client_host)
        if info.encryption is None:
            return stream
        try:
            data_key = data_key_of(info.encryption, f"/{volume}/{bucket}/{key}", info.data_key, customer_key)
        except SseKeyError:
            await stream.close()
            raise
        return CryptoKeyInputStream(stream, data_key, self.config.buffer_size)

    async def put_key(
        self,
        volume: str,
        bucket: str,
        key: str,
        data: Source,
        progress: Progress | None = None,
        replication: ReplicationConfig | str | None = None,
        datastream: bool | None = None,
        metadata: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
    ) -> KeyInfo:
        """Writes `data` (bytes, a file path or a binary file object) as the key; returns it committed,
        with the write pipeline that wrote it (`datastream`, `metadata`, `tags`: as create_key)."""
        extra = _KeyExtras(ReplicationConfig.of(replication), datastream, metadata, tags)
        if isinstance(data, bytes | bytearray | memoryview):
            view = memoryview(data).cast("B")
            out = await self._create(volume, bucket, key, len(view), extra)
            async with out:
                step = self.config.buffer_size
                for i in range(0, len(view), step):
                    await out.write(view[i : i + step])
                    if progress:
                        progress(len(view[i : i + step]))
            assert out.key_info is not None
            return out.key_info
        if isinstance(data, str | os.PathLike):
            with open(data, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                return await self._put_file(volume, bucket, key, f, size, progress, extra)
        return await self._put_file(volume, bucket, key, data, 0, progress, extra)

    async def put_keys(
        self,
        volume: str,
        bucket: str,
        keys: Mapping[str, bytes] | Iterable[tuple[str, bytes]],
        concurrency: int = 16,
        replication: ReplicationConfig | str | None = None,
    ) -> list[KeyInfo]:
        """Writes many keys, up to `concurrency` at once: one caller's small keys overlap on OM and the
        pipelines as many callers' would. Returns the committed keys in the order given; a key that
        fails stops none of the others, and the first error is raised once all have ended."""
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        slots = asyncio.Semaphore(concurrency)
        config = ReplicationConfig.of(replication)

        async def put(key: str, data: bytes) -> KeyInfo:
            async with slots:
                return await self.put_key(volume, bucket, key, data, replication=config)

        pairs = keys.items() if isinstance(keys, Mapping) else keys
        results = await asyncio.gather(*(put(k, d) for k, d in pairs), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return results  # type: ignore[return-value]

    async def _create(
        self, volume: str, bucket: str, key: str, size: int, extra: _KeyExtras
    ) -> KeyOutputStream | CryptoKeyOutputStream:
        return await self.create_key(
            volume, bucket, key, size, extra.replication, extra.datastream, extra.metadata, extra.tags
        )

    async def _put_file(
        self, volume: str, bucket: str, key: str, f: BinaryIO, size: int, progress: Progress | None,
        extra: _KeyExtras,
    ) -> KeyInfo:  # fmt: skip
        out = await self._create(volume, bucket, key, size, extra)
        async with out:
            while piece := f.read(self.config.buffer_size):
                await out.write(piece)
                if progress:
                    progress(len(piece))
        assert out.key_info is not None
        return out.key_info

    async def get_key(
        self,
        volume: str,
        bucket: str,
        key: str,
        dest: str | os.PathLike[str] | BinaryIO,
        progress: Progress | None = None,
    ) -> KeyInfo:
        """Streams the key into a file path or a binary file object; a path is written whole or not at all
        (a temporary file renamed into place)."""
        stream = await self.read_key(volume, bucket, key)
        async with stream:
            if not isinstance(dest, str | os.PathLike):
                await _copy(stream, dest, progress)
                return stream.info
            target = Path(dest)
            partial = target.with_name(f".{target.name}.pyozone-partial")
            try:
                with open(partial, "wb") as f:
                    await _copy(stream, f, progress)
                os.replace(partial, target)
            finally:
                partial.unlink(missing_ok=True)
        return stream.info

    async def key_info(
        self, volume: str, bucket: str, key: str, version: str = "", delete_markers: bool = False
    ) -> KeyInfo:
        """`version`: that S3 version; `delete_markers`: with none, the latest version when it is a delete
        marker (whose `delete_marker` is set) rather than KEY_NOT_FOUND."""
        return await self.om.lookup_key(
            volume, bucket, key, self.client_host, version=version, delete_markers=delete_markers
        )

    async def list_keys(
        self, volume: str, bucket: str, prefix: str = "", start: str = "", limit: int | None = None
    ) -> list[KeyInfo]:
        """Keys after `start` whose names start with `prefix`, at most `limit` (None: all), paging OM."""
        return await _paged(
            lambda s, n: self.om.list_keys(volume, bucket, prefix, s, n), start, limit, lambda k: k.name
        )

    async def rename_key(self, volume: str, bucket: str, key: str, to_key: str) -> None:
        await self.om.rename_key(volume, bucket, key, to_key)

    async def delete_key(
        self, volume: str, bucket: str, key: str, condition: KeyCondition | None = None, version: str = "",
        bypass_governance: bool = False,
    ) -> tuple[str, bool]:  # fmt: skip
        """`condition`: only if the key meets it (S3's DeleteObject If-Match); `version`: that S3 version,
        for good (`bypass_governance`: through its GOVERNANCE retention, if the caller may). The version
        added (a delete marker) or removed, and whether it is a delete marker."""
        return await self.om.delete_key(volume, bucket, key, condition, version, bypass_governance)

    async def set_key_tags(self, volume: str, bucket: str, key: str, tags: Mapping[str, str]) -> None:
        """Replaces the key's tag set; an empty one deletes it."""
        await self.om.put_object_tagging(volume, bucket, key, tags)

    # ------------------------------------------------------------------ S3 bucket default encryption
    async def put_bucket_encryption(self, volume: str, bucket: str, configuration: bytes) -> None:
        """Replaces the bucket's S3 default encryption (its owner's alone): every key written into it
        without an encryption of its own is SSE-S3, native writes too."""
        await self.om.put_bucket_encryption(volume, bucket, configuration)

    async def get_bucket_encryption(self, volume: str, bucket: str) -> bytes | None:
        """The bucket's S3 default encryption; None: it has none."""
        return await self.om.get_bucket_encryption(volume, bucket)

    async def delete_bucket_encryption(self, volume: str, bucket: str) -> None:
        await self.om.delete_bucket_encryption(volume, bucket)

    # ------------------------------------------------------------------ S3 bucket CORS
    async def put_bucket_cors(self, volume: str, bucket: str, configuration: bytes) -> None:
        """Replaces the bucket's S3 CORS configuration (its owner's alone; OM checks the document)."""
        await self.om.put_bucket_cors(volume, bucket, configuration)

    async def get_bucket_cors(self, volume: str, bucket: str) -> bytes | None:
        """The bucket's S3 CORS configuration; None: it has none."""
        return await self.om.get_bucket_cors(volume, bucket)

    async def delete_bucket_cors(self, volume: str, bucket: str) -> None:
        await self.om.delete_bucket_cors(volume, bucket)

    # ------------------------------------------------------------------ S3 bucket lifecycle
    async def put_bucket_lifecycle(self, volume: str, bucket: str, configuration: bytes) -> None:
        """Replaces the bucket's S3 lifecycle configuration (its owner's alone; OM checks the document)."""
        await self.om.put_bucket_lifecycle(volume, bucket, configuration)

    async def get_bucket_lifecycle(self, volume: str, bucket: str) -> bytes | None:
        """The bucket's S3 lifecycle configuration; None: it has none."""
        return await self.om.get_bucket_lifecycle(volume, bucket)

    async def delete_bucket_lifecycle(self, volume: str, bucket: str) -> None:
        await self.om.delete_bucket_lifecycle(volume, bucket)

    # ------------------------------------------------------------------ S3 bucket policy
    async def put_bucket_policy(self, volume: str, bucket: str, policy: bytes) -> None:
        """Replaces the bucket's S3 bucket policy (its owner's alone; OM checks the document)."""
        await self.om.put_bucket_policy(volume, bucket, policy)

    async def get_bucket_policy(self, volume: str, bucket: str) -> bytes | None:
        """The bucket's S3 bucket policy as sent; None: it has none."""
        return await self.om.get_bucket_policy(volume, bucket)

    async def delete_bucket_policy(self, volume: str, bucket: str) -> None:
        await self.om.delete_bucket_policy(volume, bucket)

    # ------------------------------------------------------------------ S3 PublicAccessBlock
    async def put_bucket_public_access_block(self, volume: str, bucket: str, configuration: bytes) -> None:
        """Replaces the bucket's S3 PublicAccessBlock (its owner's alone; OM checks the document)."""
        await self.om.put_bucket_public_access_block(volume, bucket, configuration)

    async def get_bucket_public_access_block(self, volume: str, bucket: str) -> bytes | None:
        """The bucket's S3 PublicAccessBlock; None: it has none."""
        return await self.om.get_bucket_public_access_block(volume, bucket)

    async def delete_bucket_public_access_block(self, volume: str, bucket: str) -> None:
        await self.om.delete_bucket_public_access_block(volume, bucket)

    # ------------------------------------------------------------------ S3 object ownership controls
    async def put_bucket_ownership_controls(self, volume: str, bucket: str, configuration: bytes) -> None:
        """Replaces the bucket's S3 ownership controls (its owner's alone; OM checks the document)."""
        await self.om.put_bucket_ownership_controls(volume, bucket, configuration)

    async def get_bucket_ownership_controls(self, volume: str, bucket: str) -> bytes | None:
        """The bucket's S3 ownership controls; None: it has none (its S3 ACLs decide)."""
        return await self.om.get_bucket_ownership_controls(volume, bucket)

    async def delete_bucket_ownership_controls(self, volume: str, bucket: str) -> None:
        await self.om.delete_bucket_ownership_controls(volume, bucket)

    # ------------------------------------------------------------------ multipart uploads
    async def initiate_multipart_upload(
        self,
        volume: str,
        bucket: str,
        key: str,
        replication: ReplicationConfig | str | None = None,
        metadata: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
        sse_s3: bool = False,
        customer_key: bytes | None = None,
    ) -> str:
        """A new multipart upload of the key; its upload id. The completed key gets `metadata` (with what
        completion adds) and `tags`. `sse_s3`, `customer_key`: its parts are encrypted, as create_key's."""
        started = await self.start_multipart_upload(
            volume, bucket, key, replication, metadata, tags, sse_s3, customer_key
        )
        return started.upload_id

    async def start_multipart_upload(
        self, volume: str, bucket: str, key: str, replication: ReplicationConfig | str | None = None,
        metadata: Mapping[str, str] | None = None, tags: Mapping[str, str] | None = None,
        sse_s3: bool = False, customer_key: bytes | None = None,
    ) -> InitiatedUpload:  # fmt: skip
        """initiate_multipart_upload, answering how OM encrypts the parts too (its bucket's default)."""
        return await self.om.initiate_multipart_upload(
            volume,
            bucket,
            key,
            ReplicationConfig.of(replication),
            metadata,
            tags,
            _sse_request(sse_s3, customer_key),
        )

    async def create_multipart_key(
        self,
        volume: str,
        bucket: str,
        key: str,
        upload_id: str,
        part_number: int,
        size_hint: int = 0,
        datastream: bool | None = None,
        customer_key: bytes | None = None,
    ) -> KeyOutputStream | CryptoKeyOutputStream:
        """A stream writing part `part_number` (1 to 10000) of the upload; its close() commits the part
        under `stream.metadata["ETag"]`, replacing an earlier part of that number. The part is encrypted
        as its upload is (`customer_key`: an SSE-C upload's, which must be its own: SseKeyError else)."""
        opened = await self.om.open_key(
            volume, bucket, key, size_hint, None, upload_id=upload_id, part_number=part_number
        )
        out = self._output(
            volume, bucket, key, opened.client_id, opened.blocks, size_hint, datastream,
            part=(upload_id, part_number),
        )  # fmt: skip
        try:
            return _encrypting(out, opened, customer_key, f"/{volume}/{bucket}/{key}")
        except SseKeyError:
            await out.abort()
            raise

    async def complete_multipart_upload(
        self,
        volume: str,
        bucket: str,
        key: str,
        upload_id: str,
        parts: Sequence[tuple[int, str]],
        metadata: Mapping[str, str] | None = None,
        condition: KeyCondition | None = None,
        part_checksum: str = "",
        customer_key: bytes | None = None,
    ) -> KeyInfo:
        """Commits the key of `parts` ((part number, ETag), ascending) at once; `metadata` is merged into
        the upload's; `condition`: only if the key meets it; `part_checksum`: the part metadata entry the
        key keeps for each part (KeyInfo.part_checksums); `customer_key`: an SSE-C upload's, which OM
        compares (by its MD5) when given."""
        return await self.om.complete_multipart_upload(
            volume, bucket, key, upload_id, parts, metadata, condition, part_checksum,
            key_md5(customer_key) if customer_key is not None else "",
        )  # fmt: skip

    async def abort_multipart_upload(self, volume: str, bucket: str, key: str, upload_id: str) -> None:
        await self.om.abort_multipart_upload(volume, bucket, key, upload_id)

    async def list_parts(
        self,
        volume: str,
        bucket: str,
        key: str,
        upload_id: str,
        part_number_marker: int = 0,
        max_parts: int = 1000,
    ) -> MultipartPartList:
        return await self.om.list_parts(volume, bucket, key, upload_id, part_number_marker, max_parts)

    async def list_multipart_uploads(
        self,
        volume: str,
        bucket: str,
        prefix: str = "",
        key_marker: str = "",
        upload_id_marker: str = "",
        max_uploads: int = 1000,
    ) -> list[MultipartUploadInfo]:
        """Uploads in progress by key, then by creation (OM answers at most 10,000 a call)."""
        return await self.om.list_multipart_uploads(
            volume, bucket, prefix, key_marker, upload_id_marker, max_uploads
        )

    # ------------------------------------------------------------------ ACLs
    async def add_acl(self, path: ObjectPath, acl: OzoneAcl) -> bool:
        """Joins the entry's rights to the object's entry for the same subject and scope (or adds it);
        whether anything changed."""
        return await self.om.add_acl(path, acl)

    async def remove_acl(self, path: ObjectPath, acl: OzoneAcl) -> bool:
        return await self.om.remove_acl(path, acl)

    async def set_acl(self, path: ObjectPath, acls: Acls) -> bool:
        """Replaces every entry of the object."""
        return await self.om.set_acl(path, acls)

    async def get_acl(self, path: ObjectPath) -> Acls:
        return await self.om.get_acl(path)

    # ------------------------------------------------------------------ S3 secrets
    async def get_s3_secret(self, user: str, create: bool = True) -> tuple[str, str]:
        """(access id, secret) of the user's S3 key pair, created when there is none and `create`
        (else OMException S3_SECRET_NOT_FOUND). The access id is the user name."""
        return await self.om.get_s3_secret(user, create)

    async def revoke_s3_secret(self, user: str) -> None:
        await self.om.revoke_s3_secret(user)

    async def s3_signing_key(self, access_id: str, date: str, region: str, service: str) -> bytes:
        """SigV4's signing key for the credential scope date (YYYYMMDD) / region / service, derived in
        OM from the access id's secret."""
        return await self.om.s3_signing_key(access_id, date, region, service)


@dataclass(frozen=True, slots=True)
class _KeyExtras:
    """put_key's options for create_key."""

    replication: ReplicationConfig | None
    datastream: bool | None
    metadata: Mapping[str, str] | None
    tags: Mapping[str, str] | None


def _sse_request(sse_s3: bool, customer_key: bytes | None) -> SseRequest | None:
    if customer_key is not None:
        return SseRequest(SseAlgorithm.SSE_C, key_md5(customer_key))
    return SseRequest(SseAlgorithm.SSE_S3) if sse_s3 else None


def _encrypting(
    out: KeyOutputStream, opened: OpenedKey, customer_key: bytes | None, name: str
) -> KeyOutputStream | CryptoKeyOutputStream:
    """The open key's stream, encrypting when OM answered an encryption (asked for, or its bucket's)."""
    if opened.encryption is None:
        return out
    data_key = data_key_of(opened.encryption, name, opened.data_key, customer_key)
    return CryptoKeyOutputStream(out, data_key, opened.encryption)


async def _copy(
    stream: KeyInputStream | CryptoKeyInputStream, f: BinaryIO, progress: Progress | None
) -> None:
    async for piece in stream:
        f.write(piece)
        if progress:
            progress(len(piece))


async def _paged(fetch, start: str, limit: int | None, name) -> list:  # type: ignore[no-untyped-def]
    """Pages through an OM listing: each page starts after the last name of the previous one."""
    items: list = []
    while limit is None or len(items) < limit:
        want = _PAGE if limit is None else min(_PAGE, limit - len(items))
        page = await fetch(start, want)
        items.extend(page)
        if len(page) < want or not page:
            break
        start = name(page[-1])
    return items
