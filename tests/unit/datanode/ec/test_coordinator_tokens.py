"""EC reconstruction with block and container tokens required: the coordinator signs its own requests to
sources and targets (Ozone's TokenHelper); unsigned, the first one is refused and nothing is left behind."""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from pathlib import Path

import pytest

from pyozone.datanode.ec import ReconstructionError, reconstruct_container
from pyozone.datanode.ec.coordinator import Reconstruction
from pyozone.datanode.xceiver import Dispatcher
from pyozone.datanode.xceiver.tokens import TokenSigner, TokenVerifier
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import ReplicaState
from tests.unit.datanode.dns_helpers import Node, open_node
from tests.unit.datanode.ec.ec_helpers import (
    CID,
    DispatcherPeer,
    close_sources,
    connector,
    details,
    open_sources,
    payload,
    write_group,
)
from tests.unit.datanode.xceiver.test_dns_tokens import CLOCK, DAY, FakeKeys

RS32 = ReplicationConfig.parse("rs-3-2-4k")
COORDINATOR = str(details(99).uuid)


def test_the_coordinator_signs_what_it_asks_of_other_datanodes(tmp_path: Path, executor: Executor) -> None:
    keys = FakeKeys()
    verifier = TokenVerifier(keys, block_tokens=True, container_tokens=True, clock=CLOCK)
    sources = open_sources(tmp_path, [2, 3, 4])
    targets: dict[int, Node] = {i: open_node(tmp_path / f"dst{i}", str(details(50 + i).uuid)) for i in (1, 5)}
    try:
        write_group(sources, RS32, 1, payload(3 * 4096 * 2 + 5, 1))
        close_sources(sources)
        dispatchers = {str(details(i).uuid): s.dispatcher for i, s in sources.items()}
        for s in sources.values():
            s.dispatcher.tokens = verifier  # written before tokens were required
        for i, node in targets.items():
            dispatcher = Dispatcher(node.containers, node.uuid, node.full.append, tokens=verifier)
            dispatchers[str(details(50 + i).uuid)] = dispatcher

        def peers() -> dict[str, object]:  # streams of one event loop
            return {uuid: DispatcherPeer(uuid[:8], d, executor) for uuid, d in dispatchers.items()}

        job = Reconstruction(
            CID, RS32, {i: details(i) for i in sources}, {i: details(50 + i) for i in targets}
        )

        with pytest.raises(ReconstructionError, match="BLOCK_TOKEN_VERIFICATION_FAILED"):
            asyncio.run(reconstruct_container(job, connector(peers()), COORDINATOR, executor, 30))
        assert all(CID not in node.containers for node in targets.values())

        signer = TokenSigner(keys, "dn", DAY, block_tokens=True, container_tokens=True, clock=CLOCK)
        outcome = asyncio.run(
            reconstruct_container(job, connector(peers()), COORDINATOR, executor, 30, signer)
        )
        assert outcome.block_groups == 1
        for node in targets.values():
            assert node.containers.require(CID).state is ReplicaState.CLOSED
    finally:
        for holder in (*(s.node for s in sources.values()), *targets.values()):
            holder.close()
