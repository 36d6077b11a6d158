"""SCM HA step-down (issue 31; SCMStateMachine.notifyNotLeader) with three in-process SCM daemons: a leader
that loses its majority steps down and refuses the call whose writes never committed, its uncommitted records
undone; a leadership transfer leaves the old leader refusing calls naming the new one, which allocates on."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.ratis.messages import RaftPeerId
from tests.polling import wait_for_async
from tests.unit.scm.server.test_scm_ha import NODES, allocate, container_record, run, service


def test_a_leader_without_its_majority_refuses_the_call_it_could_not_commit(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            leader = await svc.leader()
            node = svc.node_of(leader)
            before = {c.container_id for c in leader.core.containers.containers()}
            for other in [n for n in NODES if n != node]:
                await svc.stop(other)
            with pytest.raises(rpc.RpcError) as refused:
                await allocate(svc, node)  # its container and ids are staged, never committed
            assert refused.value.code() is rpc.StatusCode.UNAVAILABLE
            assert f"Server:{node} is not the leader. Could not determine the leader node." in (
                refused.value.details()
            )
            assert "did not commit within" not in refused.value.details()  # the step-down, not the timeout
            assert leader.ha is not None and not leader.ha.context.is_leader()
            assert leader.ha.driver.step_downs >= 1
            assert {c.container_id for c in leader.core.containers.containers()} == before
            assert all(container_record(leader, c) is None for c in range(1, 10) if c not in before)

    run(scenario())


def test_after_a_leadership_transfer_the_old_leader_names_the_new_one(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with service(tmp_path) as svc:
            old = await svc.leader()
            first = (await allocate(svc, svc.node_of(old))).blocks[0].containerBlockID
            target = next(n for n in NODES if n != svc.node_of(old))
            assert old.raft is not None
            await old.raft.transfer_leadership(RaftPeerId(target))
            new = await svc.leader()
            assert svc.node_of(new) == target

            async def refuses() -> str | None:
                try:
                    await allocate(svc, svc.node_of(old))
                except rpc.RpcError as e:
                    return e.details()
                return None

            refusal = await wait_for_async(refuses, 10, "the old leader refusing")
            assert (
                f"Server:{svc.node_of(old)} is not the leader. Suggested leader is "
                f"Server:127.0.0.1:{svc.port(target, 'block.client')}."
            ) in refusal
            second = (await allocate(svc, target)).blocks[0].containerBlockID
            assert second.localID != first.localID

    run(scenario())
