"""The OM daemon: the namespace core behind an RPC server (pyozone.rpc), background services and readiness."""

from pyozone.om.server.daemon import OmDaemon, ServerStartError, init_om, start_om

__all__ = ["OmDaemon", "ServerStartError", "init_om", "start_om"]
