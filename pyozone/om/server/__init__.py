"""The OM daemon: the namespace core behind an RPC server (pyozone.rpc), background services and readiness."""

from pyozone.om.server.daemon import OmDaemon, ServerStartError, start_om

__all__ = ["OmDaemon", "ServerStartError", "start_om"]
