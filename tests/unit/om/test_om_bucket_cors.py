"""A bucket's S3 CORS configuration in OM (issue 33, item 3; review R26 D1-D4, D6): kept in its own table,
apart from the bucket's record, checked before it is kept, changed by the bucket's owner alone and gone
with its bucket."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.hdds import s3_cors
from pyozone.hdds.om_records import KeyBlock
from pyozone.hdds.security.acl import ResourceType
from pyozone.om import bucket_documents
from pyozone.om.bucket_documents import BucketDocuments
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode
from pyozone.om.metadata import BUCKET_TABLE, S3_BUCKET_CORS_TABLE, Op, bucket_key
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.protocol import om as wire
from tests.unit.om.om_fakes import FakeScm, make_om
from tests.unit.om.test_om_acls import As, acl_request, denied, om
from tests.unit.om.test_om_server import run

RULE = "<CORSRule><AllowedOrigin>https://{i}.example</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>"


def config(rules: int = 1, origin_chars: int = 0) -> bytes:
    body = "".join(RULE.format(i=f"{i}{'o' * origin_chars}") for i in range(rules))
    return f"<CORSConfiguration>{body}</CORSConfiguration>".encode()


BIG = config(rules=55, origin_chars=1000)
"""About 61 KB: near the largest document S3 takes."""


@pytest.fixture
def cluster(tmp_path: Path) -> tuple[OzoneManager, BucketDocuments]:
    manager = make_om(tmp_path, FakeScm())
    manager.volumes.create("vol")
    manager.buckets.create("vol", "bkt")
    return manager, bucket_documents.cors(manager)


def test_a_configuration_is_kept_read_back_and_deleted(
    cluster: tuple[OzoneManager, BucketDocuments],
) -> None:
    _, cors = cluster
    assert cors.get("vol", "bkt") is None
    cors.put("vol", "bkt", config())
    kept = cors.get("vol", "bkt")
    assert kept == s3_cors.document(s3_cors.parse(config()))  # as GetBucketCors answers it
    cors.delete("vol", "bkt")
    assert cors.get("vol", "bkt") is None
    cors.delete("vol", "bkt")  # none: no refusal
    with pytest.raises(OMException) as error:
        cors.put("vol", "nobucket", config())
    assert error.value.code is OMResultCode.BUCKET_NOT_FOUND


@pytest.mark.parametrize(
    "body",
    [
        b"<x/>",
        b"<CORSConfiguration/>",
        b"<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
        b"<ExposeHeader>ETag&#13;&#10;Set-Cookie: a=1</ExposeHeader></CORSRule></CORSConfiguration>",
        b"<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
        b"<ExposeHeader>*</ExposeHeader></CORSRule></CORSConfiguration>",
        b'<?xml version="1.0" encoding="x-bogus"?>' + config(),  # R29 N7: INTERNAL before
        b'<?xml version="1.0" encoding="Shift_JIS"?>' + config(),
        config().replace(b"</CORSRule>", b"<MaxAgeSeconds>" + b"9" * 5000 + b"</MaxAgeSeconds></CORSRule>"),
    ],
)
def test_om_keeps_no_document_s3_refuses(cluster: tuple[OzoneManager, BucketDocuments], body: bytes) -> None:
    """R26 D4, D5, D7: whatever reaches OM, nothing the gateway could not read is kept."""
    _, cors = cluster
    with pytest.raises(OMException) as error:
        cors.put("vol", "bkt", body)
    assert error.value.code is OMResultCode.INVALID_REQUEST
    assert cors.get("vol", "bkt") is None


def test_the_64_kb_bound_is_of_the_document_as_sent(cluster: tuple[OzoneManager, BucketDocuments]) -> None:
    """R26 D9: a body under 64 KB that grows when written out again (`>` as `&gt;`) is kept."""
    _, cors = cluster
    origins = "".join(f"<AllowedOrigin>https://{i}.{'>' * 900}</AllowedOrigin>" for i in range(64))
    body = f"<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod>{origins}</CORSRule>"
    body += "</CORSConfiguration>"
    assert len(body) < s3_cors.MAX_CONFIGURATION_BYTES
    cors.put("vol", "bkt", body.encode())
    kept = cors.get("vol", "bkt") or b""
    assert len(kept) > s3_cors.MAX_CONFIGURATION_BYTES
    assert s3_cors.parse(kept, limit=None) == s3_cors.parse(body.encode())  # R29 N1: as the gateway reads it


def test_the_bucket_s_record_does_not_carry_the_configuration(
    cluster: tuple[OzoneManager, BucketDocuments],
) -> None:
    """R26 D1, D3: the record a listing answers and a key commit rewrites is the same with or without."""
    manager, cors = cluster
    before = manager.store.get(BUCKET_TABLE, bucket_key("vol", "bkt"))
    listed_before = wire.buckets_answer(manager.buckets.list("vol")).ByteSize()
    cors.put("vol", "bkt", BIG)
    assert manager.store.get(BUCKET_TABLE, bucket_key("vol", "bkt")) == before
    assert wire.buckets_answer(manager.buckets.list("vol")).ByteSize() == listed_before

    written: list[Op] = []
    write = manager.store.write

    def recording(ops: list[Op]) -> None:
        written.extend(ops)
        write(ops)

    manager.store.write = recording  # type: ignore[method-assign]
    session = manager.keys.open("vol", "bkt", "k", 10)
    block = session.key.blocks[0].block_id
    manager.keys.commit("vol", "bkt", "k", session.client_id, 10, [KeyBlock(block, 0, 10, bcsid=1)])
    assert written and all(table != S3_BUCKET_CORS_TABLE for table, _, _ in written)
    assert sum(len(value or b"") for _, _, value in written) < 4096


def test_the_configuration_goes_with_its_bucket(cluster: tuple[OzoneManager, BucketDocuments]) -> None:
    manager, cors = cluster
    cors.put("vol", "bkt", config())
    manager.buckets.delete("vol", "bkt")
    assert manager.store.get(S3_BUCKET_CORS_TABLE, bucket_key("vol", "bkt")) is None
    manager.buckets.create("vol", "bkt")
    assert cors.get("vol", "bkt") is None


def test_deleting_a_bucket_without_a_configuration_leaves_the_table_alone(
    cluster: tuple[OzoneManager, BucketDocuments], monkeypatch: pytest.MonkeyPatch
) -> None:
    """R29 N6: an OM that predates s3BucketCorsTable can still apply the deletion of such a bucket."""
    manager, _ = cluster
    tables: list[str] = []
    commit = manager.commit

    def recording(ops: list[Op]) -> None:
        tables.extend(table for table, _, _ in ops)
        commit(ops)

    monkeypatch.setattr(manager, "commit", recording)
    manager.buckets.delete("vol", "bkt")
    assert S3_BUCKET_CORS_TABLE not in tables and BUCKET_TABLE in tables


def test_only_the_owner_or_an_administrator_reads_or_changes_it(tmp_path: Path) -> None:
    """R26 D6: an ACL granting bob everything on the bucket does not let him near its CORS as he is (WRITE_ACL
    would let him make himself the owner first, as Ozone allows: R29 N3, docs/s3.md); the answers
    carry nothing large (R26 D2: OM HA's retry cache keeps every answer)."""

    async def body() -> None:
        async with om(tmp_path) as stub:
            root, alice, bob = As(stub, "root"), As(stub, "alice"), As(stub, "bob")
            await root.createVolume(pb.CreateVolumeRequest(volume="vol", owner="alice"))
            await alice.createBucket(pb.CreateBucketRequest(volume="vol", bucket="buck"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.VOLUME, "/vol", "user:bob:a"))
            await alice.addAcl(acl_request(pb.AddAclRequest, ResourceType.BUCKET, "/vol/buck", "user:bob:a"))
            put = pb.PutBucketCorsRequest(volume="vol", bucket="buck", configuration=BIG)
            get = pb.GetBucketCorsRequest(volume="vol", bucket="buck")
            delete = pb.DeleteBucketCorsRequest(volume="vol", bucket="buck")
            for call, request in (
                (bob.putBucketCors, put),
                (bob.getBucketCors, get),
                (bob.deleteBucketCors, delete),
            ):
                details = await denied(call, request)
                assert details.startswith("PERMISSION_DENIED: Only the owner of bucket vol/buck"), details
            assert (await alice.putBucketCors(put)).ByteSize() == 0
            assert (await root.getBucketCors(get)).configuration == s3_cors.document(s3_cors.parse(BIG))
            listed = await bob.listBuckets(pb.ListBucketsRequest(volume="vol"))
            assert listed.ByteSize() < 1024
            assert (await alice.deleteBucketCors(delete)).ByteSize() == 0
            assert (await alice.getBucketCors(get)).configuration == b""

    run(body())
