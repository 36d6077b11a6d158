"""The SCM's readiness and health endpoints: what `pyozone cluster up` and orchestrators poll."""

from __future__ import annotations

from collections.abc import Callable

from pyozone.common.http_json import JsonResponse, Route
from pyozone.scm.scm import StorageContainerManager


def readiness_routes(core: StorageContainerManager, serving: Callable[[], bool]) -> dict[str, Route]:
    """/ready: 200 once both RPC services serve (503 before and while shutting down), with the safe-mode
    state so a waiting tool needs no second call; /health: 200 while the process answers at all."""

    def ready() -> JsonResponse:
        up = serving()
        return JsonResponse(
            200 if up else 503,
            {
                "ready": up,
                "clusterId": core.cluster_id,
                "safeMode": core.safe_mode.in_safe_mode(),
                "preCheckPassed": core.safe_mode.precheck_passed(),
            },
        )

    return {"/ready": ready, "/health": lambda: JsonResponse(200, {"healthy": True})}
