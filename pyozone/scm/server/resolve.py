"""Naming datanodes in full on the wire: messages that mention other datanodes carry their addresses."""

from __future__ import annotations

from pyozone.hdds.datanode import DatanodeDetails
from pyozone.hdds.ids import DatanodeID
from pyozone.protocol import Resolver
from pyozone.scm.node.node_manager import NodeManager


def details_resolver(nodes: NodeManager) -> Resolver:
    """uuid -> the registered datanode's details (None if unknown), for the converters' `resolve` hook."""

    def resolve(uuid: DatanodeID) -> DatanodeDetails | None:
        info = nodes.get(uuid)
        return info.details if info is not None else None

    return resolve
