"""SCM's JSON APIs (docs/web.md)."""

from __future__ import annotations

from pyozone.common.web.api import ApiHandler
from pyozone.scm.scm import StorageContainerManager


def scm_api(core: StorageContainerManager, scm_id: str) -> dict[str, ApiHandler]:
    return {}
