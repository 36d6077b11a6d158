"""Issue 28 defect 15: a key's commit waits out an unreachable OM (Ozone's OM failover retries,
ozone.client.failover.max.attempts attempts ozone.client.wait.between.retries.millis apart, all within
ozone.client.retry.deadline) instead of losing a fully written key at close(); past its last attempt the
error says how long it tried, and whether OM may have committed the key after all."""

from __future__ import annotations

import os
import time
from dataclasses import replace

import pytest

from pyozone.client import OMException, OMUnavailableError, OzoneClient
from pyozone.client.config import ClientConfig
from pyozone.client.errors import CommitOutcomeUnknown
from pyozone.client.retry import COMMIT_DEADLINE_S, OmRetryPolicy
from pyozone.config import OzoneConfiguration
from tests.unit.client.fakes import BUFFER, FakeCluster, small_conf

FAST = {"ozone.client.wait.between.retries.millis": "10", "ozone.client.failover.max.attempts": "4"}


def test_attempts_are_spaced_by_the_wait_and_end_at_the_last_or_the_deadline() -> None:
    policy = OmRetryPolicy(max_attempts=3, wait_s=2.0, deadline_s=60.0)
    assert [policy.delay(n, 50.0) for n in (1, 2, 3)] == [2.0, 2.0, None]
    assert policy.delay(1, 0.5) == 0.5  # the deadline ends the last wait
    assert policy.delay(1, 0.0) is None


def test_ozone_keys_and_defaults() -> None:
    default = ClientConfig.from_conf(OzoneConfiguration({"ozone.om.address": "127.0.0.1:9862"}))
    assert default.om_retry == OmRetryPolicy(max_attempts=500, wait_s=2.0, deadline_s=COMMIT_DEADLINE_S)
    assert COMMIT_DEADLINE_S == 120.0
    assert default.retry_deadline_s == 600.0  # a run of failed blocks: the dead node interval, as before
    conf = OzoneConfiguration(
        {"ozone.om.address": "127.0.0.1:9862", **FAST, "ozone.client.retry.deadline": "30s"}
    )
    assert ClientConfig.from_conf(conf).om_retry == OmRetryPolicy(4, wait_s=0.01, deadline_s=30.0)


def test_a_commit_outlasts_om_restarting(cluster: FakeCluster, client: OzoneClient) -> None:
    data = os.urandom(3 * BUFFER)
    cluster.om.commit_unavailable = 3  # the fourth and last attempt reaches OM
    with (
        OzoneClient(small_conf(cluster.om.address, FAST)) as retrying,
        retrying.create_key("vol", "bucket", "k", size_hint=len(data)) as out,
    ):
        out.write(data)
    assert cluster.om.commit_unavailable == 0 and len(cluster.om.commits) == 1
    assert client.read_key("vol", "bucket", "k").readall() == data


def test_past_the_last_attempt_the_error_says_what_was_waited(cluster: FakeCluster) -> None:
    cluster.om.commit_unavailable = 4
    with OzoneClient(small_conf(cluster.om.address, FAST)) as retrying:
        retrying.create_volume("vol")
        retrying.create_bucket("vol", "bucket")
        gave_up = r"commitKey of /vol/bucket/k: OM unreachable: 4 attempts .*failover.max.attempts"
        with (
            pytest.raises(OMUnavailableError, match=gave_up) as e,
            retrying.create_key("vol", "bucket", "k") as w,
        ):
            w.write(b"x")
    assert not e.value.timed_out  # refused at once, never left unanswered: not an unknown outcome
    assert cluster.om.commit_unavailable == 0 and cluster.om.commits == []


def test_a_retry_that_finds_no_session_says_the_outcome_is_unknown(cluster: FakeCluster) -> None:
    """Review of defect 2 (C): the commit's first attempt committed but its answer was lost, and the key was
    replaced (or deleted) before the retry, which OM answers KEY_NOT_FOUND. The write did happen: the client
    says the outcome is unknown (an OMUnavailableError: the gateway's 503) rather than that the key is
    missing (the gateway's 404 NoSuchKey on a PUT)."""
    cluster.om.commit_answer_lost = 1
    with OzoneClient(small_conf(cluster.om.address, FAST)) as retrying:
        retrying.create_volume("vol")
        retrying.create_bucket("vol", "bucket")
        unknown = r"commitKey of /vol/bucket/k: outcome unknown: .*KEY_NOT_FOUND"
        with (
            pytest.raises(CommitOutcomeUnknown, match=unknown),
            retrying.create_key("vol", "bucket", "k") as out,
        ):
            out.write(b"x")
    assert len(cluster.om.commits) == 1  # it did commit


def test_a_first_attempt_answered_key_not_found_is_not_retried_into_doubt(cluster: FakeCluster) -> None:
    with OzoneClient(small_conf(cluster.om.address, FAST)) as client:
        client.create_volume("vol")
        client.create_bucket("vol", "bucket")
        writer = client.create_key("vol", "bucket", "k")
        cluster.om.open_keys.clear()  # the open key expired: no attempt of this commit reached OM before
        with pytest.raises(OMException, match="KEY_NOT_FOUND") as refused:
            writer.close()
        assert not isinstance(refused.value, OMUnavailableError)


def test_a_hung_om_holds_the_commit_no_longer_than_the_deadline(cluster: FakeCluster) -> None:
    """A stopped (SIGSTOPped) OM takes the connection and never answers: every attempt used to last the
    whole OM call timeout, so 500 attempts held close() for hours. The deadline cuts the attempt in
    progress too, and since OM may have applied a call it did not answer, the error says so."""
    cluster.om.commit_hang_s = 3.0
    conf = small_conf(cluster.om.address, {**FAST, "ozone.client.retry.deadline": "1500"})
    config = replace(ClientConfig.from_conf(conf), om_timeout_s=1.0)
    with OzoneClient(conf, config=config) as hung:
        hung.create_volume("vol")
        hung.create_bucket("vol", "bucket")
        out = hung.create_key("vol", "bucket", "k")
        out.write(b"x")
        started = time.monotonic()
        with pytest.raises(OMUnavailableError, match=r"outcome unknown: .*OM may have applied it") as e:
            out.close()
        took = time.monotonic() - started
    assert 1.4 < took < 3.0, took  # 4 attempts x (1 s + 10 ms) without the deadline
    assert e.value.timed_out and "ozone.client.retry.deadline 1.5s" in str(e.value)
