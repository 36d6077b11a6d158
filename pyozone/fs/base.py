"""OzoneFileSystemBase: fsspec's filesystem over the native client, shared by the ofs and o3fs shapes.

Subclasses map their paths to an KeyAddress (`locate`) and back (`name`); everything else is here.

Within a bucket the namespace is flat (an OBJECT_STORE bucket), so directories are pseudo-directories, as in
s3fs: a path is a directory when keys exist below it ("a/b" is one when "a/b/c" exists). Making one
creates nothing, and removing its last key removes it. Volumes and buckets are real directories: mkdir
creates them, rmdir deletes them, and rm(recursive=True) empties and deletes them.

OM lists keys by prefix without a delimiter, so listing a directory reads every key below it once; `find`
(which fsspec's glob, rm, get and put use) builds the whole subtree from that single listing.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from fsspec.callbacks import DEFAULT_CALLBACK, Callback
from fsspec.spec import AbstractFileSystem

from pyozone.client import OzoneClient, OzoneClientError
from pyozone.client.key_reader import KeyReader
from pyozone.client.sync import KeyWriter
from pyozone.fs.clients import ClientSpec, open_key_reader, shared_client
from pyozone.fs.errors import errno_of, translated
from pyozone.fs.file import OzoneFile
from pyozone.hdds.addresses import KeyAddress, Level
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.om_views import BucketInfo, KeyInfo, VolumeInfo

Entry = dict[str, Any]
_COPY_PIECE = 8 << 20


def _time(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


class OzoneFileSystemBase(AbstractFileSystem):
    root_marker = ""

    def __init__(
        self,
        om_address: str | None = None,
        conf: dict[str, str] | None = None,
        conf_dir: str | None = None,
        replication: ReplicationConfig | str | None = None,
        **kwargs: Any,
    ) -> None:
        """`om_address`: OM's "host[:port]" (default: ozone.om.address); `conf`: ozone-site keys over
        `conf_dir`/ozone-site.xml (default: $OZONE_CONF_DIR); `replication`: of new keys, e.g. "RATIS/ONE"
        or a ReplicationConfig (default: the bucket's), parsed here, once."""
        super().__init__(
            om_address=om_address, conf=conf, conf_dir=conf_dir, replication=replication, **kwargs
        )
        self.spec = ClientSpec.of(om_address, conf_dir, conf)
        self.replication = ReplicationConfig.of(replication)

    @property
    def client(self) -> OzoneClient:
        return shared_client(self.spec)

    @property
    def om_address(self) -> str:
        return self.spec.om_address or str(self.client.config.om_address)

    # ------------------------------------------------------------------ paths (the subclass's shape)
    def locate(self, path: str) -> KeyAddress:
        raise NotImplementedError

    def name(self, where: KeyAddress) -> str:
        raise NotImplementedError

    def _key_path(self, path: str) -> KeyAddress:
        where = self.locate(path)
        if where.level is not Level.KEY:
            raise IsADirectoryError(errno.EISDIR, f"a {where.level.name.lower()} is not a key", path)
        return where

    # ------------------------------------------------------------------ entries
    def _dir(self, where: KeyAddress, created_ms: int = 0, modified_ms: int = 0, **extra: Any) -> Entry:
        entry: Entry = {"name": self.name(where), "size": 0, "type": "directory", **extra}
        if created_ms:
            entry |= {"created": _time(created_ms), "mtime": _time(modified_ms or created_ms)}
        return entry

    def _volume_entry(self, v: VolumeInfo) -> Entry:
        return self._dir(KeyAddress(v.name), v.creation_time, v.modification_time, owner=v.owner)

    def _bucket_entry(self, b: BucketInfo) -> Entry:
        where = KeyAddress(b.volume, b.name)
        return self._dir(where, b.creation_time, b.modification_time, replication=str(b.replication))

    def key_entry(self, where: KeyAddress, k: KeyInfo) -> Entry:
        return {
            "name": self.name(where.child(k.name)),
            "size": k.data_size,
            "type": "file",
            "created": _time(k.creation_time),
            "mtime": _time(k.modification_time),
            "replication": str(k.replication),  # fsspec's info is plain data
        }

    def _keys(self, where: KeyAddress, prefix: str, limit: int | None = None) -> list[KeyInfo]:
        with translated(self.name(where)):
            return self.client.list_keys(where.volume, where.bucket, prefix, limit=limit)

    # ------------------------------------------------------------------ listing
    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Entry] | list[str]:
        where = self.locate(path)
        entries = self._ls(where, path)
        return entries if detail else [e["name"] for e in entries]

    def _ls(self, where: KeyAddress, path: str) -> list[Entry]:
        with translated(path):
            if where.level is Level.ROOT:
                return [self._volume_entry(v) for v in self.client.list_volumes()]
            if where.level is Level.VOLUME:
                return [self._bucket_entry(b) for b in self.client.list_buckets(where.volume)]
        keys = self._keys(where, where.prefix)
        if not keys and where.key:
            return [self.info(path)]  # a file lists as itself; nothing there is FileNotFoundError
        children: dict[str, Entry] = {}
        for k in keys:
            child, sep, _ = k.name[len(where.prefix) :].partition("/")
            if not child:
                continue  # the directory's own marker key ("dir/"), or an empty path segment
            if sep:  # a directory wins over a key of the same name: what is below it stays reachable
                children[child] = self._dir(where.child(where.prefix + child))
            elif child not in children:
                children[child] = self.key_entry(where, k)
        return [children[name] for name in sorted(children)]

    def info(self, path: str, **kwargs: Any) -> Entry:
        where = self.locate(path)
        with translated(path):
            match where.level:
                case Level.ROOT:
                    return self._dir(where)
                case Level.VOLUME:
                    return self._volume_entry(self.client.volume_info(where.volume))
                case Level.BUCKET:
                    return self._bucket_entry(self.client.bucket_info(where.volume, where.bucket))
        # The key itself sorts first among the keys it prefixes: one listing finds it without lookupKey.
        first = self._keys(where, where.key, limit=1)
        if first and first[0].name == where.key:
            return self.key_entry(where, first[0])
        if self._keys(where, where.prefix, limit=1):
            return self._dir(where)
        raise FileNotFoundError(errno.ENOENT, "no such key or directory", path)

    def find(
        self,
        path: str,
        maxdepth: int | None = None,
        withdirs: bool = False,
        detail: bool = False,
        **kwargs: Any,
    ) -> list[str] | dict[str, Entry]:
        where = self.locate(path)
        if where.level < Level.BUCKET:  # volumes and buckets: fsspec walks them with ls
            return super().find(path, maxdepth=maxdepth, withdirs=withdirs, detail=detail, **kwargs)
        try:
            top = self.info(path)
        except FileNotFoundError:
            return {} if detail else []  # as fsspec's find: nothing there, nothing found
        found = {top["name"]: top} if top["type"] == "file" or withdirs else {}
        if top["type"] == "directory":
            found.update(self._subtree(where, maxdepth, withdirs))
        names = sorted(found)
        return {n: found[n] for n in names} if detail else names

    def _subtree(
        self, where: KeyAddress, maxdepth: int | None, withdirs: bool
    ) -> Iterator[tuple[str, Entry]]:
        """Every key below `where` (and, with `withdirs`, every directory) from one listing."""
        for k in self._keys(where, where.prefix):
            parts = k.name[len(where.prefix) :].split("/")  # "a/b/" (a marker key) ends in ""
            if withdirs:
                for depth in range(1, min(len(parts) - 1, maxdepth or len(parts)) + 1):
                    below = where.child(where.prefix + "/".join(parts[:depth]))
                    yield self.name(below), self._dir(below)
            if parts[-1] and (maxdepth is None or len(parts) <= maxdepth):
                entry = self.key_entry(where, k)
                yield entry["name"], entry

    def created(self, path: str) -> datetime:
        return self._times(path)["created"]

    def modified(self, path: str) -> datetime:
        return self._times(path)["mtime"]

    def _times(self, path: str) -> Entry:
        entry = self.info(path)
        if "mtime" not in entry:
            raise IsADirectoryError(errno.EISDIR, "a pseudo-directory has no times", path)
        return entry

    # ------------------------------------------------------------------ directories
    def mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        """Creates the volume or bucket `path` names (and, with create_parents, the volume above it). A path
        below a bucket is a pseudo-directory: only its bucket is made, when missing."""
        where = self.locate(path)
        if where.level is Level.ROOT:
            raise FileExistsError(errno.EEXIST, "the root exists", path)
        with translated(path):
            if where.level is Level.VOLUME:
                self.client.create_volume(where.volume)
                return
            if create_parents:
                self._ensure(KeyAddress(where.volume))
            if where.level is Level.BUCKET:
                self.client.create_bucket(where.volume, where.bucket, self.replication)
            elif create_parents:
                self._ensure(KeyAddress(where.volume, where.bucket))
            else:
                self.client.bucket_info(where.volume, where.bucket)

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        where = self.locate(path)
        if not exist_ok and where.level is not Level.ROOT and self.exists(path):
            raise FileExistsError(errno.EEXIST, "exists", path)
        with translated(path):
            for level in (Level.VOLUME, Level.BUCKET):
                if where.level >= level:
                    self._ensure(KeyAddress(where.volume, where.bucket if level is Level.BUCKET else ""))

    def _ensure(self, where: KeyAddress) -> None:
        """Creates the volume or bucket unless it exists (a concurrent creator is no error)."""
        try:
            if where.level is Level.VOLUME:
                self.client.create_volume(where.volume)
            else:
                self.client.create_bucket(where.volume, where.bucket, self.replication)
        except OzoneClientError as e:
            if errno_of(e) != errno.EEXIST:
                raise

    def rmdir(self, path: str) -> None:
        where = self.locate(path)
        with translated(path):
            match where.level:
                case Level.ROOT:
                    raise PermissionError(errno.EPERM, "the root cannot be removed", path)
                case Level.VOLUME:
                    self.client.delete_volume(where.volume)
                case Level.BUCKET:
                    self.client.delete_bucket(where.volume, where.bucket)
                case Level.KEY:
                    if self.info(path)["type"] == "file":
                        raise NotADirectoryError(errno.ENOTDIR, "a key is not a directory", path)
                    raise OSError(errno.ENOTEMPTY, "directory not empty", path)

    # ------------------------------------------------------------------ removing
    def rm_file(self, path: str) -> None:
        where = self._key_path(path)
        with translated(path):
            self.client.delete_key(where.volume, where.bucket, where.key)

    def rm(self, path: str | list[str], recursive: bool = False, maxdepth: int | None = None) -> None:
        for name in self.expand_path(path):
            self._remove(name, recursive, maxdepth)

    def _remove(self, path: str, recursive: bool, maxdepth: int | None) -> None:
        where = self.locate(path)
        if where.level is Level.ROOT:
            raise PermissionError(errno.EPERM, "refusing to remove every volume", path)
        if where.level is Level.KEY and self.info(path)["type"] == "file":
            self.rm_file(path)
            return
        if not recursive:
            if where.level is Level.KEY:
                raise IsADirectoryError(errno.EISDIR, "a directory: remove it with recursive=True", path)
            self.rmdir(path)
            return
        if where.level is Level.VOLUME:
            with translated(path):
                buckets = self.client.list_buckets(where.volume)
            for b in buckets:
                self._remove(self.name(KeyAddress(b.volume, b.name)), recursive, maxdepth)
        else:
            for name in self.find(path, maxdepth=maxdepth):
                self.rm_file(name)
        if where.level is not Level.KEY and maxdepth is None:
            self.rmdir(path)

    # ------------------------------------------------------------------ reading and writing
    def open_key_reader(self, path: str) -> KeyReader:
        where = self._key_path(path)
        with translated(path):
            return open_key_reader(self.spec, where.volume, where.bucket, where.key)

    def create_key_writer(self, where: KeyAddress, size_hint: int) -> KeyWriter:
        """An open key; the caller writes, then closes (commits) or aborts it."""
        return self.client.create_key(where.volume, where.bucket, where.key, size_hint, self.replication)

    def _open(
        self,
        path: str,
        mode: str = "rb",
        block_size: int | None = None,
        autocommit: bool = True,
        cache_options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> OzoneFile:
        if mode == "ab":
            raise NotImplementedError("Ozone keys cannot be appended to: write a new key")
        where = self._key_path(path)
        if mode == "xb" and self.exists(path):
            raise FileExistsError(errno.EEXIST, "exists", path)
        if mode != "rb":
            with translated(path):
                self.client.bucket_info(where.volume, where.bucket)  # fail at open, not at the first flush
        return OzoneFile(
            self, path, mode, block_size or "default", autocommit, cache_options=cache_options, **kwargs
        )

    def cat_file(self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any) -> bytes:
        with self.open_key_reader(path) as reader:
            begin = 0 if start is None else start if start >= 0 else max(0, reader.size + start)
            stop = reader.size if end is None else min(reader.size, end if end >= 0 else reader.size + end)
            if begin >= stop:
                return b""
            with translated(path):
                reader.seek(begin)
                return reader.read(stop - begin)

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite", **kwargs: Any) -> None:
        where = self._key_path(path)
        if mode == "create" and self.exists(path):
            raise FileExistsError(errno.EEXIST, "exists", path)
        with translated(path):
            self.client.put_key(where.volume, where.bucket, where.key, value, replication=self.replication)

    def put_file(
        self,
        lpath: str,
        rpath: str,
        callback: Callback = DEFAULT_CALLBACK,
        mode: str = "overwrite",
        **kwargs: Any,
    ) -> None:
        if os.path.isdir(lpath):
            self.makedirs(rpath, exist_ok=True)
            return
        where = self._key_path(rpath)
        if mode == "create" and self.exists(rpath):
            raise FileExistsError(errno.EEXIST, "exists", rpath)
        callback.set_size(os.path.getsize(lpath))
        with translated(rpath):
            self.client.put_key(
                where.volume, where.bucket, where.key, lpath, callback.relative_update, self.replication
            )

    def get_file(
        self,
        rpath: str,
        lpath: str,
        callback: Callback = DEFAULT_CALLBACK,
        outfile: Any = None,
        **kwargs: Any,
    ) -> None:
        if self.isdir(rpath):
            os.makedirs(lpath, exist_ok=True)
            return
        where = self._key_path(rpath)
        with translated(rpath):
            self.client.get_key(
                where.volume, where.bucket, where.key, outfile or lpath, callback.relative_update
            )

    def cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        """Streams the key into a new one (OM has no server-side copy); the target appears whole or not."""
        target = self._key_path(path2)
        with (
            self.open_key_reader(path1) as reader,
            translated(path2),
            self.create_key_writer(target, reader.size) as writer,
        ):
            while piece := reader.read(_COPY_PIECE):
                writer.write(piece)

    def mv(
        self, path1: str, path2: str, recursive: bool = False, maxdepth: int | None = None, **kwargs: Any
    ) -> None:
        """Within one bucket, OM renames each key (no data moves); elsewhere, copy then remove."""
        if not isinstance(path1, str) or not isinstance(path2, str) or path1 == path2:
            super().mv(path1, path2, recursive=recursive, maxdepth=maxdepth, **kwargs)
            return
        source, target = self.locate(path1), self.locate(path2)
        same_bucket = (source.volume, source.bucket) == (target.volume, target.bucket)
        if source.level is not Level.KEY or target.level < Level.BUCKET or not same_bucket or maxdepth:
            super().mv(path1, path2, recursive=recursive, maxdepth=maxdepth, **kwargs)
            return
        kind = self.info(path1)["type"]
        if self.isdir(path2):  # as `mv a dir`: into it
            target = target.child(f"{target.prefix}{source.key.rsplit('/', 1)[-1]}")
        if kind == "file":
            self._rename(source, target.key)
            return
        if not recursive:
            raise IsADirectoryError(errno.EISDIR, "a directory: move it with recursive=True", path1)
        for k in self._keys(source, source.prefix):
            self._rename(source.child(k.name), target.prefix + k.name[len(source.prefix) :])

    def _rename(self, where: KeyAddress, to_key: str) -> None:
        """As POSIX rename: an existing target is replaced (OM refuses to rename onto a key)."""
        with translated(self.name(where)):
            try:
                self.client.rename_key(where.volume, where.bucket, where.key, to_key)
            except OzoneClientError as e:
                if errno_of(e) != errno.EEXIST:
                    raise
                self.client.delete_key(where.volume, where.bucket, to_key)
                self.client.rename_key(where.volume, where.bucket, where.key, to_key)
