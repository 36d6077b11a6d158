"""ome and dne: echo load on OM and on one datanode, the RPC floor of each layer (Ozone's
OmRPCLoadGenerator and DNRPCLoadGenerator).

Neither touches a table or a container: OM answers echoRPC on its event loop, a datanode answers Echo
with no container work. Their rates are what a call to each daemon costs before any work, the figure
omkg and ockg are measured against.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from pyozone.client import OzoneClient, OzoneClientError
from pyozone.framework.datanode import DatanodeCallError, XceiverStream
from pyozone.freon.report import FreonReport
from pyozone.freon.runner import Load, Progress, Run, run, run_tasks
from pyozone.hdds.ids import RATIS_THREE
from pyozone.hdds.locations import DatanodeRef
from pyozone.hdds.states import PipelineState
from pyozone.protocol.admin_records import PipelineView
from pyozone.protocol.locations import DATA_PORT


@dataclass(frozen=True, slots=True)
class EchoOptions:
    """`payload_req` bytes to the daemon and `payload_resp` bytes back per call (each at most
    MAX_ECHO_PAYLOAD_BYTES); `number` None: no cap (the run ends at `duration_s` or when stopped)."""

    payload_req: int = 0
    payload_resp: int = 0
    number: int | None = 1000
    threads: int = 10
    duration_s: float | None = None

    @property
    def load(self) -> Load:
        return Load(self.number, self.threads, self.duration_s)


def _answered(payload: bytes, options: EchoOptions) -> int:
    """The bytes one echo moved, both ways; ValueError when the answer is not the size asked for."""
    if len(payload) != options.payload_resp:
        raise ValueError(f"{len(payload)} bytes came back, {options.payload_resp} were asked for")
    return options.payload_req + len(payload)


def _echo_run(tool: str, failures: tuple[type[Exception], ...]) -> Run:
    return Run(tool, "ops", (*failures, ValueError), lambda index: f"echo {index}")


def om_echo(
    client: OzoneClient,
    options: EchoOptions,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> FreonReport:
    """ome: echoRPC calls to OM."""
    payload = bytes(options.payload_req)

    async def one(index: int) -> int:
        return _answered(await client.async_client.om.echo(payload, options.payload_resp), options)

    return run_tasks(_echo_run("ome", (OzoneClientError,)), options.load, one, client.submit, progress, stop)


def pipeline_datanode(
    pipelines: list[PipelineView], pipeline_id: str | None = None
) -> tuple[str, DatanodeRef]:
    """The pipeline dne echoes through and the member it calls: `pipeline_id`'s, else the first OPEN
    RATIS/THREE pipeline (else any OPEN one); its leader, else its suggested leader, else its first member.
    ValueError when there is none, or the member's data port is unknown."""
    if pipeline_id:
        chosen = [v for v in pipelines if v.pipeline.id == pipeline_id]
        if not chosen:
            raise ValueError(f"SCM knows no pipeline {pipeline_id}")
    else:
        open_ = [v for v in pipelines if v.pipeline.state is PipelineState.OPEN and v.pipeline.nodes]
        chosen = [v for v in open_ if v.pipeline.replication_config == RATIS_THREE] or open_
        if not chosen:
            raise ValueError("SCM has no OPEN pipeline yet (is the cluster out of safe mode?)")
    view = chosen[0]
    pipeline = view.pipeline
    member = pipeline.leader or pipeline.suggested_leader or pipeline.nodes[0]
    details = view.members.get(member)
    port = details.port(DATA_PORT) if details is not None else None
    if details is None or port is None:
        raise ValueError(f"SCM does not say where datanode {member} of pipeline {pipeline.id} listens")
    return pipeline.id, DatanodeRef(details.uuid, details.hostname, details.ip_address, port)


def datanode_echo(
    client: OzoneClient,
    datanode: DatanodeRef,
    options: EchoOptions,
    pipeline_id: str = "",
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> FreonReport:
    """dne: Echo requests to one datanode's data port, each thread on its own stream (as T clients)."""
    payload = bytes(options.payload_req)
    timeout_s = client.config.request_timeout_s
    local = threading.local()
    streams: list[XceiverStream] = []

    async def open_stream() -> XceiverStream:
        return XceiverStream(client.async_client.pool, datanode, timeout_s)

    def one(index: int) -> int:
        stream = getattr(local, "stream", None)
        if stream is None:
            stream = local.stream = client.run(open_stream())
            streams.append(stream)
        try:
            answer = client.run(stream.echo(payload, options.payload_resp, pipeline_id))
        except DatanodeCallError as e:
            if e.unreachable:  # a broken stream answers nothing more: the thread's next echo dials again
                local.stream = None
            raise
        return _answered(answer, options)

    try:
        return run(_echo_run("dne", (DatanodeCallError,)), options.load, one, progress, stop)
    finally:
        for stream in streams:
            client.run(stream.close())
