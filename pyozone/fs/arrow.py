"""pyarrow's view of an ofs or o3fs filesystem that also takes full URLs.

pyarrow wraps an fsspec filesystem in `FSSpecHandler`, which hands paths through unchanged: given
`ds.dataset("ofs://om/vol/bucket/table", filesystem=fs)` it lists "vol/bucket/table/..." and then refuses
them as outside "ofs://om/vol/bucket/table". This handler strips the URL first, as fsspec itself does:

    ds.dataset("ofs://om/vol/bucket/table", filesystem=arrow_filesystem(fs))
"""

from __future__ import annotations

from pyarrow.fs import FSSpecHandler, PyFileSystem

from pyozone.fs.base import OzoneFileSystemBase


class OzoneArrowHandler(FSSpecHandler):
    def normalize_path(self, path: str) -> str:
        return self.fs._strip_protocol(path)


def arrow_filesystem(fs: OzoneFileSystemBase) -> PyFileSystem:
    return PyFileSystem(OzoneArrowHandler(fs))
