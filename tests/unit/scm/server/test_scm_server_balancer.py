"""The admin service's Container Balancer calls on a live in-process SCM: start with Ozone's options (a
refusal answered with its reason), status and status info, stop."""

from __future__ import annotations

from pathlib import Path

from pyozone import protocol as p
from pyozone.hdds.balancer import BalancerStartOptions
from pyozone.proto import ScmAdminProtocol_pb2 as pb
from pyozone.protocol import admin_balancer as wire
from tests.unit.scm.server.scm_server_helpers import (
    FakeDatanode,
    admin_stub,
    async_test,
    channel,
    heartbeat_until,
    running_scm,
    scm_conf,
)


@async_test
async def test_start_status_stop(tmp_path: Path) -> None:
    conf = scm_conf(tmp_path, {"hdds.scm.safemode.min.datanode": "3"})
    async with (
        running_scm(conf) as scm,
        channel(scm.datanode_port) as dn_channel,
        channel(scm.client_port, p.MAX_ADMIN_MESSAGE_BYTES) as admin_channel,
    ):
        admin = admin_stub(admin_channel)
        in_safe_mode = await admin.startContainerBalancer(pb.StartContainerBalancerRequestProto())
        assert wire.start_result(in_safe_mode).started is False
        assert wire.start_result(in_safe_mode).message == "SCM is in safe mode"

        datanodes = [FakeDatanode(i, dn_channel) for i in (1, 2, 3)]
        for dn in datanodes:
            await dn.register()

        async def out_of_safe_mode() -> bool:
            return not (await admin.inSafeMode(pb.InSafeModeRequestProto())).inSafeMode

        await heartbeat_until(datanodes, out_of_safe_mode)

        unsupported = wire.start_request(BalancerStartOptions(network_topology_enable=True))
        refused = wire.start_result(await admin.startContainerBalancer(unsupported))
        assert not refused.started and "networkTopology.enable=true is not supported" in refused.message
        bad = wire.start_request(BalancerStartOptions(move_timeout_minutes=50))
        refused = wire.start_result(await admin.startContainerBalancer(bad))
        assert not refused.started and "move.replication.timeout should be less than" in refused.message
        assert not wire.status_running(
            await admin.getContainerBalancerStatus(pb.ContainerBalancerStatusRequestProto())
        )

        options = BalancerStartOptions(
            threshold=5.0,
            iterations=3,
            max_datanodes_percentage=100,
            max_size_entering_target_gb=30,
            exclude_datanodes="dn3.test",
        )
        started = wire.start_result(await admin.startContainerBalancer(wire.start_request(options)))
        assert started.started and started.message == ""
        assert wire.status_running(
            await admin.getContainerBalancerStatus(pb.ContainerBalancerStatusRequestProto())
        )
        info = wire.status_info(
            await admin.getContainerBalancerStatusInfo(pb.ContainerBalancerStatusInfoRequestProto())
        )
        assert info.running and info.started_at_s > 0
        config = info.configuration
        assert (config["utilizationThreshold"], config["iterations"]) == ("5.0", 3)
        assert (config["sizeEnteringTargetMax"], config["excludeDatanodes"]) == (30 << 30, "dn3.test")
        assert config["datanodesInvolvedMaxPercentagePerIteration"] == 100 and config["shouldRun"]
        again = wire.start_result(await admin.startContainerBalancer(wire.start_request(options)))
        assert not again.started and "actually RUNNING" in again.message

        await admin.stopContainerBalancer(pb.StopContainerBalancerRequestProto())
        status = await admin.getContainerBalancerStatusInfo(pb.ContainerBalancerStatusInfoRequestProto())
        stopped = wire.status_info(status)
        assert not stopped.running and stopped.stop_reason == "stopped by the operator"
        assert stopped.stopped_at_s >= stopped.started_at_s == info.started_at_s
        assert stopped.configuration["shouldRun"] is False
        assert scm.core.balancer.persisted()["shouldRun"] is False
