"""What an HA SCM refuses rather than go on with an scm.db that differs from the others' (review R19, issue
31): an entry it could not apply stops it (never skipped), a Raft log younger than scm.db and an scm.db of
a service started alone are refused at start. Three in-process SCM daemons as tests/unit/scm/server/
test_scm_ha.py builds them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.scm.server.ha import NotServing
from pyozone.scm.store.metadata_store import TRANSACTION_INFO_KEY
from tests.polling import wait_for_async
from tests.unit.scm.server.test_scm_ha import NODES, allocate, container_record, run, service


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
