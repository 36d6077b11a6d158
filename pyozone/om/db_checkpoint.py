"""om.db checkpoints for OM HA: what the leader serves at `/dbCheckpoint` (Ozone's OMDBCheckpointServlet) and
what a follower behind the leader's purged Raft log installs (OzoneManagerSnapshotProvider and
OzoneManager.installCheckpoint).

- The leader packs a RocksDB checkpoint of om.db (hard links, flushed memtables) as an uncompressed tar and
  sends it with its SHA-256 (`CHECKSUM_HEADER`) and the checkpoint's `#TRANSACTIONINFO`.
- The follower downloads it to a file beside om.db while hashing it, refuses it when the digest differs
  (a corrupt or truncated download), unpacks it (regular files only, no path leaving the directory),
  syncs it, and checks that it opens as RocksDB with a `#TRANSACTIONINFO` at or past the last entry the
  leader's log no longer holds.
- The swap (`swap_in`) renames om.db aside (`om.db.old`), then the checkpoint to om.db, syncing the parent
  directory after each rename; the old one is deleted once the new one opened. A crash at any point
  leaves either the old om.db or the new one whole, and the next start (`recover`) finishes the job:
  om.db missing with `om.db.old` present puts the old one back; both present deletes the old one (the new
  one was checked before the first rename); an unfinished download or unpacked tree is deleted. A new
  om.db that does not open in place is renamed away before the old one goes back (`restore_aside`), so
  "both present" only ever means the new one is whole.
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import shutil
import ssl
import tarfile
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
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
"""Beside om.db (the same file system: a checkpoint hard-links om.db's table files), Ozone's name."""
META_TABLE = "meta"
TRANSACTION_INFO = "#TRANSACTIONINFO"
CHUNK_BYTES = 1 << 20
DOWNLOAD_TIMEOUT_S = 60.0
"""Each read of a download."""
DOWNLOAD_DEADLINE_S = 3600.0
"""A whole download: a leader trickling bytes cannot hold a follower's install longer."""


class CheckpointError(Exception):
    """A checkpoint that cannot be installed (corrupt, truncated, stale, unreadable): never installed."""


def transaction_info(raw: bytes | None) -> TermIndex:
    """meta's #TRANSACTIONINFO, "term#index" (Ozone's TransactionInfo); (0, 0) when absent."""
    if not raw:
        return TermIndex(0, 0)
    term, _, index = raw.decode().partition("#")
    return TermIndex(int(term), int(index))


def _text(info: TermIndex) -> str:
    return f"{info.term}#{info.index}"


@dataclass(frozen=True)
class PackedCheckpoint:
    """A RocksDB checkpoint of om.db ready to send as a tar: the checkpoint's directory (hard links to om.db's
    table files, so no copy of om.db) and the tar's size and SHA-256, which `chunks` streams from it, the
    same bytes each time (fixed headers: name, size, mode 0644, mtime 0). `remove` it once sent."""

    directory: Path
    files: tuple[tuple[str, int], ...]
    """Each file's name and size, in the tar's order."""
    sha256: str
    size: int
    transaction: TermIndex

    def headers(self) -> dict[str, str]:
        return {
            CHECKSUM_HEADER: self.sha256,
            TRANSACTION_HEADER: _text(self.transaction),
            "Content-Type": "application/x-tar",
            "Content-Length": str(self.size),
            "Content-Disposition": f'attachment; filename="om.db-{self.transaction.index}.tar"',
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


def _stored_transaction(db: Path) -> TermIndex:
    """The #TRANSACTIONINFO of the RocksDB at `db`, opened read-only; CheckpointError if it does not open."""
    try:
        backend = RocksDBBackend(db, read_only=True, owner="an OM")
    except StoreError as e:
        raise CheckpointError(f"the checkpoint does not open as RocksDB: {e}") from None
    try:
        if META_TABLE not in backend.column_families:
            raise CheckpointError(f"the checkpoint has no {META_TABLE} table: not an om.db")
        return transaction_info(backend.get(META_TABLE, TRANSACTION_INFO.encode()))
    finally:
        backend.close()


def pack(backend: RocksDBBackend, db_path: Path) -> PackedCheckpoint:
    """A checkpoint of om.db (`backend`, at `db_path`) under db.checkpoints/, with its tar's size and digest
    (om.db read once, nothing copied); the caller flushed what it wants in it (the double buffer) first."""
    work = db_path.parent / CHECKPOINTS_DIR / f"serve-{uuid.uuid4().hex}"
    work.parent.mkdir(parents=True, exist_ok=True)
    work.mkdir()
    try:
        checkpoint = work / "om.db"
        backend.checkpoint(checkpoint)
        info = _stored_transaction(checkpoint)  # before the listing: opening it may write its LOG
        files = tuple((f.name, f.stat().st_size) for f in sorted(checkpoint.iterdir()) if f.is_file())
        digest = hashlib.sha256()
        for chunk in _tar_stream(checkpoint, files):
            digest.update(chunk)
        return PackedCheckpoint(checkpoint, files, digest.hexdigest(), _tar_size(files), info)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def download(
    url: str,
    context: ssl.SSLContext | None,
    into: Path,
    timeout_s: float = DOWNLOAD_TIMEOUT_S,
    deadline_s: float = DOWNLOAD_DEADLINE_S,
    clock: Callable[[], float] = time.monotonic,
    om_node: str = "",
) -> str:
    """GETs the leader's checkpoint tar into the file `into`, returning its SHA-256 once it matches the
    leader's `CHECKSUM_HEADER`; CheckpointError otherwise (the file is removed). Over https (`context`) the
    server must present an OM's certificate, naming `om_node` ("SERVICE/NODE", x509.om_node) when given:
    another OM of the host cannot pose as the leader. Refused too: a tar without Content-Length or larger
    than half the free space beside `into` (it is unpacked there too), and a download not done within
    `deadline_s` (each read also times out after `timeout_s`)."""
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
            if isinstance(conn.sock, ssl.SSLSocket):  # before the request: nothing is asked of a non-OM
                _check_om_certificate(conn.sock, url, om_node)
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


def _check_om_certificate(sock: ssl.SSLSocket, url: str, om_node: str) -> None:
    """The handshake checked the leader's host name; the certificate must also be an OM's (any service
    certificate of the cluster's CA passes the handshake), and `om_node`'s when given."""
    try:
        identity = ssl_peer_identity(sock)
    except (ValueError, ssl.SSLError) as e:
        raise CheckpointError(f"{url} presented a certificate naming no OM ({e}); refused") from None
    if identity.role is not CertRole.OM:
        raise CheckpointError(f"{url} presented the certificate of {identity}, not an OM's; refused")
    if om_node:
        named = X.om_node(x509.load_der_x509_certificate(sock.getpeercert(binary_form=True) or b""))
        if named != om_node:
            raise CheckpointError(
                f"{url} presented the certificate of OM node {named}, not {om_node}'s; refused"
            )


def _check_room(url: str, length: str | None, where: Path) -> None:
    if length is None or not length.isdigit():
        raise CheckpointError(f"{url} answered without a Content-Length: a checkpoint's size is known")
    free = shutil.disk_usage(where).free
    if 2 * int(length) > free:
        raise CheckpointError(
            f"the checkpoint from {url} is {length} bytes; {where} has {free} bytes free, less than twice "
            "that (the tar and the unpacked om.db); refused"
        )


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def unpack(tar: Path, into: Path, at_least: int) -> TermIndex:
    """Unpacks a downloaded (checksum-checked) tar into the new directory `into`, synced, and returns its
    #TRANSACTIONINFO, which must be at `at_least` or past it; CheckpointError otherwise (also when a file
    cannot be written: the installer counts and explains every refusal)."""
    try:
        into.mkdir(parents=True)
        with tarfile.open(tar, "r:") as archive:
            seen: set[str] = set()
            for member in archive.getmembers():
                name = member.name
                if not member.isfile() or "/" in name or name in ("", ".", ".."):
                    raise CheckpointError(f"the checkpoint holds {name!r}: only om.db's files may be in it")
                if name in seen:
                    raise CheckpointError(f"the checkpoint holds {name!r} twice: not a checkpoint of om.db")
                seen.add(name)
                source = archive.extractfile(member)
                assert source is not None  # a regular file
                with source, open(into / name, "xb") as out:
                    shutil.copyfileobj(source, out, CHUNK_BYTES)
                    out.flush()
                    os.fsync(out.fileno())
        _fsync_dir(into)
    except tarfile.TarError as e:
        raise CheckpointError(f"the checkpoint is not a readable tar: {e}") from None
    except OSError as e:  # a name twice (FileExistsError), too long, the disk full
        raise CheckpointError(f"the checkpoint could not be unpacked into {into}: {e}") from None
    info = _stored_transaction(into)
    if info.index < at_least:
        raise CheckpointError(
            f"the checkpoint's {TRANSACTION_INFO} is {_text(info)}, before index {at_least}, the last entry "
            "the leader's log no longer holds: it would leave a gap"
        )
    return info


def aside(db_path: Path) -> Path:
    """Where the previous om.db waits while an installed checkpoint opens."""
    return db_path.with_name(db_path.name + ".old")


def staging_dir(db_path: Path) -> Path:
    """Where a follower downloads and unpacks a checkpoint (removed by `recover` after a crash)."""
    return db_path.parent / CHECKPOINTS_DIR / "install"


def fetch_and_install(
    url: str,
    context: ssl.SSLContext | None,
    db_path: Path,
    install: Callable[[Path], None],
    at_least: int,
    om_node: str = "",
) -> TermIndex:
    """A follower's whole install, off the event loop: download the leader's checkpoint beside om.db, check
    and unpack it, and hand the unpacked tree to `install` (OMMetadataStore.install: the swap, then the
    reopen); the staging directory is removed whatever happens. Returns the installed #TRANSACTIONINFO."""
    staging = staging_dir(db_path)
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        tar = staging / "om.db.tar"
        download(url, context, tar, om_node=om_node)
        unpacked = staging / "om.db"
        installed = unpack(tar, unpacked, at_least)
        tar.unlink()
        install(unpacked)
        return installed
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def swap_in(db_path: Path, new: Path) -> None:
    """Makes the unpacked checkpoint `new` om.db, keeping the old om.db aside as `om.db.old` (delete it with
    `drop_aside` once the new one opened; `restore_aside` puts it back). om.db must be closed."""
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
    return db_path.parent / CHECKPOINTS_DIR / "refused-om.db"


def restore_aside(db_path: Path) -> None:
    """The new om.db did not open: the old one goes back. The refused one is renamed away first, never
    deleted in place, so a crash at any point leaves om.db whole or missing beside `om.db.old`, which
    `recover` puts back; never a half-deleted om.db that `recover` would take for an installed one."""
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
    """At start, before om.db opens: finishes (or undoes) an install a crash interrupted (module docs)."""
    kept = aside(db_path)
    if kept.exists():
        if db_path.exists():
            log.warning(
                "%s: an installed checkpoint is in place; deleting the previous om.db kept aside", db_path
            )
            shutil.rmtree(kept)
        else:
            log.warning("%s: an install was interrupted before the checkpoint was in place; the previous "
                        "om.db is restored", db_path)  # fmt: skip
            os.replace(kept, db_path)
            _fsync_dir(db_path.parent)
    shutil.rmtree(db_path.parent / CHECKPOINTS_DIR, ignore_errors=True)
