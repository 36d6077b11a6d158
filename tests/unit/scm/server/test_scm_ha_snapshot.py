"""SCM HA snapshots (issue 31; SCMStateMachine.takeSnapshot): every ozone.scm.ha.ratis.snapshot.threshold
applied entries and at a clean stop scm.db is flushed and the member purges its log past
ozone.scm.ha.ratis.log.purge.gap; a follower down while the leader purged past it installs the leader's scm.db
checkpoint from `/dbCheckpoint` and goes on from it with the leader's tables; a restart after a purge applies
only the log's tail; a secure SCM serves `/dbCheckpoint` to SCMs and administrators only."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb
from pyozone.ratis.messages import LogEntry, TermIndex
from pyozone.ratis.server import PersistentState
from pyozone.ratis_server.db_checkpoint import CHECKSUM_HEADER, TRANSACTION_HEADER
from pyozone.scm.server import ScmDaemon, ServerStartError
from pyozone.scm.server.ha import ScmRaft, log_mismatch, scm_raft_settings
from pyozone.scm.store.layout import scm_db_dir
from pyozone.scm.store.metadata_store import TABLE_NAMES, TRANSACTION_INFO_KEY
from tests.polling import wait_for_async
from tests.unit.scm.server.scm_server_helpers import admin_stub, async_test, channel
from tests.unit.scm.server.secure_scm_helpers import certificate, secure_scm
from tests.unit.scm.server.test_scm_ha import NODES, Service, allocate, container_record, run, service

SNAPSHOTS = {
    # a snapshot every 5 entries, the log purged at each
    "ozone.scm.ha.ratis.snapshot.threshold": "5",
    "ozone.scm.ha.ratis.log.purge.enabled": "true",
    "ozone.scm.ha.ratis.log.purge.gap": "5",
}


async def churn(svc: Service, leader: ScmDaemon, times: int) -> list[Any]:
    """Blocks allocated on the leader, each container closed after its block (a new one per allocation):
    a few log entries each."""
    node = svc.node_of(leader)
    blocks = []
    async with channel(svc.port(node, "client")) as ch:
        for _ in range(times):
            block = (await allocate(svc, node)).blocks[0].containerBlockID
            await admin_stub(ch).closeContainer(
                admin_pb.SCMCloseContainerRequestProto(containerID=block.containerID)
            )
            blocks.append(block)
    return blocks


def tables(daemon: ScmDaemon) -> dict[str, str]:
    """A digest of each table of the SCM's scm.db (committed records: not the leader's overlay)."""
    backend = daemon.store.backend
    digests = {}
    for cf in TABLE_NAMES:
        digest = hashlib.sha256()
        for key, value in backend.items(cf):
            digest.update(len(key).to_bytes(4, "big") + key + len(value).to_bytes(4, "big") + value)
        digests[cf] = digest.hexdigest()
    return digests


def log_start(daemon: ScmDaemon) -> int:
    """The first index the SCM's Raft log still holds."""
    assert daemon.raft is not None
    return daemon.raft._running_core().log.first_index  # the log's start


def test_a_follower_down_past_the_purge_installs_the_leaders_checkpoint_and_ends_with_its_tables(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with service(tmp_path, **SNAPSHOTS) as svc:
            leader = await svc.leader()
            follower = next(n for n in NODES if n != svc.node_of(leader))
            await svc.stop(follower)
            blocks = await churn(svc, leader, 10)

            async def purged() -> bool:  # under load the leader packs more per entry: churn on till purged
                await svc.beat()
                if log_start(leader) > 10:
                    return True
                blocks.extend(await churn(svc, leader, 2))
                return False

            await wait_for_async(purged, 20, "the leader's log purged", 0.05)
            daemon = await svc.start(follower)
            assert daemon.ha is not None and daemon.ha.db_applied.index < log_start(leader)

            async def same_state() -> bool:
                await svc.beat()
                assert daemon.raft is not None and leader.raft is not None
                applied = daemon.raft.status().applied_index
                return (
                    daemon.ha is not None
                    and daemon.ha.installs == 1
                    and daemon.ha.context.state_machine_ready()
                    and applied == leader.raft.status().applied_index
                    and tables(daemon) == tables(leader)
                )

            await wait_for_async(same_state, 30, "the follower installed and caught up", 0.05)
            assert daemon.ha.install_failures == 0
            # the core's views were reloaded from the installed scm.db
            for block in blocks:
                assert container_record(daemon, block.containerID) is not None
                assert daemon.core.containers.get(block.containerID).container_id == block.containerID
            # and it goes on from there: later entries apply over the installed state
            more = (await allocate(svc, svc.node_of(leader))).blocks[0].containerBlockID

            async def applied_on() -> bool:
                await svc.beat()
                return container_record(daemon, more.containerID) is not None

            await wait_for_async(applied_on, 20, "an entry after the install applied", 0.05)

    run(scenario())


def test_a_restart_after_a_purge_applies_only_the_logs_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    applied: dict[str, list[int]] = {}
    apply = ScmRaft.apply

    def counted(self: ScmRaft, entry: LogEntry) -> None:
        applied.setdefault(self.node.node_id, []).append(entry.index)
        apply(self, entry)

    async def scenario() -> None:
        async with service(tmp_path, **SNAPSHOTS) as svc:
            first = (await churn(svc, await svc.leader(), 8))[0]
            for node in list(svc.daemons):  # a clean stop snapshots (scm.db flushed, the log purged)
                await svc.stop(node)
            monkeypatch.setattr(ScmRaft, "apply", counted)
            for node in NODES:
                await svc.start(node)
            starts = {}
            for node, daemon in svc.daemons.items():
                assert daemon.ha is not None
                starts[node] = daemon.ha.db_applied.index
                assert starts[node] > 12 and log_start(daemon) > 1, (node, starts[node], log_start(daemon))
            leader = await svc.leader()
            assert container_record(leader, first.containerID) is not None
            second = (await allocate(svc, svc.node_of(leader))).blocks[0].containerBlockID
            assert second.localID != first.localID
            for node, indexes in applied.items():
                assert min(indexes) > starts[node], (node, starts[node], indexes[:5])

    run(scenario())


def test_an_scm_db_lost_behind_a_purged_log_is_refused_at_start_naming_the_repair(tmp_path: Path) -> None:
    """Review R21 D5: an SCM whose scm.db is gone while its Raft log was purged past the start crashed with
    a traceback (StateMachineBehindLogError); it is refused as OM's is, naming both and the repair."""

    async def scenario() -> None:
        async with service(tmp_path, **SNAPSHOTS, **{"ozone.scm.ha.ratis.segment.size": "2048"}) as svc:
            leader = await svc.leader()
            node = svc.node_of(leader)  # the leader's own log is purged
            await churn(svc, leader, 10)

            async def purged() -> bool:  # under load the leader packs more per entry: churn on till purged
                if log_start(leader) > 1:
                    return True
                await churn(svc, leader, 2)
                return False

            await wait_for_async(purged, 20, "the leader's log purged", 0.05)
            await svc.stop(node)
            shutil.rmtree(scm_db_dir(svc.conf(node)) / "scm.db")
            with pytest.raises(ServerStartError) as refused:
                await svc.start(node)
            message = str(refused.value)
            assert "Raft log" in message and "/dbCheckpoint" in message and "scm.db" in message, message

    run(scenario())


def test_the_start_up_check_accepts_a_log_purged_up_to_a_snapshot_scm_db_covers() -> None:
    purged = PersistentState(2, None, tuple(LogEntry(2, i, b"") for i in range(6, 9)), TermIndex(2, 5), ())
    assert log_mismatch(purged, TermIndex(2, 5)) is None  # scm.db at the snapshot: the log's start
    assert log_mismatch(purged, TermIndex(2, 7)) is None  # past it: the tail after it is applied
    assert log_mismatch(purged, TermIndex(1, 5)) == "holds term 2 at index 5"
    assert log_mismatch(purged, TermIndex(2, 3)) == "starts after index 5"  # scm.db lost what was purged


def test_scm_snapshot_and_purge_settings() -> None:
    kept = scm_raft_settings(OzoneConfiguration())  # purge.enabled false (Ozone's default): never purged
    assert kept.purge_gap > 10**15
    purging = scm_raft_settings(
        OzoneConfiguration(
            {"ozone.scm.ha.ratis.log.purge.enabled": "true", "ozone.scm.ha.ratis.log.purge.gap": "7"}
        )
    )
    assert purging.purge_gap == 7
    with pytest.raises(ValueError, match=r"ozone.scm.ha.ratis.snapshot.threshold must be positive"):
        scm_raft_settings(OzoneConfiguration({"ozone.scm.ha.ratis.snapshot.threshold": "0"}))


async def fetch(port: int, tls: Any) -> tuple[int, dict[str, str], bytes]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"https://127.0.0.1:{port}/dbCheckpoint", ssl=tls.client_context()) as response,
    ):
        return response.status, dict(response.headers), await response.read()


@async_test
async def test_db_checkpoint_is_served_to_scms_and_administrators_only(tmp_path: Path) -> None:
    """A lone secure SCM (secure SCM HA is refused at start for now): a user who is not an administrator
    and a datanode are refused 403; an administrator and an SCM get a tar of scm.db with its digest."""
    async with secure_scm(tmp_path, {"ozone.administrators": "root"}) as scm:
        for identity in (Identity(CertRole.USER, "bob"), Identity(CertRole.DATANODE, "dn", "127.0.0.1")):
            status, _, body = await fetch(scm.http_port, certificate(scm, tmp_path, identity))
            assert status == 403 and "only SCMs and administrators" in json.loads(body)["error"]
        assert scm.secure is not None
        for tls in (certificate(scm, tmp_path, Identity(CertRole.USER, "root")), scm.secure.tls):
            status, headers, body = await fetch(scm.http_port, tls)
            assert status == 200 and hashlib.sha256(body).hexdigest() == headers[CHECKSUM_HEADER]
            assert headers[TRANSACTION_HEADER] == "0#0"  # a lone SCM applies no log
            with tarfile.open(fileobj=io.BytesIO(body)) as tar:
                names = tar.getnames()
            assert "CURRENT" in names and any(n.endswith(".sst") or n.endswith(".log") for n in names)
        assert scm.store.transaction_infos.get(TRANSACTION_INFO_KEY) is None
