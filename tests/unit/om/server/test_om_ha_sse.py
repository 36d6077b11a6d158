"""S3 server-side encryption in an OM HA service (issue 33, item 7; R36 F1 and F4): no SSE-S3 data key in
anything an OM writes or keeps (Raft log, om.db, retry cache), a retried call is answered the key again,
and the OMs of a service share one master keystore."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.framework.om import OM_SERVICE
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.security.sse import SseAlgorithm, SseRequest
from pyozone.om.master_keys import KEYSTORE_FILE, MasterKeyStore
from pyozone.om.server import OmDaemon, ServerStartError
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.rpc.metadata import CALL_ID_METADATA, CLIENT_ID_METADATA
from tests.unit.om.server.test_om_ha import NODES, node_of, planned, run, service
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


def test_the_oms_of_a_service_share_the_first_om_s_keystore_and_a_different_one_is_refused(
    tmp_path: Path,
) -> None:
    """R36 F4: `om --init` makes the keystore on the service's first OM only; another OM's refuses until
    it is copied there, and an OM whose keystore is another refuses to start (never a failover's 500)."""
    svc = planned(tmp_path)

    async def init(node: str) -> None:
        daemon = OmDaemon(svc.node_conf(node), svc.scm)
        try:
            await daemon.initialize()
        finally:
            await daemon.stop(0.2)

    async def scenario() -> None:
        await init("om1")
        first = tmp_path / "om1" / KEYSTORE_FILE
        for node in ("om2", "om3"):
            with pytest.raises(ServerStartError, match=r"copy om1's file here.*then run `om --init` again"):
                await init(node)
            assert not (tmp_path / node / KEYSTORE_FILE).exists()
            shutil.copy2(first, tmp_path / node / KEYSTORE_FILE)
            await init(node)
        await asyncio.gather(*(svc.start(n) for n in NODES))
        try:
            client = svc.client()
            try:
                await client.create_volume("vol")
                await client.create_bucket("vol", "bkt")
                opened = await client.open_key(
                    "vol", "bkt", "k", 10, RATIS_THREE, sse=SseRequest(SseAlgorithm.SSE_S3)
                )
                await client.commit_key("vol", "bkt", "k", opened.client_id, 10, opened.blocks)
                await svc.stop(node_of(await svc.leader()))
                assert (await client.lookup_key("vol", "bkt", "k")).data_key == opened.data_key
            finally:
                await client.close()
        finally:
            for node in list(svc.daemons):
                await svc.stop(node)
        stray = tmp_path / "om3" / KEYSTORE_FILE
        stray.unlink()
        MasterKeyStore.create(stray)
        with pytest.raises(ServerStartError, match=f"{stray}: keystore [0-9a-f]+, while om.db's"):
            await svc.start("om3")

    run(scenario())
