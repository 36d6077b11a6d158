"""A slow EC writer on live processes (review 14b): datanodes close a datastream idle for
hdds.ratis.raft.server.rpc.request.timeout (1 s here). A key of unknown size writes its cells by gRPC
writeChunk, which has no idle cut, so pauses cost nothing; a key that does take the datastream ports and
pauses longer ends its group there, rewrites the rest, and excludes no container, pipeline or datanode.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from pyozone.hdds.ids import ReplicationConfig
from tests.e2e.cluster.cluster_helpers import LiveCluster, live_cluster, ozone_client

RS = ReplicationConfig.parse("rs-3-2-1024k")
STRIPE = RS.ec_data * RS.ec_chunk_size
IDLE_S = 1.0
PAUSE_S = 1.8  # the writer's own pause, longer than a datanode keeps an idle stream


@pytest.fixture(scope="module")
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveCluster]:
    overrides = {
        "hdds.ratis.raft.server.rpc.request.timeout": f"{IDLE_S:g}s",
        # five datanodes for rs-3-2: every one must stay placeable whatever the host disk has free
        "ozone.scm.container.size": "256MB",
    }
    with live_cluster(request, tmp_path_factory, "ec-slow", 5, overrides=overrides) as c:
        c.wait_healthy(5)
        with ozone_client(c) as client:
            client.create_volume("slow")
            client.create_bucket("slow", "keys", RS.ec_name)
        yield c


def _write_slowly(writer, data: bytes) -> None:  # type: ignore[no-untyped-def]
    for i in range(0, len(data), STRIPE):
        writer.write(data[i : i + STRIPE])
        if i == 0:
            time.sleep(PAUSE_S)


def test_a_paused_writer_of_unknown_size_loses_no_group(cluster: LiveCluster) -> None:
    data = os.urandom(3 * STRIPE)
    with ozone_client(cluster) as client:
        writer = client.create_key("slow", "keys", "unknown", size_hint=0)
        with writer:
            _write_slowly(writer, data)
        assert writer.stream.retries == 0
        assert len(client.key_info("slow", "keys", "unknown").locations) == 1
        with client.read_key("slow", "keys", "unknown") as reader:
            assert reader.readall() == data


def test_a_datastream_closed_while_idle_ends_the_group_and_excludes_nothing(cluster: LiveCluster) -> None:
    data = os.urandom(3 * STRIPE)
    with ozone_client(cluster) as client:
        writer = client.create_key("slow", "keys", "streamed", size_hint=len(data))
        writer.stream._datastream = True  # test-only: the cells go over the datastream ports
        with writer:
            _write_slowly(writer, data)
        stream = writer.stream
        assert stream.retries >= 1 and all("STREAM_IDLE" in f for f in stream._failures), stream._failures
        excluded = stream.exclude_list
        assert (excluded.containers, excluded.pipelines, excluded.datanodes) == (set(), set(), set())
        with client.read_key("slow", "keys", "streamed") as reader:
            assert reader.readall() == data
