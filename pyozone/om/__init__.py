"""The Ozone Manager: the namespace (volumes, buckets, keys) over SCM's blocks.

`OzoneManager` (core.py) is synchronous and knows nothing of the wire; SCM is reached through the small
`ScmGateway` interface (scm.py), so unit tests drive the core with fakes. The daemon (`pyozone.om.server`)
is a thin adapter around it on pyozone.rpc.
"""

from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException, OMResultCode

__all__ = ["OMException", "OMResultCode", "OzoneManager"]
