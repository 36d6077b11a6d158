"""What an HA SCM refuses rather than go on with an scm.db that differs from the others' (review R19, issue
31): an entry it could not apply stops it (never skipped), a Raft log younger than scm.db and an scm.db of
a service started alone are refused at start. Three in-process SCM daemons as tests/unit/scm/server/
test_scm_ha.py builds them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.hdds.ids import BlockID
from pyozone.proto import ScmBlockLocationProtocol_pb2 as pb
from pyozone.protocol.block import KeyBlocks, key_blocks_to_proto
from pyozone.ratis.messages import LogEntry, TermIndex
from pyozone.ratis.server import PersistentState
from pyozone.scm.server import ScmDaemon, ServerStartError
from pyozone.scm.server.ha import NotServing, log_mismatch, scm_ratis_dir
from pyozone.scm.store.metadata_store import TRANSACTION_INFO_KEY
from pyozone.scm.store.version import open_scm_store
from tests.polling import wait_for_async
from tests.unit.scm.server import test_scm_ha
from tests.unit.scm.server.scm_server_helpers import channel
from tests.unit.scm.server.test_scm_ha import (
    NODES,
    Service,
    allocate,
    container_record,
    planned,
    run,
    service,
)
from tests.unit.scm.server.test_scm_server_block import block_stub


def test_a_follower_whose_scm_db_write_fails_stops_and_applies_the_entry_again_at_restart(
    tmp_path: Path,
) -> None:
    """R19 D1: the entry is never counted applied past a failed write (ENOSPC once); the SCM stops
    serving and its daemon exits, and a restart applies it from the log."""

    async def scenario() -> None:
        async with service(tmp_path) as svc:
            leader = await svc.leader()
            follower = next(n for n in NODES if n != svc.node_of(leader))
            daemon = svc.daemons[follower]
            backend = daemon.store.backend
            real_write = backend.write
            failed: list[bool] = []

            def write(ops: list) -> None:  # type: ignore[type-arg]
                if not failed and any(cf == "containers" for cf, _, _ in ops):
                    failed.append(True)
                    raise OSError(28, "No space left on device (simulated, once)")
                real_write(ops)

            backend.write = write  # type: ignore[method-assign]
            block = (await allocate(svc, svc.node_of(leader))).blocks[0].containerBlockID

            async def stopped() -> bool:
                await svc.beat()
                return daemon.failed.is_set()

            await wait_for_async(stopped, 20, "the follower's member failed", 0.05)
            assert daemon.ha is not None and daemon.raft is not None and not daemon.raft.running
            assert daemon.ha.failed is not None and "No space left on device" in daemon.ha.failed
            assert f"SCM {follower} could not apply log entry" in daemon.ha.failed
            assert not daemon.serving
            with pytest.raises(NotServing, match=r"stopped serving: its Raft member failed"):
                daemon.ha.check_caught_up()
            assert container_record(daemon, block.containerID) is None
            at_failure = daemon.store.transaction_infos.get(TRANSACTION_INFO_KEY)

            await svc.stop(follower)
            restarted = await svc.start(follower)

            async def replayed() -> bool:
                await svc.beat()
                return container_record(restarted, block.containerID) is not None

            await wait_for_async(replayed, 20, "the restarted follower applied the entry", 0.05)
            assert restarted.ha is not None and restarted.ha.failed is None
            assert at_failure is None or restarted.ha.db_applied.index == int(str(at_failure).split("#")[1])

    run(scenario())


def _applied_before(svc: Service, node: str, term_index: str) -> None:
    """`node`'s scm.db as if it had applied its service's log up to `term_index`."""
    _, store = open_scm_store(svc.conf(node))
    table = store.transaction_infos
    key = table.key_codec.encode(TRANSACTION_INFO_KEY)
    store.apply((table.name, key, table.value_codec.encode(term_index)))
    store.close()


def test_a_raft_log_younger_than_scm_db_is_refused_at_start_naming_both(tmp_path: Path) -> None:
    """R19 D2: a new (empty) Raft log under an scm.db that applied up to 1#6 (the log directory lost or
    moved): refused, never its first entries skipped by index."""
    svc = planned(tmp_path)
    assert svc.cli("scm1", "--init") == 0
    _applied_before(svc, "scm1", "1#6")
    group_dir = scm_ratis_dir(svc.conf("scm1"))

    async def scenario() -> None:
        with pytest.raises(ServerStartError) as refused:
            await svc.start("scm1")
        text = str(refused.value)
        assert "scm.db (" in text and "holds the transactions up to log entry 1#6" in text
        assert f"SCM's Raft log in {group_dir}" in text and "is empty" in text
        assert "ozone.scm.ha.ratis.storage.dir" in text and "scm --bootstrap" in text

    run(scenario())


def test_log_mismatch_compares_the_term_at_scm_db_s_index_not_the_index_alone() -> None:
    entries = tuple(LogEntry(1 if i < 3 else 2, i, b"") for i in range(1, 6))
    stored = PersistentState(2, None, entries, TermIndex(0, 0), ())
    assert log_mismatch(stored, TermIndex(0, 0)) is None
    assert log_mismatch(stored, TermIndex(2, 4)) is None
    assert log_mismatch(stored, TermIndex(1, 4)) == "holds term 2 at index 4"
    assert log_mismatch(PersistentState(0, None, (), TermIndex(0, 0), ()), TermIndex(1, 1)) == "is empty"


def test_log_mismatch_lets_a_shorter_log_of_scm_db_s_history_restart_after_it() -> None:
    """Review R21 D2: scm.db swapped for the leader's checkpoint at 3#9, the SCM killed before its log was
    reset (the log ends at 5, or knows a term but holds no entry): it starts, its log restarting after 3#9;
    a shorter log holding an entry of a term later than scm.db's is another history, refused."""
    entries = tuple(LogEntry(1 if i < 3 else 2, i, b"") for i in range(1, 6))
    stored = PersistentState(2, None, entries, TermIndex(0, 0), ())
    assert log_mismatch(stored, TermIndex(2, 6)) is None
    assert log_mismatch(stored, TermIndex(3, 9)) is None
    assert log_mismatch(PersistentState(3, "scm2", (), TermIndex(0, 0), ()), TermIndex(3, 9)) is None
    assert log_mismatch(stored, TermIndex(1, 9)) == (
        "ends at index 5 with term 2 at index 3, after scm.db's term"
    )
    assert log_mismatch(PersistentState(4, None, (), TermIndex(4, 2), ()), TermIndex(3, 9)) == (
        "ends at index 2 with term 4 at index 2, after scm.db's term"
    )
    assert log_mismatch(PersistentState(2, None, (), TermIndex(2, 9), ()), TermIndex(1, 6)) == (
        "starts after index 9"
    )


def test_an_scm_db_of_a_service_is_refused_to_an_scm_started_alone(tmp_path: Path) -> None:
    """R19 D5: without ozone.scm.service.ids an SCM whose scm.db holds #TRANSACTIONINFO does not start
    (its writes would be in no Raft log, and it would rejoin with a diverged scm.db)."""
    svc = planned(tmp_path)
    assert svc.cli("scm1", "--init") == 0
    _applied_before(svc, "scm1", "1#3")
    lone = {k: v for k, v in svc.node_values("scm1").items() if k != "ozone.scm.service.ids"}
    conf = OzoneConfiguration(lone)

    async def scenario() -> None:
        storage, store = open_scm_store(conf)
        daemon = ScmDaemon(conf, storage, store)
        try:
            with pytest.raises(ServerStartError) as refused:
                await daemon.start()
        finally:
            await daemon.stop(0.2)
        text = str(refused.value)
        assert "belongs to an SCM of an HA service (its #TRANSACTIONINFO is 1#3)" in text
        assert "cannot start alone (no ozone.scm.service.ids)" in text

    run(scenario())


def test_a_transaction_above_the_append_limit_is_refused_to_its_caller_without_a_step_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R19 D4: one key of 20000 blocks in one container, a delete transaction above a 256KB append limit,
    is refused to deleteScmKeyBlocks (unknownFailure per block, as Ozone answers an SCM exception); the
    leader neither steps down nor up, other calls go on, and a delete that fits is logged."""
    planned_at = test_scm_ha.planned

    def small_entries(path: Path) -> Service:
        svc = planned_at(path)
        svc.values["ozone.scm.ha.ratis.log.appender.queue.byte-limit"] = "256KB"
        # the leader builds and refuses a 20000-block transaction on its loop: under load that took longer
        # than a 300 ms election timeout, a follower was elected, and the test saw a step-down it was not
        # about
        svc.values["ozone.scm.ha.ratis.leader.election.timeout"] = "3s"
        return svc

    monkeypatch.setattr(test_scm_ha, "planned", small_entries)

    def delete_request(first: int, count: int) -> pb.DeleteScmKeyBlocksRequestProto:
        blocks = tuple(BlockID(1, first + i) for i in range(count))
        return pb.DeleteScmKeyBlocksRequestProto(keyBlocks=[key_blocks_to_proto(KeyBlocks("/v/b/k", blocks))])

    async def scenario() -> None:
        async with service(tmp_path) as svc:
            leader = await svc.leader()
            assert leader.ha is not None
            node = svc.node_of(leader)
            ups, downs = leader.ha.driver.step_ups, leader.ha.driver.step_downs
            async with channel(svc.port(node, "block.client")) as ch:
                refused = await block_stub(ch).deleteScmKeyBlocks(delete_request(1 << 40, 20_000))
                fits = await block_stub(ch).deleteScmKeyBlocks(delete_request(1 << 41, 100))
            outcomes = {r.result for k in refused.results for r in k.blockResults}
            assert outcomes == {pb.DeleteScmBlockResult.unknownFailure}
            assert {r.result for k in fits.results for r in k.blockResults} == {
                pb.DeleteScmBlockResult.success
            }
            assert (leader.ha.driver.step_ups, leader.ha.driver.step_downs) == (ups, downs)
            assert leader.ha.context.is_leader_ready()
            await allocate(svc, node)

    run(scenario())
