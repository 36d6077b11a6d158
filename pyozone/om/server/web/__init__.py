"""OM's web UI: the JSON APIs over the daemon (api.py) and the pages (static/)."""

from pathlib import Path

from pyozone.om.server.web.api import om_api

UI = Path(__file__).parent / "static"

__all__ = ["UI", "om_api"]
