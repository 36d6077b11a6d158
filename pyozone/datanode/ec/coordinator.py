"""One container's reconstruction (Ozone's ECReconstructionCoordinator.reconstructECContainerGroup).

The block groups every source holds are listed first; then each target gets a RECOVERING replica of its
index, every group is rebuilt onto them (stripes.py), and each replica is closed (RECOVERING -> CLOSED,
which the target reports at once). Any failure, the deadline included, force-deletes the replicas this
attempt created and did not close, and raises ReconstructionError: SCM's replication manager sees no new
replica of those indexes and tries again. A replica already closed is complete and reported, so it stays
(Ozone deletes only RECOVERING or UNHEALTHY targets). A replica whose deletion fails too is left to the
target's scrubbing of stale RECOVERING replicas.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from concurrent.futures import Executor
from dataclasses import dataclass

from pyozone.datanode.ec.groups import block_groups
from pyozone.datanode.ec.peers import Connect, Peer, call, signing
from pyozone.datanode.ec.stripes import BlockRebuild
from pyozone.datanode.xceiver.tokens import TokenSigner
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ec import StripeLayout
from pyozone.hdds.ec.codec import codec_for
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.states import ReplicationType
from pyozone.protocol import ec as wire

log = logging.getLogger(__name__)


class ReconstructionError(Exception):
    """The reconstruction failed; the replicas it created were deleted (or left to the targets' scrubbing)."""


@dataclass(frozen=True, slots=True)
class Reconstruction:
    """What reconstructECContainers asks for: source and target datanodes by replica index."""

    container_id: int
    config: ReplicationConfig
    sources: Mapping[int, DatanodeDetails]
    targets: Mapping[int, DatanodeDetails]

    def __post_init__(self) -> None:
        if self.config.type is not ReplicationType.EC:
            raise ValueError(f"container {self.container_id}: {self.config} is not an EC replication config")
        nodes = self.config.ec_data + self.config.ec_parity
        bad = [i for i in (*self.sources, *self.targets) if not 1 <= i <= nodes]
        if bad:
            raise ValueError(f"container {self.container_id}: replica indexes {bad} are outside 1..{nodes}")
        if not self.targets:
            raise ValueError(f"container {self.container_id}: no index to reconstruct")
        both = sorted(set(self.sources) & set(self.targets))
        if both:
            raise ValueError(f"container {self.container_id}: indexes {both} are both sources and targets")
        if len(self.sources) < self.config.ec_data:
            raise ValueError(
                f"container {self.container_id}: {len(self.sources)} sources; {self.config.ec_name} needs "
                f"{self.config.ec_data}"
            )


@dataclass(frozen=True, slots=True)
class Outcome:
    block_groups: int
    bytes_written: int
    seconds: float


async def reconstruct_container(
    job: Reconstruction,
    connect: Connect,
    datanode_uuid: str,
    executor: Executor,
    timeout_s: float,
    tokens: TokenSigner | None = None,
) -> Outcome:
    """`tokens`: with block or container tokens required, every request carries this datanode's own,
    signed with SCM's current secret key (one key for the whole job)."""
    started = time.monotonic()
    cid = job.container_id
    sources: dict[int, Peer] = {}
    targets: dict[int, Peer] = {}
    created: list[int] = []
    try:
        async with asyncio.timeout(timeout_s):
            if tokens is not None:
                sign = await asyncio.get_running_loop().run_in_executor(executor, tokens.signer)
                connect = signing(connect, sign)
            for index, details in sorted(job.sources.items()):
                sources[index] = connect(details)
            for index, details in sorted(job.targets.items()):
                targets[index] = connect(details)
            groups = await block_groups(sources, cid, datanode_uuid)
            for index, peer in targets.items():
                await call(peer, wire.create_recovering(cid, index, datanode_uuid))
                created.append(index)
            rebuild = BlockRebuild(
                cid,
                StripeLayout.of(job.config),
                codec_for(job.config),
                sources,
                targets,
                datanode_uuid,
                executor,
            )
            for group in groups:
                await rebuild.rebuild(group)
            for index, peer in targets.items():
                await call(peer, wire.close_container(cid, datanode_uuid))
                created.remove(index)  # CLOSED: complete and reported, so kept whatever follows
        return Outcome(len(groups), rebuild.bytes_written, time.monotonic() - started)
    except Exception as e:
        why = "the deadline passed" if isinstance(e, TimeoutError) else f"{type(e).__name__}: {e}"
        await _delete_created(job, created, connect, datanode_uuid)
        raise ReconstructionError(f"reconstruction of container {cid} failed: {why}") from e
    finally:
        await asyncio.gather(
            *(p.close() for p in (*sources.values(), *targets.values())), return_exceptions=True
        )


async def _delete_created(
    job: Reconstruction, created: list[int], connect: Connect, datanode_uuid: str
) -> None:
    """On fresh streams: the failure may have broken the ones in use."""

    async def delete(index: int) -> None:
        details = job.targets[index]
        peer: Peer | None = None
        try:
            peer = connect(details)
            await asyncio.wait_for(call(peer, wire.delete_container(job.container_id, datanode_uuid)), 30)
        except Exception as e:
            log.error(
                "container %d: the RECOVERING replica of index %d on %s was not deleted (%s); the target's "
                "scrubbing removes it later", job.container_id, index, details.uuid, e,
            )  # fmt: skip
        finally:
            if peer is not None:
                await peer.close()

    await asyncio.gather(*(delete(i) for i in created))
