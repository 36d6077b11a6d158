"""The SCM VERSION file: written once, read strictly, and never rewritten by bad input."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.scm.store import JsonCodec
from pyozone.scm.store.layout import version_file
from pyozone.scm.store.version import (
    SCM_LAYOUT_VERSION,
    CorruptVersionError,
    SCMStorageConfig,
    StorageError,
    StorageNotInitializedError,
    init_scm,
    init_scm_storage,
    open_scm_store,
    read_scm_storage,
)

Snapshot = Callable[[Path], dict[str, bytes | None]]

GOOD = {
    "nodeType": "SCM",
    "clusterID": "CID-6a3f1b8e-58f6-4d43-9f4b-0bd4c1c3c1a2",
    "scmUuid": "1b2c3d4e-5f60-4718-a9b0-c1d2e3f40516",
    "cTime": "1795260000000",
    "layoutVersion": "1",
}


def write_version(metadata_dir: Path, fields: dict[str, str]) -> Path:
    path = version_file(metadata_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#Sat Nov 21 11:00:00 UTC 2026\n" + "".join(f"{k}={v}\n" for k, v in fields.items()))
    return path


def test_init_writes_ozone_style_version_file(tmp_path: Path) -> None:
    storage, created = init_scm_storage(tmp_path)
    assert created
    lines = version_file(tmp_path).read_text().splitlines()
    assert re.fullmatch(r"#\w{3} \w{3} \d\d \d\d:\d\d:\d\d UTC \d{4}", lines[0])
    assert lines[1:] == [
        "nodeType=SCM",
        f"clusterID={storage.cluster_id}",
        f"scmUuid={storage.scm_uuid}",
        f"cTime={storage.ctime}",
        f"layoutVersion={SCM_LAYOUT_VERSION}",
    ]
    assert storage.cluster_id.startswith("CID-")
    uuid.UUID(storage.cluster_id.removeprefix("CID-"))
    uuid.UUID(storage.scm_uuid)
    assert read_scm_storage(tmp_path) == storage
    assert [p.name for p in version_file(tmp_path).parent.iterdir()] == ["VERSION"]  # no temp file left


def test_init_uses_a_given_cluster_id(tmp_path: Path) -> None:
    storage, _ = init_scm_storage(tmp_path, "CID-my-cluster")
    assert read_scm_storage(tmp_path).cluster_id == "CID-my-cluster" == storage.cluster_id


def test_reinit_returns_the_existing_identity_and_writes_nothing(tmp_path: Path, snapshot: Snapshot) -> None:
    first, _ = init_scm_storage(tmp_path)
    before = snapshot(tmp_path)
    again, created = init_scm_storage(tmp_path, "CID-other")
    assert (again, created) == (first, False)
    assert snapshot(tmp_path) == before


def test_read_parses_java_properties_leniently(tmp_path: Path) -> None:
    path = version_file(tmp_path)
    path.parent.mkdir(parents=True)
    upper_uuid = GOOD["scmUuid"].upper()
    path.write_text(
        f"# comment\n! another\n\n  nodeType = SCM\nclusterID:CID-x\nscmUuid={upper_uuid}\n"
        "cTime=5\nlayoutVersion=0\nprimaryScmNodeId=extra-keys-are-ignored\n"
    )
    assert read_scm_storage(tmp_path) == SCMStorageConfig("CID-x", upper_uuid, 5, 0)


def test_missing_version_file_says_how_to_initialise(tmp_path: Path) -> None:
    with pytest.raises(StorageNotInitializedError) as info:
        read_scm_storage(tmp_path)
    assert str(info.value) == (
        f"SCM is not initialized: {tmp_path} has no VERSION file; run `pyozone scm --init` first"
    )
    assert list(tmp_path.iterdir()) == []


CORRUPT = {
    "missing-field": ({k: v for k, v in GOOD.items() if k != "cTime"}, "missing field cTime"),
    "empty-value": ({**GOOD, "scmUuid": ""}, "missing field scmUuid"),
    "bad-node-type": ({**GOOD, "nodeType": "OM"}, "nodeType='OM' is not SCM"),
    "bad-cluster-id": ({**GOOD, "clusterID": "6a3f1b8e"}, "clusterID='6a3f1b8e'"),
    "bad-uuid": ({**GOOD, "scmUuid": "not-a-uuid"}, "scmUuid='not-a-uuid' is not a UUID"),
    "bad-ctime": ({**GOOD, "cTime": "yesterday"}, "cTime='yesterday' is not a non-negative integer"),
    "negative-layout": ({**GOOD, "layoutVersion": "-1"}, "layoutVersion='-1'"),
}


@pytest.mark.parametrize(("fields", "message"), CORRUPT.values(), ids=CORRUPT.keys())
def test_corrupt_fields_are_named_and_nothing_is_modified(
    tmp_path: Path, snapshot: Snapshot, fields: dict[str, str], message: str
) -> None:
    path = write_version(tmp_path, fields)
    before = snapshot(tmp_path)
    for attempt in (read_scm_storage, init_scm_storage):
        with pytest.raises(CorruptVersionError) as info:
            attempt(tmp_path)
        assert str(path) in str(info.value) and message in str(info.value)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "missing field nodeType"), (b"\x00\xff\xfe garbage \x89PNG\r\n", "missing field nodeType")],
    ids=["empty", "garbage"],
)
def test_empty_or_garbage_file_is_corrupt(
    tmp_path: Path, snapshot: Snapshot, content: bytes, message: str
) -> None:
    path = version_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    before = snapshot(tmp_path)
    with pytest.raises(CorruptVersionError, match=message):
        init_scm_storage(tmp_path)
    assert snapshot(tmp_path) == before


def test_a_newer_layout_is_refused(tmp_path: Path) -> None:
    write_version(tmp_path, {**GOOD, "layoutVersion": str(SCM_LAYOUT_VERSION + 1)})
    with pytest.raises(StorageError, match="newer than this software"):
        read_scm_storage(tmp_path)


def test_invalid_cluster_id_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="invalid cluster id 'my cluster'"):
        init_scm_storage(tmp_path / "meta", "my cluster")
    assert list(tmp_path.iterdir()) == []


def test_metadata_dir_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "meta").write_text("x")
    for attempt in (read_scm_storage, init_scm_storage):
        with pytest.raises(StorageError, match="is not a directory"):
            attempt(tmp_path / "meta")


def conf(**values: str) -> OzoneConfiguration:
    return OzoneConfiguration({k.replace("_", "."): v for k, v in values.items()})


def test_open_scm_store_needs_the_metadata_dir_key() -> None:
    with pytest.raises(ConfigError, match=r"ozone\.metadata\.dirs is not set"):
        open_scm_store(OzoneConfiguration())


def test_metadata_dir_must_be_a_single_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"ozone\.metadata\.dirs: the SCM uses exactly one directory"):
        open_scm_store(conf(ozone_metadata_dirs=f"{tmp_path}/a,{tmp_path}/b"))


@pytest.mark.parametrize("corrupt", [False, True])
def test_open_scm_store_creates_nothing_without_a_good_version(
    tmp_path: Path, snapshot: Snapshot, corrupt: bool
) -> None:
    if corrupt:
        write_version(tmp_path, {**GOOD, "nodeType": "DATANODE"})
    before = snapshot(tmp_path)
    with pytest.raises(StorageError):
        open_scm_store(conf(ozone_metadata_dirs=str(tmp_path)))
    assert snapshot(tmp_path) == before


def test_init_scm_then_open_scm_store(tmp_path: Path) -> None:
    c = conf(ozone_metadata_dirs=str(tmp_path))
    storage, created = init_scm(c)
    assert created and (tmp_path / "scm.db" / "CURRENT").is_file()
    opened, store = open_scm_store(c)
    assert opened == storage
    store.int_table("containers", JsonCodec()).put(1, {"id": 1})
    store.close()
    assert init_scm(c) == (storage, False)


def test_scm_db_dirs_moves_only_the_db(tmp_path: Path) -> None:
    c = conf(ozone_metadata_dirs=str(tmp_path / "meta"), ozone_scm_db_dirs=str(tmp_path / "db"))
    init_scm(c)
    assert version_file(tmp_path / "meta").is_file()
    assert (tmp_path / "db" / "scm.db" / "CURRENT").is_file()
    assert not (tmp_path / "meta" / "scm.db").exists()
