"""SCM's web UI: the JSON APIs over the core (api.py) and the pages (static/). The daemon and `pyozone sim`
serve the same UI over their core."""

from pathlib import Path

from pyozone.scm.server.web.api import scm_api

UI = Path(__file__).parent / "static"

__all__ = ["UI", "scm_api"]
