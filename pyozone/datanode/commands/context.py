"""What command handlers act on: the datanode's containers, pipelines, identity and pending reports."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pyozone.common.tls import TlsStore
from pyozone.datanode.identity import IdentityStore
from pyozone.datanode.pipelines import PipelineSet
from pyozone.datanode.reports import PendingReports
from pyozone.datanode.storage import ContainerSet
from pyozone.datanode.xceiver.tokens import TokenSigner
from pyozone.hdds.states import NodeOperationalState

if TYPE_CHECKING:
    from pyozone.datanode.ratis import PipelineGroups

T = TypeVar("T")


@dataclass(slots=True)
class CommandContext:
    containers: ContainerSet
    pipelines: PipelineSet
    identity: IdentityStore
    reports: PendingReports
    executor: Executor
    op_state_changed: Callable[[NodeOperationalState], None]
    groups: PipelineGroups
    tls: TlsStore | None = None
    """The datanode's certificate (hdds.grpc.tls.enabled): what its channels to other datanodes present."""
    tokens: TokenSigner | None = None
    """This datanode's own block and container tokens for what it asks other datanodes."""

    @property
    def datanode_uuid(self) -> str:
        return self.identity.uuid

    async def blocking(self, fn: Callable[..., T], *args: Any) -> T:
        """Storage calls block on disk I/O and fsync; they run on the executor, not the event loop."""
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)
