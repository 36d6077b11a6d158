"""The admin protocol's Container Balancer messages (protocol/admin_balancer.py) both ways: a start carries
only the options given, a status info its configuration and iterations whole, an unknown iteration
result is refused."""

from __future__ import annotations

import pytest

from pyozone.hdds.balancer import (
    BalancerStartOptions,
    BalancerStartResult,
    BalancerStatusInfo,
    IterationResult,
    IterationStatus,
)
from pyozone.hdds.errors import ProtocolError
from pyozone.proto import ScmAdminProtocol_pb2 as pb
from pyozone.protocol import admin_balancer as wire
from pyozone.scm.balancer.config import ContainerBalancerConfiguration


def test_start_request_carries_only_the_options_given() -> None:
    options = BalancerStartOptions(threshold=0.0, network_topology_enable=False, include_datanodes="a,b")
    request = wire.start_request(options)
    assert request.HasField("threshold") and not request.HasField("iterations")
    assert wire.start_options(request) == options
    assert wire.start_options(pb.StartContainerBalancerRequestProto()) == BalancerStartOptions()
    every = BalancerStartOptions(5.5, -1, 50, 100, 30, 20, 20, 60, 40, True, "dn1", "dn2")
    assert wire.start_options(pb.StartContainerBalancerRequestProto.FromString(
        wire.start_request(every).SerializeToString()
    )) == every  # fmt: skip


def test_start_response() -> None:
    for result in (BalancerStartResult(True), BalancerStartResult(False, "SCM is in safe mode")):
        assert wire.start_result(wire.start_response(result)) == result
    assert not wire.start_response(BalancerStartResult(True)).HasField("message")


def test_status_info_round_trip() -> None:
    record = ContainerBalancerConfiguration().to_record(should_run=True, next_iteration_index=2)
    done = IterationStatus(1, IterationResult.ITERATION_COMPLETED, 600, 4, 3, 1, 0, 4 << 30, 3 << 30, 2,
                           {"dn-b": 4 << 30}, {"dn-a": 4 << 30})  # fmt: skip
    running = IterationStatus(2, None, 5, 1, 0, 0, 0, 1 << 30, 0, 2)
    info = BalancerStatusInfo(True, 1_700_000_000, record, (done, running))
    proto = wire.status_info_response(info)
    again = pb.ContainerBalancerStatusInfoResponseProto.FromString(proto.SerializeToString())
    assert wire.status_info(again) == info
    assert wire.status_info(wire.status_info_response(BalancerStatusInfo(False))) == BalancerStatusInfo(False)
    stopped = BalancerStatusInfo(
        False, 1_700_000_000, record, (done,), 1_700_000_900, "stopped by the operator"
    )
    assert wire.status_info(wire.status_info_response(stopped)) == stopped


def test_running_without_its_run_is_refused() -> None:
    with pytest.raises(ProtocolError, match="containerBalancerStatusInfo"):
        wire.status_info(pb.ContainerBalancerStatusInfoResponseProto(isRunning=True))


def test_unknown_iteration_result_is_refused() -> None:
    proto = wire.status_info_response(
        BalancerStatusInfo(True, 1, ContainerBalancerConfiguration().to_record(True, 0), ())
    )
    proto.containerBalancerStatusInfo.iterationsStatusInfo.add(iterationNumber=1, iterationResult="DONE")
    with pytest.raises(ProtocolError, match="iterationResult"):
        wire.status_info(proto)
