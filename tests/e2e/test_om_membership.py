"""Adding and removing an OM on real processes (issue 30): three `pyozone om` of one service beside a
cluster's SCM and datanodes (benchmarks/om_ha.py's HaOms) take writes while two of them restart with a
configuration naming a fourth OM (and the third as decommissioned, Ozone's ozone.om.decommissioned.nodes);
`pyozone om --bootstrap` adds the fourth, which catches up and then leads and serves every key; `pyozone
admin om decommission` removes the third; `admin om roles` shows each change. A writer keeps writing
throughout and no error reaches it; every acknowledged key reads back. Refused: a bootstrap the other OMs'
configurations do not know, and the decommission of the leader or of an unknown node."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from benchmarks.om_ha import SERVICE, HaOms
from pyozone import rpc
from pyozone.client import OzoneClient
from pyozone.framework.om import OM_SERVICE
from pyozone.hdds.limits import MAX_OM_MESSAGE_BYTES
from pyozone.proto import OmClientProtocol_pb2 as pb
from tests.e2e.cluster.cluster_helpers import LiveCluster
from tests.e2e.om_ha_support import leader, om_service
from tests.polling import wait_for

# a minute and a half of restarts on real processes: behind -m slow; the default suite adds and removes an
# OM in process (tests/unit/om/server/test_om_membership.py)
pytestmark = pytest.mark.slow

VOLUME, BUCKET = "membervol", "memberbucket"
FOUR = ("om1", "om2", "om3", "om4")
THREE = ("om1", "om2", "om3")
NODES_KEY = f"ozone.om.nodes.{SERVICE}"
DECOMMISSIONED_KEY = f"ozone.om.decommissioned.nodes.{SERVICE}"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveCluster, HaOms]]:
    cluster = LiveCluster(tmp_path_factory.mktemp("om-membership"))
    oms = HaOms.plan(cluster.data_dir, cluster.conf_dir, nodes=FOUR)
    for node in THREE:  # the service begins with three OMs: om4 is in no configuration yet
        oms.node_values[node] = {NODES_KEY: ",".join(THREE)}
    oms.nodes = THREE
    with om_service(cluster, oms, timeout_s=120) as running:
        yield running


def member_ids(view: dict[str, Any]) -> list[str]:
    """The group's members in force, as an OM's /api/v1/ratis lists them."""
    return [member["nodeId"] for member in view.get("members", ())]


def restart(oms: HaOms, node: str) -> None:
    oms.kill(node, signal.SIGTERM)
    oms.start(node)
    wait_for(lambda: oms.raft_view(node) is not None, 90, f"{node} serves again", interval_s=0.5)


def defines(values: dict[str, str]) -> list[str]:
    return [arg for k, v in values.items() for arg in ("-D", f"{k}={v}")]


class Writer(threading.Thread):
    """Writes keys one after another until stopped; what OM acknowledged, and the first error if any."""

    def __init__(self, client: OzoneClient) -> None:
        super().__init__(daemon=True)
        self.client = client
        self.written: dict[str, bytes] = {}
        self.error: BaseException | None = None
        self.stopping = threading.Event()

    def run(self) -> None:
        i = 0
        try:
            while not self.stopping.is_set():
                key, data = f"k{i}", f"key {i} ".encode() * 50
                self.client.put_key(VOLUME, BUCKET, key, data)
                self.written[key] = data
                i += 1
        except BaseException as error:  # surfaces in the test
            self.error = error

    def progress(self, more: int = 3, timeout_s: float = 90) -> None:
        """Returns once `more` keys were acknowledged after the call."""
        start = len(self.written)
        wait_for(lambda: len(self.written) >= start + more or self.error, timeout_s, "writes go on", 0.2)
        assert self.error is None, self.error


def test_an_om_is_bootstrapped_and_one_decommissioned_while_the_service_serves(
    service: tuple[LiveCluster, HaOms],
) -> None:
    cluster, oms = service
    new_conf = {NODES_KEY: ",".join(FOUR), DECOMMISSIONED_KEY: "om3"}
    client_values = {**oms.values, **new_conf}
    with OzoneClient(oms.conf()) as client:
        client.create_volume(VOLUME)
        client.create_bucket(VOLUME, BUCKET)
        writer = Writer(client)
        writer.start()
        try:
            writer.progress()
            # Ozone: every OM's configuration names om4 before it bootstraps (pyozone reads it at start);
            # om3, to be decommissioned, keeps its configuration and runs on
            for node in ("om1", "om2"):
                oms.node_values[node] = new_conf
                restart(oms, node)
                writer.progress()
            if leader(oms, 90) == "om3":
                moved = cluster.admin("om", "transfer", "-n", "om1", *defines(oms.values))
                assert moved.code == 0, moved
            oms.node_values["om4"] = new_conf
            oms.start("om4", "--bootstrap")
            wait_for(
                lambda: (v := oms.raft_view("om4")) is not None and "om4" in member_ids(v),
                120, "om4 a member", interval_s=0.5,
            )  # fmt: skip
            assert "Successfully bootstrapped OM om4" in oms.log("om4")
            writer.progress()
            view = oms.raft_view(leader(oms, 90))
            assert view is not None and sorted(member_ids(view)) == list(FOUR)
            roles = cluster.admin("om", "roles", *defines(client_values))
            assert roles.code == 0 and "om4 : FOLLOWER (127.0.0.1)" in roles.out.splitlines(), roles
            # om4 caught up by log: it leads, and serves reads
            moved = cluster.admin("om", "transfer", "-n", "om4", *defines(client_values))
            assert moved.code == 0, moved
            writer.progress()
            assert leader(oms, 90) == "om4"
            # refused: the leader (by the leader: --force skips the CLI's check of the configurations), an
            # unknown node
            own = cluster.admin(
                "om", "decommission", "-id", SERVICE, "-nodeid", "om4", "--force", *defines(client_values)
            )  # fmt: skip
            assert own.code == 1 and "OM node not present in the OM peer list" in own.err, own
            unknown = cluster.admin(
                "om", "decommission", "-id", SERVICE, "-nodeid", "om9", *defines(client_values)
            )  # fmt: skip
            assert unknown.code == 1 and "There is no OM corresponding to om9" in unknown.err, unknown
            # om3 leaves the group
            removed = cluster.admin(
                "om", "decommission", "-id", SERVICE, "-nodeid", "om3", "-hostname", "127.0.0.1",
                *defines(client_values),
            )  # fmt: skip
            assert removed.code == 0, removed
            assert "Successfully decommissioned OM om3" in removed.out
            view = oms.raft_view("om4")
            assert view is not None and sorted(member_ids(view)) == ["om1", "om2", "om4"]
            roles = cluster.admin("om", "roles", *defines(client_values))
            assert "om3 : NOT_A_MEMBER (127.0.0.1)" in roles.out.splitlines(), roles
            # om3, still running, serves nothing: it refuses as a follower does, naming no member of its own
            address = oms.values[f"ozone.om.address.{SERVICE}.om3"]
            settings = rpc.ChannelSettings(max_message_bytes=MAX_OM_MESSAGE_BYTES)
            with rpc.SyncChannel(address, settings) as channel, pytest.raises(rpc.RpcError) as refused:
                rpc.Stub(channel, OM_SERVICE).infoVolume(pb.InfoVolumeRequest(volume=VOLUME))
            assert refused.value.code() is rpc.StatusCode.UNAVAILABLE
            assert "OM:om3 is not the leader" in (refused.value.details() or "")
            oms.kill("om3", signal.SIGTERM)
            writer.progress()
        finally:
            writer.stopping.set()
            writer.join(120)
        assert writer.error is None, writer.error
        assert len(writer.written) >= 15
        for key, data in writer.written.items():
            with client.read_key(VOLUME, BUCKET, key) as reader:
                assert reader.readall() == data, key
    # om4's om.db holds what the group committed: after a leader kill the rest serves on with it
    oms.kill("om4", signal.SIGKILL)
    with OzoneClient(oms.conf()) as client:
        assert len(list(client.list_keys(VOLUME, BUCKET))) == len(writer.written)


def test_a_bootstrap_the_other_oms_do_not_know_is_refused(service: tuple[LiveCluster, HaOms]) -> None:
    cluster, oms = service
    # om5 names itself in its own configuration only
    values = {
        **oms.values,
        NODES_KEY: ",".join((*FOUR, "om5")),
        f"ozone.om.address.{SERVICE}.om5": "127.0.0.1:1",
        f"ozone.om.http-address.{SERVICE}.om5": "127.0.0.1:0",
        f"ozone.om.ratis.port.{SERVICE}.om5": "0",
        "ozone.om.node.id": "om5",
        "ozone.metadata.dirs": str(cluster.data_dir / "om5"),
    }
    conf = ["--conf", str(cluster.conf_dir), *defines(values)]
    result = cluster.pyozone("om", *conf, "--bootstrap", timeout_s=120)
    assert result.code == 1, result
    assert "do not have or have incorrect information of the bootstrapping OM" in result.err, result
