"""datanode.id and the addresses a datanode binds and advertises."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pyozone.common.net import HostPort
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.datanode.addresses import advertised_ip, bind_host
from pyozone.datanode.daemon import scm_hosts
from pyozone.datanode.errors import DatanodeError
from pyozone.datanode.identity import IdentityStore
from pyozone.datanode.settings import DatanodeSettings, StorageSettings
from pyozone.hdds.states import NodeOperationalState


def _storage(tmp_path: Path, **extra: str) -> StorageSettings:
    values = {
        "ozone.metadata.dirs": f"{tmp_path / 'meta'},{tmp_path / 'meta2'}",
        "hdds.datanode.dir": str(tmp_path / "d"),
        **extra,
    }
    return DatanodeSettings.from_conf(OzoneConfiguration(values)).storage


def test_a_new_identity_is_written_on_update_and_reloaded(tmp_path: Path) -> None:
    store = IdentityStore(_storage(tmp_path))
    assert store.is_new and not store.path.exists()
    assert store.path == tmp_path / "meta" / "datanode.id"  # the first metadata dir
    store.update(hostname="h", ip_address="10.0.0.1", ports={"STANDALONE": 1}, cluster_id="CID-a")
    store.update(persisted_op_state=NodeOperationalState.DECOMMISSIONING, persisted_op_state_expiry=5)
    again = IdentityStore(_storage(tmp_path))
    assert not again.is_new and again.identity == store.identity
    details = again.identity.details()
    assert details.ports == (("STANDALONE", 1),)
    assert details.persisted_op_state is NodeOperationalState.DECOMMISSIONING
    assert [p.name for p in store.path.parent.iterdir()] == ["datanode.id"]  # no temporary files left


def test_the_id_dir_key_wins(tmp_path: Path) -> None:
    store = IdentityStore(_storage(tmp_path, **{"ozone.scm.datanode.id.dir": str(tmp_path / "ids")}))
    store.update(hostname="h")
    assert (tmp_path / "ids" / "datanode.id").exists()


def test_no_metadata_dir_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"ozone\.metadata\.dirs"):
        IdentityStore(StorageSettings(data_dirs=(tmp_path,)))


def test_a_corrupt_identity_is_fatal_and_named(tmp_path: Path) -> None:
    path = tmp_path / "meta" / "datanode.id"
    path.parent.mkdir()
    path.write_text(json.dumps({"uuid": "not-a-uuid", "hostname": "h", "ipAddress": "i"}))
    with pytest.raises(DatanodeError, match=re.escape(f"{path}: corrupt datanode identity")):
        IdentityStore(_storage(tmp_path))


def test_the_cluster_is_known_from_the_volumes_without_an_identity(tmp_path: Path) -> None:
    version = tmp_path / "d" / "hdds" / "VERSION"
    version.parent.mkdir(parents=True)
    version.write_text("clusterID=CID-old\ndatanodeUuid=11111111-2222-3333-4444-555555555555\n")
    store = IdentityStore(_storage(tmp_path))
    assert store.uuid == "11111111-2222-3333-4444-555555555555"
    assert store.known_cluster_id() == "CID-old"
    store.check_cluster("CID-old", "scm:9861")
    with pytest.raises(DatanodeError, match="belongs to cluster CID-old, SCM at scm:9861 is cluster CID-new"):
        store.check_cluster("CID-new", "scm:9861")


@pytest.mark.parametrize(
    ("scm", "expected"),
    [
        ({"ozone.scm.names": "127.0.0.1"}, "127.0.0.1"),
        ({"ozone.scm.names": "localhost", "ozone.scm.datanode.address": "127.0.0.2:9861"}, "127.0.0.1"),
        ({"ozone.scm.names": "scm.example.com"}, "0.0.0.0"),
        ({"ozone.scm.names": "127.0.0.1,10.1.2.3"}, "0.0.0.0"),
        ({"ozone.scm.datanode.address": "10.1.2.3:9861"}, "0.0.0.0"),
    ],
)
def test_bind_host_follows_the_scm_addresses(scm: dict[str, str], expected: str) -> None:
    assert bind_host(scm_hosts(OzoneConfiguration(scm))) == expected


def test_advertised_ip() -> None:
    assert advertised_ip([HostPort("127.0.0.1", 9861)], "127.0.0.1") == "127.0.0.1"
    assert advertised_ip([HostPort("127.0.0.1", 9861)], "0.0.0.0").startswith("127.")
    # the first SCM of a service does not resolve (review R22 D3): the route to the next one is taken
    gone = HostPort("scm1.invalid", 9861)
    assert advertised_ip([gone, HostPort("127.0.0.2", 9861)], "0.0.0.0") == "127.0.0.1"
