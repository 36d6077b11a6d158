"""OM's metrics: every request observed once by its Ozone type, Ozone's OMMetrics counters read from that
observation, the namespace's counts (kept, current, never a keyTable scan) and the deleting services'
progress, all through /prom as Prometheus parses it."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from pyozone.common.web.metrics import MetricsSystem
from pyozone.om.metadata import DELETED_TABLE
from pyozone.om.server import counts
from pyozone.om.server.counts import NamespaceCounter
from pyozone.om.server.metrics import OZONE_OPS, OMMetrics
from pyozone.om.server.rpc import request_type
from pyozone.om.server.service import OzoneManagerService
from pyozone.proto import OmClientProtocol_pb2 as pb
from tests.prometheus import samples
from tests.unit.om.om_fakes import make_om
from tests.unit.om.server.web.om_web import run, running_om


def test_every_rpc_has_ozones_request_type() -> None:
    rpcs = [m.name for m in pb.DESCRIPTOR.services_by_name["OzoneManagerService"].methods]
    types = {request_type(name) for name in rpcs}
    assert request_type("openKey") == "CreateKey" and request_type("createVolume") == "CreateVolume"
    assert request_type("listVolumes") == "ListVolume" and request_type("getServiceInfo") == "ServiceList"
    assert set(OZONE_OPS) <= types, set(OZONE_OPS) - types
    wrapped = [name for name in rpcs if not hasattr(getattr(OzoneManagerService, name), "__wrapped__")]
    assert wrapped == [], "every handler goes through rpc(), where it is observed"


def test_ozone_counters_are_read_from_the_one_observation() -> None:
    metrics = OMMetrics(MetricsSystem("OzoneManager", process=False))
    for kind, failed in [("CommitKey", False), ("CommitKey", True), ("CreateKey", False), ("Other", False)]:
        metrics.observe(kind, 0.003, failed)
    found = samples(metrics.system.prometheus_text().decode())
    assert found['om_request_seconds_count{type="CommitKey"}'] == 2
    assert found['om_request_seconds_bucket{le="0.005",type="CommitKey"}'] == 2
    assert found['om_request_failures_total{type="CommitKey"}'] == 1
    assert found["om_metrics_num_key_commits_total"] == 2  # as Ozone: a failed commit counts in both
    assert found["om_metrics_num_key_commit_fails_total"] == 1
    assert found["om_metrics_num_key_allocate_total"] == 1
    assert found["om_metrics_num_key_ops_total"] == 3 and found["om_metrics_num_volume_ops_total"] == 0
    assert found["om_metrics_num_volume_creates_total"] == 0  # every Ozone counter, from the start
    assert found['om_request_seconds_count{type="Other"}'] == 1
    assert metrics.changes == 4  # none of them a read
    metrics.observe("LookupKey", 0.001, False)
    assert metrics.changes == 4
    stats = metrics.by_type()["CommitKey"]
    assert (stats.count, stats.failures) == (2, 1) and abs(stats.seconds - 0.006) < 1e-9


def test_the_daemon_counts_requests_namespace_and_services(tmp_path: Path) -> None:
    async def body() -> None:
        async with running_om(tmp_path) as om:
            await om.stub.createVolume(pb.CreateVolumeRequest(volume="vol1"))
            failed = None
            try:
                await om.stub.createVolume(pb.CreateVolumeRequest(volume="vol1"))
            except Exception as e:  # VOLUME_ALREADY_EXISTS
                failed = e
            assert failed is not None
            await om.stub.createBucket(pb.CreateBucketRequest(volume="vol1", bucket="bkt"))
            for key in ("a", "b", "c"):
                await om.put_key("vol1", "bkt", key)
            await om.open_key("vol1", "bkt", "open")
            await om.stub.deleteKey(pb.DeleteKeyRequest(volume="vol1", bucket="bkt", key="a"))
            await om.daemon.counter.current(0)  # a scrape shows the last count: make it this one

            status, text = await om.get("/prom")
            assert status == 200
            found = samples(text)
            assert found['om_request_seconds_count{type="CreateVolume"}'] == 2
            assert found['om_request_failures_total{type="CreateVolume"}'] == 1
            assert found["om_metrics_num_volume_creates_total"] == 2
            assert found["om_metrics_num_volume_create_fails_total"] == 1
            assert found["om_metrics_num_key_commits_total"] == 3
            assert found["om_metrics_num_key_allocate_total"] == 4
            assert found["om_metrics_num_key_deletes_total"] == 1
            assert found["om_metrics_num_bucket_creates_total"] == 1
            assert (found["om_metrics_num_volumes"], found["om_metrics_num_buckets"]) == (1, 1)
            assert (found["om_metrics_num_keys"], found["om_metrics_num_open_keys"]) == (2, 1)
            assert found["om_key_deleting_service_pending_keys"] == 1
            assert found["deleting_service_metrics_num_keys_purged_total"] == 0

            await om.daemon.off_loop(om.daemon.key_deleting.run_once)
            await om.daemon.off_loop(om.daemon.open_key_cleanup.run_once)
            # the scrape starts a count (the services ran), the next one shows it
            await om.get("/prom")
            await om.daemon.counter.current(60)
            found = samples((await om.get("/prom"))[1])
            assert found["deleting_service_metrics_num_keys_processed_total"] == 1
            assert found["deleting_service_metrics_num_keys_purged_total"] == 1
            assert found["om_key_deleting_service_runs_total"] == 1
            assert found["om_key_deleting_service_failed_runs_total"] == 0
            assert found["om_open_key_cleanup_service_runs_total"] == 1
            assert found["om_open_key_cleanup_service_keys_expired_total"] == 0
            assert found["om_key_deleting_service_pending_keys"] == 0
            assert found["om_s3_lifecycle_service_runs_total"] == 0
            await om.daemon.off_loop(om.daemon.s3_lifecycle.run_once)
            found = samples((await om.get("/prom"))[1])
            assert found["om_s3_lifecycle_service_runs_total"] == 1
            assert found["om_s3_lifecycle_service_keys_expired_total"] == 0
            assert found["om_s3_lifecycle_service_last_run_duration_seconds"] >= 0

            beans = (await om.json("/jmx", qry="Hadoop:service=OzoneManager,name=OMMetrics"))["beans"]
            assert beans[0]["om_metrics_num_key_commits_total"] == 3

    run(body())


def test_counts_are_reused_until_something_changes(tmp_path: Path) -> None:
    om = make_om(tmp_path)
    om.volumes.create("vol1")
    om.buckets.create("vol1", "bkt")
    executor = ThreadPoolExecutor(1)
    version = [0]
    now = [100.0]
    counter = NamespaceCounter(om.store, executor, lambda: version[0], lambda: now[0])
    try:
        assert counter.latest is None
        first = counter.refresh(30)
        assert first is not None and first.result().volumes == 1 and counter.latest is first.result()
        assert counter.refresh(30) is None  # nothing changed, young enough
        now[0] += 31
        too_old = counter.refresh(30)
        assert too_old is not None and too_old.result().volumes == 1
        assert counter.refresh(30) is None
        version[0] += 1  # a request that may change the namespace
        om.volumes.create("vol2")
        changed = counter.refresh(30)
        assert changed is not None and changed.result().volumes == 2

        gate = threading.Event()
        slow: Future = executor.submit(gate.wait)  # the only worker is busy: a count waits behind it
        version[0] += 1
        a, b = counter.refresh(30), counter.refresh(30)
        assert a is b and a is not None  # one count at a time
        gate.set()
        slow.result()
        a.result()
    finally:
        executor.shutdown()
        om.store.close()


def test_open_keys_and_deletions_are_counted_up_to_a_cap(tmp_path: Path, monkeypatch) -> None:
    om = make_om(tmp_path)
    om.store.write([(DELETED_TABLE, f"/v/b/k/{i}", b"") for i in range(5)])
    monkeypatch.setattr(counts, "COUNT_CAP", 3)
    found = counts.count_namespace(om.store)
    assert found.pending_deletions == 3 and found.pending_deletions_capped
    assert found.open_keys == 0 and not found.open_keys_capped
    assert (found.volumes, found.buckets, found.keys) == (0, 0, 0)
    om.store.close()
