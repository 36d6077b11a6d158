"""The datanode's pipelines on the Raft core (write pipeline V1; Ratis in Ozone): a ContainerStateMachine per
pipeline, routed by PipelineGroups."""

from pyozone.datanode.ratis.groups import PipelineGroup, PipelineGroups, blocks_in_logs
from pyozone.datanode.ratis.state_machine import ContainerStateMachine

__all__ = ["ContainerStateMachine", "PipelineGroup", "PipelineGroups", "blocks_in_logs"]
