"""DatanodeError: a problem the datanode cannot run with; the daemon exits 1 with its one-line message."""

from __future__ import annotations


class DatanodeError(Exception):
    """Fatal for the daemon (wrong cluster, no usable volume, refused by SCM). Never raised for a
    problem the datanode can wait out, such as SCM being unreachable."""
