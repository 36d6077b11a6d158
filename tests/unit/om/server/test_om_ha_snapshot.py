"""OM HA snapshots in one process (three OM daemons, as test_om_ha.py): with a small
ozone.om.ratis.snapshot.auto.trigger.threshold and ozone.om.ratis.log.purge.gap every OM snapshots om.db and
purges its Raft log; a follower stopped meanwhile comes back behind the leader's log, downloads the leader's
om.db checkpoint (/dbCheckpoint), refuses a corrupt one (a proxy flips a byte) and fetches it again, installs
it, applies the log after it, and holds exactly the leader's namespace."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import threading
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web

from pyozone.common.om_ha import om_raft_group_id
from pyozone.common.tls import TlsStore
from pyozone.config import OzoneConfiguration
from pyozone.hdds.security import x509 as X
from pyozone.om.db_checkpoint import CHECKPOINT_PATH, CHECKSUM_HEADER, CheckpointError, download, unpack
from pyozone.om.metadata import VOLUME_TABLE
from pyozone.om.server import OmDaemon
from pyozone.om.server.daemon import POSITIVE_HA_KEYS, ServerStartError, checkpoint_fetchers
from pyozone.ratis_server.segmented_log import SegmentedRaftLog
from tests.polling import wait_for_async
from tests.tls_certs import CertAuthority
from tests.unit.om.server.test_om_ha import NODES, create_volumes, node_of, planned, run, service
from tests.unit.om.server.web.om_web import running_om
from tests.unit.ratis_server.shell_support import ports_of

SMALL = {"ozone.om.ratis.log.purge.gap": "4", "ozone.om.ratis.snapshot.auto.trigger.threshold": "4"}


class FlippingProxy:
    """Serves `upstream`'s /dbCheckpoint with one byte flipped in its first `corrupt` answers."""

    def __init__(self, upstream_port: int, corrupt: int) -> None:
        self.upstream_port = upstream_port
        self.corrupt = corrupt
        self.served = 0
        self.port = ports_of(1)[0]
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get(CHECKPOINT_PATH, self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, _: web.Request) -> web.Response:
        def fetch() -> tuple[str, bytes]:
            url = f"http://127.0.0.1:{self.upstream_port}{CHECKPOINT_PATH}"
            with urllib.request.urlopen(url, timeout=30) as answer:
                return answer.headers[CHECKSUM_HEADER], answer.read()

        checksum, body = await asyncio.to_thread(fetch)
        self.served += 1
        if self.served <= self.corrupt:
            flipped = bytearray(body)
            flipped[len(flipped) // 2] ^= 0x01
            body = bytes(flipped)
        return web.Response(body=body, headers={CHECKSUM_HEADER: checksum})


@asynccontextmanager
async def serving_checkpoints(
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]], tls: TlsStore
) -> AsyncIterator[int]:
    """`handler` on /dbCheckpoint over mutual TLS with `tls`'s certificate; yields its port."""
    app = web.Application()
    app.router.add_get(CHECKPOINT_PATH, handler)
    runner = web.AppRunner(app)
    await runner.setup()
    port = ports_of(1)[0]
    await web.TCPSite(runner, "127.0.0.1", port, ssl_context=tls.server_context()).start()
    try:
        yield port
    finally:
        await runner.cleanup()


def volumes(daemon: OmDaemon) -> list[str]:
    assert daemon.store is not None
    return [key for key, _ in daemon.store.scan(VOLUME_TABLE)]


def test_a_follower_behind_the_purged_log_installs_the_leaders_checkpoint_refusing_a_corrupt_one(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with service(tmp_path, **SMALL) as svc:
            client = svc.client()
            proxy: FlippingProxy | None = None
            try:
                await client.create_volume("vol000")
                leader = await svc.leader()
                lagging = next(n for n in NODES if n != node_of(leader))
                await svc.stop(lagging)
                for i in range(1, 30):
                    await client.create_volume(f"vol{i:03d}")
                assert leader.replication is not None and leader.raft is not None
                await wait_for_async(lambda: leader.replication.snapshots > 0, 20, "a snapshot on the leader")  # type: ignore[union-attr]
                purged_to = leader.raft._running_core().log.snapshot.index
                assert purged_to >= 4, "the leader purged its log"
                # the lagging OM fetches the leader's checkpoint through a proxy that corrupts the first
                leader_http = f"ozone.om.http-address.omservice.{node_of(leader)}"
                proxy = FlippingProxy(leader.http_port, corrupt=1)
                await proxy.start()
                svc.values[leader_http] = f"127.0.0.1:{proxy.port}"
                back = await svc.start(lagging)
                replication = back.replication
                assert replication is not None
                await wait_for_async(lambda: replication.installs >= 1, 30, "the checkpoint installed")
                assert replication.install_failures >= 1, "the corrupt checkpoint was refused first"
                assert proxy.served >= 2
                assert replication.db_applied.index >= purged_to
                for i in range(30, 35):  # the log after the checkpoint reaches it too
                    await client.create_volume(f"vol{i:03d}")
                await wait_for_async(
                    lambda: back.store.get(VOLUME_TABLE, "/vol034") is not None,  # type: ignore[union-attr]
                    20,
                    "the entries after the checkpoint applied",
                )
                await asyncio.to_thread(back.store.sync)  # type: ignore[union-attr]
                assert volumes(back) == volumes(leader) == sorted(f"/vol{i:03d}" for i in range(35))
                shown = back.replication.report()  # type: ignore[union-attr]
                assert shown["snapshotInstalls"] >= 1 and shown["snapshotInstallFailures"] >= 1
            finally:
                await client.close()
                if proxy is not None:
                    await proxy.stop()
            # restarted, the installed OM resumes from its om.db and applies nothing twice
            await svc.stop(lagging)
            again = await svc.start(lagging)
            assert again.replication is not None and again.replication.db_applied.index >= purged_to
            await wait_for_async(
                lambda: volumes(again) == volumes(leader), 20, "the restarted OM holds the same namespace"
            )

    run(scenario())


def test_a_clean_stop_snapshots_om_db_and_the_log_restarts_after_it(tmp_path: Path) -> None:
    async def scenario() -> None:
        # segments of 1 KB: a purge drops closed segments only, as Ratis's
        no_auto = {
            **SMALL,
            "ozone.om.ratis.snapshot.auto.trigger.threshold": "1000",
            "ozone.om.ratis.segment.size": "1KB",
        }
        async with service(tmp_path, **no_auto) as svc:
            await create_volumes(svc, *(f"vol{i:03d}" for i in range(12)))
            leader = await svc.leader()
            assert leader.replication is not None and leader.replication.snapshots == 0
            node = node_of(leader)
            await svc.stop(node)
            # the stop's snapshot purged the log on disk up to om.db's #TRANSACTIONINFO
            group_dir = tmp_path / node / "ratis" / om_raft_group_id("omservice")
            on_disk = SegmentedRaftLog(group_dir)
            stored = on_disk.load()
            on_disk.close()
            assert stored.snapshot.index >= 8
            assert all(e.index > stored.snapshot.index for e in stored.entries)
            back = await svc.start(node)
            assert back.replication is not None and back.replication.db_applied.index >= 12
            assert len(volumes(back)) == 12

    run(scenario())


def test_a_stop_waits_for_the_automatic_snapshot_under_way_before_om_db_closes(tmp_path: Path) -> None:
    """A stop closed om.db while an automatic snapshot flushed it on a thread ("dictionary changed size during
    iteration", then om.db still locked at the restart): the stop now waits for it."""

    async def scenario() -> None:
        async with service(tmp_path, **SMALL) as svc:
            leader = await svc.leader()
            store = leader.store
            assert store is not None and leader.replication is not None
            gate, order = threading.Event(), []
            flush = store.snapshot_point

            def held_flush() -> bytes | None:
                if not order:  # the automatic one; the stop's own snapshot is not held
                    order.append("held")
                    gate.wait(30)
                point = flush()
                order.append("snapshot")
                return point

            close = store.close

            def recorded_close() -> None:
                order.append("close")
                close()

            store.snapshot_point = held_flush  # type: ignore[method-assign]
            store.close = recorded_close  # type: ignore[method-assign]
            await create_volumes(svc, *(f"vol{i}" for i in range(6)))
            replication = leader.replication
            await wait_for_async(
                lambda: replication.auto_snapshot.running is not None, 10, "an automatic snapshot"
            )
            stopping = asyncio.ensure_future(svc.stop(node_of(leader)))
            await asyncio.sleep(0.5)
            assert not stopping.done() and order == ["held"]
            gate.set()
            await stopping
            assert order[1] == "snapshot" and order[-1] == "close"

    run(scenario())


class _Peer:
    """An ssl object whose peer certificate names `common_name`."""

    def __init__(self, common_name: str) -> None:
        self._cert = {"subject": ((("commonName", common_name),),)}

    def getpeercert(self) -> dict[str, object]:
        return self._cert


class _Request:
    def __init__(self, ssl_object: _Peer | None) -> None:
        self.transport = self
        self._ssl_object = ssl_object

    def get_extra_info(self, name: str) -> object:
        return self._ssl_object if name == "ssl_object" else None


def test_over_mutual_tls_only_oms_and_administrators_fetch_the_checkpoint() -> None:
    may = checkpoint_fetchers(OzoneConfiguration({"ozone.administrators": "admin"}))
    assert may(_Request(_Peer("om@host1")))  # type: ignore[arg-type]
    assert may(_Request(_Peer("admin")))  # type: ignore[arg-type]
    assert not may(_Request(_Peer("alice")))  # type: ignore[arg-type]
    assert not may(_Request(_Peer("dn@host2")))  # type: ignore[arg-type]
    assert may(_Request(None))  # type: ignore[arg-type]  # plaintext: no security


def test_an_ha_om_hands_its_checkpoint_over_mutual_tls_only_to_its_own_service_and_administrators(
    tmp_path: Path,
) -> None:
    """R12 D1: the gate took any OM certificate, so another service's OM (other/om1) and a lone OM's (no
    node), which the Raft port refuses, downloaded om.db whole. A real handshake against the real gate."""
    om = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
    ca = CertAuthority(tmp_path)
    server = ca.store("om1", om, om_node="svc/om1")
    fetchers = {
        "member": ca.store("om2", om, om_node="svc/om2"),
        "other service": ca.store("other", om, om_node="other/om1"),
        "lone OM": ca.store("lone", om),
        "administrator": ca.store("admin", X.Identity(X.CertRole.USER, "admin")),
        "user": ca.store("alice", X.Identity(X.CertRole.USER, "alice")),
        "datanode": ca.store(
            "dn",
            X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1"),
            datanode="5f0c4a4e-8f5e-4a55-9f7c-1d6b7d2c8a11",
        ),
    }
    may = checkpoint_fetchers(
        OzoneConfiguration({"ozone.administrators": "admin"}), frozenset({"svc/om1", "svc/om2", "svc/om3"})
    )

    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=200 if may(request) else 403)

    def fetch(port: int, store: TlsStore) -> int:
        try:
            with urllib.request.urlopen(
                f"https://127.0.0.1:{port}{CHECKPOINT_PATH}", context=store.client_context(), timeout=10
            ) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as e:
            return e.code

    async def scenario() -> dict[str, int]:
        async with serving_checkpoints(handler, server) as port:
            return {name: await asyncio.to_thread(fetch, port, store) for name, store in fetchers.items()}

    assert asyncio.run(asyncio.wait_for(scenario(), 60)) == {
        "member": 200,
        "other service": 403,
        "lone OM": 403,
        "administrator": 200,
        "user": 403,
        "datanode": 403,
    }


def test_a_follower_downloads_the_checkpoint_only_from_the_leader_nodes_certificate(tmp_path: Path) -> None:
    """The follower checked only that the server held an OM certificate for the leader's host: another OM of
    that host (svc/om2) or of another service could pose as the leader svc/om1 and hand over its om.db."""
    om = X.Identity(X.CertRole.OM, "om", "127.0.0.1")
    ca = CertAuthority(tmp_path)
    follower = ca.store("om3", om, om_node="svc/om3")
    servers = {
        "svc/om1": ca.store("om1", om, om_node="svc/om1"),
        "svc/om2": ca.store("om2", om, om_node="svc/om2"),
        "other/om1": ca.store("other", om, om_node="other/om1"),
    }

    async def handler(_: web.Request) -> web.Response:
        body = b"checkpoint"
        return web.Response(body=body, headers={CHECKSUM_HEADER: hashlib.sha256(body).hexdigest()})

    def fetch(port: int, n: int) -> str:
        try:
            download(
                f"https://127.0.0.1:{port}{CHECKPOINT_PATH}",
                follower.client_context(),
                tmp_path / f"om.db.tar.{n}",
                om_node="svc/om1",
            )
            return "downloaded"
        except CheckpointError as e:
            return "refused" if "not svc/om1's" in str(e) else str(e)

    async def scenario() -> dict[str, str]:
        got = {}
        for n, (name, store) in enumerate(servers.items()):
            async with serving_checkpoints(handler, store) as port:
                got[name] = await asyncio.to_thread(fetch, port, n)
        return got

    assert asyncio.run(asyncio.wait_for(scenario(), 60)) == {
        "svc/om1": "downloaded",
        "svc/om2": "refused",
        "other/om1": "refused",
    }


def test_a_lone_om_serves_no_checkpoint(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_om(tmp_path) as om:
            status, body = await om.get(CHECKPOINT_PATH)
            assert status == 503 and "HA service" in body["error"]

    run(scenario())


@pytest.mark.parametrize("key", POSITIVE_HA_KEYS)
def test_a_purge_gap_or_snapshot_threshold_not_positive_is_refused_by_its_om_key_before_om_db_opens(
    tmp_path: Path, key: str
) -> None:
    """purge.gap 0 was refused naming Ratis's raft.server.log.purge.gap, after om.db had opened."""
    svc = planned(tmp_path, **{key: "0"})

    async def scenario() -> None:
        with pytest.raises(ServerStartError, match=f"^{key} must be positive, got 0$"):
            await svc.start("om1")

    run(scenario())
    assert not (tmp_path / "om1" / "om.db").exists()


def test_an_om_whose_om_db_is_behind_its_purged_raft_log_refuses_to_start_naming_the_way_out(
    tmp_path: Path,
) -> None:
    """It started with a warning, never got the entries between om.db and its log's start, and could then
    lead without acknowledged writes."""

    async def scenario() -> None:
        async with service(tmp_path, **SMALL, **{"ozone.om.ratis.segment.size": "1KB"}) as svc:
            client = svc.client()
            try:
                await client.create_volume("vol000")
                leader = await svc.leader()
                node = next(n for n in NODES if n != node_of(leader))
                store = svc.daemons[node].store
                assert store is not None
                await wait_for_async(lambda: store.get(VOLUME_TABLE, "/vol000") is not None, 20, "applied")
                db = store.path
                await svc.stop(node)
                older = tmp_path / "older-om.db"
                shutil.copytree(db, older)
                follower = await svc.start(node)
                for i in range(1, 30):
                    await client.create_volume(f"vol{i:03d}")
                assert follower.replication is not None
                await wait_for_async(lambda: follower.replication.snapshots > 1, 20, "follower snapshots")  # type: ignore[union-attr]
            finally:
                await client.close()
            await svc.stop(node)
            group_dir = tmp_path / node / "ratis" / om_raft_group_id("omservice")
            on_disk = SegmentedRaftLog(group_dir)
            purged_to = on_disk.load().snapshot.index
            on_disk.close()
            shutil.rmtree(db)
            shutil.copytree(older, db)
            with pytest.raises(ServerStartError, match="starts after index") as refused:
                await svc.start(node)
            assert purged_to > 2 and f"starts after index {purged_to}" in str(refused.value)
            assert f"GET {CHECKPOINT_PATH} on the leader's web server" in str(refused.value)
            # the way out named: a checkpoint of the leader's om.db in its place; its log stays whole
            url = f"http://127.0.0.1:{leader.http_port}{CHECKPOINT_PATH}"
            shutil.rmtree(db)
            fetched = tmp_path / "fetched.tar"
            await asyncio.to_thread(download, url, None, fetched)
            await asyncio.to_thread(unpack, fetched, db, purged_to)
            back = await svc.start(node)
            await wait_for_async(lambda: volumes(back) == volumes(leader), 20, "the leader's namespace")

    run(scenario())
