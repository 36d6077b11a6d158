"""SSE-S3's master keystore (issue 33, item 7): created private, wrapped data keys name their version,
rotation keeps older objects readable, and a bad file is a clear error."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.om.master_keys import (
    KEYSTORE_FILE,
    KEYSTORE_KEY,
    MasterKeyError,
    MasterKeyStore,
    keystore_path,
    open_keystore,
)

DATA_KEY = os.urandom(32)


def test_a_new_keystore_is_private_and_holds_version_1(tmp_path: Path) -> None:
    store = MasterKeyStore.create(tmp_path / "ks")
    assert (tmp_path / "ks").stat().st_mode & 0o777 == 0o600
    assert store.versions == (1,)
    with pytest.raises(MasterKeyError, match="exists already"):
        MasterKeyStore.create(tmp_path / "ks")


def test_rotation_wraps_new_keys_with_the_newest_version_and_opens_old_ones(tmp_path: Path) -> None:
    store = MasterKeyStore.create(tmp_path / "ks")
    old, v1 = store.wrap(DATA_KEY)
    assert v1 == 1 and DATA_KEY not in old
    assert store.rotate() == 2
    new, v2 = store.wrap(DATA_KEY)
    assert v2 == 2
    reloaded = MasterKeyStore.load(tmp_path / "ks")  # the rotation is on disk
    assert reloaded.versions == (1, 2)
    assert reloaded.unwrap(old, 1) == DATA_KEY
    assert reloaded.unwrap(new, 2) == DATA_KEY


def test_a_wrapped_key_opens_with_its_own_version_alone(tmp_path: Path) -> None:
    store = MasterKeyStore.create(tmp_path / "ks")
    store.rotate()
    wrapped, version = store.wrap(DATA_KEY)
    with pytest.raises(MasterKeyError, match="does not open with master key version 1"):
        store.unwrap(wrapped, 1)
    with pytest.raises(MasterKeyError, match="version 7 is not in"):
        store.unwrap(wrapped, 7)
    tampered = wrapped[:-1] + bytes([wrapped[-1] ^ 1])
    with pytest.raises(MasterKeyError):
        store.unwrap(tampered, version)


@pytest.mark.parametrize(
    ("content", "mode", "message"),
    [
        (b"not json", 0o600, "not an SSE master keystore"),
        (json.dumps({"versions": {}}).encode(), 0o600, "holds no master key"),
        (json.dumps({"versions": {"1": "AAAA"}}).encode(), 0o600, "is not a 32-byte key"),
        (json.dumps({"versions": {"1": "A" * 43 + "="}}).encode(), 0o644, "permissions 644"),
    ],
)
def test_a_bad_keystore_file_is_a_clear_error(
    tmp_path: Path, content: bytes, mode: int, message: str
) -> None:
    path = tmp_path / "ks"
    path.write_bytes(content)
    path.chmod(mode)
    with pytest.raises(MasterKeyError, match=message):
        MasterKeyStore.load(path)


def test_where_the_keystore_is_and_when_it_is_made(tmp_path: Path) -> None:
    conf = OzoneConfiguration()
    assert keystore_path(conf, tmp_path) == tmp_path / KEYSTORE_FILE
    conf.set(KEYSTORE_KEY, str(tmp_path / "elsewhere"))
    assert keystore_path(conf, tmp_path) == tmp_path / "elsewhere"
    assert open_keystore(tmp_path / "missing", create=False) is None
    with pytest.raises(MasterKeyError, match="no SSE master keystore"):
        MasterKeyStore.load(tmp_path / "missing")
    made = open_keystore(tmp_path / "made", create=True)
    assert made is not None and open_keystore(tmp_path / "made", create=False) is not None
