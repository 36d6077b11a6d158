"""OM's JSON APIs (docs/web.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyozone.common.web.api import ApiHandler

if TYPE_CHECKING:
    from pyozone.om.server.daemon import OmDaemon


def om_api(daemon: OmDaemon) -> dict[str, ApiHandler]:
    return {}
