"""What streams `pyozone admin snapshot` out of a live SCM, as an interface the daemon is handed.

The snapshot is Arrow record batches, built by pyozone.analytics (pyozone/analytics/snapshot_stream.py
implements this). The SCM daemon must not depend on analytics, nor load pyarrow unless a snapshot is asked
for, so `pyozone scm` passes the implementation in; a daemon built without one refuses streamSnapshot.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from pyozone.protocol.snapshot import SnapshotChunk
from pyozone.scm.scm import StorageContainerManager

SnapshotSource = Callable[[StorageContainerManager, int], AsyncIterator[SnapshotChunk]]
"""(core, batch rows, 0 for the default) -> the stream's info, then its batches (AdminService puts each on
the wire); the view is taken at the first one."""
