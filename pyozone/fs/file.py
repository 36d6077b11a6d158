"""OzoneFile: an open key as fsspec's buffered file.

Reading: one KeyReader per file serves fsspec's ranged fetches (`_fetch_range` seeks and reads), so the
blocks' read-ahead and their last fetched range carry over between the many small reads a Parquet reader
makes; the key's size comes from the same lookup, and the file is reopened by name after a fork.

Writing: the key is created on the first flush, with the bytes known by then as its size hint (the whole
file when it fits in one buffer), so a large file takes write pipeline V2 and a small one V1 as
`pyozone sh key put` would choose. Nothing is visible until close() commits; leaving a `with` block on an
exception, discard(), or dropping the file unclosed commits nothing.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from fsspec.spec import AbstractBufferedFile

from pyozone.client.key_reader import KeyReader
from pyozone.client.sync import KeyWriter
from pyozone.fs.errors import translated

if TYPE_CHECKING:
    from pyozone.fs.base import OzoneFileSystemBase


class OzoneFile(AbstractBufferedFile):
    def __init__(
        self,
        fs: OzoneFileSystemBase,
        path: str,
        mode: str = "rb",
        block_size: int | str = "default",
        autocommit: bool = True,
        cache_type: str = "readahead",
        cache_options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self.where = fs.locate(path)
        self._reader: KeyReader | None = None
        self._writer: KeyWriter | None = None
        self._pid = os.getpid()
        size = None
        if mode == "rb":
            self._reader = fs.open_key_reader(path)
            size = self._reader.size
            self._details = fs.key_entry(self.where, self._reader.info)
        super().__init__(
            fs, path, mode, block_size, autocommit, cache_type, cache_options, size=size, **kwargs
        )  # fmt: skip

    # ------------------------------------------------------------------ reading
    def _key_reader(self) -> KeyReader:
        if self._reader is None or self._reader.closed or self._reader.unusable():  # closed at a fork
            self._reader = self.fs.open_key_reader(self.path)
        return self._reader

    def _fetch_range(self, start: int, end: int) -> bytes:
        reader = self._key_reader()
        with translated(self.path):
            reader.seek(start)
            return reader.read(max(0, end - start))

    # ------------------------------------------------------------------ writing
    def _upload_chunk(self, final: bool = False) -> bool:
        data = self.buffer.getvalue()
        with translated(self.path):
            if self._writer is None:
                self._writer = self.fs.create_key_writer(self.where, size_hint=len(data))
            if data:
                self._writer.write(data)
        if final and self.autocommit:
            self.commit()
        return True

    def commit(self) -> None:
        """Commits the key (at close, or at the end of an fsspec transaction)."""
        with translated(self.path):
            if self._writer is None:  # nothing was flushed: an empty key
                self._writer = self.fs.create_key_writer(self.where, size_hint=0)
            self._writer.close()

    def discard(self) -> None:
        """Commits nothing: OM drops the open key and its blocks."""
        writer, self._writer = self._writer, None
        if writer is None or os.getpid() != self._pid:  # a forked child's copy: the parent's to end
            return
        with translated(self.path):
            writer.abort()

    # ------------------------------------------------------------------ life cycle
    def close(self) -> None:
        try:
            super().close()
        finally:
            if self._reader is not None:
                reader, self._reader = self._reader, None
                reader.close()

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None and self.writable():
            self.closed = True
            self.discard()
        else:
            self.close()

    def __del__(self) -> None:
        """No waiting here: a finalizer may run on the client's loop thread, which cannot wait for itself.
        A writer dropped unclosed commits nothing (OM drops the open key, as for any KeyOutputStream
        dropped); a reader's streams close with it."""
        if self.closed:
            return
        self.closed = True
        self._writer = None
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()
