"""SSE-S3's master keystore (issue 33, item 7): created private, wrapped data keys name their version,
rotation keeps older objects readable, and a bad file is a clear error."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pyozone.config import OzoneConfiguration
from pyozone.om import master_keys
from pyozone.om.master_keys import (
    KEYSTORE_FILE,
    KEYSTORE_KEY,
    MasterKeyError,
    MasterKeyStore,
    open_keystore,
)
from pyozone.om.settings import keystore_path

DATA_KEY = os.urandom(32)
OBJECT = "/vol/buck/key"


def test_a_new_keystore_is_private_and_holds_version_1(tmp_path: Path) -> None:
    store = MasterKeyStore.create(tmp_path / "ks")
    assert (tmp_path / "ks").stat().st_mode & 0o777 == 0o600
    assert store.versions == (1,)
    with pytest.raises(MasterKeyError, match="exists already"):
        MasterKeyStore.create(tmp_path / "ks")


def test_rotation_wraps_new_keys_with_the_newest_version_and_opens_old_ones(tmp_path: Path) -> None:
    store = MasterKeyStore.create(tmp_path / "ks")
    old, v1 = store.wrap(DATA_KEY, OBJECT)
    assert v1 == 1 and DATA_KEY not in old
    assert store.rotate() == 2
    new, v2 = store.wrap(DATA_KEY, OBJECT)
    assert v2 == 2
    reloaded = MasterKeyStore.load(tmp_path / "ks")  # the rotation is on disk
    assert reloaded.versions == (1, 2)
    assert reloaded.unwrap(old, 1, OBJECT) == DATA_KEY
    assert reloaded.unwrap(new, 2, OBJECT) == DATA_KEY


def test_a_wrapped_key_opens_with_its_own_version_alone(tmp_path: Path) -> None:
    store = MasterKeyStore.create(tmp_path / "ks")
    store.rotate()
    wrapped, version = store.wrap(DATA_KEY, OBJECT)
    with pytest.raises(MasterKeyError, match="does not open with master key version 1"):
        store.unwrap(wrapped, 1, OBJECT)
    with pytest.raises(MasterKeyError, match="version 7 is not in"):
        store.unwrap(wrapped, 7, OBJECT)
    tampered = wrapped[:-1] + bytes([wrapped[-1] ^ 1])
    with pytest.raises(MasterKeyError):
        store.unwrap(tampered, version, OBJECT)


def test_a_wrapped_key_opens_for_its_own_object_alone(tmp_path: Path) -> None:
    """R36 F12: a wrapped key copied onto another object's record does not unwrap there."""
    store = MasterKeyStore.create(tmp_path / "ks")
    wrapped, version = store.wrap(DATA_KEY, OBJECT)
    assert store.unwrap(wrapped, version, OBJECT) == DATA_KEY
    for other in ("/vol/buck/other", "/vol/other/key", "/other/buck/key"):
        with pytest.raises(
            MasterKeyError, match=f"version 1 for {other} .altered, or wrapped for another object"
        ):
            store.unwrap(wrapped, version, other)


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
    assert open_keystore(tmp_path / "missing", create=False, recorded=None) is None
    with pytest.raises(MasterKeyError, match="no SSE master keystore"):
        MasterKeyStore.load(tmp_path / "missing")
    made = open_keystore(tmp_path / "made", create=True, recorded=None)
    assert made is not None and open_keystore(tmp_path / "made", create=False, recorded=None) is not None


def test_a_keystore_om_db_names_is_never_made_again_nor_taken_for_another(tmp_path: Path) -> None:
    made = MasterKeyStore.create(tmp_path / "ks")
    recorded = made.keystore_id
    assert MasterKeyStore.load(tmp_path / "ks").keystore_id == recorded  # stable, and no key in it
    assert all(key.hex()[:32] != recorded for key in made._versions.values())
    made.rotate()
    assert open_keystore(tmp_path / "ks", create=False, recorded=recorded) is not None  # rotation keeps it
    with pytest.raises(
        MasterKeyError, match=r"missing, while om.db's SSE-S3 data keys .* put that file back"
    ):
        open_keystore(tmp_path / "gone", create=True, recorded=recorded)
    assert not (tmp_path / "gone").exists()
    MasterKeyStore.create(tmp_path / "other")
    with pytest.raises(
        MasterKeyError, match=f"other: keystore [0-9a-f]{{32}}, while .* under keystore {recorded}"
    ):
        open_keystore(tmp_path / "other", create=False, recorded=recorded)


def test_a_rotation_whose_write_fails_leaves_the_old_version_in_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R36 F3: the new version is used only once the file holds it, so no data key is wrapped under a
    version a restart would not find."""
    store = MasterKeyStore.create(tmp_path / "ks")

    def full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(master_keys.os, "replace", full)
    with pytest.raises(OSError, match="No space left"):
        store.rotate()
    monkeypatch.undo()
    assert store.current_version == 1
    wrapped, version = store.wrap(b"k" * 32, OBJECT)
    assert version == 1
    assert MasterKeyStore.load(tmp_path / "ks").unwrap(wrapped, version, OBJECT) == b"k" * 32
    assert store.rotate() == 2 and MasterKeyStore.load(tmp_path / "ks").versions == (1, 2)
