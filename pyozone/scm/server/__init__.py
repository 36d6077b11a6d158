"""The SCM daemon: RPC services for datanodes and admin tools over the SCM core, plus readiness."""

from pyozone.scm.server.daemon import ScmDaemon, ServerStartError, start_scm

__all__ = ["ScmDaemon", "ServerStartError", "start_scm"]
