"""OM HA in one process: three OM daemons of one service (ozone.om.service.ids) on real sockets, their Raft
group on the shell, a fake SCM behind them. Writes execute on the leader and reach every OM's om.db as
committed entries; a follower refuses reads and writes naming the leader; a call replayed with its call id
is answered with its first answer, also by the next leader; the client fails over when the leader stops;
a restarted service applies its log from om.db's TRANSACTIONINFO without applying anything twice."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.client.config import ClientConfig
from pyozone.config import OzoneConfiguration
from pyozone.framework.om import OM_SERVICE, OmClient
from pyozone.framework.om_errors import OMNotLeaderException
from pyozone.hdds.ids import RATIS_THREE
from pyozone.om.metadata import (
    BUCKET_TABLE,
    KEY_TABLE,
    META_TABLE,
    MULTIPART_INFO_TABLE,
    OBJECT_VERSION_TABLE,
    S3_BUCKET_CORS_TABLE,
    S3_BUCKET_LIFECYCLE_TABLE,
    S3_BUCKET_POLICY_TABLE,
    VOLUME_TABLE,
    bucket_key,
    key_key,
    volume_key,
)
from pyozone.om.server import OmDaemon, ServerStartError
from pyozone.om.server.ha import READS, TRANSACTION_INFO, OmReplication, transaction_info
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.proto import Raft_pb2 as raft_pb
from pyozone.protocol import om as wire
from pyozone.protocol import om_records
from pyozone.protocol.om import SERVICE
from pyozone.protocol.om_admin import ADMIN_SERVICE, transfer_request
from pyozone.protocol.om_ratis import entry_to_bytes
from pyozone.protocol.raft import message_to_proto
from pyozone.ratis.messages import AppendEntriesRequest, LogEntry, RaftPeerId
from pyozone.ratis_server.transport import DELIVER
from pyozone.rpc.metadata import CALL_ID_METADATA, CLIENT_ID_METADATA
from tests.polling import wait_for_async
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import om_channel
from tests.unit.ratis_server.shell_support import ports_of

NODES = ("om1", "om2", "om3")


@dataclass
class Service:
    tmp_path: Path
    scm: FakeScm
    values: dict[str, str]
    daemons: dict[str, OmDaemon]

    def node_conf(self, node: str) -> OzoneConfiguration:
        return OzoneConfiguration(
            {**self.values, "ozone.om.node.id": node, "ozone.metadata.dirs": str(self.tmp_path / node)}
        )

    async def start(self, node: str) -> OmDaemon:
        daemon = OmDaemon(self.node_conf(node), self.scm)
        try:
            await daemon.start()
        except BaseException:
            await daemon.stop(0.2)
            raise
        self.daemons[node] = daemon
        return daemon

    async def stop(self, node: str) -> None:
        await self.daemons.pop(node).stop(0.2)

    async def leader(self) -> OmDaemon:
        """The OM that leads once a client call made it take over."""

        async def found() -> OmDaemon | None:
            for daemon in self.daemons.values():
                status = daemon.raft.status() if daemon.raft is not None else None
                if status is not None and status.role.name == "LEADER":
                    try:
                        daemon.replication.check_leader()  # type: ignore[union-attr]
                    except Exception:
                        return None
                    return daemon
            return None

        return await wait_for_async(found, 20, "an OM that leads")

    def client(self) -> OmClient:
        return OmClient(ClientConfig.from_conf(OzoneConfiguration(self.values)))


def planned(tmp_path: Path, **extra: str) -> Service:
    ports = iter(ports_of(3 * len(NODES)))
    values = {
        **extra,
        "ozone.om.service.ids": "omservice",
        "ozone.om.nodes.omservice": ",".join(NODES),
        "ozone.om.ratis.minimum.timeout": "300ms",
        "ozone.scm.block.size": "1KB",
        "ozone.client.wait.between.retries.millis": "50",
    }
    for node in NODES:
        values[f"ozone.om.address.omservice.{node}"] = f"127.0.0.1:{next(ports)}"
        values[f"ozone.om.http-address.omservice.{node}"] = f"127.0.0.1:{next(ports)}"
        values[f"ozone.om.ratis.port.omservice.{node}"] = str(next(ports))
    return Service(tmp_path, FakeScm(), values, {})


async def create_volumes(svc: Service, *names: str) -> None:
    client = svc.client()
    try:
        for name in names:
            await client.create_volume(name)
    finally:
        await client.close()


@asynccontextmanager
async def service(tmp_path: Path, **extra: str) -> AsyncIterator[Service]:
    running = planned(tmp_path, **extra)
    try:
        await asyncio.gather(*(running.start(node) for node in NODES))
        yield running
    finally:
        for node in list(running.daemons):
            await running.stop(node)


def http_text(port: int, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
        return answer.read().decode()


def http_json(port: int, path: str) -> dict:  # type: ignore[type-arg]
    return json.loads(http_text(port, path))


def run(coro) -> None:  # type: ignore[no-untyped-def]
    asyncio.run(asyncio.wait_for(coro, 60))


def node_of(daemon: OmDaemon) -> str:
    assert daemon.node is not None
    return daemon.node.node_id


async def write_key(client: OmClient, volume: str, bucket: str, key: str) -> None:
    opened = await client.open_key(volume, bucket, key, 10, RATIS_THREE)
    await client.commit_key(volume, bucket, key, opened.client_id, 10, opened.blocks)


async def held_everywhere(svc: Service, table: str, key: str) -> None:
    await wait_for_async(
        lambda: all(d.store.get(table, key) is not None for d in svc.daemons.values()),  # type: ignore[union-attr]
        20,
        f"{key} on every OM",
    )


def test_a_write_executes_on_the_leader_and_reaches_every_om(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            client = svc.client()
            try:
                await client.create_volume("vol")
                await client.create_bucket("vol", "bkt")
                await write_key(client, "vol", "bkt", "k1")
                leader = await svc.leader()
                assert (await client.lookup_key("vol", "bkt", "k1")).data_size == 10
            finally:
                await client.close()
            await held_everywhere(svc, KEY_TABLE, key_key("vol", "bkt", "k1"))
            for daemon in svc.daemons.values():
                daemon.store.sync()  # type: ignore[union-attr]
                # om.db holds the entries it applied, with the last one's term and index
                applied = transaction_info(daemon.store.stored_value(META_TABLE, TRANSACTION_INFO))  # type: ignore[union-attr]
                assert applied.index > 0
                assert daemon.store.stored_value(KEY_TABLE, key_key("vol", "bkt", "k1")) is not None  # type: ignore[union-attr]
            assert svc.scm.allocations, "the leader asked SCM for the key's block"
            followers = [d for d in svc.daemons.values() if d is not leader]
            assert all(not d.replication.leading() for d in followers)  # type: ignore[union-attr]
            # the web UI's JSON and /prom: role, term, leader, indexes, each follower's lag
            shown = await asyncio.to_thread(http_json, leader.http_port, "/api/v1/ratis")
            assert (shown["ha"], shown["role"], shown["leader"]) == (True, "LEADER", node_of(leader))
            assert shown["commitIndex"] >= shown["appliedIndex"] > 0
            assert sorted(f["nodeId"] for f in shown["followers"]) == sorted(node_of(d) for d in followers)
            # OM Roles: each OM of the service, its client and Ratis addresses, the role this OM knows
            roles = {node_of(d): "LEADER" if d is leader else "FOLLOWER" for d in svc.daemons.values()}
            assert {m["nodeId"]: m["role"] for m in shown["members"]} == roles
            assert all(m["rpcAddress"] and m["ratisAddress"] for m in shown["members"])
            prom = await asyncio.to_thread(http_text, leader.http_port, "/prom")
            assert f'om_ha_metrics_ozone_manager_ha_leader_state{{leadernodeid="{node_of(leader)}"' in prom
            assert "om_ratis_follower_lag{" in prom and "om_ratis_commit_index " in prom
            follower_view = await asyncio.to_thread(http_json, followers[0].http_port, "/api/v1/ratis")
            assert (follower_view["role"], follower_view["leader"]) == ("FOLLOWER", node_of(leader))
            assert {m["nodeId"]: m["role"] for m in follower_view["members"]} == roles
            assert follower_view["followers"] == []  # match index and lag: the leader's to show

    run(scenario())


def test_a_follower_refuses_writes_and_reads_naming_the_leader(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            client = svc.client()
            try:
                await client.create_volume("vol")
            finally:
                await client.close()
            leader = await svc.leader()
            follower = next(d for d in svc.daemons.values() if d is not leader)
            leader_rpc = svc.values[f"ozone.om.address.omservice.{node_of(leader)}"]
            async with om_channel(follower.rpc_port) as channel:
                stub = rpc.Stub(channel, OM_SERVICE)
                for call, request in (
                    (stub.createVolume, wire.create_volume_request("other", "me", 0, 0)),
                    (stub.infoVolume, pb.InfoVolumeRequest(volume="vol")),
                ):
                    with pytest.raises(rpc.RpcError) as refused:
                        await call(request)
                    assert refused.value.code() is rpc.StatusCode.UNAVAILABLE
                    parsed = OMNotLeaderException.parse(refused.value.details() or "")
                    assert parsed is not None, refused.value.details()
                    assert (parsed.node_id, parsed.leader_id) == (node_of(follower), node_of(leader))
                    assert parsed.leader_address == leader_rpc
            assert all(d.store.get(VOLUME_TABLE, volume_key("other")) is None for d in svc.daemons.values())  # type: ignore[union-attr]

    run(scenario())


def test_a_replayed_call_is_answered_once_also_by_the_next_leader(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            client = svc.client()
            try:
                await client.create_volume("warm")  # elects and readies a leader
            finally:
                await client.close()
            leader = await svc.leader()
            named = ((CLIENT_ID_METADATA, "client-a"), (CALL_ID_METADATA, "7"))
            request = wire.create_volume_request("vol", "me", 0, 0)

            async def create(
                daemon: OmDaemon, metadata: tuple[tuple[str, str], ...]
            ) -> pb.CreateVolumeResponse:
                async with om_channel(daemon.rpc_port) as channel:
                    return await rpc.Stub(channel, OM_SERVICE).createVolume(request, metadata=metadata)

            first = await create(leader, named)
            again = await create(leader, named)  # the same call: its first answer, not VOLUME_ALREADY_EXISTS
            assert again == first
            with pytest.raises(rpc.RpcError) as other:
                await create(leader, ((CLIENT_ID_METADATA, "client-a"), (CALL_ID_METADATA, "8")))
            assert "VOLUME_ALREADY_EXISTS" in (other.value.details() or "")
            await held_everywhere(svc, VOLUME_TABLE, volume_key("vol"))
            await svc.stop(node_of(leader))
            successor = await svc.leader()
            assert successor is not leader
            replayed = await create(successor, named)  # the retry cache filled at apply on every OM
            assert replayed == first

    run(scenario())


def test_the_client_fails_over_when_the_leader_stops_and_every_key_stays(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            client = svc.client()
            try:
                await client.create_volume("vol")
                await client.create_bucket("vol", "bkt")
                written = []
                for i in range(5):
                    await write_key(client, "vol", "bkt", f"k{i}")
                    written.append(f"k{i}")
                leader = await svc.leader()
                await svc.stop(node_of(leader))
                for i in range(5, 10):
                    await write_key(client, "vol", "bkt", f"k{i}")
                    written.append(f"k{i}")
                for key in written:
                    assert (await client.lookup_key("vol", "bkt", key)).data_size == 10
                assert node_of(await svc.leader()) != node_of(leader)
            finally:
                await client.close()

    run(scenario())


def test_a_restarted_service_applies_nothing_twice(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            client = svc.client()
            try:
                await client.create_volume("vol")
                await client.create_bucket("vol", "bkt")
                await write_key(client, "vol", "bkt", "k")
            finally:
                await client.close()
            await held_everywhere(svc, KEY_TABLE, key_key("vol", "bkt", "k"))
            for node in NODES:
                await svc.stop(node)
            await asyncio.gather(*(svc.start(node) for node in NODES))
            for daemon in svc.daemons.values():
                assert daemon.replication.db_applied.index > 0  # type: ignore[union-attr]
            client = svc.client()
            try:
                assert (await client.lookup_key("vol", "bkt", "k")).data_size == 10
                await client.delete_key("vol", "bkt", "k")
                await write_key(client, "vol", "bkt", "k2")
            finally:
                await client.close()
            await held_everywhere(svc, KEY_TABLE, key_key("vol", "bkt", "k2"))
            # the old entries were not applied again over the delete
            assert all(
                d.store.get(KEY_TABLE, key_key("vol", "bkt", "k")) is None for d in svc.daemons.values()
            )  # type: ignore[union-attr]

    run(scenario())


def test_an_om_db_a_lone_om_wrote_is_refused_as_a_member_of_a_service(tmp_path: Path) -> None:
    async def scenario() -> None:
        svc = planned(tmp_path)
        lone = OmDaemon(
            OzoneConfiguration(
                {
                    "ozone.metadata.dirs": str(tmp_path / "om1"),
                    "ozone.om.address": "127.0.0.1:0",
                    "ozone.om.http-address": "127.0.0.1:0",
                }
            ),
            svc.scm,
        )
        await lone.start()
        try:
            lone.core.volumes.create("written-alone", "me", 0, 0, ())  # type: ignore[union-attr]
        finally:
            await lone.stop(0.2)
        with pytest.raises(ServerStartError, match="holds a namespace a lone OM wrote"):
            await svc.start("om1")

    run(scenario())


def test_a_raft_message_from_a_non_member_is_refused_and_applies_nothing(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            client = svc.client()
            try:
                await client.create_volume("vol")
                leader = await svc.leader()
                follower = next(d for d in svc.daemons.values() if d is not leader)
                assert follower.raft is not None
                evil = entry_to_bytes([(VOLUME_TABLE, volume_key("evil"), b"x")], [])
                append = AppendEntriesRequest(
                    RaftPeerId("om9"), 99, 0, 0, (LogEntry(99, 1, evil),), 1, 1
                )  # a far higher term that commits at once: taken, it would depose the leader
                message = message_to_proto(follower.raft.group.group_id, follower.raft.me, append)
                settings = rpc.ChannelSettings(max_message_bytes=1 << 20)
                async with rpc.Channel(follower.raft.address, settings) as channel:
                    with pytest.raises(rpc.RpcError) as refused:
                        await channel.unary(
                            DELIVER.path,
                            raft_pb.RaftServerMessagesProto(messages=[message]),
                            None,
                            timeout=10,
                        )
                assert refused.value.code() is rpc.StatusCode.PERMISSION_DENIED
                assert "om9 is not another member" in (refused.value.details() or "")
                await client.create_volume("after")  # the service keeps serving
                await held_everywhere(svc, VOLUME_TABLE, volume_key("after"))
                assert all(
                    d.store.get(VOLUME_TABLE, volume_key("evil")) is None for d in svc.daemons.values()
                )  # type: ignore[union-attr]
                assert follower.raft.status().term < 99
            finally:
                await client.close()

    run(scenario())


def test_a_lone_om_has_no_leadership_to_transfer(tmp_path: Path) -> None:
    async def scenario() -> None:
        lone = OmDaemon(
            OzoneConfiguration(
                {
                    "ozone.metadata.dirs": str(tmp_path),
                    "ozone.om.address": "127.0.0.1:0",
                    "ozone.om.http-address": "127.0.0.1:0",
                }
            ),
            FakeScm(),
        )
        await lone.start()
        try:
            async with om_channel(lone.rpc_port) as channel:
                with pytest.raises(rpc.RpcError) as refused:
                    await rpc.Stub(channel, rpc.ServiceSpec.of(ADMIN_SERVICE)).transferLeadership(
                        transfer_request("om2")
                    )
            assert refused.value.code() is rpc.StatusCode.FAILED_PRECONDITION
            assert "NOT_SUPPORTED_OPERATION" in (refused.value.details() or "")
            shown = await asyncio.to_thread(http_json, lone.http_port, "/api/v1/ratis")
            assert shown == {"ha": False}
        finally:
            await lone.stop(0.2)

    run(scenario())


def test_the_background_services_run_on_the_leader_only(tmp_path: Path) -> None:
    async def scenario() -> None:
        fast = {
            "ozone.block.deleting.service.interval": "50ms",
            "ozone.om.open.key.cleanup.service.interval": "50ms",
        }
        async with service(tmp_path, **fast) as svc:
            client = svc.client()
            try:
                await client.create_volume("vol")  # a leader takes over
            finally:
                await client.close()
            leader = await svc.leader()
            await wait_for_async(
                lambda: leader.key_deleting.progress.runs >= 3 and leader.open_key_cleanup.progress.runs >= 3,  # type: ignore[union-attr]
                20,
                "the leader's services running",
            )
            for daemon in svc.daemons.values():
                if daemon is not leader:
                    assert daemon.key_deleting.progress.runs == 0  # type: ignore[union-attr]
                    assert daemon.open_key_cleanup.progress.runs == 0  # type: ignore[union-attr]

    run(scenario())


def test_an_elected_om_takes_over_without_waiting_for_a_call(tmp_path: Path) -> None:
    """A new leader stepped up only when a client called it: with no traffic its /api/v1/ratis said not
    ready and its background services (key deletion, open-key cleanup) never ran, also after a failover.
    It steps up on its own once its log is applied; a stopped leader's successor does too."""

    async def scenario() -> None:
        fast = {"ozone.block.deleting.service.interval": "50ms"}
        async with service(tmp_path, **fast) as svc:

            async def ready() -> OmDaemon:
                def found() -> OmDaemon | None:
                    leading = [d for d in svc.daemons.values() if d.replication.leading()]  # type: ignore[union-attr]
                    return leading[0] if len(leading) == 1 else None

                daemon = await wait_for_async(found, 20, "an OM that took over with no call")
                shown = await asyncio.to_thread(http_json, daemon.http_port, "/api/v1/ratis")
                assert shown["ready"] is True
                await wait_for_async(
                    lambda: daemon.key_deleting.progress.runs >= 2,  # type: ignore[union-attr]
                    20,
                    "the new leader's services running",
                )
                return daemon

            first = await ready()
            await svc.stop(node_of(first))
            second = await ready()
            assert second is not first

    run(scenario())


def test_a_failed_look_at_the_role_does_not_end_the_om_s_step_ups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review R20 D6: one exception out of the role check ended the daemon's loop for good, and the OM went
    back to stepping up only at a client's call."""

    async def scenario() -> None:
        looks = {"n": 0}
        original = OmReplication.follow_role

        def failing_once(self: OmReplication) -> None:
            looks["n"] += 1
            if looks["n"] == 1:
                raise RuntimeError("planted")
            original(self)

        monkeypatch.setattr(OmReplication, "follow_role", failing_once)
        async with service(tmp_path) as svc:
            await wait_for_async(
                lambda: any(d.replication.leading() for d in svc.daemons.values()),  # type: ignore[union-attr]
                20,
                "an OM that took over with no call",
            )
            assert looks["n"] > 3

    run(scenario())


def test_a_bucket_s_cors_configuration_reaches_every_om_and_its_answers_stay_small(tmp_path: Path) -> None:
    """Issue 33 (review R26 D2): putBucketCors is replicated as every write is, its removal too, and the
    answers each OM's retry cache keeps for ten minutes are empty, however large the document."""
    origins = "".join(f"<AllowedOrigin>https://{i}.{'o' * 1000}.example</AllowedOrigin>" for i in range(50))
    document = "<CORSConfiguration><CORSRule><AllowedMethod>GET</AllowedMethod>"
    document += f"{origins}</CORSRule></CORSConfiguration>"

    async def everywhere(svc: Service, present: bool) -> None:
        def kept() -> bool:
            for daemon in svc.daemons.values():
                found = daemon.store.get(S3_BUCKET_CORS_TABLE, bucket_key("vol", "bkt"))  # type: ignore[union-attr]
                if (found is not None) != present:
                    return False
            return True

        await wait_for_async(kept, 20, f"the configuration {'on' if present else 'gone from'} every OM")

    async def scenario() -> None:
        async with service(tmp_path) as svc:
            client = svc.client()
            try:
                await client.create_volume("vol")
                await client.create_bucket("vol", "bkt")
                for _ in range(5):
                    await client.put_bucket_cors("vol", "bkt", document.encode())
                await everywhere(svc, True)
                assert b"https://49." in (await client.get_bucket_cors("vol", "bkt") or b"")
                for daemon in svc.daemons.values():
                    cache = daemon.replication.retry_cache  # type: ignore[union-attr]
                    assert sum(len(answer.response) for _, answer in cache._entries.values()) < 2048
                await client.delete_bucket_cors("vol", "bkt")
                await everywhere(svc, False)
                assert await client.get_bucket_cors("vol", "bkt") is None
            finally:
                await client.close()

    run(scenario())


def test_s3_versions_reach_every_om(tmp_path: Path) -> None:
    """Issue 33, item 1: a bucket's versioning state and its delete markers (objectVersionTable) are
    replicated as every write is, and the version listing answers them newest first."""

    async def scenario() -> None:
        async with service(tmp_path) as svc:
            client = svc.client()
            try:
                await client.create_volume("vol")
                await client.create_bucket("vol", "bkt")
                await client.set_bucket_versioning("vol", "bkt", "Enabled")
                first, second = [await client.delete_key("vol", "bkt", "k") for _ in range(2)]

                def kept() -> bool:
                    for daemon in svc.daemons.values():
                        store = daemon.store  # type: ignore[union-attr]
                        record = om_records.decode_bucket(store.get(BUCKET_TABLE, bucket_key("vol", "bkt")))
                        markers = list(store.scan(OBJECT_VERSION_TABLE, key_key("vol", "bkt", "k")))
                        if record.versioning.value != "Enabled" or len(markers) != 2:
                            return False
                    return True

                await wait_for_async(kept, 20, "the state and both markers on every OM")
                listed = await client.list_key_versions("vol", "bkt", "", "", "", 10)
                assert [(i.version_id, latest, i.delete_marker) for i, latest in listed] == [
                    (second[0], True, True),
                    (first[0], False, True),
                ]
            finally:
                await client.close()

    run(scenario())


def test_the_s3_lifecycle_service_acts_on_the_leader_and_every_om_follows(tmp_path: Path) -> None:
    """Issue 33, item 4: a lifecycle configuration is replicated as every write is, and what the lifecycle
    service does on the leader (runS3Lifecycle, judged days later) reaches every OM: a noncurrent delete
    marker and then the expired one removed, an incomplete upload aborted."""
    config = (
        "<LifecycleConfiguration><Rule><ID>all</ID><Filter/><Status>Enabled</Status><Expiration>"
        "<ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration><NoncurrentVersionExpiration>"
        "<NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration><AbortIncompleteMultipartUpload>"
        "<DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload></Rule>"
        "</LifecycleConfiguration>"
    )

    async def scenario() -> None:
        async with service(tmp_path, **{"ozone.om.s3.lifecycle.time.override.enabled": "true"}) as svc:
            client = svc.client()
            try:
                await client.create_volume("vol")
                await client.create_bucket("vol", "bkt")
                await client.set_bucket_versioning("vol", "bkt", "Enabled")
                await client.put_bucket_lifecycle("vol", "bkt", config.encode())
                for _ in range(2):
                    await client.delete_key("vol", "bkt", "k")  # two markers: the older is noncurrent
                await client.initiate_multipart_upload("vol", "bkt", "upload", None, None, None)

                def settled(rows: int, configured: bool) -> bool:
                    for daemon in svc.daemons.values():
                        store = daemon.store  # type: ignore[union-attr]
                        versions = list(store.scan(OBJECT_VERSION_TABLE, key_key("vol", "bkt", "k")))
                        uploads = list(store.scan(MULTIPART_INFO_TABLE, bucket_key("vol", "bkt") + "/"))
                        kept = store.get(S3_BUCKET_LIFECYCLE_TABLE, bucket_key("vol", "bkt")) is not None
                        if len(versions) + len(uploads) != rows or kept != configured:
                            return False
                    return True

                await wait_for_async(lambda: settled(3, True), 20, "the configuration and 3 rows on every OM")
                later = int(time.time() * 1000) + 3 * 86_400_000
                first = await client.run_s3_lifecycle(later)
                assert (first.versions_expired, first.uploads_aborted, first.markers_removed) == (1, 1, 0)
                assert (await client.run_s3_lifecycle(later)).markers_removed == 1
                await wait_for_async(lambda: settled(0, True), 20, "every row gone from every OM")
                await client.delete_bucket_lifecycle("vol", "bkt")
                await wait_for_async(lambda: settled(0, False), 20, "the configuration gone from every OM")
            finally:
                await client.close()

    run(scenario())


def test_a_bucket_s_policy_reaches_every_om(tmp_path: Path) -> None:
    """Issue 33 item 5: putBucketPolicy and deleteBucketPolicy are replicated as every write is; the policy
    is read back as sent."""
    document = b'{"Statement": {"Effect": "Deny", "Principal": "*", "Action": "s3:*", '
    document += b'"Resource": "arn:aws:s3:::bkt/*"}}'

    async def everywhere(svc: Service, present: bool) -> None:
        def kept() -> bool:
            stores = [daemon.store for daemon in svc.daemons.values()]
            key = bucket_key("vol", "bkt")
            return all((s.get(S3_BUCKET_POLICY_TABLE, key) is not None) == present for s in stores)  # type: ignore[union-attr]

        await wait_for_async(kept, 20, f"the policy {'on' if present else 'gone from'} every OM")

    async def scenario() -> None:
        async with service(tmp_path) as svc:
            client = svc.client()
            try:
                await client.create_volume("vol")
                await client.create_bucket("vol", "bkt")
                await client.put_bucket_policy("vol", "bkt", document)
                await everywhere(svc, True)
                assert await client.get_bucket_policy("vol", "bkt") == document
                await client.delete_bucket_policy("vol", "bkt")
                await everywhere(svc, False)
                assert await client.get_bucket_policy("vol", "bkt") is None
            finally:
                await client.close()

    run(scenario())


def test_run_s3_lifecycle_holds_no_other_client_s_write(tmp_path: Path) -> None:
    """Review R33 F3: runS3Lifecycle ran the whole service inside its call, so its first transaction stayed
    unsealed and every write staged after it (any client's) waited for the run's end. Now it runs as the
    timer does: with the run held on a second bucket after the first bucket's expiration was written,
    another client's createBucket is answered at once."""
    rule = (
        b"<LifecycleConfiguration><Rule><ID>r</ID><Filter/><Status>Enabled</Status>"
        b"<Expiration><Days>1</Days></Expiration></Rule></LifecycleConfiguration>"
    )

    async def scenario() -> None:
        async with service(tmp_path, **{"ozone.om.s3.lifecycle.time.override.enabled": "true"}) as svc:
            client, other = svc.client(), svc.client()
            reached, release = threading.Event(), threading.Event()
            try:
                await client.create_volume("vol")
                for bucket in ("aaa", "bbb"):
                    await client.create_bucket("vol", bucket)
                    await client.put_bucket_lifecycle("vol", bucket, rule)
                await write_key(client, "vol", "aaa", "due")
                lifecycle = (await svc.leader()).s3_lifecycle
                assert lifecycle is not None
                look = lifecycle._versions

                def held_on_bbb(volume: str, bucket: str, *args: object):  # type: ignore[no-untyped-def]
                    if bucket == "bbb":  # aaa's expiration is written by now
                        reached.set()
                        release.wait(30)
                    yield from look(volume, bucket, *args)  # type: ignore[arg-type]

                lifecycle._versions = held_on_bbb  # type: ignore[method-assign]
                later = int(time.time() * 1000) + 3 * 86_400_000
                running = asyncio.create_task(client.run_s3_lifecycle(later))
                assert await asyncio.get_running_loop().run_in_executor(None, reached.wait, 20)
                await asyncio.wait_for(other.create_bucket("vol", "ccc"), 5)  # before: until the run ended
                assert not running.done()
                release.set()
                assert (await running).keys_expired == 1
            finally:
                release.set()
                await client.close()
                await other.close()

    run(scenario())


def test_every_call_that_reads_waits_for_a_read_index_round() -> None:
    """Every get/list/info/lookup call of OM's service is in READS (a deposed leader answers none from its
    own om.db); getBucketEncryption was left out when SSE and ACLs merged (the session's reread)."""
    reading = {m.name for m in SERVICE.methods if m.name.startswith(("get", "list", "info", "lookup"))}
    assert reading <= READS
    assert {m.name for m in SERVICE.methods} >= READS
