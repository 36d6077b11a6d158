"""S3 server-side encryption in an OM HA service (issue 33, item 7; R36 F1 and F4): no SSE-S3 data key in
anything an OM writes or keeps (Raft log, om.db, retry cache), a retried call is answered the key again,
and the OMs of a service share one master keystore."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pyozone import rpc
from pyozone.framework.om import OM_SERVICE
from pyozone.om.master_keys import MasterKeyStore
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.rpc.metadata import CALL_ID_METADATA, CLIENT_ID_METADATA
from tests.unit.om.server.test_om_ha import run, service
from tests.unit.om.test_om_server import om_channel

NAMED = ((CLIENT_ID_METADATA, "client-sse"), (CALL_ID_METADATA, "11"))


def test_no_data_key_is_in_any_om_file_or_retry_cache_and_a_retry_is_answered_it(tmp_path: Path) -> None:
    store = tmp_path / "shared.keystore"
    MasterKeyStore.create(store)

    async def scenario() -> None:
        async with service(tmp_path, **{"ozone.om.sse.master.keystore": str(store)}) as svc:
            client = svc.client()
            try:
                await client.create_volume("vol")
                await client.create_bucket("vol", "bkt")
            finally:
                await client.close()
            leader = await svc.leader()
            async with om_channel(leader.rpc_port) as channel:
                stub = rpc.Stub(channel, OM_SERVICE)
                request = pb.OpenKeyRequest(
                    volume="vol", bucket="bkt", key="k", dataSize=10, sseAlgorithm=pb.SSE_S3
                )
                opened = await stub.openKey(request, metadata=NAMED)
                again = await stub.openKey(
                    request, metadata=NAMED
                )  # the retry cache's answer, unwrapped again
                upload = await stub.initiateMultipartUpload(
                    pb.InitiateMultipartUploadRequest(
                        volume="vol", bucket="bkt", key="m", sseAlgorithm=pb.SSE_S3
                    )
                )
                part = await stub.openKey(
                    pb.OpenKeyRequest(
                        volume="vol", bucket="bkt", key="m", dataSize=10, multipartUploadID=upload.uploadID,
                        multipartNumber=1,
                    ),
                    metadata=((CLIENT_ID_METADATA, "client-sse"), (CALL_ID_METADATA, "12")),
                )  # fmt: skip
            data_keys = {opened.keyInfo.sseDataKey, part.keyInfo.sseDataKey}
            assert all(len(k) == 32 for k in data_keys)
            assert again.keyInfo.sseDataKey == opened.keyInfo.sseDataKey and again.clientID == opened.clientID
            await asyncio.sleep(0)
            cached = [
                (name, answer.method)
                for name, daemon in svc.daemons.items()
                for _, answer in daemon.replication.retry_cache._entries.values()  # type: ignore[union-attr]
                if any(k in answer.response for k in data_keys)
            ]
            assert cached == []
        found = [
            str(path.relative_to(tmp_path))
            for path in tmp_path.rglob("*")
            if path.is_file() and path != store and any(k in path.read_bytes() for k in data_keys)
        ]
        assert found == []  # every OM's Raft log and om.db, after the service stopped

    run(scenario())
