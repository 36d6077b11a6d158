"""OM's JSON APIs over a running daemon (fake SCM): items as `pyozone sh ... --json` prints them, cursor
pages, key locations, open keys, counts and the deleting services, bad input, and 503 before OM has bound
to its cluster."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pyozone.client.json_views import bucket_dict, key_dict, volume_dict
from pyozone.om.server import OmDaemon
from pyozone.proto import OmClientProtocol_pb2 as pb
from pyozone.protocol.om import bucket_info_from_proto, key_info_from_proto, volume_info_from_proto
from tests.polling import wait_for_async
from tests.unit.om.om_fakes import FakeScm, open_location
from tests.unit.om.server.web.om_web import RunningOM, conf, run, running_om


async def namespace(om: RunningOM) -> None:
    """vol1 (with a namespace quota) holding bkt with keys a, dir/x, dir/y; vol2 empty. No space quota: under
    one OM checks each block's length with the datanodes, and these blocks are on none."""
    await om.stub.createVolume(pb.CreateVolumeRequest(volume="vol1", quotaInNamespace=5))
    await om.stub.createVolume(pb.CreateVolumeRequest(volume="vol2"))
    await om.stub.createBucket(pb.CreateBucketRequest(volume="vol1", bucket="bkt"))
    for key in ("a", "dir/x", "dir/y"):
        await om.put_key("vol1", "bkt", key)


def test_lists_are_what_sh_prints_in_cursor_pages(tmp_path: Path) -> None:
    async def body() -> None:
        async with running_om(tmp_path) as om:
            await namespace(om)
            info = await om.stub.infoVolume(pb.InfoVolumeRequest(volume="vol1"))
            listed = await om.json("/api/v1/volumes")
            assert listed["items"][0] == volume_dict(volume_info_from_proto(info.volume))
            assert [v["name"] for v in listed["items"]] == ["vol1", "vol2"]
            assert listed["items"][0]["quotaInNamespace"] == 5 and listed["items"][0]["usedNamespace"] == 1
            assert (listed["next"], listed["total"], listed["limit"]) == (None, None, 100)

            first = await om.json("/api/v1/volumes", limit=1)
            assert ([v["name"] for v in first["items"]], first["next"]) == (["vol1"], "vol1")
            second = await om.json("/api/v1/volumes", limit=1, startAfter=first["next"])
            assert ([v["name"] for v in second["items"]], second["next"]) == (["vol2"], None)

            buckets = await om.json("/api/v1/volumes/vol1/buckets")
            bucket = await om.stub.infoBucket(pb.InfoBucketRequest(volume="vol1", bucket="bkt"))
            assert buckets["items"] == [bucket_dict(bucket_info_from_proto(bucket.bucket))]
            assert buckets["total"] == 1
            assert await om.json("/api/v1/volumes/vol1/buckets/bkt") == buckets["items"][0]
            assert (await om.json("/api/v1/volumes/vol1"))["usedNamespace"] == 1

            keys = await om.json("/api/v1/volumes/vol1/buckets/bkt/keys")
            listed_keys = await om.stub.listKeys(pb.ListKeysRequest(volume="vol1", bucket="bkt"))
            assert keys["items"] == [key_dict(key_info_from_proto(k)) for k in listed_keys.keys]
            assert keys["total"] == 3
            page = await om.json("/api/v1/volumes/vol1/buckets/bkt/keys", prefix="dir/", limit=1)
            assert ([k["name"] for k in page["items"]], page["next"], page["total"]) == (
                ["dir/x"],
                "dir/x",
                None,
            )
            rest = await om.json("/api/v1/volumes/vol1/buckets/bkt/keys", prefix="dir/", startAfter="dir/x")
            assert [k["name"] for k in rest["items"]] == ["dir/y"] and rest["next"] is None

    run(body())


def test_key_detail_has_its_locations(tmp_path: Path) -> None:
    async def body() -> None:
        scm = FakeScm()
        async with running_om(tmp_path, scm) as om:
            await namespace(om)
            scm.locations[1] = open_location(1)
            detail = await om.json("/api/v1/volumes/vol1/buckets/bkt/key?name=dir/x")
            assert detail["name"] == "dir/x" and detail["dataSize"] == 100
            assert detail["replicationConfig"]["replicationType"] == "RATIS"
            (location,) = detail["ozoneKeyLocations"]
            assert location["containerID"] == 1 and location["length"] == 100
            assert location["containerState"] == "OPEN" and len(location["datanodes"]) == 3
            await om.put_key("vol1", "bkt", "a/../b")  # a path would lose "..": the name is a parameter
            assert (await om.json("/api/v1/volumes/vol1/buckets/bkt/key", name="a/../b"))["name"] == "a/../b"

            scm.container = 2  # a container OM has not located yet
            await om.put_key("vol1", "bkt", "elsewhere")
            scm.unreachable = True
            status, answer = await om.get("/api/v1/volumes/vol1/buckets/bkt/key?name=elsewhere")
            assert status == 503 and "SCM is unreachable" in answer["error"]

    run(body())


def test_open_keys_counts_and_services(tmp_path: Path) -> None:
    async def body() -> None:
        async with running_om(tmp_path) as om:
            await namespace(om)
            opened = await om.open_key("vol1", "bkt", "being-written", 10)
            await om.stub.deleteKey(pb.DeleteKeyRequest(volume="vol1", bucket="bkt", key="a"))

            open_keys = await om.json("/api/v1/openkeys")
            (item,) = open_keys["items"]
            assert (item["name"], item["clientID"], item["blocks"]) == ("being-written", opened.clientID, 1)
            assert item["openKey"] == f"/vol1/bkt/being-written/{opened.clientID}"
            assert (await om.json("/api/v1/openkeys", prefix="/vol2/"))["items"] == []

            overview = await om.json("/api/v1/overview")
            assert overview["clusterId"] == "CID-test" and overview["omId"] == om.daemon.storage.om_uuid
            assert (overview["volumes"], overview["buckets"], overview["keys"]) == (2, 1, 2)
            assert (overview["openKeys"], overview["pendingDeletions"]) == (1, 1)
            assert overview["usedBytes"] == 2 * 100 * 3  # two keys of 100 bytes, three replicas
            requests = {r["type"]: r for r in overview["requests"]}
            assert requests["CommitKey"]["count"] == 3 and requests["CreateKey"]["count"] == 4

            await om.daemon.off_loop(om.daemon.key_deleting.run_once)
            await om.daemon.counter.current(0)
            services = await om.json("/api/v1/services")
            deleting = services["keyDeleting"]
            assert (deleting["runs"], deleting["keysProcessed"], deleting["keysPurged"]) == (1, 1, 1)
            assert deleting["pendingKeys"] == 0 and deleting["lastRun"] > 0
            assert services["openKeyCleanup"]["openKeys"] == 1 and services["openKeyCleanup"]["runs"] == 0
            lifecycle = services["s3Lifecycle"]
            assert (lifecycle["intervalMs"], lifecycle["limitPerRun"], lifecycle["runs"]) == (
                3600_000,
                1000,
                0,
            )

    run(body())


def test_bad_input_and_unknown_names(tmp_path: Path) -> None:
    async def body() -> None:
        async with running_om(tmp_path) as om:
            await namespace(om)
            for path, params, status, words in [
                ("/api/v1/volumes", {"limit": 0}, 400, "limit=0"),
                ("/api/v1/volumes", {"limit": 1001}, 400, "limit=1001"),
                ("/api/v1/volumes", {"limit": "x"}, 400, "not an integer"),
                ("/api/v1/volumes", {"prefix": "p" * 1025}, 400, "prefix"),
                ("/api/v1/volumes/nope", {}, 404, "nope"),
                ("/api/v1/volumes/nope/buckets", {}, 404, "nope"),
                ("/api/v1/volumes/vol1/buckets/nope/keys", {}, 404, "vol1/nope"),
                ("/api/v1/volumes/vol1/buckets/bkt/key", {"name": "nope"}, 404, "nope"),
                ("/api/v1/volumes/vol1/buckets/bkt/key", {}, 400, "name"),
                ("/api/v1/openkeys", {"startAfter": "s" * 2000}, 400, "startAfter"),
            ]:
                got, answer = await om.get(path, **params)
                assert got == status and words in answer["error"], (path, params, got, answer)

    run(body())


def test_apis_answer_503_until_om_has_bound_to_its_cluster(tmp_path: Path) -> None:
    async def body() -> None:
        scm = FakeScm()
        scm.unreachable = True
        daemon = OmDaemon(conf(tmp_path), scm)
        starting = asyncio.create_task(daemon.start())
        try:
            await wait_for_async(lambda: daemon.http_port, 5, "the OM's HTTP port")
            import aiohttp

            async with aiohttp.ClientSession() as http:
                for path in ("/api/v1/overview", "/api/v1/volumes", "/api/v1/services", "/api/v1/openkeys"):
                    async with http.get(f"http://127.0.0.1:{daemon.http_port}{path}") as r:
                        assert r.status == 503 and "not bound" in (await r.json())["error"], path
                scm.unreachable = False
                await asyncio.wait_for(starting, 10)
                async with http.get(f"http://127.0.0.1:{daemon.http_port}/api/v1/overview") as r:
                    assert r.status == 200 and (await r.json())["volumes"] == 0
        finally:
            starting.cancel()
            await daemon.stop(0.5)

    run(body())
