"""The datanode's datastream port: write pipeline V2's chain and zero-copy block reads."""

from pyozone.datanode.datastream.server import DatastreamServer

__all__ = ["DatastreamServer"]
