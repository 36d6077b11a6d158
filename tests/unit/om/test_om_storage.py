"""The OM's VERSION file: written from SCM's cluster id on the first start, and a later start against an
SCM of another cluster is refused with both ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.om.settings import om_db_path
from pyozone.om.storage import OMStorageError, bind_to_cluster, read_om_storage, version_file


def test_first_start_writes_version_and_later_starts_keep_it(tmp_path: Path) -> None:
    assert read_om_storage(tmp_path) is None
    storage, created = bind_to_cluster(tmp_path, "CID-one")
    assert created and storage.cluster_id == "CID-one"
    text = version_file(tmp_path).read_text()
    assert "nodeType=OM" in text and "clusterID=CID-one" in text and f"omUuid={storage.om_uuid}" in text
    again, created = bind_to_cluster(tmp_path, "CID-one")
    assert not created and again == storage


def test_an_scm_of_another_cluster_is_refused(tmp_path: Path) -> None:
    bind_to_cluster(tmp_path, "CID-one")
    with pytest.raises(OMStorageError) as error:
        bind_to_cluster(tmp_path, "CID-two")
    assert "CID-one" in str(error.value) and "CID-two" in str(error.value)


def test_a_corrupt_version_file_is_reported(tmp_path: Path) -> None:
    path = version_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("nodeType=OM\n")
    with pytest.raises(OMStorageError, match="missing field clusterID"):
        read_om_storage(tmp_path)


def test_db_location(tmp_path: Path) -> None:
    conf = OzoneConfiguration({"ozone.metadata.dirs": str(tmp_path / "meta")})
    assert om_db_path(conf) == tmp_path / "meta" / "om.db"
    conf.set("ozone.om.db.dirs", str(tmp_path / "db"))
    assert om_db_path(conf) == tmp_path / "db" / "om.db"
    with pytest.raises(ConfigError, match=r"ozone\.metadata\.dirs is not set"):
        om_db_path(OzoneConfiguration())
    with pytest.raises(ConfigError, match="exactly one directory"):
        om_db_path(OzoneConfiguration({"ozone.metadata.dirs": "a,b"}))
