"""In-process fakes of OM and of pipeline datanodes, on real pyozone.rpc servers on 127.0.0.1 (each
datanode's on the process's RPC loop thread).

FakeCluster starts one XceiverClientProtocolService server per datanode and groups them into RATIS/THREE
pipelines; the leader of a pipeline plays the pipeline log: it orders writeChunk/putBlock, copies them
to every live follower and answers a putBlock with its log index and commitInfos. By default the
commitInfos show the followers one step behind (as a Ratis leader usually reports), so the client must
send WatchForCommit, which answers SUCCESS when every member (MAJORITY_COMMITTED: a majority) applied the
index and NOT_REPLICATED (with the real commitInfos) otherwise.

Faults: `fail_next(TYPE, RESULT)` answers the next request of that type with RESULT; `lag()` makes a
member stop applying entries (a failed follower); `stop()` stops a datanode's server (UNAVAILABLE);
`corrupt(container, local, mode)` makes ReadChunk and GetSmallFile return flipped bytes ("bytes") or
CHECKSUM_MISMATCH; setting a pipeline's `leader_at` changes its leader (the other members answer
NOT_LEADER naming it); `step_down(to, refusals)` makes every member refuse the next writes NOT_LEADER naming
none (an election) or a stale leader, then `to` leads.

FakeOM is dict-backed and implements the OmClientProtocol calls the client uses, with Ozone's error
codes in the status details, SCM's block allocation honouring the exclude list (UNAVAILABLE, as OM answers
SCM's FAILED_TO_FIND_ACTIVE_PIPELINE, when every pipeline is excluded: SCM forms a new one on datanodes
that are not excluded at once unless `replace_excluded` is off, then only once a test calls `add_pipeline`),
and a record of every commitKey for assertions.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import NoReturn

from pyozone import rpc
from pyozone.config import OzoneConfiguration
from pyozone.framework.om import OM_SERVICE
from pyozone.hdds.limits import MAX_DATA_MESSAGE_BYTES
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from pyozone.proto import OmClientProtocol_pb2 as om
from pyozone.proto import ScmBlockLocationProtocol_pb2 as block_pb
from pyozone.proto import hdds_pb2
from pyozone.protocol.ratis import not_leader
from pyozone.rpc.sync import run_sync
from tests.rpc_threads import ThreadedRpcServer

KB = 1024
BUFFER = 4 * KB  # one chunk
FLUSH = 8 * KB  # a putBlock every two chunks
MAX = 16 * KB  # four chunks unacknowledged at most
BLOCK = 32 * KB  # eight chunks per block
BPC = 1 * KB

SMALL = {
    "ozone.client.stream.buffer.size": f"{BUFFER}",
    "ozone.client.stream.buffer.flush.size": f"{FLUSH}",
    "ozone.client.stream.buffer.max.size": f"{MAX}",
    "ozone.client.bytes.per.checksum": f"{BPC}",
    "ozone.scm.block.size": f"{BLOCK}",
    "ozone.client.read.retry.interval": "0",
    "hdds.ratis.client.exponential.backoff.base.sleep": "10ms",
    "hdds.ratis.client.exponential.backoff.max.sleep": "40ms",
}


def small_conf(om_address: str, extra: dict[str, str] | None = None) -> OzoneConfiguration:
    """Small buffers and blocks (so every boundary is cheap to cross) pointed at `om_address`."""
    return OzoneConfiguration({**SMALL, "ozone.om.address": om_address, **(extra or {})})


@dataclass
class Fault:
    after: int
    result: int
    message: str
    behind: tuple[str, ...] = ()


XCEIVER = rpc.service(pb, "XceiverClientProtocolService")


class FakeDatanode:
    def __init__(self, cluster: FakeCluster, index: int) -> None:
        self.cluster = cluster
        self.uuid = str(uuid.UUID(int=index + 1))
        self.name = f"dn{index + 1}"
        self.chunks: dict[tuple[int, int, str], bytes] = {}
        self.blocks: dict[tuple[int, int], pb.BlockData] = {}
        self.applied: dict[str, int] = defaultdict(int)  # pipeline id -> last applied log index
        self.received: dict[tuple[int, int], int] = defaultdict(int)  # writeChunk bytes as leader
        self.offsets: dict[tuple[int, int], list[int]] = defaultdict(list)  # writeChunk offsets as leader
        self.requests: list[int] = []  # cmdTypes received
        self.watch_levels: list[int] = []  # the replication level of each WatchForCommit received
        self.streams = 0  # send() streams clients opened
        self.faults: dict[int, list[Fault]] = defaultdict(list)
        self.corrupted: dict[tuple[int, int], str] = {}
        self.lagging = False
        self.small_files = 0  # putSmallFiles: a block's only chunk and its putBlock in one request
        self.stopped = False
        self.server = rpc.Server(rpc.ServerSettings(MAX_DATA_MESSAGE_BYTES))
        self.server.add_service(XCEIVER, self)
        self.port: int = run_sync(self.server.start("127.0.0.1", 0), 10)

    @property
    def alive(self) -> bool:
        return not self.stopped and not self.lagging

    def proto(self) -> hdds_pb2.DatanodeDetailsProto:
        return hdds_pb2.DatanodeDetailsProto(
            uuid=self.uuid,
            ipAddress="127.0.0.1",
            hostName=self.name,
            ports=[hdds_pb2.Port(name="STANDALONE", value=self.port)],
        )

    # ------------------------------------------------------------------ faults
    def fail_next(
        self, kind: int, result: int, times: int = 1, after: int = 0, behind: tuple[str, ...] = ()
    ) -> None:
        """Answers `times` requests of type `kind` with `result`, after letting `after` of them through.
        A NOT_REPLICATED answer reports the members in `behind` one index short of the watched one, and
        they apply nothing from then on (a failed follower)."""
        for _ in range(times):
            self.faults[kind].append(Fault(after, result, "injected", behind))

    def lag(self) -> None:
        self.lagging = True

    def stop(self) -> None:
        self.stopped = True
        run_sync(self.server.stop(0), 10)

    def corrupt(self, container_id: int, local_id: int, mode: str = "bytes") -> None:
        self.corrupted[(container_id, local_id)] = mode

    # ------------------------------------------------------------------ service
    async def send(self, request_iterator, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            self.streams += 1
        async for request in request_iterator:
            response = self.handle(request)
            response.cmdType = request.cmdType
            yield response

    def handle(self, request: pb.ContainerCommandRequestProto) -> pb.ContainerCommandResponseProto:
        cluster = self.cluster
        with cluster.lock:
            self.requests.append(request.cmdType)
            if request.cmdType == pb.WatchForCommit:
                self.watch_levels.append(request.watchForCommit.replication)
            queued = self.faults.get(request.cmdType)
            if queued and queued[0].after > 0:
                for fault in queued:
                    fault.after = max(0, fault.after - 1)
            elif queued:
                fault = queued.pop(0)
                answer = pb.ContainerCommandResponseProto(result=fault.result, message=fault.message)
                if fault.result == pb.NOT_REPLICATED:
                    index = request.watchForCommit.index
                    for info in cluster.pipelines[request.pipelineID].commit_infos():
                        if info.datanodeUuid in fault.behind:  # it failed: it applies nothing more
                            info.commitIndex = min(info.commitIndex, index - 1)
                            cluster.datanode(info.datanodeUuid).lag()
                        answer.commitInfos.append(info)
                return answer
            kind = request.cmdType
            if kind in (pb.WriteChunk, pb.PutBlock, pb.PutSmallFile, pb.WatchForCommit):
                return self._write_path(request)
            if kind == pb.GetBlock:
                return self._get_block(request)
            if kind == pb.ReadChunk:
                return self._read_chunk(request)
            if kind == pb.GetSmallFile:
                return self._get_small_file(request)
            return pb.ContainerCommandResponseProto(result=pb.UNSUPPORTED_REQUEST, message="fake")

    def _write_path(self, request: pb.ContainerCommandRequestProto) -> pb.ContainerCommandResponseProto:
        pipeline = self.cluster.pipelines.get(request.pipelineID)
        if pipeline is None or self not in pipeline.members:
            return pb.ContainerCommandResponseProto(result=pb.GROUP_MISMATCH, message=request.pipelineID)
        if pipeline.refusals:
            pipeline.refusals -= 1
            if not pipeline.refusals:
                pipeline.leader_at = pipeline.next_leader
            return not_leader(request, pipeline.id, self.uuid, pipeline.stale)
        if pipeline.leader is not self:
            return not_leader(request, pipeline.id, self.uuid, pipeline.leader.uuid)
        if request.cmdType == pb.WatchForCommit:
            index = request.watchForCommit.index
            infos = pipeline.commit_infos()
            done = sum(i.commitIndex >= index for i in infos)
            majority = request.watchForCommit.replication == pb.MAJORITY_COMMITTED
            if done == len(infos) or (majority and done > len(infos) // 2):
                return pb.ContainerCommandResponseProto(
                    result=pb.SUCCESS, watchForCommit=pb.WatchForCommitResponseProto(index=index)
                )
            answer = pb.ContainerCommandResponseProto(result=pb.NOT_REPLICATED, message=f"index {index}")
            answer.commitInfos.extend(infos)
            return answer
        cid = request.containerID
        if self.cluster.container_state.get(cid, "OPEN") != "OPEN":
            return pb.ContainerCommandResponseProto(result=pb.CLOSED_CONTAINER_IO, message=f"container {cid}")
        live = [m for m in pipeline.members if m.alive]
        if len(live) <= len(pipeline.members) // 2:
            return pb.ContainerCommandResponseProto(result=pb.RAFT_RETRY_FAILURE, message="no majority")
        if request.cmdType == pb.WriteChunk:
            body = request.writeChunk
            key = (body.blockID.containerID, body.blockID.localID)
            self.received[key] += len(body.data)
            self.offsets[key].append(body.chunkData.offset)
            for member in live:
                member.chunks[(*key, body.chunkData.chunkName)] = body.data
            return pb.ContainerCommandResponseProto(
                result=pb.SUCCESS, writeChunk=pb.WriteChunkResponseProto()
            )
        if request.cmdType == pb.PutSmallFile:
            small = request.putSmallFile
            block_id = small.block.blockData.blockID
            key = (block_id.containerID, block_id.localID)
            self.received[key] += len(small.data)
            for member in live:
                member.chunks[(*key, small.chunkInfo.chunkName)] = small.data
            self.small_files += 1
        # PutBlock (or a putSmallFile's): the next log index, applied by every live member
        put = request.putSmallFile.block if request.cmdType == pb.PutSmallFile else request.putBlock
        pipeline.index += 1
        index = pipeline.index
        data = pb.BlockData()
        data.CopyFrom(put.blockData)
        data.blockID.blockCommitSequenceId = index
        for member in live:
            member.blocks[(data.blockID.containerID, data.blockID.localID)] = data
            member.applied[pipeline.id] = index
        infos = pipeline.commit_infos()
        if not self.cluster.instant_commit:  # followers reported one step behind: the client must watch
            for info in infos:
                if info.datanodeUuid != self.uuid:
                    info.commitIndex = min(info.commitIndex, index - 1)
        length = pb.GetCommittedBlockLengthResponseProto(blockID=data.blockID, blockLength=data.size)
        answer = pb.ContainerCommandResponseProto(result=pb.SUCCESS, logIndex=index)
        if request.cmdType == pb.PutSmallFile:
            answer.putSmallFile.committedBlockLength.CopyFrom(length)
        else:
            answer.putBlock.committedBlockLength.CopyFrom(length)
        answer.commitInfos.extend(infos)
        return answer

    def _get_block(self, request: pb.ContainerCommandRequestProto) -> pb.ContainerCommandResponseProto:
        bid = request.getBlock.blockID
        block = self.blocks.get((bid.containerID, bid.localID))
        if block is None:
            return pb.ContainerCommandResponseProto(result=pb.NO_SUCH_BLOCK, message=f"{bid.localID}")
        if bid.blockCommitSequenceId > block.blockID.blockCommitSequenceId:
            return pb.ContainerCommandResponseProto(result=pb.BCSID_MISMATCH, message="behind")
        return pb.ContainerCommandResponseProto(
            result=pb.SUCCESS, getBlock=pb.GetBlockResponseProto(blockData=block)
        )

    def _get_small_file(self, request: pb.ContainerCommandRequestProto) -> pb.ContainerCommandResponseProto:
        """The block's chunks in one answer, with its last chunk's info (Ozone's handleGetSmallFile)."""
        found = self._get_block(pb.ContainerCommandRequestProto(getBlock=request.getSmallFile.block))
        if found.result != pb.SUCCESS:
            return found
        block = found.getBlock.blockData
        key = (block.blockID.containerID, block.blockID.localID)
        data = b"".join(self.chunks[(*key, c.chunkName)] for c in block.chunks)
        mode = self.corrupted.get(key)
        if mode == "checksum":
            return pb.ContainerCommandResponseProto(result=pb.CHECKSUM_MISMATCH, message="damaged replica")
        if mode == "bytes":
            data = bytes(b ^ 0xFF for b in data)
        answer = pb.ReadChunkResponseProto(blockID=request.getSmallFile.block.blockID, data=data)
        if block.chunks:
            answer.chunkData.CopyFrom(block.chunks[-1])
        return pb.ContainerCommandResponseProto(
            result=pb.SUCCESS, getSmallFile=pb.GetSmallFileResponseProto(data=answer)
        )

    def _read_chunk(self, request: pb.ContainerCommandRequestProto) -> pb.ContainerCommandResponseProto:
        body = request.readChunk
        key = (body.blockID.containerID, body.blockID.localID)
        block = self.blocks.get(key)
        wanted = body.chunkData
        stored = next((c for c in block.chunks if c.chunkName == wanted.chunkName), None) if block else None
        data = self.chunks.get((*key, wanted.chunkName))
        if stored is None or data is None:
            return pb.ContainerCommandResponseProto(result=pb.UNABLE_TO_FIND_CHUNK, message=wanted.chunkName)
        mode = self.corrupted.get(key)
        if mode == "checksum":
            return pb.ContainerCommandResponseProto(result=pb.CHECKSUM_MISMATCH, message="damaged replica")
        skip = wanted.offset - stored.offset
        piece = data[skip : skip + wanted.len]
        if mode == "bytes":
            piece = bytes(b ^ 0xFF for b in piece)
        answer = pb.ReadChunkResponseProto(blockID=body.blockID, chunkData=wanted, data=piece)
        return pb.ContainerCommandResponseProto(result=pb.SUCCESS, readChunk=answer)


@dataclass(eq=False)
class FakePipeline:
    id: str
    members: list[FakeDatanode]
    index: int = 0
    leader_at: int = 0
    """Which member leads; a test that changes it makes the others answer NOT_LEADER naming it."""
    refusals: int = 0
    """Write-path requests every member still refuses NOT_LEADER naming `stale` (step_down)."""
    stale: str | None = None
    next_leader: int = 0

    def step_down(self, to: int, refusals: int, naming: str | None = None) -> None:
        """The leader steps down: the next `refusals` write-path requests, at any member, are refused
        NOT_LEADER naming `naming` (None: no leader known, a vote going on; else a leader the members still
        believe in), then member `to` leads."""
        with self.members[0].cluster.lock:
            self.refusals, self.stale, self.next_leader = refusals, naming, to

    @property
    def leader(self) -> FakeDatanode:
        return self.members[self.leader_at]

    def commit_infos(self) -> list[pb.CommitInfoProto]:
        return [pb.CommitInfoProto(datanodeUuid=m.uuid, commitIndex=m.applied[self.id]) for m in self.members]

    def proto(self) -> hdds_pb2.Pipeline:
        return hdds_pb2.Pipeline(
            members=[m.proto() for m in self.members],
            state=hdds_pb2.PIPELINE_OPEN,
            type=hdds_pb2.RATIS,
            factor=hdds_pb2.THREE,
            id=hdds_pb2.PipelineID(id=self.id),
            leaderID=self.leader.uuid,
        )


@dataclass
class OpenKey:
    volume: str
    bucket: str
    key: str
    blocks: set[tuple[int, int]] = field(default_factory=set)


def _abort(context: rpc.CallContext, status: rpc.StatusCode, code: str, message: str) -> NoReturn:
    raise rpc.AbortError(status, f"{code}: {message}")


class FakeOM:
    def __init__(self, cluster: FakeCluster, block_size: int) -> None:
        self.cluster = cluster
        self.block_size = block_size
        self.volumes: dict[str, om.VolumeInfo] = {}
        self.buckets: dict[tuple[str, str], om.BucketInfo] = {}
        self.keys: dict[tuple[str, str, str], om.KeyInfo] = {}
        self.lookups_forced: list[bool] = []
        self.open_keys: dict[int, OpenKey] = {}
        self.commits: list[om.CommitKeyRequest] = []
        self.allocations: list[block_pb.ExcludeListProto] = []  # exclude list of every allocateBlock
        self.safe_mode = False
        self.safe_mode_answers = 0  # answer this many block allocations SCM_IN_SAFE_MODE
        self.unavailable = 0  # answer this many block allocations UNAVAILABLE
        self.commit_unavailable = 0  # answer this many commitKeys UNAVAILABLE (OM restarting)
        self.commit_answer_lost = 0  # commit this many commitKeys, then answer UNAVAILABLE (the answer lost)
        self.commit_hang_s = 0.0  # answer every commitKey only this late, and UNAVAILABLE (OM stopped, hung)
        self.replace_excluded = True
        self.no_suitable_node = False  # with every pipeline excluded, refuse as SCM's placement does
        self._ids = itertools.count(1)
        self._local_ids = itertools.count(1001)
        self._next_pipeline = 0
        self._open_container: dict[str, int] = {}
        self.server = ThreadedRpcServer(OM_SERVICE, self, rpc.ServerSettings(MAX_DATA_MESSAGE_BYTES))
        self.port = self.server.port

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _now(self) -> int:
        return int(time.time() * 1000)

    # ------------------------------------------------------------------ volumes and buckets
    def _volume(self, name: str, context: rpc.CallContext) -> om.VolumeInfo:
        if name not in self.volumes:
            _abort(context, rpc.StatusCode.NOT_FOUND, "VOLUME_NOT_FOUND", f"volume {name}")
        return self.volumes[name]

    def _bucket(self, volume: str, bucket: str, context: rpc.CallContext) -> om.BucketInfo:
        self._volume(volume, context)
        if (volume, bucket) not in self.buckets:
            _abort(context, rpc.StatusCode.NOT_FOUND, "BUCKET_NOT_FOUND", f"bucket {volume}/{bucket}")
        return self.buckets[(volume, bucket)]

    def createVolume(self, request, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            if not 3 <= len(request.volume) <= 63 or not request.volume.islower():
                _abort(context, rpc.StatusCode.INVALID_ARGUMENT, "INVALID_VOLUME_NAME", request.volume)
            if request.volume in self.volumes:
                _abort(context, rpc.StatusCode.ALREADY_EXISTS, "VOLUME_ALREADY_EXISTS", request.volume)
            now = self._now()
            info = om.VolumeInfo(
                volume=request.volume, owner=request.owner, admin=request.owner,
                creationTime=now, modificationTime=now, quotaInBytes=request.quotaInBytes,
                quotaInNamespace=request.quotaInNamespace,
            )  # fmt: skip
            self.volumes[request.volume] = info
            return om.CreateVolumeResponse(volume=info)

    def infoVolume(self, request, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            return om.InfoVolumeResponse(volume=self._volume(request.volume, context))

    def deleteVolume(self, request, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            self._volume(request.volume, context)
            if any(v == request.volume for v, _ in self.buckets):
                _abort(context, rpc.StatusCode.FAILED_PRECONDITION, "VOLUME_NOT_EMPTY", request.volume)
            del self.volumes[request.volume]
            return om.DeleteVolumeResponse()

    def listVolumes(self, request, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            names = sorted(n for n in self.volumes if n.startswith(request.prefix) and n > request.startKey)
            return om.ListVolumesResponse(volumes=[self.volumes[n] for n in names[: request.maxKeys or 1000]])

    def createBucket(self, request, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            volume = self._volume(request.volume, context)
            if len(request.bucket) < 3:
                _abort(context, rpc.StatusCode.INVALID_ARGUMENT, "INVALID_BUCKET_NAME", request.bucket)
            if (request.volume, request.bucket) in self.buckets:
                _abort(context, rpc.StatusCode.ALREADY_EXISTS, "BUCKET_ALREADY_EXISTS", request.bucket)
            now = self._now()
            info = om.BucketInfo(
                volume=request.volume, bucket=request.bucket, creationTime=now, modificationTime=now,
                type=request.type or hdds_pb2.RATIS, factor=request.factor or hdds_pb2.THREE,
                layout="OBJECT_STORE", owner=volume.owner,
            )  # fmt: skip
            self.buckets[(request.volume, request.bucket)] = info
            return om.CreateBucketResponse(bucket=info)

    def infoBucket(self, request, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            return om.InfoBucketResponse(bucket=self._bucket(request.volume, request.bucket, context))

    def deleteBucket(self, request, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            self._bucket(request.volume, request.bucket, context)
            if any((v, b) == (request.volume, request.bucket) for v, b, _ in self.keys):
                _abort(context, rpc.StatusCode.FAILED_PRECONDITION, "BUCKET_NOT_EMPTY", request.bucket)
            del self.buckets[(request.volume, request.bucket)]
            return om.DeleteBucketResponse()

    def listBuckets(self, request, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            self._volume(request.volume, context)
            names = sorted(
                b for v, b in self.buckets
                if v == request.volume and b.startswith(request.prefix) and b > request.startKey
            )  # fmt: skip
            found = [self.buckets[(request.volume, n)] for n in names[: request.maxKeys or 1000]]
            return om.ListBucketsResponse(buckets=found)

    # ------------------------------------------------------------------ blocks (SCM's part)
    def _allocate(self, exclude: block_pb.ExcludeListProto, context: rpc.CallContext) -> om.KeyLocation:
        if self.safe_mode or self.safe_mode_answers:
            self.safe_mode_answers = max(0, self.safe_mode_answers - 1)
            _abort(context, rpc.StatusCode.FAILED_PRECONDITION, "SCM_IN_SAFE_MODE", "safe mode")
        if self.unavailable:
            self.unavailable -= 1
            raise rpc.AbortError(rpc.StatusCode.UNAVAILABLE, "no OPEN pipeline yet")
        pipelines = list(self.cluster.pipelines.values())
        excluded_pipelines = {p.id for p in exclude.pipelineIds}
        # SCM avoids what the client excluded; with nothing else left the client is to retry later.
        for step in range(len(pipelines)):
            pipeline = pipelines[(self._next_pipeline + step) % len(pipelines)]
            members = {m.uuid for m in pipeline.members}
            if pipeline.id in excluded_pipelines or members & set(exclude.datanodes):
                continue
            container = self._open_container.get(pipeline.id)
            if (
                container is None
                or container in exclude.containerIds
                or self.cluster.container_state.get(container, "OPEN") != "OPEN"
            ):
                container = self.cluster.new_container(pipeline)
                self._open_container[pipeline.id] = container
            self._next_pipeline = (self._next_pipeline + step + 1) % len(pipelines)
            bid = block_pb.BlockID(
                containerBlockID=block_pb.ContainerBlockID(
                    containerID=container, localID=next(self._local_ids)
                )
            )
            return om.KeyLocation(blockID=bid, pipeline=pipeline.proto(), containerState="OPEN")
        spare = [d for d in self.cluster.datanodes if not d.stopped and d.uuid not in exclude.datanodes]
        if self.no_suitable_node:
            message = "SCM refused: FAILED_TO_FIND_SUITABLE_NODE: only 1 of 3 datanodes can be chosen"
            _abort(context, rpc.StatusCode.FAILED_PRECONDITION, "KEY_ALLOCATION_ERROR", message)
        if not self.replace_excluded or len(spare) < 3:
            _abort(context, rpc.StatusCode.UNAVAILABLE, "SCM_UNAVAILABLE", "every pipeline excluded")
        self.cluster.add_pipeline(spare[:3])
        return self._allocate(exclude, context)

    def openKey(self, request, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            bucket = self._bucket(request.volume, request.bucket, context)
            if not request.key:
                _abort(context, rpc.StatusCode.INVALID_ARGUMENT, "INVALID_KEY_NAME", "empty")
            count = max(1, -(-request.dataSize // self.block_size))
            locations = [self._allocate(request.excludeList, context) for _ in range(count)]
            size = request.dataSize if 0 < request.dataSize < self.block_size else self.block_size
            for location in locations:  # as OM: a key announced smaller than a block gets only its size
                location.length = size
            client_id = next(self._ids)
            self.open_keys[client_id] = OpenKey(
                request.volume, request.bucket, request.key,
                {(loc.blockID.containerBlockID.containerID, loc.blockID.containerBlockID.localID)
                 for loc in locations},
            )  # fmt: skip
            info = om.KeyInfo(
                volume=request.volume, bucket=request.bucket, key=request.key, dataSize=request.dataSize,
                type=request.type or bucket.type, factor=request.factor or bucket.factor, locations=locations,
            )  # fmt: skip
            return om.OpenKeyResponse(keyInfo=info, clientID=client_id)

    def allocateBlock(self, request, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            open_key = self.open_keys.get(request.clientID)
            if open_key is None:
                _abort(context, rpc.StatusCode.NOT_FOUND, "KEY_NOT_FOUND", f"no open key {request.clientID}")
            self.allocations.append(request.excludeList)
            location = self._allocate(request.excludeList, context)
            location.length = self.block_size
            bid = location.blockID.containerBlockID
            open_key.blocks.add((bid.containerID, bid.localID))
            return om.AllocateBlockResponse(location=location)

    def commitKey(self, request, context):  # type: ignore[no-untyped-def]
        if self.commit_hang_s:
            time.sleep(self.commit_hang_s)
            raise rpc.AbortError(rpc.StatusCode.UNAVAILABLE, "OM was stopped")
        with self.cluster.lock:
            if self.commit_unavailable:
                self.commit_unavailable -= 1
                raise rpc.AbortError(rpc.StatusCode.UNAVAILABLE, "OM is restarting")
            open_key = self.open_keys.pop(request.clientID, None)
            if open_key is None:
                _abort(context, rpc.StatusCode.NOT_FOUND, "KEY_NOT_FOUND", f"no open key {request.clientID}")
            for loc in request.locations:
                bid = loc.blockID.containerBlockID
                if (bid.containerID, bid.localID) not in open_key.blocks:
                    _abort(context, rpc.StatusCode.FAILED_PRECONDITION, "INVALID_BLOCK_LIST", str(bid))
            self.commits.append(request)
            now = self._now()
            old = self.keys.get((request.volume, request.bucket, request.key))
            info = om.KeyInfo(
                volume=request.volume, bucket=request.bucket, key=request.key, dataSize=request.dataSize,
                creationTime=old.creationTime if old else now, modificationTime=now,
                type=hdds_pb2.RATIS, factor=hdds_pb2.THREE, locations=request.locations,
                objectID=next(self._ids),
            )  # fmt: skip
            self.keys[(request.volume, request.bucket, request.key)] = info
            if self.commit_answer_lost:
                self.commit_answer_lost -= 1
                raise rpc.AbortError(rpc.StatusCode.UNAVAILABLE, "the answer was lost")
            return om.CommitKeyResponse(keyInfo=self._located(info))

    def _located(self, info: om.KeyInfo) -> om.KeyInfo:
        """The key with every block's pipeline (the read order) and its container's state filled in."""
        out = om.KeyInfo()
        out.CopyFrom(info)
        for loc in out.locations:
            cid = loc.blockID.containerBlockID.containerID
            pipeline = self.cluster.container_pipeline[cid]
            loc.pipeline.CopyFrom(pipeline.proto())
            loc.containerState = self.cluster.container_state.get(cid, "OPEN")
        return out

    def _key(self, request, context) -> om.KeyInfo:  # type: ignore[no-untyped-def]
        self._bucket(request.volume, request.bucket, context)
        info = self.keys.get((request.volume, request.bucket, request.key))
        if info is None:
            _abort(context, rpc.StatusCode.NOT_FOUND, "KEY_NOT_FOUND", request.key)
        return info

    def lookupKey(self, request, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            self.lookups_forced.append(request.forceUpdateContainerCache)
            return om.LookupKeyResponse(keyInfo=self._located(self._key(request, context)))

    def listKeys(self, request, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            self._bucket(request.volume, request.bucket, context)
            names = sorted(
                k for v, b, k in self.keys
                if (v, b) == (request.volume, request.bucket) and k.startswith(request.prefix)
                and k > request.startKey
            )  # fmt: skip
            found = []
            for name in names[: request.maxKeys or 1000]:
                info = om.KeyInfo()
                info.CopyFrom(self.keys[(request.volume, request.bucket, name)])
                del info.locations[:]
                found.append(info)
            return om.ListKeysResponse(keys=found)

    def renameKey(self, request, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            info = self._key(request, context)
            target = (request.volume, request.bucket, request.toKey)
            if target in self.keys:
                _abort(context, rpc.StatusCode.ALREADY_EXISTS, "KEY_ALREADY_EXISTS", request.toKey)
            del self.keys[(request.volume, request.bucket, request.key)]
            info.key = request.toKey
            self.keys[target] = info
            return om.RenameKeyResponse()

    def deleteKey(self, request, context):  # type: ignore[no-untyped-def]
        with self.cluster.lock:
            self._key(request, context)
            del self.keys[(request.volume, request.bucket, request.key)]
            return om.DeleteKeyResponse()

    def getServiceInfo(self, request, context):  # type: ignore[no-untyped-def]
        return om.ServiceInfoResponse(clusterID="fake", omID="om1", scmInSafeMode=self.safe_mode)


class FakeCluster:
    """`datanodes` fake datanodes in pipelines of three, and a FakeOM allocating `block_size` blocks."""

    def __init__(self, datanodes: int = 9, block_size: int = 1 << 20, instant_commit: bool = False) -> None:
        self.lock = threading.RLock()
        self.instant_commit = instant_commit
        self.datanodes = [FakeDatanode(self, i) for i in range(datanodes)]
        self.pipelines: dict[str, FakePipeline] = {}
        for i in range(0, datanodes - datanodes % 3, 3):
            pid = str(uuid.UUID(int=1000 + i))
            self.pipelines[pid] = FakePipeline(pid, self.datanodes[i : i + 3])
        self.container_state: dict[int, str] = {}
        self.container_pipeline: dict[int, FakePipeline] = {}
        self._container_ids = itertools.count(1)
        self.om = FakeOM(self, block_size)

    def new_container(self, pipeline: FakePipeline) -> int:
        cid = next(self._container_ids)
        self.container_state[cid] = "OPEN"
        self.container_pipeline[cid] = pipeline
        return cid

    def close_container(self, container_id: int) -> None:
        with self.lock:
            self.container_state[container_id] = "CLOSED"

    def add_pipeline(self, members: list[FakeDatanode]) -> FakePipeline:
        """A new OPEN pipeline (SCM replacing a failed one)."""
        with self.lock:
            pid = str(uuid.UUID(int=2000 + len(self.pipelines)))
            self.pipelines[pid] = FakePipeline(pid, members)
            return self.pipelines[pid]

    def datanode(self, uuid_: str) -> FakeDatanode:
        return next(d for d in self.datanodes if d.uuid == uuid_)

    def pipeline_of(self, container_id: int) -> FakePipeline:
        return self.container_pipeline[container_id]

    def stop(self) -> None:
        self.om.server.stop()
        for dn in self.datanodes:
            if not dn.stopped:
                dn.stop()
