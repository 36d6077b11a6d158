"""The client's errors as Python's own, so fsspec, pandas and pyarrow callers catch what they expect.

`FileNotFoundError` for a missing volume, bucket or key, `FileExistsError` for one that exists, OSError with
ENOTEMPTY for a volume or bucket that still has content, and so on; each names the path it was about.
Anything else the client raises becomes OSError(EIO) with the client's message (which names the block and
the datanodes tried), since fsspec's callers handle OSError and not the client's own classes.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager

from pyozone.client import OMException, OMUnavailableError, OzoneClientError

_ERRNO_BY_CODE = {
    "NOT_FOUND": errno.ENOENT,  # a gRPC status without Ozone's code
    "ALREADY_EXISTS": errno.EEXIST,
    "VOLUME_NOT_FOUND": errno.ENOENT,
    "BUCKET_NOT_FOUND": errno.ENOENT,
    "KEY_NOT_FOUND": errno.ENOENT,
    "FILE_NOT_FOUND": errno.ENOENT,
    "DIRECTORY_NOT_FOUND": errno.ENOENT,
    "VOLUME_ALREADY_EXISTS": errno.EEXIST,
    "BUCKET_ALREADY_EXISTS": errno.EEXIST,
    "KEY_ALREADY_EXISTS": errno.EEXIST,
    "FILE_ALREADY_EXISTS": errno.EEXIST,
    "VOLUME_NOT_EMPTY": errno.ENOTEMPTY,
    "BUCKET_NOT_EMPTY": errno.ENOTEMPTY,
    "DIRECTORY_NOT_EMPTY": errno.ENOTEMPTY,
    "PERMISSION_DENIED": errno.EACCES,
    "ACCESS_DENIED": errno.EACCES,
    "INVALID_VOLUME_NAME": errno.EINVAL,
    "INVALID_BUCKET_NAME": errno.EINVAL,
    "INVALID_KEY_NAME": errno.EINVAL,
    "INVALID_REQUEST": errno.EINVAL,
    "QUOTA_EXCEEDED": errno.EDQUOT,
}


def os_error(e: OzoneClientError, path: str) -> OSError:
    """The OSError (a subclass where Python has one for the errno) for a client error about `path`."""
    if isinstance(e, OMUnavailableError):
        return ConnectionError(errno.ECONNREFUSED, str(e), path)
    return OSError(errno_of(e), str(e), path)  # OSError(ENOENT, ...) constructs a FileNotFoundError


def errno_of(e: OzoneClientError) -> int:
    return _ERRNO_BY_CODE.get(e.result, errno.EIO) if isinstance(e, OMException) else errno.EIO


@contextmanager
def translated(path: str) -> Iterator[None]:
    """Raises the client's errors inside the block as Python's OSErrors about `path`."""
    try:
        yield
    except OzoneClientError as e:
        raise os_error(e, path) from e
