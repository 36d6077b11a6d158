"""Container replication between datanodes: the upload/download service and the push client."""

from pyozone.datanode.replication.push import ReplicationError, push_container
from pyozone.datanode.replication.service import ReplicationService, add_replication_service

__all__ = ["ReplicationError", "ReplicationService", "add_replication_service", "push_container"]
