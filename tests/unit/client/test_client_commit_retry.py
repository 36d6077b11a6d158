"""Issue 28 defect 15: a key's commit waits out an unreachable OM (Ozone's OM failover retries,
ozone.client.failover.max.attempts attempts ozone.client.wait.between.retries.millis apart) instead of
losing a fully written key at close(); past its last attempt the error says how long it tried."""

from __future__ import annotations

import os

import pytest

from pyozone.client import OMException, OMUnavailableError, OzoneClient
from pyozone.client.config import ClientConfig
from pyozone.client.errors import CommitOutcomeUnknown
from pyozone.client.retry import OmRetryPolicy
from pyozone.config import OzoneConfiguration
from tests.unit.client.fakes import BUFFER, FakeCluster, small_conf

FAST = {"ozone.client.wait.between.retries.millis": "10", "ozone.client.failover.max.attempts": "4"}


def test_attempts_are_spaced_by_the_wait_and_end_at_the_last() -> None:
    policy = OmRetryPolicy(max_attempts=3, wait_s=2.0)
    assert [policy.delay(n) for n in (1, 2, 3)] == [2.0, 2.0, None]
    assert policy.budget_s == 4.0


def test_ozone_keys_and_defaults() -> None:
    default = ClientConfig.from_conf(OzoneConfiguration({"ozone.om.address": "127.0.0.1:9862"})).om_retry
    assert default == OmRetryPolicy(max_attempts=500, wait_s=2.0)
    conf = OzoneConfiguration({"ozone.om.address": "127.0.0.1:9862", **FAST})
    assert ClientConfig.from_conf(conf).om_retry == OmRetryPolicy(max_attempts=4, wait_s=0.01)


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
        gave_up = r"commitKey of /vol/bucket/k: 4 attempts .*ozone.client.failover.max.attempts"
        with pytest.raises(OMUnavailableError, match=gave_up), retrying.create_key("vol", "bucket", "k") as w:
            w.write(b"x")
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
