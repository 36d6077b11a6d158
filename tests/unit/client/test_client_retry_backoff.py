"""Issue 11 defect 5: a write outlasts what the cluster is about to repair. Retries back off and are bounded
by a deadline; within a run of failures the writer waits for SCM to form a pipeline outside its exclude
list instead of failing, and the error, when the deadline passes, says what was tried and for how long."""

from __future__ import annotations

import dataclasses
import os
import re
import threading
from collections.abc import Iterator

import pytest

from pyozone.client import BlockWriteError, OzoneClient
from pyozone.client.config import ClientConfig
from pyozone.client.retry import RetryRun, WriteRetryPolicy
from pyozone.config import OzoneConfiguration
from pyozone.proto import DatanodeClientProtocol_pb2 as pb
from tests.polling import wait_for
from tests.unit.client.fakes import BUFFER, FakeCluster, small_conf


class Clock:
    """Seconds that move only when the test says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


POLICY = WriteRetryPolicy(max_retries=5, interval_s=0, backoff_base_s=4, backoff_max_s=40, deadline_s=600)


def test_the_first_retry_is_immediate_then_the_waits_double_up_to_the_cap() -> None:
    assert [POLICY.delay(n) for n in range(1, 9)] == [0, 4, 8, 16, 32, 40, 40, 40]


def test_a_run_ends_after_max_retries() -> None:
    run = RetryRun(POLICY, Clock())
    delays = [run.fail(f"try {n}") for n in range(6)]
    assert delays == [0, 4, 8, 16, 32, None]  # 5 retries, then the 6th failure ends it


def test_a_closed_container_is_retried_at_once() -> None:
    """A big key's preallocated blocks can all sit in containers SCM closed as it handed their space out;
    waiting 4 s, 8 s before the next block let the write's deadline pass (test_e2e_keys)."""
    run = RetryRun(POLICY, Clock())
    assert [run.fail(f"closed {n}", backoff=False) for n in range(4)] == [0, 0, 0, 0]
    assert run.fail("p1 dead") == 32  # a failure waiting may heal still backs off by its place in the run


def test_a_run_ends_at_its_deadline_and_never_sleeps_past_it() -> None:
    clock = Clock()
    run = RetryRun(dataclasses.replace(POLICY, max_retries=100, deadline_s=50), clock)
    waits = []
    while (delay := run.fail("p1 dead")) is not None:
        waits.append(delay)
        clock.advance(delay)
    assert waits == [0, 4, 8, 16, 22]  # the last wait ends at the deadline
    assert run.elapsed_s == 50 and run.remaining_s == 0
    assert run.summary().startswith("6 tries in 50.0s")


def test_the_deadline_outlasts_the_dead_node_interval_unless_set() -> None:
    def config(**keys: str) -> ClientConfig:
        return ClientConfig.from_conf(OzoneConfiguration({"ozone.om.address": "127.0.0.1", **keys}))

    default = config()
    assert (default.backoff_base_s, default.backoff_max_s, default.retry_deadline_s) == (4, 40, 600)
    assert config(**{"ozone.scm.dead.node.interval": "12s"}).retry_deadline_s == 12
    assert config(**{"ozone.client.retry.deadline": "90s"}).retry_deadline_s == 90
    assert config(**{"ozone.client.retry.deadline": "0"}).retry_deadline_s == 0


def writer_config(cluster: FakeCluster, deadline: str) -> ClientConfig:
    """OM's own budget for UNAVAILABLE kept tiny: within a run, only the write's deadline counts."""
    conf = small_conf(cluster.om.address, {"ozone.client.retry.deadline": deadline})
    return dataclasses.replace(ClientConfig.from_conf(conf), unavailable_budget_s=0.2)


@pytest.fixture
def four() -> Iterator[FakeCluster]:
    """One pipeline (dn1 leader, dn2, dn3) and a spare dn4."""
    c = FakeCluster(datanodes=4)
    c.om.replace_excluded = False  # SCM forms no pipeline until the test says so
    yield c
    c.stop()


def test_the_writer_waits_for_scm_to_replace_a_dead_pipeline(four: FakeCluster) -> None:
    (pipeline,) = four.pipelines.values()
    client = OzoneClient(config=writer_config(four, "30s"))
    try:
        client.create_volume("vol")
        client.create_bucket("vol", "bucket")
        pipeline.leader.fail_next(pb.WriteChunk, pb.GROUP_MISMATCH)
        data = os.urandom(3 * BUFFER)

        def replace() -> None:  # SCM forms a new pipeline a while (> OM's budget) after the failure
            wait_for(lambda: len(four.om.allocations) >= 1, 10, "the writer asked for a new block")
            threading.Event().wait(1.0)
            four.add_pipeline([four.datanodes[3], *pipeline.members[1:]])

        helper = threading.Thread(target=replace)
        helper.start()
        with client.create_key("vol", "bucket", "k", size_hint=len(data)) as writer:
            writer.write(data)
        helper.join()
        assert client.read_key("vol", "bucket", "k").readall() == data
        assert {p.id for p in four.om.allocations[-1].pipelineIds} == {pipeline.id}
        assert four.pipeline_of(four.om.commits[-1].locations[0].blockID.containerBlockID.containerID).id != (
            pipeline.id
        )
    finally:
        client.close()


def test_past_the_deadline_the_error_says_what_was_tried_and_for_how_long(four: FakeCluster) -> None:
    (pipeline,) = four.pipelines.values()
    client = OzoneClient(config=writer_config(four, "1s"))
    try:
        client.create_volume("vol")
        client.create_bucket("vol", "bucket")
        pipeline.leader.fail_next(pb.WriteChunk, pb.GROUP_MISMATCH)
        writer = client.create_key("vol", "bucket", "k", size_hint=BUFFER)
        with pytest.raises(BlockWriteError) as e, writer:
            writer.write(os.urandom(BUFFER))
        message = str(e.value)
        assert re.search(r"gave up after 1 failures in [01]\.\ds \(ozone.client.retry.deadline 1s\)", message)
        assert f"pipelines=['{pipeline.id}']" in message and "GROUP_MISMATCH" in message
        assert "every pipeline excluded" in message
        assert four.om.commits == []
    finally:
        client.close()
