"""The Replication Manager's check stage (Ozone's ReplicationManager): one module per handler, the request and
services they see (request.py) and the chain that runs them (chain.py)."""

from pyozone.scm.replication.check.chain import CheckHandler, default_chain, run_chain
from pyozone.scm.replication.check.quasi_closed import can_force_close, is_quasi_closed_stuck
from pyozone.scm.replication.check.quasi_closed_stuck import should_handle_as_quasi_closed_stuck
from pyozone.scm.replication.check.request import CheckServices, ContainerCheckRequest

__all__ = [
    "CheckHandler",
    "CheckServices",
    "ContainerCheckRequest",
    "can_force_close",
    "default_chain",
    "is_quasi_closed_stuck",
    "run_chain",
    "should_handle_as_quasi_closed_stuck",
]
