"""The datanode's JSON APIs (docs/web.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyozone.common.web.api import ApiHandler

if TYPE_CHECKING:
    from pyozone.datanode.daemon import Datanode


def datanode_api(daemon: Datanode) -> dict[str, ApiHandler]:
    return {}
