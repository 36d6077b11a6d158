"""RocksDB checkpoints of a replicated daemon's database (OM's om.db, SCM's scm.db): what the leader serves at
`/dbCheckpoint` (Ozone's OMDBCheckpointServlet; SCM's InterSCMGrpc download) and what a follower behind the
leader's purged Raft log installs (OzoneManagerSnapshotProvider and OzoneManager.installCheckpoint; SCM's
SCMSnapshotProvider). A `CheckpointSpec` says whose database it is: its name, the table and key of its
`#TRANSACTIONINFO`, the certificate role its leader presents, and the files carried beside it.

- The leader packs a RocksDB checkpoint of the database (hard links, flushed memtables) and the spec's extra
  files as an uncompressed tar and sends it with its SHA-256 (`CHECKSUM_HEADER`) and the checkpoint's
  `#TRANSACTIONINFO`.
- The follower downloads it to a file beside the database while hashing it, refuses it when the digest
  differs (a corrupt or truncated download), unpacks it (regular files only, no path leaving the directory),
  syncs it, and checks that it opens as RocksDB with a `#TRANSACTIONINFO` at or past the last entry the
  leader's log no longer holds.
- The swap (`swap_in`) renames the database (say om.db) aside (`om.db.old`), then the checkpoint to om.db,
  syncing the parent directory after each rename; the old one is deleted once the new one opened. A crash
  at any point leaves either the old database or the new one whole, and the next start (`recover`)
  finishes the job: om.db missing with `om.db.old` present puts the old one back; both present deletes the
  old one (the new one was checked before the first rename); an unfinished download or unpacked tree is
  deleted. A new database that does not open in place is renamed away before the old one goes back
  (`restore_aside`), so "both present" only ever means the new one is whole.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import os
import shutil
import ssl
import tarfile
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509

from pyozone.common.tls import ssl_peer_identity
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import CertRole
from pyozone.hdds.store.rocksdb import RocksDBBackend
from pyozone.hdds.store.table import StoreError
from pyozone.ratis.messages import TermIndex

log = logging.getLogger(__name__)

CHECKPOINT_PATH = "/dbCheckpoint"
"""The leader's endpoint (Ozone's OZONE_DB_CHECKPOINT_HTTP_ENDPOINT)."""
CHECKSUM_HEADER = "X-Ozone-Checkpoint-Sha256"
"""The tar's SHA-256, hex: the follower refuses a download whose digest differs."""
TRANSACTION_HEADER = "X-Ozone-Checkpoint-Transaction-Info"
"""The checkpoint's #TRANSACTIONINFO, "term#index"."""
CHECKPOINTS_DIR = "db.checkpoints"
"""Beside the database (the same file system: a checkpoint hard-links its table files), Ozone's name."""
CHUNK_BYTES = 1 << 20
DOWNLOAD_TIMEOUT_S = 60.0
"""Each read of a download."""
DOWNLOAD_DEADLINE_S = 3600.0
"""A whole download: a leader trickling bytes cannot hold a follower's install longer."""


class CheckpointError(Exception):
    """A checkpoint that cannot be installed (corrupt, truncated, stale, unreadable): never installed."""


@dataclass(frozen=True, slots=True)
class CheckpointSpec:
    """Whose checkpoints these are."""

    db_name: str
    """The database directory's name ("om.db", "scm.db"): the tar's and the messages'."""
    meta_cf: str
    """The column family holding the last applied entry (OM's `meta`, SCM's `scmTransactionInfos`)."""
    info_key: str
    """Its key there (Ozone's `#TRANSACTIONINFO`), a "term#index" value."""
    peer_role: CertRole
    """Over https, the leader must present a certificate of this role."""
    extra_files: tuple[str, ...] = ()
    """Names of files the tar may carry beside the database's (SCM's secret_keys.json), none a RocksDB
    file's name; `pack` takes where each is, `unpack` puts them in `extras_dir`."""
    info_json: bool = False
    """The info value is a JSON string (SCM's scmTransactionInfos, a JsonCodec table), not raw text."""

    def __post_init__(self) -> None:
        for name in self.extra_files:
            if not name or "/" in name or name in (".", ".."):
                raise ValueError(f"{self.db_name}'s extra file {name!r} is not a plain file name")


def transaction_info(raw: bytes | None) -> TermIndex:
    """The #TRANSACTIONINFO value, "term#index" (Ozone's TransactionInfo); (0, 0) when absent."""
    if not raw:
        return TermIndex(0, 0)
    term, _, index = raw.decode().partition("#")
    return TermIndex(int(term), int(index))


def _text(info: TermIndex) -> str:
    return f"{info.term}#{info.index}"


@dataclass(frozen=True)
class PackedCheckpoint:
    """A RocksDB checkpoint of a database ready to send as a tar: the checkpoint's directory (hard links to
    the database's table files, so no copy of it; named as the database; with copies of the extra files)
    and the tar's size and SHA-256, which `chunks` streams from it, the same bytes each time (fixed headers:
    name, size, mode 0644, mtime 0). `remove` it once sent."""

    directory: Path
    files: tuple[tuple[str, int], ...]
    """Each file's name and size, in the tar's order."""
    sha256: str
    size: int
    transaction: TermIndex

    def headers(self) -> dict[str, str]:
        tar_name = f"{self.directory.name}-{self.transaction.index}.tar"
        return {
            CHECKSUM_HEADER: self.sha256,
            TRANSACTION_HEADER: _text(self.transaction),
            "Content-Type": "application/x-tar",
            "Content-Length": str(self.size),
            "Content-Disposition": f'attachment; filename="{tar_name}"',
        }

    def chunks(self) -> Iterator[bytes]:
        """The tar, in pieces of at most CHUNK_BYTES (blocking reads: call off the event loop)."""
        return _tar_stream(self.directory, self.files)

    def remove(self) -> None:
        shutil.rmtree(self.directory.parent, ignore_errors=True)


def _tar_header(name: str, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mode = 0o644
    info.mtime = 0
    return info.tobuf(tarfile.GNU_FORMAT)


def _tar_size(files: tuple[tuple[str, int], ...]) -> int:
    body = sum(
        len(_tar_header(name, size)) + -(-size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE
        for name, size in files
    )
    end = body + 2 * tarfile.BLOCKSIZE
    return -(-end // tarfile.RECORDSIZE) * tarfile.RECORDSIZE


def _tar_stream(directory: Path, files: tuple[tuple[str, int], ...]) -> Iterator[bytes]:
    """What tarfile writes for `files` (GNU format, padded to its record size), read from `directory`;
    CheckpointError if a file is no longer the size it had (a checkpoint's files never change)."""
    written = 0
    for name, size in files:
        header = _tar_header(name, size)
        written += len(header)
        yield header
        left = size
        with open(directory / name, "rb") as f:
            while left:
                chunk = f.read(min(CHUNK_BYTES, left))
                if not chunk:
                    raise CheckpointError(f"{directory / name} shrank below {size} bytes while it was sent")
                left -= len(chunk)
                written += len(chunk)
                yield chunk
        padding = -size % tarfile.BLOCKSIZE
        written += padding
        if padding:
            yield bytes(padding)
    end = 2 * tarfile.BLOCKSIZE
    end += -(written + end) % tarfile.RECORDSIZE
    yield bytes(end)


def _stored_transaction(spec: CheckpointSpec, db: Path) -> TermIndex:
    """The #TRANSACTIONINFO of the RocksDB at `db`, opened read-only; CheckpointError if it does not open."""
    try:
        backend = RocksDBBackend(db, read_only=True, owner=f"an {spec.peer_role.name}")
    except StoreError as e:
        raise CheckpointError(f"the checkpoint does not open as RocksDB: {e}") from None
    try:
        if spec.meta_cf not in backend.column_families:
            raise CheckpointError(f"the checkpoint has no {spec.meta_cf} table: not an {spec.db_name}")
        raw = backend.get(spec.meta_cf, spec.info_key.encode())
        try:
            if raw and spec.info_json:
                raw = str(json.loads(raw)).encode()
            return transaction_info(raw)
        except ValueError:
            raise CheckpointError(f"the checkpoint's {spec.info_key} is not term#index: {raw!r}") from None
    finally:
        backend.close()


def pack(
    spec: CheckpointSpec, backend: RocksDBBackend, db_path: Path, extras: Mapping[str, Path] | None = None
) -> PackedCheckpoint:
    """A checkpoint of the database (`backend`, at `db_path`) under db.checkpoints/, with copies of the
    `extras` (a spec's extra file name: where the file is now; those absent are left out) and its tar's size
    and digest (the database read once, nothing copied); the caller flushed what it wants in it first."""
    for name in extras or {}:
        if name not in spec.extra_files:
            raise ValueError(f"{name!r} is not an extra file of {spec.db_name}'s checkpoints")
    work = db_path.parent / CHECKPOINTS_DIR / f"serve-{uuid.uuid4().hex}"
    work.parent.mkdir(parents=True, exist_ok=True)
    work.mkdir()
    try:
        checkpoint = work / spec.db_name
        backend.checkpoint(checkpoint)
        info = _stored_transaction(spec, checkpoint)  # before the listing: opening it may write its LOG
        for name, source in (extras or {}).items():
            if (checkpoint / name).exists():
                raise ValueError(f"{spec.db_name}'s checkpoint has a file {name!r} of its own")
            if source.is_file():
                shutil.copyfile(source, checkpoint / name)
        files = tuple((f.name, f.stat().st_size) for f in sorted(checkpoint.iterdir()) if f.is_file())
        digest = hashlib.sha256()
        for chunk in _tar_stream(checkpoint, files):
            digest.update(chunk)
        return PackedCheckpoint(checkpoint, files, digest.hexdigest(), _tar_size(files), info)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def download(
    spec: CheckpointSpec,
    url: str,
    context: ssl.SSLContext | None,
    into: Path,
    timeout_s: float = DOWNLOAD_TIMEOUT_S,
    deadline_s: float = DOWNLOAD_DEADLINE_S,
    clock: Callable[[], float] = time.monotonic,
    peer_node: str = "",
) -> str:
    """GETs the leader's checkpoint tar into the file `into`, returning its SHA-256 once it matches the
    leader's `CHECKSUM_HEADER`; CheckpointError otherwise (the file is removed). Over https (`context`) the
    server must present a certificate of the spec's role, naming `peer_node` (x509.node_of: an OM's
    "SERVICE/NODE") when given: another daemon of the host cannot pose as the leader. Refused too: a tar
    without Content-Length or larger than half the free space beside `into` (it is unpacked there too), and
    a download not done within `deadline_s` (each read also times out after `timeout_s`)."""
    where = urllib.parse.urlsplit(url)
    if context is not None:
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            where.hostname or "", where.port, timeout=timeout_s, context=context
        )
    else:
        conn = http.client.HTTPConnection(where.hostname or "", where.port, timeout=timeout_s)
    ends_at = clock() + deadline_s
    digest = hashlib.sha256()
    try:
        try:
            conn.connect()
            if isinstance(conn.sock, ssl.SSLSocket):  # before the request: nothing is asked of another role
                _check_peer_certificate(conn.sock, url, spec.peer_role, peer_node)
            conn.request("GET", where.path or "/")
            answer = conn.getresponse()
            if answer.status != 200:
                raise CheckpointError(
                    f"{url} answered {answer.status}: {answer.read(200).decode(errors='replace')}"
                )
            expected = answer.headers.get(CHECKSUM_HEADER)
            if not expected:
                raise CheckpointError(f"{url} answered without its {CHECKSUM_HEADER} header")
            _check_room(url, answer.headers.get("Content-Length"), into.parent)
            with open(into, "wb") as f:
                while chunk := answer.read(CHUNK_BYTES):
                    if clock() > ends_at:
                        raise CheckpointError(
                            f"downloading {url} took longer than {deadline_s:.0f} s; refused"
                        )
                    digest.update(chunk)
                    f.write(chunk)
                f.flush()
                os.fsync(f.fileno())
        finally:
            conn.close()
    except (OSError, ValueError, http.client.HTTPException) as e:  # refused, cut short, timed out
        into.unlink(missing_ok=True)
        raise CheckpointError(f"downloading {url} failed: {e}") from None
    except CheckpointError:
        into.unlink(missing_ok=True)
        raise
    got = digest.hexdigest()
    if got != expected.strip().lower():
        into.unlink(missing_ok=True)
        raise CheckpointError(
            f"the checkpoint from {url} is corrupt or truncated: its SHA-256 is {got}, the leader sent "
            f"{expected.strip()} ({CHECKSUM_HEADER}); refused"
        )
    return got


def _check_peer_certificate(sock: ssl.SSLSocket, url: str, role: CertRole, peer_node: str) -> None:
    """The handshake checked the leader's host name; the certificate must also be of `role` (any service
    certificate of the cluster's CA passes the handshake), and `peer_node`'s when given."""
    try:
        identity = ssl_peer_identity(sock)
    except (ValueError, ssl.SSLError) as e:
        raise CheckpointError(f"{url} presented a certificate naming no {role.name} ({e}); refused") from None
    if identity.role is not role:
        raise CheckpointError(f"{url} presented the certificate of {identity}, not an {role.name}'s; refused")
    if peer_node:
        named = X.node_of(x509.load_der_x509_certificate(sock.getpeercert(binary_form=True) or b""))
        if named != peer_node:
            raise CheckpointError(
                f"{url} presented the certificate of {role.name} node {named}, not {peer_node}'s; refused"
            )


def _check_room(url: str, length: str | None, where: Path) -> None:
    if length is None or not length.isdigit():
        raise CheckpointError(f"{url} answered without a Content-Length: a checkpoint's size is known")
    free = shutil.disk_usage(where).free
    if 2 * int(length) > free:
        raise CheckpointError(
            f"the checkpoint from {url} is {length} bytes; {where} has {free} bytes free, less than twice "
            "that (the tar and the unpacked database); refused"
        )


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def extras_dir(unpacked: Path) -> Path:
    """Where `unpack` puts the spec's extra files that came with the database unpacked at `unpacked`."""
    return unpacked.with_name(unpacked.name + ".extra")


def unpack(spec: CheckpointSpec, tar: Path, into: Path, at_least: int) -> TermIndex:
    """Unpacks a downloaded (checksum-checked) tar into the new directory `into` (its extra files into
    `extras_dir(into)`), synced, and returns its #TRANSACTIONINFO, which must be at `at_least` or past it;
    CheckpointError otherwise (also when a file cannot be written: the installer counts and explains every
    refusal)."""
    try:
        into.mkdir(parents=True)
        with tarfile.open(tar, "r:") as archive:
            seen: set[str] = set()
            for member in archive.getmembers():
                name = member.name
                if not member.isfile() or "/" in name or name in ("", ".", ".."):
                    raise CheckpointError(
                        f"the checkpoint holds {name!r}: only {spec.db_name}'s files may be in it"
                    )
                if name in seen:
                    raise CheckpointError(
                        f"the checkpoint holds {name!r} twice: not a checkpoint of {spec.db_name}"
                    )
                seen.add(name)
                target = into
                if name in spec.extra_files:
                    target = extras_dir(into)
                    target.mkdir(exist_ok=True)
                source = archive.extractfile(member)
                assert source is not None  # a regular file
                with source, open(target / name, "xb") as out:
                    shutil.copyfileobj(source, out, CHUNK_BYTES)
                    out.flush()
                    os.fsync(out.fileno())
        _fsync_dir(into)
        if extras_dir(into).exists():
            _fsync_dir(extras_dir(into))
    except tarfile.TarError as e:
        raise CheckpointError(f"the checkpoint is not a readable tar: {e}") from None
    except OSError as e:  # a name twice (FileExistsError), too long, the disk full
        raise CheckpointError(f"the checkpoint could not be unpacked into {into}: {e}") from None
    info = _stored_transaction(spec, into)
    if info.index < at_least:
        raise CheckpointError(
            f"the checkpoint's {spec.info_key} is {_text(info)}, before index {at_least}, the last entry "
            "the leader's log no longer holds: it would leave a gap"
        )
    return info


def aside(db_path: Path) -> Path:
    """Where the previous database waits while an installed checkpoint opens."""
    return db_path.with_name(db_path.name + ".old")


def staging_dir(db_path: Path) -> Path:
    """Where a follower downloads and unpacks a checkpoint (removed by `recover` after a crash)."""
    return db_path.parent / CHECKPOINTS_DIR / "install"


def fetch_and_install(
    spec: CheckpointSpec,
    url: str,
    context: ssl.SSLContext | None,
    db_path: Path,
    install: Callable[[Path, Mapping[str, Path]], None],
    at_least: int,
    peer_node: str = "",
) -> TermIndex:
    """A follower's whole install, off the event loop: download the leader's checkpoint beside the database,
    check and unpack it, and hand the unpacked tree and the extra files it carried (name: where) to
    `install` (OMMetadataStore.install: the swap, then the reopen); the staging directory is removed
    whatever happens. Returns the installed #TRANSACTIONINFO."""
    staging = staging_dir(db_path)
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        tar = staging / f"{spec.db_name}.tar"
        download(spec, url, context, tar, peer_node=peer_node)
        unpacked = staging / spec.db_name
        installed = unpack(spec, tar, unpacked, at_least)
        tar.unlink()
        extras = extras_dir(unpacked)
        install(unpacked, {name: extras / name for name in spec.extra_files if (extras / name).is_file()})
        return installed
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def swap_in(db_path: Path, new: Path) -> None:
    """Makes the unpacked checkpoint `new` the database at `db_path` (om.db), keeping the old one aside as
    `om.db.old` (delete it with `drop_aside` once the new one opened; `restore_aside` puts it back). The
    database must be closed."""
    kept = aside(db_path)
    if kept.exists():
        shutil.rmtree(kept)
    os.replace(db_path, kept)
    _fsync_dir(db_path.parent)
    os.replace(new, db_path)
    _fsync_dir(db_path.parent)


def drop_aside(db_path: Path) -> None:
    shutil.rmtree(aside(db_path), ignore_errors=True)


def refused_dir(db_path: Path) -> Path:
    """Where a swapped-in checkpoint that did not open goes before it is deleted (inside db.checkpoints/,
    which `recover` deletes)."""
    return db_path.parent / CHECKPOINTS_DIR / f"refused-{db_path.name}"


def restore_aside(db_path: Path) -> None:
    """The new database did not open: the old one goes back. The refused one is renamed away first, never
    deleted in place, so a crash at any point leaves the database whole or missing beside its `.old`, which
    `recover` puts back; never a half-deleted database that `recover` would take for an installed one."""
    if db_path.exists():
        refused = refused_dir(db_path)
        shutil.rmtree(refused, ignore_errors=True)
        refused.parent.mkdir(parents=True, exist_ok=True)
        os.replace(db_path, refused)
        _fsync_dir(db_path.parent)
    os.replace(aside(db_path), db_path)
    _fsync_dir(db_path.parent)
    shutil.rmtree(refused_dir(db_path), ignore_errors=True)


def recover(db_path: Path) -> None:
    """At start, before the database opens: finishes (or undoes) an install a crash interrupted (module
    docs)."""
    kept = aside(db_path)
    if kept.exists():
        if db_path.exists():
            log.warning(
                "%s: an installed checkpoint is in place; deleting the previous one kept aside", db_path
            )
            shutil.rmtree(kept)
        else:
            log.warning("%s: an install was interrupted before the checkpoint was in place; the previous "
                        "one is restored", db_path)  # fmt: skip
            os.replace(kept, db_path)
            _fsync_dir(db_path.parent)
    shutil.rmtree(db_path.parent / CHECKPOINTS_DIR, ignore_errors=True)
