"""The OM daemon: the namespace core behind a grpc.aio server, background services and readiness."""

from pyozone.om.server.daemon import OmDaemon, ServerStartError, start_om

__all__ = ["OmDaemon", "ServerStartError", "start_om"]
