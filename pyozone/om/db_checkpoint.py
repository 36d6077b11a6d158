"""om.db's checkpoints for OM HA (Ozone's OMDBCheckpointServlet and OzoneManagerSnapshotProvider): the generic
code of ratis_server/db_checkpoint.py bound to om.db's spec (`OM_CHECKPOINT`, om/metadata.py: the `meta`
table's #TRANSACTIONINFO, an OM's certificate), as OM's daemon, its Raft glue and its tests call it."""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable
from pathlib import Path

from pyozone.om.metadata import OM_CHECKPOINT, TRANSACTION_INFO
from pyozone.ratis.messages import TermIndex
from pyozone.ratis_server import db_checkpoint as checkpoints
from pyozone.ratis_server.db_checkpoint import (
    CHECKPOINT_PATH,
    CHECKSUM_HEADER,
    DOWNLOAD_DEADLINE_S,
    DOWNLOAD_TIMEOUT_S,
    CheckpointError,
    PackedCheckpoint,
    transaction_info,
)

__all__ = [
    "CHECKPOINT_PATH",
    "CHECKSUM_HEADER",
    "TRANSACTION_INFO",
    "CheckpointError",
    "PackedCheckpoint",
    "download",
    "fetch_and_install",
    "transaction_info",
    "unpack",
]


def download(
    url: str,
    context: ssl.SSLContext | None,
    into: Path,
    timeout_s: float = DOWNLOAD_TIMEOUT_S,
    deadline_s: float = DOWNLOAD_DEADLINE_S,
    clock: Callable[[], float] = time.monotonic,
    om_node: str = "",
) -> str:
    """An OM leader's om.db tar into `into` (checkpoints.download): over https only from an OM's certificate,
    `om_node`'s ("SERVICE/NODE") when given."""
    return checkpoints.download(OM_CHECKPOINT, url, context, into, timeout_s, deadline_s, clock, om_node)


def unpack(tar: Path, into: Path, at_least: int) -> TermIndex:
    """A downloaded om.db tar unpacked into `into` (checkpoints.unpack)."""
    return checkpoints.unpack(OM_CHECKPOINT, tar, into, at_least)


def fetch_and_install(
    url: str,
    context: ssl.SSLContext | None,
    db_path: Path,
    install: Callable[[Path], None],
    at_least: int,
    om_node: str = "",
) -> TermIndex:
    """A follower OM's whole install (checkpoints.fetch_and_install): `install` is OMMetadataStore.install
    (om.db carries nothing beside it)."""
    return checkpoints.fetch_and_install(
        OM_CHECKPOINT, url, context, db_path, lambda unpacked, _: install(unpacked), at_least, om_node
    )
