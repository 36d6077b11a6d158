"""The client's exceptions: one base class, so a caller (or the CLI) can catch everything it raises.

- OMException, SafeModeException, OMUnavailableError, CommitOutcomeUnknown: OM refused a call or could not
  be reached (framework/om_errors.py, where OM's client raises them).
- BlockWriteError / BlockReadError: the data path gave up after its retries; the message names the block
  and every datanode and failure that was tried, because "write failed" alone is not actionable.
"""

from __future__ import annotations

from pyozone.framework.om_errors import (
    CommitOutcomeUnknown,
    OMException,
    OMUnavailableError,
    OzoneClientError,
    SafeModeException,
)

__all__ = [
    "BlockReadError",
    "BlockWriteError",
    "CommitOutcomeUnknown",
    "OMException",
    "OMUnavailableError",
    "OzoneClientError",
    "SafeModeException",
]


class BlockWriteError(OzoneClientError):
    """A key's data could not be written after ozone.client.max.retries new blocks."""


class BlockReadError(OzoneClientError):
    """A block could not be read from any of its datanodes after ozone.client.read.max.retries rounds."""
