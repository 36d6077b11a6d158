"""OM HA's replicator against a scripted Raft member: a leader's executed writes wait for their entries;
when an entry of another leader is applied instead, the uncommitted writes are dropped from the cache (the
committed values read again), their callers are refused with OMNotLeaderException, and the OM executes
nothing until it leads again; a follower's refusal names the leader it knows. A call repeated with its
call id is never executed twice; one whose entry does not commit is answered after the request timeout."""

from __future__ import annotations

import asyncio
import contextvars
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pyozone.cli.main import main
from pyozone.framework.om_errors import OMLeaderNotReadyException, OMNotLeaderException
from pyozone.om.core import OzoneManager
from pyozone.om.exceptions import OMException
from pyozone.om.metadata import DELETED_TABLE, VOLUME_TABLE, OMMetadataStore, volume_key
from pyozone.om.server.ha import ANSWER_ROOM, OmReplication
from pyozone.om.server.retry_cache import AnsweredStatus, RetryCache
from pyozone.om.services import KeyDeletingService
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.protocol import om as wire
from pyozone.protocol import om_records
from pyozone.protocol.om_ratis import CallAnswer, entry_to_bytes
from pyozone.ratis.messages import LogEntry, RaftPeerId
from pyozone.ratis.roles import RaftPeerRole
from pyozone.ratis_server.member_api import (
    ApplyFailedError,
    EntryTooLargeError,
    RaftStatus,
    TransferRefusedError,
)
from pyozone.rpc.metadata import CALL_ID_METADATA, CLIENT_ID_METADATA
from tests.unit.om.om_fakes import FakeScm

ADDRESSES = {"om1": "host1:9862", "om2": "host2:9862"}


class ScriptedMember:
    """The Raft member as the test scripts it: its role and indexes, and the entries submitted to it
    (their futures left pending: the test applies the entries itself)."""

    def __init__(self) -> None:
        self.running = True
        self.role = RaftPeerRole.LEADER
        self.term = 1
        self.leader: str | None = "om1"
        self.last = self.applied = 1
        self.submitted: list[bytes] = []

    def status(self) -> RaftStatus:
        leader = RaftPeerId(self.leader) if self.leader else None
        return RaftStatus("g", RaftPeerId("om1"), self.role, self.term, leader, self.last, self.applied,
                          self.applied, ())  # fmt: skip

    def leading_term(self) -> int | None:
        return self.term if self.role is RaftPeerRole.LEADER else None

    async def submit(self, payload: bytes, client_id: str, call_id: int) -> object:
        self.submitted.append(payload)
        self.last += 1
        return await asyncio.get_running_loop().create_future()


class NoMetadata:
    def invocation_metadata(self) -> tuple[()]:
        return ()


def volume(core: OzoneManager, name: str) -> Any:
    async def run() -> Any:
        job = contextvars.copy_context()
        return await asyncio.get_running_loop().run_in_executor(
            None, job.run, core.volumes.create, name, "me", 0, 0, ()
        )

    return run


async def submitted(member: ScriptedMember, count: int) -> None:
    for _ in range(500):
        if len(member.submitted) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{count} entries were not submitted: {len(member.submitted)}")


def test_a_step_down_drops_uncommitted_writes_and_refuses_their_callers(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = OMMetadataStore(tmp_path / "om.db", sync=False)
        core = OzoneManager(store, FakeScm())
        replication = OmReplication(store, core, "om1", ADDRESSES)
        member = ScriptedMember()
        replication.attach(member)  # type: ignore[arg-type]
        try:
            committed = asyncio.create_task(
                replication.serve("createVolume", volume(core, "kept"), NoMetadata())
            )
            await submitted(member, 1)
            replication.apply(LogEntry(1, 2, member.submitted[0]))
            await committed
            lost = asyncio.create_task(replication.serve("createVolume", volume(core, "lost"), NoMetadata()))
            await submitted(member, 2)
            assert store.get(VOLUME_TABLE, volume_key("lost")) is not None  # executed, not committed
            # another leader's entry (term 2) is applied instead of ours
            other = om_records.encode_volume(core.volume_info("kept"))
            member.role, member.term, member.leader = RaftPeerRole.FOLLOWER, 2, "om2"
            replication.apply(
                LogEntry(2, 3, entry_to_bytes([(VOLUME_TABLE, volume_key("theirs"), other)], []))
            )
            with pytest.raises(AnsweredStatus) as refused:
                await lost
            assert refused.value.status == "UNAVAILABLE"
            assert OMNotLeaderException.parse(refused.value.details) is not None
            await asyncio.to_thread(store.sync)
            assert store.get(VOLUME_TABLE, volume_key("lost")) is None
            assert store.stored_value(VOLUME_TABLE, volume_key("lost")) is None
            assert store.get(VOLUME_TABLE, volume_key("kept")) is not None
            assert store.get(VOLUME_TABLE, volume_key("theirs")) is not None
            # a follower executes nothing and names the leader
            with pytest.raises(AnsweredStatus) as follower:
                await replication.serve("createVolume", volume(core, "again"), NoMetadata())
            named = OMNotLeaderException.parse(follower.value.details)
            assert named is not None and (named.leader_id, named.leader_address) == ("om2", "host2:9862")
            # leading again: not ready until the log is applied up to the term's start
            member.role, member.term, member.leader, member.last = RaftPeerRole.LEADER, 3, "om1", 5
            with pytest.raises(AnsweredStatus) as not_ready:
                await replication.serve("createVolume", volume(core, "again"), NoMetadata())
            assert OMLeaderNotReadyException.parse(not_ready.value.details) is not None
            member.applied = 5
            again = asyncio.create_task(
                replication.serve("createVolume", volume(core, "again"), NoMetadata())
            )
            await submitted(member, 3)
            replication.apply(LogEntry(3, 6, member.submitted[2]))
            await again
            assert replication.stepdowns == 1
        finally:
            store.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_the_key_deleting_service_sends_scm_only_committed_deletions(tmp_path: Path) -> None:
    """A deleteKey the leader executed but never committed shows in the table cache; the service must not
    hand its blocks to SCM, even when the leader steps down while it runs (review R7-4)."""

    async def scenario() -> None:
        store = OMMetadataStore(tmp_path / "om.db", sync=False)
        scm = FakeScm()
        core = OzoneManager(store, scm)
        replication = OmReplication(store, core, "om1", ADDRESSES)
        member = ScriptedMember()
        replication.attach(member)  # type: ignore[arg-type]
        loop = asyncio.get_running_loop()
        info = pb.KeyInfo()
        block = info.locations.add().blockID.containerBlockID
        block.containerID, block.localID = 7, 42
        try:

            async def delete_key() -> None:
                job = contextvars.copy_context()
                await loop.run_in_executor(
                    None, job.run, store.write, [(DELETED_TABLE, "/v/b/k/1", info.SerializeToString())]
                )

            deleting = asyncio.create_task(replication.serve("deleteKey", delete_key, NoMetadata()))
            await submitted(member, 1)  # executed, not committed
            service = KeyDeletingService(core)
            scanned = service._batches

            def step_down_after_the_scan() -> tuple[list[str], list[list[Any]]]:
                found = scanned()
                member.role, member.term, member.leader = RaftPeerRole.FOLLOWER, 2, "om2"
                theirs = entry_to_bytes([(VOLUME_TABLE, volume_key("theirs"), b"x")], [])
                replication.apply(LogEntry(2, 2, theirs))
                store.sync_applied()
                return found

            service._batches = step_down_after_the_scan  # type: ignore[method-assign]
            service.run_once()
            with pytest.raises(AnsweredStatus):
                await deleting
            assert scm.deletes == []
            await asyncio.to_thread(store.sync)
            assert store.get(DELETED_TABLE, "/v/b/k/1") is None
        finally:
            store.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


class Named:
    def __init__(self, call_id: int) -> None:
        self.call_id = call_id

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return ((CLIENT_ID_METADATA, "client-a"), (CALL_ID_METADATA, str(self.call_id)))


def answered_volume(core: OzoneManager, name: str) -> Any:
    async def run() -> Any:
        job = contextvars.copy_context()
        record = await asyncio.get_running_loop().run_in_executor(
            None, job.run, core.volumes.create, name, "me", 0, 0, ()
        )
        return wire.volume_answer("createVolume", record)

    return run


def test_a_repeated_call_waits_for_the_first_or_gets_its_answer_and_a_stuck_one_times_out(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        store = OMMetadataStore(tmp_path / "om.db", sync=False)
        core = OzoneManager(store, FakeScm())
        replication = OmReplication(store, core, "om1", ADDRESSES, request_timeout_ms=300)
        member = ScriptedMember()
        replication.attach(member)  # type: ignore[arg-type]
        try:
            first = asyncio.create_task(
                replication.serve("createVolume", answered_volume(core, "vol"), Named(1))
            )
            await submitted(member, 1)
            # the same call again while the first waits: it waits with it (executed again it would fail
            # with VOLUME_ALREADY_EXISTS)
            again = asyncio.create_task(
                replication.serve("createVolume", answered_volume(core, "vol"), Named(1))
            )
            await asyncio.sleep(0.05)
            assert len(member.submitted) == 1
            replication.apply(LogEntry(1, 2, member.submitted[0]))
            assert await first == await again
            later = await replication.serve("createVolume", answered_volume(core, "vol"), Named(1))
            assert later == await first and len(member.submitted) == 1
            assert wire.volume_info_from_proto(pb.CreateVolumeResponse.FromString(later).volume).name == "vol"
            with pytest.raises(AnsweredStatus, match="was a createVolume, not a deleteVolume"):
                await replication.serve("deleteVolume", answered_volume(core, "vol"), Named(1))
            # an entry that never commits: the call is answered UNAVAILABLE after the request timeout
            with pytest.raises(AnsweredStatus, match=r"ozone\.om\.ratis\.server\.request\.timeout") as stuck:
                await replication.serve("createVolume", answered_volume(core, "stuck"), Named(2))
            assert stuck.value.status == "UNAVAILABLE"
        finally:
            store.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_the_retry_cache_forgets_an_answer_after_its_timeout_or_past_its_size() -> None:
    now = [0.0]
    cache = RetryCache(1000, lambda: now[0], max_entries=2)
    for call_id in (1, 2):
        cache.put(CallAnswer("c", call_id, "createVolume", b""))
    assert cache.get(("c", 1)) is not None
    cache.put(CallAnswer("c", 3, "createVolume", b""))  # past its size: the oldest goes
    assert cache.get(("c", 1)) is None and len(cache) == 2
    now[0] = 1000.0
    assert cache.get(("c", 2)) is None  # ozone.om.ratis.server.retry.cache.timeout passed


def created(answer: bytes) -> str:
    return wire.volume_info_from_proto(pb.CreateVolumeResponse.FromString(answer).volume).name


def test_a_call_retried_after_the_request_timeout_waits_for_its_first_attempt(tmp_path: Path) -> None:
    """The first attempt's entry commits after the request timeout answered its caller UNAVAILABLE: the
    retry gets the first answer, never a second execution (review R7-1)."""

    async def scenario() -> None:
        store = OMMetadataStore(tmp_path / "om.db", sync=False)
        core = OzoneManager(store, FakeScm())
        replication = OmReplication(store, core, "om1", ADDRESSES, request_timeout_ms=200)
        member = ScriptedMember()
        replication.attach(member)  # type: ignore[arg-type]
        try:
            with pytest.raises(AnsweredStatus, match=r"request\.timeout"):
                await replication.serve("createVolume", answered_volume(core, "vol"), Named(1))
            retry = asyncio.create_task(
                replication.serve("createVolume", answered_volume(core, "vol"), Named(1))
            )
            await asyncio.sleep(0.05)
            replication.apply(LogEntry(1, 2, member.submitted[0]))
            answer = await retry
            assert (
                wire.volume_info_from_proto(pb.CreateVolumeResponse.FromString(answer).volume).name == "vol"
            )
            assert len(member.submitted) == 1
        finally:
            store.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_a_cancelled_caller_leaves_its_call_running_and_a_waiting_retry_answered(tmp_path: Path) -> None:
    """The rpc server cancels a handler at its deadline: the call still finishes, its staged write goes to
    the log with its answer, and a retry that waited for it (or comes later) gets that answer (R7-2, R7-3)."""

    async def scenario() -> None:
        store = OMMetadataStore(tmp_path / "om.db", sync=False)
        core = OzoneManager(store, FakeScm())
        replication = OmReplication(store, core, "om1", ADDRESSES)
        member = ScriptedMember()
        replication.attach(member)  # type: ignore[arg-type]
        release = asyncio.Event()
        staged = volume(core, "vol")

        async def create_then_wait() -> Any:
            await staged()
            await release.wait()  # e.g. openKey signing its block tokens after it staged the open key
            return wire.volume_answer("createVolume", core.volume_info("vol"))

        try:
            first = asyncio.create_task(replication.serve("createVolume", create_then_wait, Named(1)))
            for _ in range(500):
                if store.get(VOLUME_TABLE, volume_key("vol")) is not None:
                    break
                await asyncio.sleep(0.01)
            again = asyncio.create_task(
                replication.serve("createVolume", answered_volume(core, "vol"), Named(1))
            )
            await asyncio.sleep(0.05)
            first.cancel()
            await asyncio.gather(first, return_exceptions=True)
            release.set()
            await submitted(member, 1)
            replication.apply(LogEntry(1, 2, member.submitted[0]))
            answer = await again
            assert (
                wire.volume_info_from_proto(pb.CreateVolumeResponse.FromString(answer).volume).name == "vol"
            )
            later = await replication.serve("createVolume", answered_volume(core, "vol"), Named(1))
            assert later == answer and len(member.submitted) == 1
        finally:
            store.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_the_retry_cache_answers_only_the_same_user_and_only_on_the_leader(tmp_path: Path) -> None:
    """Another user presenting a call's ids is executed as its own call (and refused what it may not do);
    a follower answers a replay with OMNotLeaderException, never the recorded answer (review R7-8)."""

    async def scenario() -> None:
        store = OMMetadataStore(tmp_path / "om.db", sync=False)
        core = OzoneManager(store, FakeScm())
        replication = OmReplication(store, core, "om1", ADDRESSES)
        member = ScriptedMember()
        replication.attach(member)  # type: ignore[arg-type]
        try:
            first = asyncio.create_task(
                replication.serve("createVolume", answered_volume(core, "vol"), Named(1), "alice")
            )
            await submitted(member, 1)
            replication.apply(LogEntry(1, 2, member.submitted[0]))
            answer = await first
            assert (
                await replication.serve("createVolume", answered_volume(core, "vol"), Named(1), "alice")
                == answer
            )
            with pytest.raises(OMException, match="VOLUME_ALREADY_EXISTS"):
                await replication.serve("createVolume", answered_volume(core, "vol"), Named(1), "mallory")
            member.role, member.term, member.leader = RaftPeerRole.FOLLOWER, 2, "om2"
            with pytest.raises(AnsweredStatus) as refused:
                await replication.serve("createVolume", answered_volume(core, "vol"), Named(1), "alice")
            assert OMNotLeaderException.parse(refused.value.details) is not None
        finally:
            store.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_a_write_too_large_for_an_entry_is_refused_and_entries_are_bounded_by_bytes(tmp_path: Path) -> None:
    """A transaction above what one entry may carry is refused to its caller (INVALID_REQUEST naming the
    limit), nothing is submitted and the leader keeps serving; transactions sealed together go to as many
    entries as their bytes need; a submit refused for another reason than leadership is no step-down
    (review R7-7b)."""

    async def scenario() -> None:
        store = OMMetadataStore(tmp_path / "om.db", sync=False)
        core = OzoneManager(store, FakeScm())
        replication = OmReplication(store, core, "om1", ADDRESSES, entry_byte_limit=ANSWER_ROOM + 3000)
        member = ScriptedMember()
        replication.attach(member)  # type: ignore[arg-type]
        loop = asyncio.get_running_loop()

        def writing(name: str, size: int) -> Any:
            async def run() -> None:
                job = contextvars.copy_context()
                op = (VOLUME_TABLE, volume_key(name), b"x" * size)
                await loop.run_in_executor(None, job.run, store.write, [op])

            return run

        try:
            with pytest.raises(
                OMException, match=r"INVALID_REQUEST.*raft\.server\.log\.appender\.buffer\.byte-limit"
            ):
                await replication.serve("createVolume", writing("big", 4000), NoMetadata())
            assert member.submitted == [] and store.get(VOLUME_TABLE, volume_key("big")) is None
            calls = [
                asyncio.create_task(replication.serve("createVolume", writing(f"v{i}", 1200), NoMetadata()))
                for i in range(3)
            ]
            await submitted(member, 2)
            assert all(len(p) <= ANSWER_ROOM + 3000 for p in member.submitted)
            for index, payload in enumerate(member.submitted, start=2):
                replication.apply(LogEntry(1, index, payload))
            await asyncio.gather(*calls)
            assert replication.stepdowns == 0 and replication.leading()
        finally:
            store.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


class RefusingMember(ScriptedMember):
    async def submit(self, payload: bytes, client_id: str, call_id: int) -> object:
        self.submitted.append(payload)
        raise EntryTooLargeError("a request above raft.server.log.appender.buffer.byte-limit")


def test_a_submit_refused_for_its_size_is_no_step_down(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = OMMetadataStore(tmp_path / "om.db", sync=False)
        core = OzoneManager(store, FakeScm())
        replication = OmReplication(store, core, "om1", ADDRESSES)
        member = RefusingMember()
        replication.attach(member)  # type: ignore[arg-type]
        try:
            with pytest.raises(AnsweredStatus):
                await replication.serve("createVolume", volume(core, "vol"), NoMetadata())
            assert replication.stepdowns == 0
        finally:
            store.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


class TransferringMember(ScriptedMember):
    """A leader whose transfer the test scripts: taken over, refused (another transfer runs) or late."""

    def __init__(self, members: tuple[str, ...], outcome: bool | Exception) -> None:
        super().__init__()
        self.group = SimpleNamespace(peers=[SimpleNamespace(id=RaftPeerId(m)) for m in members])
        self.outcome = outcome

    async def transfer_leadership(self, target: RaftPeerId) -> bool:
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


@pytest.mark.parametrize(
    ("members", "outcome", "status", "text"),
    [
        (("om1",), True, "INVALID_ARGUMENT", "the only OM of its service"),
        (
            ("om1", "om2"),
            TransferRefusedError(RaftPeerId("om1"), RaftPeerId("om2"), RaftPeerId("om3")),
            "FAILED_PRECONDITION",
            "a previous transfer to om3 is in progress",
        ),
        (("om1", "om2"), False, "DEADLINE_EXCEEDED", "did not take over from OM om1 in time"),
    ],
)
def test_a_refused_transfer_names_its_reason_and_the_leader_keeps_serving(
    tmp_path: Path, members: tuple[str, ...], outcome: bool | Exception, status: str, text: str
) -> None:
    """`admin om transfer`: no OM to pick, a transfer already running, a target that did not take over:
    each a clear status of its own (not UNAVAILABLE, which the CLI reads as "not the leader") (R7-5)."""

    async def scenario() -> None:
        store = OMMetadataStore(tmp_path / "om.db", sync=False)
        replication = OmReplication(store, OzoneManager(store, FakeScm()), "om1", ADDRESSES)
        replication.attach(TransferringMember(members, outcome))  # type: ignore[arg-type]
        try:
            with pytest.raises(AnsweredStatus) as refused:
                await replication.transfer_leadership(None)
            assert refused.value.status == status and text in refused.value.details
            assert replication.stepdowns == 0 and replication.leading()
        finally:
            store.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_the_cli_refuses_a_random_transfer_in_a_one_om_service(capsys: pytest.CaptureFixture[str]) -> None:
    defines = ["-D", "ozone.om.service.ids=svc", "-D", "ozone.om.nodes.svc=om1",
               "-D", "ozone.om.address.svc.om1=127.0.0.1:1"]  # fmt: skip
    assert main(["admin", "om", "transfer", "-r", *defines]) != 0
    assert "the service has one OM (om1)" in capsys.readouterr().err


def test_an_entry_an_om_cannot_apply_fails_its_member_instead_of_being_skipped(tmp_path: Path) -> None:
    """R19 D1 (OM alike): bytes that are not an entry were returned as the entry's result and skipped; now
    an ApplyFailedError (the shell fails the member) and the daemon's `on_failed` hears it."""

    async def scenario() -> None:
        store = OMMetadataStore(tmp_path / "om.db", sync=False)
        core = OzoneManager(store, FakeScm())
        replication = OmReplication(store, core, "om1", ADDRESSES)
        member = ScriptedMember()
        member.role, member.leader = RaftPeerRole.FOLLOWER, "om2"
        replication.attach(member)  # type: ignore[arg-type]
        heard: list[str] = []
        replication.on_failed = heard.append
        try:
            with pytest.raises(
                ApplyFailedError, match=r"OM om1 could not apply log entry 1#2 \(ProtocolError"
            ):
                replication.apply(LogEntry(1, 2, b"\xff\xff\xff"))
            replication.notify_failed("entry 1#2 not applied")
            assert heard == ["entry 1#2 not applied"]
        finally:
            store.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))
