"""A live cluster with its S3 gateway, and the credentials of a user made through `pyozone s3 getsecret`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from pyozone.cluster.layout import HOST
from tests.e2e.cluster.cluster_helpers import LiveCluster, live_cluster

OVERRIDES = {"ozone.scm.block.size": "16MB", "ozone.scm.container.size": "64MB"}
REGION = "us-east-1"


@dataclass(frozen=True, slots=True)
class S3Endpoint:
    cluster: LiveCluster
    url: str
    access_key: str
    secret_key: str

    def boto3(self, secret_key: str | None = None, **config: object):  # type: ignore[no-untyped-def]
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.url,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=secret_key or self.secret_key,
            region_name=REGION,
            config=Config(
                s3={"addressing_style": "path"},
                signature_version="s3v4",
                retries={"max_attempts": 1},
                **config,
            ),
        )


def getsecret(cluster: LiveCluster, user: str) -> tuple[str, str]:
    result = cluster.pyozone("s3", "getsecret", "-u", user, "--conf", str(cluster.conf_dir))
    assert result.code == 0, result
    fields = dict(line.split("=", 1) for line in result.out.split())
    return fields["awsAccessKey"], fields["awsSecret"]


@contextmanager
def s3_cluster(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    user: str = "tester",
    overrides: dict[str, str] | None = None,
) -> Iterator[S3Endpoint]:
    with live_cluster(
        request, tmp_path_factory, name, 3, overrides={**OVERRIDES, **(overrides or {})}
    ) as cluster:
        access_key, secret_key = getsecret(cluster, user)
        url = f"http://{HOST}:{cluster.port('s3g', 'http')}"
        yield S3Endpoint(cluster, url, access_key, secret_key)
