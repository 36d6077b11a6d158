"""ExcludeList: what a writer found failing, sent with every allocateBlock so SCM places the next block
elsewhere (Ozone's ExcludeList).

Containers and pipelines stay excluded for the life of the stream (a closed container does not reopen;
a failed pipeline is closed by SCM). Datanodes expire after ozone.client.exclude.nodes.expiry.time: a
node that restarted should get writes again, and a long-running writer must not exclude the whole cluster.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from pyozone.hdds import block
from pyozone.protocol.block import exclude_list_to_proto

if TYPE_CHECKING:
    from pyozone.proto.ScmBlockLocationProtocol_pb2 import ExcludeListProto


class ExcludeList:
    def __init__(self, expiry_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._expiry_s = expiry_s
        self._clock = clock
        self._datanodes: dict[str, float] = {}  # uuid -> when excluded
        self.containers: set[int] = set()
        self.pipelines: set[str] = set()

    def add_datanode(self, uuid: str) -> None:
        self._datanodes[uuid] = self._clock()

    def add_container(self, container_id: int) -> None:
        self.containers.add(container_id)

    def add_pipeline(self, pipeline_id: str) -> None:
        self.pipelines.add(pipeline_id)

    @property
    def datanodes(self) -> set[str]:
        now = self._clock()
        self._datanodes = {d: t for d, t in self._datanodes.items() if now - t < self._expiry_s}
        return set(self._datanodes)

    def excludes(self, container_id: int, pipeline_id: str, members: tuple[str, ...]) -> bool:
        """Whether a (pre-allocated) block there would hit something already found failing."""
        return (
            container_id in self.containers
            or pipeline_id in self.pipelines
            or bool(self.datanodes.intersection(members))
        )

    def snapshot(self) -> block.ExcludeList:
        """What is excluded now (the datanodes not yet expired), as SCM's allocateBlock takes it."""
        return block.ExcludeList(
            frozenset(self.datanodes), frozenset(self.pipelines), frozenset(self.containers)
        )

    def to_proto(self) -> ExcludeListProto:
        return exclude_list_to_proto(self.snapshot())

    def __str__(self) -> str:
        return (
            f"datanodes={sorted(self.datanodes)} containers={sorted(self.containers)} "
            f"pipelines={sorted(self.pipelines)}"
        )
