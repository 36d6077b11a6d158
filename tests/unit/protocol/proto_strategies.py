"""Hypothesis strategies for the values pyozone.protocol converts, and the wire round trip."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar

from google.protobuf.message import Message
from hypothesis import strategies as st

from pyozone.hdds.commands import (
    COMMAND_CLASSES,
    DeletedBlocksTransaction,
    ReconstructionSource,
    ReplicationCommandPriority,
    SCMCommand,
)
from pyozone.hdds.container import ContainerInfo, ContainerReplica
from pyozone.hdds.datanode import DatanodeDetails, LayoutVersion, NodeReport, StorageReport
from pyozone.hdds.ids import BlockID, ReplicationConfig
from pyozone.hdds.messages import (
    CommandStatusReport,
    ContainerAction,
    ContainerActionReason,
    ContainerReplicaReport,
    DeleteBlockTransactionResult,
    Heartbeat,
    PipelineAction,
    PipelineReport,
)
from pyozone.hdds.pipeline import Pipeline
from pyozone.hdds.safemode_status import RuleStatus
from pyozone.hdds.states import (
    CommandStatus,
    LifeCycleState,
    NodeOperationalState,
    NodeState,
    PipelineState,
    ReplicaState,
    ReplicationType,
    SCMCommandType,
)
from pyozone.protocol import (
    DatanodeListing,
    HeartbeatResponse,
    RegisterRequest,
    RegisterResponse,
    VersionResponse,
)

M = TypeVar("M", bound=Message)

INT64 = 2**63 - 1
UINT64 = 2**64 - 1
UINT32 = 2**32 - 1
INT32 = 2**31 - 1


def wire(message: M) -> M:
    """The message after a trip over the wire: serialized, then parsed into a fresh message."""
    return type(message).FromString(message.SerializeToString(deterministic=True))


names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)
any_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
uuids = st.uuids().map(str)
container_ids = st.integers(1, INT64)
int64s = st.integers(0, INT64)
uint64s = st.integers(0, UINT64)
uint32s = st.integers(0, UINT32)
tx_ids = st.integers(1, INT64)


@st.composite
def datanode_details(draw: Any, op_state: Any = None) -> DatanodeDetails:
    return DatanodeDetails(
        uuid=draw(uuids),
        hostname=draw(names),
        ip_address=draw(names),
        ports=tuple(draw(st.lists(st.tuples(names, st.integers(0, 65535)), max_size=4))),
        network_location=draw(st.sampled_from(["/default-rack", "/rack1", "/dc1/rack2"]) | names),
        persisted_op_state=draw(op_state or st.sampled_from(NodeOperationalState)),
        persisted_op_state_expiry=draw(int64s),
        version=draw(any_text),
    )


layouts = st.builds(LayoutVersion, uint32s, uint32s)
storage_reports = st.builds(StorageReport, names, names, uint64s, uint64s, uint64s, st.booleans())
metadata_storage_reports = st.builds(StorageReport, any_text, names, uint64s, uint64s, uint64s, st.booleans())
node_reports = st.builds(
    NodeReport,
    st.lists(storage_reports, max_size=4).map(tuple),
    st.lists(metadata_storage_reports, max_size=2).map(tuple),
)
replica_reports = st.builds(
    ContainerReplicaReport,
    container_id=container_ids,
    state=st.sampled_from(ReplicaState),
    sequence_id=uint64s,
    origin_node_id=uuids | st.just(""),
    key_count=int64s,
    used_bytes=int64s,
    replica_index=st.integers(0, INT32),
    is_empty=st.booleans(),
    data_checksum=uint64s,
)
container_actions = st.builds(ContainerAction, container_ids, st.sampled_from(ContainerActionReason))
pipeline_reports = st.builds(PipelineReport, uuids, st.booleans(), uint64s)
pipeline_actions = st.builds(PipelineAction, uuids, any_text)
delete_results = st.builds(DeleteBlockTransactionResult, tx_ids, container_ids, st.booleans())
command_statuses = st.builds(
    CommandStatusReport,
    command_id=tx_ids,
    type=st.sampled_from(SCMCommandType),
    status=st.sampled_from(CommandStatus),
    block_deletion_results=st.lists(delete_results, max_size=4).map(tuple),
)
queue_reports = st.dictionaries(st.sampled_from(SCMCommandType), uint32s, max_size=len(SCMCommandType))


def _tuples(strategy: Any, max_size: int = 4) -> Any:
    return st.lists(strategy, max_size=max_size).map(tuple)


@st.composite
def heartbeats(draw: Any) -> Heartbeat:
    """Consistent heartbeats: a reported operational state is the one in the datanode details."""
    details = draw(datanode_details())
    reports_op_state = draw(st.booleans())
    if not reports_op_state:
        details = replace(details, persisted_op_state=NodeOperationalState.IN_SERVICE)
    return Heartbeat(
        datanode=details,
        node_report=draw(st.none() | node_reports),
        container_report=draw(st.none() | _tuples(replica_reports)),
        incremental_container_reports=draw(_tuples(replica_reports)),
        command_status_reports=draw(_tuples(command_statuses)),
        container_actions=draw(_tuples(container_actions)),
        pipeline_actions=draw(_tuples(pipeline_actions)),
        pipeline_reports=draw(st.none() | _tuples(pipeline_reports)),
        layout=draw(st.none() | layouts),
        command_queue_report=draw(st.none() | queue_reports),
        persisted_op_state=details.persisted_op_state if reports_op_state else None,
    )


register_requests = st.builds(
    RegisterRequest,
    datanode=datanode_details(),
    node_report=st.none() | node_reports,
    container_report=_tuples(replica_reports),
    pipeline_reports=_tuples(pipeline_reports),
    layout=st.none() | layouts,
    setup_time_ms=int64s,
    revision=any_text,
)
register_responses = st.builds(RegisterResponse, names, uuids, any_text, any_text, any_text, any_text)
version_responses = st.builds(VersionResponse, names, uuids, layouts, uint32s)

# ------------------------------------------------------------------ replication configs
ratis_configs = st.builds(
    ReplicationConfig,
    st.sampled_from([ReplicationType.RATIS, ReplicationType.STAND_ALONE, ReplicationType.CHAINED]),
    st.sampled_from([1, 3]),
)
ec_configs = st.builds(
    ReplicationConfig,
    st.just(ReplicationType.EC),
    st.just(0),
    st.integers(1, 12),
    st.integers(1, 6),
    st.just("RS"),
    st.integers(1, 4096),
) | st.builds(
    ReplicationConfig,
    st.just(ReplicationType.EC),
    st.just(0),
    st.integers(1, 12),
    st.just(1),  # XOR has one parity
    st.just("XOR"),
    st.integers(1, 4096),
)
replication_configs = ratis_configs | ec_configs

# ------------------------------------------------------------------ commands


@st.composite
def _create_pipeline_fields(draw: Any) -> dict[str, Any]:
    members = draw(st.lists(datanode_details(), min_size=1, max_size=3, unique_by=lambda d: d.uuid))
    nodes = tuple(d.uuid for d in members)
    fields: dict[str, Any] = {
        "pipeline_id": draw(uuids),
        "replication_type": draw(st.sampled_from([ReplicationType.RATIS, ReplicationType.STAND_ALONE])),
        "factor": draw(st.sampled_from([1, 3])),
        "nodes": nodes,
        "suggested_leader": draw(st.none() | st.sampled_from(nodes)),
    }
    if draw(st.booleans()):
        # Members SCM could not resolve are None; a message naming no member in full has no `datanodes`.
        known = [m if draw(st.booleans()) else None for m in members]
        known[0] = members[0]
        fields["datanodes"] = tuple(known)
    return fields


_tuples_of_details = st.lists(datanode_details(), max_size=3).map(tuple)

_transactions = st.lists(
    st.builds(
        DeletedBlocksTransaction,
        tx_ids,
        container_ids,
        st.lists(tx_ids, max_size=5).map(tuple),
        st.integers(0, INT32),
    ),
    max_size=4,
).map(tuple)

FIELDS: dict[SCMCommandType, Any] = {
    SCMCommandType.reregisterCommand: st.just({}),
    SCMCommandType.deleteBlocksCommand: st.fixed_dictionaries({"transactions": _transactions}),
    SCMCommandType.closeContainerCommand: st.fixed_dictionaries(
        {"container_id": container_ids, "pipeline_id": st.none() | uuids, "force": st.booleans()}
    ),
    SCMCommandType.deleteContainerCommand: st.fixed_dictionaries(
        {"container_id": container_ids, "force": st.booleans(), "replica_index": st.integers(0, INT32)}
    ),
    SCMCommandType.replicateContainerCommand: st.fixed_dictionaries(
        {
            "container_id": container_ids,
            "target": datanode_details(),
            "sources": _tuples_of_details,
            "replica_index": st.integers(0, INT32),
            "priority": st.sampled_from(ReplicationCommandPriority),
        }
    ),
    SCMCommandType.createPipelineCommand: _create_pipeline_fields(),
    SCMCommandType.closePipelineCommand: st.fixed_dictionaries({"pipeline_id": uuids}),
    SCMCommandType.setNodeOperationalStateCommand: st.fixed_dictionaries(
        {"state": st.sampled_from(NodeOperationalState), "expiry_epoch_s": int64s}
    ),
    SCMCommandType.finalizeNewLayoutVersionCommand: st.just({}) | st.fixed_dictionaries({"layout": layouts}),
    SCMCommandType.refreshVolumeUsageInfo: st.just({}),
    SCMCommandType.reconstructECContainersCommand: st.fixed_dictionaries(
        {
            "container_id": container_ids,
            "sources": st.lists(
                st.builds(ReconstructionSource, datanode_details(), st.integers(1, 20)), max_size=3
            ).map(tuple),
            "targets": _tuples_of_details,
            "missing_indexes": st.binary(min_size=1, max_size=5),
            "replication_config": ec_configs,
        }
    ),
    SCMCommandType.reconcileContainerCommand: st.fixed_dictionaries(
        {"container_id": container_ids, "peers": _tuples_of_details}
    ),
}
"""Each command class's own fields, as keyword arguments."""


@st.composite
def scm_commands(draw: Any, command_type: SCMCommandType | None = None) -> SCMCommand:
    kind = command_type if command_type is not None else draw(st.sampled_from(SCMCommandType))
    return COMMAND_CLASSES[kind](
        **draw(FIELDS[kind]),
        term=draw(int64s),
        deadline_epoch_ms=draw(int64s),
        id=draw(tx_ids),
    )


heartbeat_responses = st.builds(
    HeartbeatResponse, uuids, st.lists(scm_commands(), max_size=4).map(tuple), int64s
)


# ------------------------------------------------------------------ admin
@st.composite
def pipelines(draw: Any) -> Pipeline:
    config = draw(replication_configs)
    # an EC pipeline has a member per replica index (member i holds index i + 1)
    size = config.required_nodes if config.type is ReplicationType.EC else draw(st.integers(1, 5))
    nodes = tuple(draw(st.lists(uuids, min_size=size, max_size=size, unique=True)))
    return Pipeline(
        id=draw(uuids),
        replication_config=config,
        state=draw(st.sampled_from(PipelineState)),
        nodes=nodes,
        created_ms=draw(uint64s),
        state_entered_ms=draw(uint64s),
        suggested_leader=draw(st.none() | st.sampled_from(nodes)),
        leader=draw(st.none() | st.sampled_from(nodes)),
    )


container_infos = st.builds(
    ContainerInfo,
    container_id=container_ids,
    state=st.sampled_from(LifeCycleState),
    state_entered_ms=int64s,
    pipeline_id=st.none() | uuids,
    replication_config=replication_configs,
    owner=any_text,
    used_bytes=uint64s,
    number_of_keys=uint64s,
    sequence_id=int64s,
    suppressed=st.booleans(),
)
container_replicas = st.builds(
    ContainerReplica,
    container_id=container_ids,
    datanode=uuids,
    state=st.sampled_from(ReplicaState),
    origin_node_id=uuids | st.just(""),
    sequence_id=int64s,
    key_count=int64s,
    bytes_used=int64s,
    replica_index=st.integers(0, INT64),
    is_empty=st.booleans(),
    data_checksum=uint64s,
)
datanode_listings = st.builds(
    DatanodeListing,
    details=datanode_details(),
    health=st.sampled_from(NodeState),
    operational_state=st.sampled_from(NodeOperationalState),
    op_state_expiry_epoch_sec=int64s,
    last_heartbeat_wall_ms=int64s,
    pipeline_count=uint32s,
    container_count=uint64s,
    capacity=uint64s,
    used=uint64s,
    remaining=uint64s,
    healthy_volumes=uint32s,
    failed_volumes=uint32s,
    layout=layouts,
)
rule_statuses = st.builds(RuleStatus, names, st.booleans(), st.booleans(), any_text)
block_ids = st.builds(BlockID, container_ids, st.integers(1, INT64))
