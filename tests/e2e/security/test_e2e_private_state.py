"""Issue 28's probes of SCM's trust and of the daemons' files on a cluster made by `pyozone cluster up
--secure`: the S3 gateway's certificate naming root in `x-ozone-user` is no SCM superuser (defect 3); a
user's certificate cannot list SCM's datanodes, pipelines and containers, nor read them from a datanode's
or OM's web API, while a read-only administrator reads and changes nothing (defect 8); every directory a
daemon made for its metadata has mode ozone.metadata.dirs.permissions (750) and every log file 0640
(defect 9).
"""

from __future__ import annotations

import json
import stat
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.cluster.layout import HOST
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.config.site import load_configuration
from pyozone.framework.scm_admin import ADMIN_SERVICE
from pyozone.hdds.limits import MAX_ADMIN_MESSAGE_BYTES
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb
from tests.e2e.cluster.cluster_helpers import Result
from tests.e2e.security.secure_cluster import SecureCluster, secure_cluster

SUPERUSER = "SCM superuser privilege is required."


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SecureCluster]:
    overrides = {"ozone.readonly.administrators": "rita"}
    with secure_cluster(request, tmp_path_factory, "private", 1, overrides) as c:
        assert c.sh("volume", "create", "/vol").code == 0
        assert c.sh("bucket", "create", "/vol/bkt").code == 0
        yield c


def admin_as(cluster: SecureCluster, user: str, *args: str) -> Result:
    return cluster.pyozone("admin", *args, "--conf", str(cluster.user_conf(user)))


def test_the_gateways_certificate_naming_root_is_no_scm_superuser(cluster: SecureCluster) -> None:
    s3g = TlsStore(TlsPaths.under(cluster.data_dir / "s3g", load_configuration(cluster.conf_dir, {})))
    target = f"{HOST}:{cluster.state.daemon('scm').ports['client']}"
    settings = rpc.ChannelSettings(MAX_ADMIN_MESSAGE_BYTES)
    with rpc.SyncChannel(target, settings, s3g) as channel, pytest.raises(rpc.RpcError) as error:
        rpc.Stub(channel, ADMIN_SERVICE).startReplicationManager(
            admin_pb.StartReplicationManagerRequestProto(),
            metadata=(("x-ozone-user", cluster.admin_user),),
            timeout=10,
        )
    assert error.value.code() is rpc.StatusCode.PERMISSION_DENIED
    assert error.value.details() == f"Access denied for user s3g. {SUPERUSER}"


READS = (("datanode", "list"), ("pipeline", "list"), ("container", "list"), ("container", "report"))


def test_a_user_cannot_read_where_data_lives_and_a_read_only_administrator_can(
    cluster: SecureCluster, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.write_bytes(b"x" * 1000)
    assert cluster.sh("key", "put", "-r", "ONE", "/vol/bkt/k", str(data)).code == 0
    container = cluster.admin_json("container", "list")[0]["containerID"]
    for args in (*READS, ("container", "info", str(container))):
        refused = admin_as(cluster, "bob", *args)
        assert refused.code != 0 and f"Access denied for user bob. {SUPERUSER}" in refused.err, refused
        allowed = admin_as(cluster, "rita", *args)
        assert allowed.code == 0, allowed
    stop = admin_as(cluster, "rita", "replicationmanager", "stop")
    assert stop.code != 0 and f"Access denied for user rita. {SUPERUSER}" in stop.err, stop
    assert admin_as(cluster, "bob", "safemode", "status").code == 0  # open, as in Ozone


def https_status(port: int, path: str, tls: TlsStore) -> int:
    try:
        with urllib.request.urlopen(f"https://{HOST}:{port}{path}", context=tls.client_context(), timeout=10):
            return 200
    except urllib.error.HTTPError as e:
        assert e.code != 403 or json.load(e)["error"].startswith("only administrators"), path
        return e.code


def user_tls(cluster: SecureCluster, user: str) -> TlsStore:
    cluster.user_conf(user)  # issues the certificate once
    certs = cluster.data_dir / "users" / user / "certs"
    return TlsStore(TlsPaths(certs / "private.pem", certs / "certificate.crt", certs / "ca.crt"))


def test_a_users_certificate_reads_no_placement_or_names_on_the_web(
    cluster: SecureCluster, tmp_path: Path
) -> None:
    """Issue 28 defect 8 on the web: a user's certificate read every replica of a datanode (volume, BCSID,
    origin pipeline and node), its pipelines' members, SCM's commands and its ports. Now each datanode page
    answers bob 403, and the administrator and a read-only administrator; OM's namespace answers bob 403."""
    data = tmp_path / "data"
    data.write_bytes(b"z" * 1000)
    assert cluster.sh("key", "put", "-r", "ONE", "/vol/bkt/k3", str(data)).code == 0
    container = cluster.admin_json("container", "list")[0]["containerID"]
    datanode = cluster.state.datanodes()[0].ports["http"]
    om = cluster.state.daemon("om").ports["http"]
    datanode_apis = (
        "/api/v1/overview",
        "/api/v1/volumes",
        "/api/v1/containers",
        f"/api/v1/containers/{container}",
        "/api/v1/pipelines",
        "/api/v1/commands",
        "/api/v1/commands/recent",
        "/api/v1/scanner",
        "/api/v1/latency",
    )
    om_apis = (
        "/api/v1/volumes",
        "/api/v1/volumes/vol",
        "/api/v1/volumes/vol/buckets",
        "/api/v1/volumes/vol/buckets/bkt",
        "/api/v1/volumes/vol/buckets/bkt/keys",
        "/api/v1/volumes/vol/buckets/bkt/key?name=k3",
        "/api/v1/openkeys",
    )
    bob, rita = user_tls(cluster, "bob"), user_tls(cluster, "rita")
    for path in datanode_apis:
        assert https_status(datanode, path, bob) == 403, path
        assert https_status(datanode, path, rita) == 200, path
        assert https_status(datanode, path, cluster.admin_tls) == 200, path
    for path in om_apis:
        assert https_status(om, path, bob) == 403, path
        assert https_status(om, path, cluster.admin_tls) == 200, path
    assert https_status(om, "/api/v1/overview", bob) == 200  # counts only


def test_every_metadata_directory_is_750_and_every_log_640(cluster: SecureCluster, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.write_bytes(b"y" * 1000)
    # a container, a pipeline's log, RocksDB's directories: all made after the daemons started
    assert cluster.sh("key", "put", "-r", "ONE", "/vol/bkt/k2", str(data)).code == 0
    root = cluster.data_dir
    wrong = []
    for top in ("scm", "om", "s3g", "dn1/meta", "dn1/data", "logs"):
        for path in (root / top, *(root / top).rglob("*")):
            if path.is_dir():
                mode, want = stat.S_IMODE(path.lstat().st_mode), 0o700 if path.name == "hdds" else 0o750
                if mode != want:
                    wrong.append(f"{mode:o} {path.relative_to(root)} (want {want:o})")
    assert not wrong, "\n".join(wrong)
    logs = sorted((root / "logs").glob("*.log"))
    assert logs and all(stat.S_IMODE(p.stat().st_mode) == 0o640 for p in logs), logs
