"""The datanode's leader-ordered pipeline log: write pipeline V1 (Ratis in Ozone)."""

from pyozone.datanode.ratis.group import RaftGroup
from pyozone.datanode.ratis.groups import PipelineGroups
from pyozone.datanode.ratis.log import RaftLog
from pyozone.datanode.ratis.service import RaftServerService, add_raft_service

__all__ = ["PipelineGroups", "RaftGroup", "RaftLog", "RaftServerService", "add_raft_service"]
