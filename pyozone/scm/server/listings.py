"""The admin records (a datanode's listing, a pipeline view, a container view) built from the core, once for
both of their readers: the admin protocol (admin_service.py) and the web APIs (web/). Each is read on the
event loop, between heartbeats, so it sees a consistent core."""

from __future__ import annotations

from pyozone.hdds.datanode import DatanodeInfo
from pyozone.hdds.ids import ContainerID
from pyozone.hdds.pipeline import Pipeline
from pyozone.protocol.admin_records import ContainerView, DatanodeAdminProgress, DatanodeListing, PipelineView
from pyozone.scm.node.node_manager import NodeManager
from pyozone.scm.scm import StorageContainerManager


def datanode_listing(core: StorageContainerManager, info: DatanodeInfo) -> DatanodeListing:
    """What NodeManager knows of the node, its pipeline and container counts, and the admin monitor's
    progress for a node leaving service."""
    return DatanodeListing.of(
        info,
        len(core.nodes.pipelines(info.uuid)),
        core.nodes.container_count(info.uuid),
        admin_progress(core, info.uuid),
    )


def admin_progress(core: StorageContainerManager, dn: str) -> DatanodeAdminProgress | None:
    """The admin monitor's last word on a node leaving service; None for a node in no workflow."""
    progress = core.admin_monitor.progress(dn)
    if progress is None:
        return None
    return DatanodeAdminProgress(
        progress.under_replicated,
        progress.unclosed,
        progress.sufficiently_replicated,
        progress.pipelines_waiting,
    )


def pipeline_view(nodes: NodeManager, pipeline: Pipeline) -> PipelineView:
    """The pipeline with the details of each member SCM knows (a member it does not is named by uuid)."""
    members = {}
    for dn in pipeline.nodes:
        info = nodes.get(dn)
        if info is not None:
            members[dn] = info.details
    return PipelineView(pipeline, members)


def container_view(core: StorageContainerManager, container_id: ContainerID) -> ContainerView:
    """The container, its replicas and its write pipeline (None once the pipeline is gone); an unknown id
    raises SCMException CONTAINER_NOT_FOUND."""
    info = core.containers.get(container_id)
    pipeline = core.pipelines.find(info.pipeline_id) if info.pipeline_id is not None else None
    return ContainerView(
        info,
        core.containers.replicas(container_id),
        None if pipeline is None else pipeline_view(core.nodes, pipeline),
    )
