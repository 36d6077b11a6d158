"""A fake SCM for the OM core: blocks from a counter, a switchable safe mode and outage, per-block
delete answers, and container locations the test sets up."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pyozone import rpc
from pyozone.framework.scm_admin import ReplicaLocation, ScmInfo
from pyozone.framework.scm_errors import ScmClientError
from pyozone.hdds.block import ExcludeList
from pyozone.hdds.clock import ManualClock
from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import RATIS_THREE, BlockID, ReplicationConfig
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.states import LifeCycleState, PipelineState, ReplicaState
from pyozone.om.core import OzoneManager
from pyozone.om.metadata import OMMetadataStore
from pyozone.om.scm import ContainerLocation
from pyozone.om.settings import OMSettings
from pyozone.protocol.block import BlockLocation, DeleteResult, KeyBlocks, KeyBlocksResult
from tests.builders import dn_id

BLOCK = 1000  # block size of the tests' OM


def details(i: int) -> DatanodeDetails:
    return DatanodeDetails(dn_id(i), f"dn{i}", f"10.0.0.{i}", (("RATIS", 9858), ("STANDALONE", 9860 + i)))


PIPELINE = Pipeline(
    "11111111-1111-4111-8111-111111111111",
    RATIS_THREE,
    PipelineState.OPEN,
    (dn_id(1), dn_id(2), dn_id(3)),
    0,
    0,
    leader=dn_id(2),
)
MEMBERS = {dn_id(i): details(i) for i in (1, 2, 3)}


class FakeScm:
    def __init__(self, cluster_id: str = "CID-test") -> None:
        self.cluster_id = cluster_id
        self.safe_mode = False
        self.unreachable = False
        self.next_local = 1
        self.container = 1
        self.allocations: list[tuple[int, ReplicationConfig, int, ExcludeList]] = []
        self.deletes: list[list[KeyBlocks]] = []
        self.delete_answer: dict[BlockID, DeleteResult] = {}
        self.locations: dict[int, ContainerLocation] = {}
        self.location_calls = 0

    def _check(self) -> None:
        if self.unreachable:
            raise ScmClientError("SCM at 127.0.0.1:1: connection refused", rpc.StatusCode.UNAVAILABLE)

    def scm_info(self) -> ScmInfo:
        self._check()
        return ScmInfo(self.cluster_id, "scm-1", self.safe_mode, True)

    def allocate_blocks(
        self, size: int, config: ReplicationConfig, num_blocks: int, excluded: ExcludeList, owner: str
    ) -> list[BlockLocation]:
        self._check()
        if self.safe_mode:
            raise ScmClientError(
                "SAFE_MODE_EXCEPTION: SCM is in safe mode", rpc.StatusCode.FAILED_PRECONDITION
            )
        self.allocations.append((size, config, num_blocks, excluded))
        blocks = []
        for _ in range(num_blocks):
            blocks.append(BlockLocation(BlockID(self.container, self.next_local), PIPELINE, MEMBERS))
            self.next_local += 1
        return blocks

    def delete_key_blocks(self, keys: Sequence[KeyBlocks]) -> list[KeyBlocksResult]:
        self._check()
        self.deletes.append(list(keys))
        return [
            KeyBlocksResult(
                k.key, tuple((b, self.delete_answer.get(b, DeleteResult.success)) for b in k.blocks)
            )
            for k in keys
        ]

    def container_location(self, container_id: int) -> ContainerLocation:
        self._check()
        self.location_calls += 1
        return self.locations.get(container_id, ContainerLocation(container_id, None))


def closed_location(container_id: int, *states: tuple[int, ReplicaState]) -> ContainerLocation:
    return ContainerLocation(
        container_id,
        LifeCycleState.CLOSED,
        RATIS_THREE,
        None,
        {},
        tuple(ReplicaLocation(details(i), s) for i, s in states),
    )


def open_location(container_id: int) -> ContainerLocation:
    return ContainerLocation(container_id, LifeCycleState.OPEN, RATIS_THREE, PIPELINE, MEMBERS, ())


def make_om(
    path: Path, scm: FakeScm | None = None, clock: ManualClock | None = None, **settings: object
) -> OzoneManager:
    values: dict[str, object] = {"block_size": BLOCK, **settings}
    return OzoneManager(
        OMMetadataStore(path / "om.db"),
        scm or FakeScm(),
        OMSettings(**values),  # type: ignore[arg-type]
        clock or ManualClock(),
        default_owner="tester",
    )
