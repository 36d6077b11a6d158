"""The datanode's web UI: the JSON APIs over the daemon (api.py) and the pages (static/)."""

from pathlib import Path

from pyozone.datanode.web.api import datanode_api

UI = Path(__file__).parent / "static"

__all__ = ["UI", "datanode_api"]
