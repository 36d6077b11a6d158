"""OM HA on real processes: three `pyozone om` of one service (ozone.om.service.ids) beside a cluster's SCM
and three datanodes (`cluster up`, whose lone OM is stopped first; benchmarks/om_ha.py's HaOms starts the
three). A client configured with the service writes keys, the leader gets SIGKILL, and the same client
writes and reads on: no error surfaces (it fails over to the next leader with the same call ids) and
every acknowledged key is readable with its bytes. A follower refuses a call naming the leader."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator

import pytest

from benchmarks.om_ha import NODES, SERVICE, HaOms
from pyozone import rpc
from pyozone.client import OzoneClient
from pyozone.framework.om import OM_SERVICE
from pyozone.framework.om_errors import OMNotLeaderException
from pyozone.hdds.limits import MAX_OM_MESSAGE_BYTES
from pyozone.proto import OmClientProtocol_pb2 as pb
from tests.e2e.cluster.cluster_helpers import LiveCluster
from tests.e2e.om_ha_support import leader, om_service
from tests.polling import wait_for

VOLUME, BUCKET = "havol", "habucket"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveCluster, HaOms]]:
    cluster = LiveCluster(tmp_path_factory.mktemp("om-ha"))
    with om_service(cluster, HaOms.plan(cluster.data_dir, cluster.conf_dir)) as running:
        yield running


def test_the_leader_killed_the_client_fails_over_and_every_acknowledged_key_stays(
    service: tuple[LiveCluster, HaOms],
) -> None:
    _, oms = service
    written: dict[str, bytes] = {}
    with OzoneClient(oms.conf()) as client:
        client.create_volume(VOLUME)
        client.create_bucket(VOLUME, BUCKET)
        for i in range(5):
            written[f"before/{i}"] = data = f"key {i} before the kill ".encode() * 100
            client.put_key(VOLUME, BUCKET, f"before/{i}", data)
        killed = leader(oms)
        oms.kill(killed, signal.SIGKILL)
        started = time.monotonic()
        for i in range(5):  # the first of them waits out the election: no error reaches us
            written[f"after/{i}"] = data = f"key {i} after the kill ".encode() * 100
            client.put_key(VOLUME, BUCKET, f"after/{i}", data)
            if i == 0:
                resumed_s = time.monotonic() - started
        # ozone.om.ratis.minimum.timeout is 1 s here: an election within 1-1.2 s, then the client's round
        print(f"writes resumed {resumed_s:.2f} s after the leader's SIGKILL")
        assert resumed_s < 15
        for key, data in written.items():
            with client.read_key(VOLUME, BUCKET, key) as reader:
                assert reader.readall() == data, key
        assert sorted(k.name for k in client.list_keys(VOLUME, BUCKET)) == sorted(written)
    successor = leader(oms)
    assert successor != killed
    view = oms.raft_view(successor)
    assert view is not None and view["term"] >= 2
    # the killed OM comes back as a follower and catches up from the log
    oms.start(killed)
    wait_for(
        lambda: (v := oms.raft_view(killed)) is not None and v["appliedIndex"] >= view["commitIndex"],
        60,
        f"{killed} caught up",
        interval_s=0.5,
    )


def test_a_follower_refuses_a_call_naming_the_leader(service: tuple[LiveCluster, HaOms]) -> None:
    _, oms = service
    current = leader(oms)
    follower = next(node for node in NODES if node != current and node in oms.processes)
    address = oms.values[f"ozone.om.address.{SERVICE}.{follower}"]
    settings = rpc.ChannelSettings(max_message_bytes=MAX_OM_MESSAGE_BYTES)
    with rpc.SyncChannel(address, settings) as channel, pytest.raises(rpc.RpcError) as refused:
        rpc.Stub(channel, OM_SERVICE).infoVolume(pb.InfoVolumeRequest(volume=VOLUME))
    assert refused.value.code() is rpc.StatusCode.UNAVAILABLE
    parsed = OMNotLeaderException.parse(refused.value.details() or "")
    assert parsed is not None and (parsed.node_id, parsed.leader_id) == (follower, current)
    assert parsed.leader_address == oms.values[f"ozone.om.address.{SERVICE}.{current}"]


def test_admin_om_roles_prints_each_om_and_its_role(service: tuple[LiveCluster, HaOms]) -> None:
    cluster, oms = service
    current = leader(oms)
    defines = [arg for k, v in oms.values.items() for arg in ("-D", f"{k}={v}")]
    result = cluster.admin("om", "roles", *defines)
    assert result.code == 0, result
    lines = result.out.splitlines()
    assert f"{current} : LEADER (127.0.0.1)" in lines
    assert len(lines) == len(NODES)
    assert all(line.split(" : ")[1].split(" ")[0] in ("LEADER", "FOLLOWER", "UNREACHABLE") for line in lines)
    shown = cluster.admin("om", "roles", "--service-id", SERVICE, "--json", *defines)
    assert {row["nodeId"]: row["role"] for row in shown.json()}[current] == "LEADER"
    alone = cluster.admin("om", "roles")
    assert alone.code == 1 and "ozone.om.service.ids is not set" in alone.err


def test_admin_om_transfer_hands_the_leadership_to_the_named_om(service: tuple[LiveCluster, HaOms]) -> None:
    cluster, oms = service
    current = leader(oms)
    target = next(node for node in NODES if node != current and node in oms.processes)
    defines = [arg for k, v in oms.values.items() for arg in ("-D", f"{k}={v}")]
    result = cluster.admin("om", "transfer", "-n", target, *defines)
    assert result.code == 0, result
    assert result.out.strip() == f"Transfer leadership successfully to {target}."
    with OzoneClient(oms.conf()) as client:  # the new leader takes over and serves
        client.create_volume("after-transfer")
    assert leader(oms) == target
    unknown = cluster.admin("om", "transfer", "-n", "om9", *defines)
    assert unknown.code == 1 and "'om9' is not another OM of the service" in unknown.err
