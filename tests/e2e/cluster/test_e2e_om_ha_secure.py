"""`pyozone cluster up --om-ha --secure`: three OMs of one service, each with a certificate of its own from
SCM's CA (its host and "omservice/omN"), mutual TLS on every port, the OMs' Raft port included. `pyozone
sh` writes and reads keys and goes on after the leader's kill -9; a key written before the failover reads
back; block tokens the killed leader signed still open its blocks (they are signed with SCM's secret keys,
which every OM fetches); the killed OM comes back as a follower over its own certificate. The S3 gateway
(https, the administrator's certificate) goes on after the leader's kill too, and a restarted service
keeps each OM's certificate. An OM fetches
the leader's /dbCheckpoint with its certificate, a datanode or a plain user cannot. The Raft port refuses a
datanode's or a user's certificate, and an OM's certificate speaking for another OM node."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.cluster.layout import OM_HA_NODES, OM_SERVICE_ID, Daemon
from pyozone.common.net import HostPort
from pyozone.common.om_ha import om_raft_group_id
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.config.site import load_configuration
from pyozone.hdds.ids import BlockID
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.block_token import AccessMode
from pyozone.om.db_checkpoint import CHECKPOINT_PATH, CheckpointError, download
from pyozone.proto import Raft_pb2 as pb
from pyozone.protocol.raft import message_to_proto
from pyozone.protocol.tokens import verify_block_token
from pyozone.ratis.messages import AppendEntriesRequest, RaftPeerId
from pyozone.ratis_server.transport import DELIVER
from pyozone.security.secret_keys import SecretKeyCache
from tests.e2e.cluster.cluster_helpers import Result, all_running
from tests.e2e.cluster.s3_cluster import getsecret
from tests.e2e.cluster.test_e2e_om_ha_cluster import roles
from tests.e2e.security.secure_cluster import SecureCluster
from tests.polling import wait_for

VOLUME, BUCKET = "securevol", "securebucket"


@pytest.fixture(scope="module")
def started(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
    tuple[SecureCluster, Result]
]:  # fmt: skip
    cluster = SecureCluster(tmp_path_factory.mktemp("om-ha-secure"))
    request.addfinalizer(cluster.stop)
    yield cluster, cluster.up(3, 1, None, "--om-ha")


def certificate_of(cluster: SecureCluster, daemon: Daemon) -> TlsStore:
    metadata = daemon.define("ozone.metadata.dirs")
    assert metadata is not None
    return TlsStore(TlsPaths.under(Path(metadata), load_configuration(cluster.conf_dir, {})))


def leader(cluster: SecureCluster) -> str:
    return next(node for node, role in roles(cluster).items() if role == "LEADER")


def back_as_a_follower(cluster: SecureCluster, node: str) -> None:
    wait_for(
        lambda: sorted(roles(cluster).values()) == ["FOLLOWER", "FOLLOWER", "LEADER"],
        90,
        f"{node} back as a follower",
        interval_s=1,
    )


def test_each_om_holds_a_certificate_of_its_own(started: tuple[SecureCluster, Result]) -> None:
    cluster, up = started
    assert f"3 OMs of {OM_SERVICE_ID}" in up.out and "mutual TLS" in up.out
    certs = {
        om.name: X.cert_from_pem(certificate_of(cluster, om).paths.cert.read_bytes())
        for om in cluster.state.oms()
    }
    assert set(certs) == set(OM_HA_NODES)
    for node, cert in certs.items():
        assert X.common_name(cert) == "om@127.0.0.1"
        assert X.om_node(cert) == f"{OM_SERVICE_ID}/{node}"
    assert len({c.serial_number for c in certs.values()}) == 3
    all_running(cluster)


def test_sh_writes_and_reads_keys_and_goes_on_after_the_leader_s_kill(
    started: tuple[SecureCluster, Result], tmp_path: Path
) -> None:
    cluster, _ = started
    data, more = os.urandom(50_000), os.urandom(30_000)
    source = tmp_path / "data"
    source.write_bytes(data)
    assert cluster.sh("volume", "create", f"/{VOLUME}").code == 0
    assert cluster.sh("bucket", "create", f"/{VOLUME}/{BUCKET}").code == 0
    assert cluster.sh("key", "put", f"/{VOLUME}/{BUCKET}/before", str(source)).code == 0
    got = tmp_path / "got"
    assert cluster.sh("key", "get", f"/{VOLUME}/{BUCKET}/before", str(got)).code == 0
    assert got.read_bytes() == data
    old = leader(cluster)
    dn_certificate = certificate_of(cluster, cluster.state.daemon("dn1"))
    with cluster.ozone_client() as client:
        # blocks and their tokens handed out by the leader about to die
        reader = client.read_key(VOLUME, BUCKET, "before")
        writer = client.create_key(VOLUME, BUCKET, "straddling", size_hint=len(more))
        writer.write(more[:10_000])
        cluster.kill(old)
        assert cluster.sh("key", "put", f"/{VOLUME}/{BUCKET}/after", str(source)).code == 0
        writer.write(more[10_000:])
        writer.close()  # written with the old leader's token, committed to the new leader
        assert reader.read() == data  # read with the old leader's token
        # what a datanode checks, with SCM's secret keys: the old leader's tokens hold after failover
        keys = SecretKeyCache.connect(load_configuration(cluster.conf_dir, {}), dn_certificate)
        try:
            for location in reader.info.locations:
                block = BlockID(location.container_id, location.local_id)
                verify_block_token(location.token, block, AccessMode.READ, keys.get, int(time.time() * 1000))
        finally:
            keys.close()
        assert client.get_key(VOLUME, BUCKET, "straddling", tmp_path / "straddling").data_size == len(more)
    assert (tmp_path / "straddling").read_bytes() == more
    for key in ("before", "after"):
        got.unlink()
        assert cluster.sh("key", "get", f"/{VOLUME}/{BUCKET}/{key}", str(got)).code == 0
        assert got.read_bytes() == data
    assert leader(cluster) != old
    cluster.start(old)  # back as a follower over its own certificate
    back_as_a_follower(cluster, old)


def test_an_om_fetches_the_leader_s_checkpoint_a_datanode_or_a_user_cannot(
    started: tuple[SecureCluster, Result], tmp_path: Path
) -> None:
    cluster, _ = started
    state = cluster.state
    lead = state.daemon(leader(cluster))
    url = f"https://127.0.0.1:{lead.ports['http']}{CHECKPOINT_PATH}"
    other = next(om for om in state.oms() if om.name != lead.name)
    digest = download(url, certificate_of(cluster, other).client_context(), tmp_path / "om.tar")
    assert len(digest) == 64 and (tmp_path / "om.tar").stat().st_size > 0
    bob = load_configuration(cluster.user_conf("bob"), {})
    bob_tls = TlsStore(
        TlsPaths(
            Path(str(bob.get("ozone.client.tls.key.file"))),
            Path(str(bob.get("ozone.client.tls.cert.file"))),
            Path(str(bob.get("ozone.client.tls.ca.file"))),
        )
    )
    for who in (certificate_of(cluster, state.daemon("dn1")), bob_tls):
        with pytest.raises(CheckpointError, match="answered 403"):
            download(url, who.client_context(), tmp_path / "refused.tar")


def refused_on_raft_port(target: Daemon, sender: str, tls: TlsStore) -> tuple[rpc.StatusCode, str]:
    """An append of a far higher term from `sender` to `target`'s Raft port over `tls`: taken, it would
    depose the leader."""
    append = AppendEntriesRequest(RaftPeerId(sender), 10**6, 0, 0, (), 0, 1)
    request = pb.RaftServerMessagesProto(
        messages=[message_to_proto(om_raft_group_id(OM_SERVICE_ID), RaftPeerId(target.name), append)]
    )

    async def send() -> tuple[rpc.StatusCode, str]:
        address = HostPort("127.0.0.1", target.ports["ratis"])
        settings = rpc.ChannelSettings(max_message_bytes=1 << 20)
        async with rpc.Channel(address, settings, tls, X.CertRole.OM) as channel:
            with pytest.raises(rpc.RpcError) as error:
                await channel.unary(DELIVER.path, request, None, timeout=10)
        return error.value.code(), error.value.details() or ""

    return asyncio.run(send())


def test_the_raft_port_takes_each_om_for_its_own_node_only(started: tuple[SecureCluster, Result]) -> None:
    cluster, _ = started
    state = cluster.state
    lead = leader(cluster)
    target, impostor, victim = (
        state.daemon(lead),
        *(om for om in state.oms() if om.name != lead),
    )
    code, why = refused_on_raft_port(target, victim.name, certificate_of(cluster, impostor))
    assert code is rpc.StatusCode.PERMISSION_DENIED
    assert f"of OM node {OM_SERVICE_ID}/{impostor.name} may not speak for {victim.name}" in why
    for stranger, named in ((state.daemon("dn1"), "dn@"), (None, cluster.admin_user)):
        tls = cluster.admin_tls if stranger is None else certificate_of(cluster, stranger)
        code, why = refused_on_raft_port(target, victim.name, tls)
        assert code is rpc.StatusCode.PERMISSION_DENIED and named in why
        assert "may not send Raft messages" in why and "OM certificates only" in why
    assert leader(cluster) == lead  # nothing of it was taken


def test_the_s3_gateway_goes_on_after_the_leader_s_kill(started: tuple[SecureCluster, Result]) -> None:
    import boto3
    from botocore.config import Config

    cluster, _ = started
    access, secret = getsecret(cluster, cluster.admin_user)
    tls = cluster.admin_tls
    s3 = boto3.client(
        "s3",
        endpoint_url=f"https://127.0.0.1:{cluster.state.daemon('s3g').ports['http']}",
        aws_access_key_id=access,
        aws_secret_access_key=secret,
        region_name="us-east-1",
        config=Config(
            s3={"addressing_style": "path"},
            signature_version="s3v4",
            client_cert=(str(tls.paths.cert), str(tls.paths.key)),
        ),
        verify=str(tls.paths.ca),
    )
    s3.create_bucket(Bucket="ha-secure")
    s3.put_object(Bucket="ha-secure", Key="before", Body=b"b" * 5000)
    old = leader(cluster)
    cluster.kill(old)
    s3.put_object(Bucket="ha-secure", Key="after", Body=b"a" * 5000)
    for key, byte in (("before", b"b"), ("after", b"a")):
        assert s3.get_object(Bucket="ha-secure", Key=key)["Body"].read() == byte * 5000
    cluster.start(old)
    back_as_a_follower(cluster, old)


@pytest.mark.slow  # a restart of the whole secure service (as the secure SCM service's): behind -m slow
def test_a_restarted_service_keeps_each_om_s_certificate_and_its_keys(
    started: tuple[SecureCluster, Result], tmp_path: Path
) -> None:
    cluster, _ = started
    certificates = {
        om.name: certificate_of(cluster, om).paths.cert.read_bytes() for om in cluster.state.oms()
    }
    assert cluster.cluster("down", timeout_s=90).code == 0
    up = cluster.cluster("up", "--om-ha", "--background", "--timeout", "90", timeout_s=150)
    assert up.code == 0 and "Cluster is ready." in up.out, up
    assert {
        om.name: certificate_of(cluster, om).paths.cert.read_bytes() for om in cluster.state.oms()
    } == certificates
    got = tmp_path / "got"
    assert cluster.sh("key", "get", f"/{VOLUME}/{BUCKET}/before", str(got)).code == 0
    assert got.stat().st_size == 50_000
