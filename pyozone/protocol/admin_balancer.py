"""The admin protocol's Container Balancer calls (Ozone's startContainerBalancer, stopContainerBalancer,
getContainerBalancerStatus and getContainerBalancerStatusInfo): their requests and answers, built here
once for SCM's AdminService and the framework's ScmAdminClient."""

from __future__ import annotations

from typing import Any

from pyozone.hdds.balancer import (
    BalancerStartOptions,
    BalancerStartResult,
    BalancerStatusInfo,
    IterationResult,
    IterationStatus,
)
from pyozone.hdds.errors import ProtocolError
from pyozone.proto import ScmAdminProtocol_pb2 as admin_pb2

_START_FIELDS = (
    ("threshold", "threshold"),
    ("iterations", "iterations"),
    ("max_datanodes_percentage", "maxDatanodesPercentageToInvolvePerIteration"),
    ("max_size_to_move_per_iteration_gb", "maxSizeToMovePerIterationInGB"),
    ("max_size_entering_target_gb", "maxSizeEnteringTargetInGB"),
    ("max_size_leaving_source_gb", "maxSizeLeavingSourceInGB"),
    ("balancing_interval_minutes", "balancingInterval"),
    ("move_timeout_minutes", "moveTimeout"),
    ("move_replication_timeout_minutes", "moveReplicationTimeout"),
    ("network_topology_enable", "networkTopologyEnable"),
    ("include_datanodes", "includeNodes"),
    ("exclude_datanodes", "excludeNodes"),
)
"""BalancerStartOptions' fields and the request's, in order."""


def start_request(options: BalancerStartOptions) -> admin_pb2.StartContainerBalancerRequestProto:
    proto = admin_pb2.StartContainerBalancerRequestProto()
    for ours, theirs in _START_FIELDS:
        value = getattr(options, ours)
        if value is not None:
            setattr(proto, theirs, value)
    return proto


def start_options(proto: admin_pb2.StartContainerBalancerRequestProto) -> BalancerStartOptions:
    return BalancerStartOptions(
        **{ours: getattr(proto, theirs) if proto.HasField(theirs) else None for ours, theirs in _START_FIELDS}
    )


def start_response(result: BalancerStartResult) -> admin_pb2.StartContainerBalancerResponseProto:
    proto = admin_pb2.StartContainerBalancerResponseProto(start=result.started)
    if result.message:
        proto.message = result.message
    return proto


def start_result(proto: admin_pb2.StartContainerBalancerResponseProto) -> BalancerStartResult:
    return BalancerStartResult(proto.start, proto.message if proto.HasField("message") else "")


def status_response(running: bool) -> admin_pb2.ContainerBalancerStatusResponseProto:
    return admin_pb2.ContainerBalancerStatusResponseProto(isRunning=running)


def status_running(proto: admin_pb2.ContainerBalancerStatusResponseProto) -> bool:
    return proto.isRunning


def _iteration_to_proto(status: IterationStatus) -> admin_pb2.ContainerBalancerTaskIterationStatusInfoProto:
    def transfers(sizes: dict[str, int]) -> list[admin_pb2.NodeTransferInfoProto]:
        return [
            admin_pb2.NodeTransferInfoProto(uuid=dn, dataVolume=size) for dn, size in sorted(sizes.items())
        ]

    return admin_pb2.ContainerBalancerTaskIterationStatusInfoProto(
        iterationNumber=status.number,
        iterationResult="" if status.result is None else status.result.value,
        sizeScheduledForMove=status.size_scheduled,
        dataSizeMoved=status.size_moved,
        containerMovesScheduled=status.moves_scheduled,
        containerMovesCompleted=status.moves_completed,
        containerMovesFailed=status.moves_failed,
        containerMovesTimeout=status.moves_timed_out,
        sizeEnteringNodes=transfers(status.size_entering),
        sizeLeavingNodes=transfers(status.size_leaving),
        iterationDuration=status.duration_s,
        datanodesInvolved=status.datanodes_involved,
    )


def _iteration_from_proto(proto: admin_pb2.ContainerBalancerTaskIterationStatusInfoProto) -> IterationStatus:
    try:
        result = IterationResult(proto.iterationResult) if proto.iterationResult else None
    except ValueError:
        raise ProtocolError("iterationResult", f"unknown result {proto.iterationResult!r}") from None
    return IterationStatus(
        proto.iterationNumber,
        result,
        proto.iterationDuration,
        proto.containerMovesScheduled,
        proto.containerMovesCompleted,
        proto.containerMovesFailed,
        proto.containerMovesTimeout,
        proto.sizeScheduledForMove,
        proto.dataSizeMoved,
        proto.datanodesInvolved,
        {n.uuid: n.dataVolume for n in proto.sizeEnteringNodes},
        {n.uuid: n.dataVolume for n in proto.sizeLeavingNodes},
    )


def status_info_response(info: BalancerStatusInfo) -> admin_pb2.ContainerBalancerStatusInfoResponseProto:
    proto = admin_pb2.ContainerBalancerStatusInfoResponseProto(isRunning=info.running)
    if info.has_run:
        proto.containerBalancerStatusInfo.CopyFrom(
            admin_pb2.ContainerBalancerStatusInfoProto(
                startedAt=info.started_at_s,
                configuration=admin_pb2.ContainerBalancerConfigurationProto(**info.configuration),
                iterationsStatusInfo=[_iteration_to_proto(s) for s in info.iterations],
                stoppedAt=info.stopped_at_s,
                stopReason=info.stop_reason,
            )
        )
    return proto


def status_info(proto: admin_pb2.ContainerBalancerStatusInfoResponseProto) -> BalancerStatusInfo:
    if not proto.HasField("containerBalancerStatusInfo"):
        if proto.isRunning:
            raise ProtocolError("containerBalancerStatusInfo", "a running balancer without its run")
        return BalancerStatusInfo(False)
    body = proto.containerBalancerStatusInfo
    configuration: dict[str, Any] = {
        field.name: getattr(body.configuration, field.name) for field in body.configuration.DESCRIPTOR.fields
    }
    return BalancerStatusInfo(
        proto.isRunning,
        body.startedAt,
        configuration,
        tuple(_iteration_from_proto(s) for s in body.iterationsStatusInfo),
        body.stoppedAt if body.HasField("stoppedAt") else None,
        body.stopReason if body.HasField("stopReason") else None,
    )
