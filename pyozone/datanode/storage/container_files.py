"""A container's directory on its volume: created, read and removed so a crash never leaves half of one.

A new directory is built under the volume's tmp dir and renamed into place; a deleted one is renamed
out of the way before its DB keys go. The volume clears its tmp dir at start, so leftovers of an
interrupted create, import or delete vanish; stray DB keys of a container that is not on disk are
cleared by the next create or import of that id.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

from pyozone.common.fsutil import atomic_write, fsync_dir
from pyozone.datanode.storage.container_data import ContainerData, ContainerFileError
from pyozone.datanode.storage.errors import ContainerError, Result
from pyozone.datanode.storage.volume import HddsVolume, out_of_space
from pyozone.datanode.storage.volume_db import ContainerDB, DBError


def descriptor_path(directory: Path, container_id: int) -> Path:
    return directory / "metadata" / f"{container_id}.container"


def io_error(volume: HddsVolume, what: str, error: Exception) -> ContainerError:
    """No space is DISK_OUT_OF_SPACE (the volume is full, not failed); other I/O errors trigger a volume
    check, which may fail the volume."""
    if out_of_space(error):
        return ContainerError(Result.DISK_OUT_OF_SPACE, f"{what}: {error}")
    volume.check()
    return ContainerError(Result.IO_EXCEPTION, f"{what}: {error}")


def clear_db(volume: HddsVolume, container_id: int) -> None:
    ContainerDB(volume.db, container_id).commit(clear=True)


def build_container_dir(volume: HddsVolume, data: ContainerData) -> Path:
    """Creates <containerDir>/{chunks,metadata/<id>.container} all at once; returns the directory."""
    cid = data.container_id
    final = volume.container_dir(cid)
    if final.exists():
        raise ContainerError(Result.CONTAINER_EXISTS, f"container {cid} exists at {final}")
    staging = volume.tmp_dir / f"create-{cid}-{uuid.uuid4().hex}"
    try:
        (staging / "chunks").mkdir(parents=True)
        (staging / "metadata").mkdir()
        atomic_write(descriptor_path(staging, cid), data.to_file_bytes())
        clear_db(volume, cid)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.rename(staging, final)
        fsync_dir(final.parent)
    except (OSError, DBError) as e:
        shutil.rmtree(staging, ignore_errors=True)
        raise io_error(volume, f"create container {cid}", e) from None
    return final


def read_descriptor(directory: Path, container_id: int) -> ContainerData:
    """The container's descriptor; ContainerFileError if it is missing, unreadable or untrustworthy."""
    path = descriptor_path(directory, container_id)
    try:
        data = ContainerData.from_file_bytes(path.read_bytes())
    except OSError as e:
        raise ContainerFileError(f"{path}: {e.strerror or e}") from None
    except ContainerFileError as e:
        raise ContainerFileError(f"{path}: {e}") from None
    if data.container_id != container_id:
        raise ContainerFileError(f"{path}: names container {data.container_id}")
    return data


def remove_container_dir(volume: HddsVolume, container_id: int, directory: Path) -> None:
    grave = volume.tmp_dir / f"deleted-{container_id}-{uuid.uuid4().hex}"
    try:
        if directory.exists():
            os.rename(directory, grave)
        clear_db(volume, container_id)
    except (OSError, DBError) as e:
        raise io_error(volume, f"delete container {container_id}", e) from None
    shutil.rmtree(grave, ignore_errors=True)
