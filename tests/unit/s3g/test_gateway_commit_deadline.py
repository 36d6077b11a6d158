"""Issue 28 defect 15 at the S3 gateway: a PUT during an OM outage waited the client's whole commit policy,
far longer than any SDK's read timeout, and since the handler went on after its client gave up, the
abandoned PUT could commit late, after the client's follow-up requests. The gateway's commits wait
ozone.s3g.commit.deadline, then answer 503 ServiceUnavailable; a request whose client went away is
cancelled and commits nothing."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from pyozone.client.errors import OMUnavailableError
from pyozone.framework.om import OmClient
from tests.polling import wait_for
from tests.unit.s3g.gateway_thread import GatewayOnThread, gateway_on_thread

FAST_RETRIES = {"ozone.client.wait.between.retries.millis": "100"}


class OmOutage:
    """OM unreachable for commitKey alone while `down` (the gateway's other calls go through)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.down = True
        self.attempts = 0
        original = OmClient._call

        async def call(client: OmClient, name: str, *args: Any, **kwargs: Any) -> Any:
            if name == "commitKey" and self.down:
                self.attempts += 1
                raise OMUnavailableError(f"OM at {client.address}: UNAVAILABLE: connection refused")
            return await original(client, name, *args, **kwargs)

        monkeypatch.setattr(OmClient, "_call", call)


@pytest.fixture
def short_deadline(tmp_path: Path) -> Iterator[GatewayOnThread]:
    with gateway_on_thread(tmp_path, **FAST_RETRIES, **{"ozone.s3g.commit.deadline": "1s"}) as running:
        yield running


@pytest.fixture
def long_deadline(tmp_path: Path) -> Iterator[GatewayOnThread]:
    with gateway_on_thread(tmp_path, **FAST_RETRIES, **{"ozone.s3g.commit.deadline": "20s"}) as running:
        yield running


def test_a_put_during_an_om_outage_is_503_within_the_gateway_deadline(
    short_deadline: GatewayOnThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    s3 = short_deadline.boto3(read_timeout=8)
    s3.create_bucket(Bucket="outage")
    outage = OmOutage(monkeypatch)
    started = time.monotonic()
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket="outage", Key="k", Body=b"")
    took = time.monotonic() - started
    assert e.value.response["Error"]["Code"] == "ServiceUnavailable"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    assert outage.attempts > 1 and took < 4, (outage.attempts, took)


def test_the_default_deadline_is_below_sdk_read_timeouts(tmp_path: Path) -> None:
    from pyozone.s3g.settings import S3GatewaySettings
    from tests.unit.s3g.test_daemon_volume import gateway_conf

    assert S3GatewaySettings.from_conf(gateway_conf(tmp_path, 9862)).commit_deadline_s == 30.0


def test_a_put_whose_client_went_away_does_not_commit_late(
    long_deadline: GatewayOnThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    s3 = long_deadline.boto3()
    s3.create_bucket(Bucket="gone")
    outage = OmOutage(monkeypatch)
    headers = long_deadline.signed_headers("PUT", "/gone/k", headers={"Content-Length": "0"})
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    port = long_deadline.gateway.port
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"PUT /gone/k HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{head}\r\n".encode())
        wait_for(lambda: outage.attempts >= 2, 10, "the gateway retrying the commit")
    # The client timed out and closed its connection; OM comes back while the gateway would still retry.
    outage.down = False
    time.sleep(1.0)  # showing that nothing happens: ten retry waits for a late commit to land
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket="gone", Key="k")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404
