"""`pyozone admin snapshot` against a live in-process SCM daemon with fake datanodes heartbeating."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pyozone import protocol as p
from pyozone import rpc
from pyozone.analytics.schema import MANIFEST, SCHEMA_VERSION, TABLES
from pyozone.analytics.snapshot_reader import open_snapshot_tables
from pyozone.analytics.snapshot_stream import snapshot_chunks
from pyozone.cli.main import main
from pyozone.common.net import HostPort
from pyozone.framework.scm_block import ScmBlockClient
from pyozone.hdds.ids import RATIS_THREE
from pyozone.proto import ScmAdminProtocol_pb2 as pb
from tests.unit.scm.server.scm_server_helpers import (
    FakeDatanode,
    admin_stub,
    async_test,
    channel,
    heartbeat_until,
    running_scm,
    scm_conf,
)


async def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Runs `pyozone ARGV` in a thread, as a separate process would, while the loop serves SCM."""
    code = await asyncio.to_thread(main, list(argv))
    out, err = capsys.readouterr()
    return code, out, err


async def keep_heartbeating(datanodes: list[FakeDatanode]) -> None:
    while True:
        for dn in datanodes:
            await dn.heartbeat()
        await asyncio.sleep(0.05)  # the fake datanodes' heartbeat interval


@async_test
async def test_snapshot_of_a_live_scm_matches_the_admin_listings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conf = scm_conf(tmp_path / "scm", {"hdds.scm.safemode.min.datanode": "3"})
    async with running_scm(conf) as scm, channel(scm.datanode_port) as dn_channel:
        datanodes = [FakeDatanode(i, dn_channel) for i in (1, 2, 3)]
        for dn in datanodes:
            assert (await dn.register()).success
        await heartbeat_until(datanodes, lambda: not scm.core.safe_mode.in_safe_mode(), timeout_s=10)
        blocks = ScmBlockClient(HostPort("127.0.0.1", scm.block_port), timeout_s=5)
        block = await asyncio.to_thread(blocks.allocate_block, 4096, RATIS_THREE, "om1")
        await asyncio.to_thread(blocks.close)
        heartbeats = asyncio.create_task(keep_heartbeating(datanodes))
        scm_address = f"127.0.0.1:{scm.client_port}"
        out_dir = tmp_path / "snap"
        try:
            code, out, err = await cli(
                capsys, "admin", "snapshot", "--out", str(out_dir), "--scm", scm_address, "--batch-rows", "1"
            )
            assert (code, err) == (0, "")
            _, nodes_json, _ = await cli(capsys, "admin", "datanode", "list", "--json", "--scm", scm_address)
            _, pipelines_json, _ = await cli(
                capsys, "admin", "pipeline", "list", "--json", "--scm", scm_address
            )
        finally:
            heartbeats.cancel()
        lines = out.splitlines()
        cluster_id, version = scm.core.cluster_id, SCHEMA_VERSION
        assert lines[0] == f"Snapshot of cluster {cluster_id} in {out_dir} (schema version {version})"
        assert "keys: 0 (not asked for: --keys)" in lines
        tables = open_snapshot_tables(out_dir)
        listed_nodes, listed_pipelines = json.loads(nodes_json), json.loads(pipelines_json)
        node_rows = tables["nodes"].to_table().to_pylist()
        assert f"nodes: {len(listed_nodes)}" in lines and len(node_rows) == len(listed_nodes) == 3
        assert {(r["uuid"], r["hostname"], r["rack"]) for r in node_rows} == {
            (n["uuid"], n["hostname"], n["networkLocation"]) for n in listed_nodes
        }
        pipeline_rows = tables["pipelines"].to_table().to_pylist()
        assert f"pipelines: {len(listed_pipelines)}" in lines and len(pipeline_rows) == len(listed_pipelines)
        assert {(r["pipeline_id"], r["state"]) for r in pipeline_rows} == {
            (x["id"], x["state"]) for x in listed_pipelines
        }
        containers = tables["containers"].to_table().to_pylist()
        assert block.block_id.container_id in {c["container_id"] for c in containers}
        assert len(containers) == scm.core.containers.count() and "containers: 1" in lines
        assert tables["keys"].count_rows() == 0


@async_test
async def test_the_stream_announces_then_sends_every_row(tmp_path: Path) -> None:
    conf = scm_conf(tmp_path / "scm", {"hdds.scm.safemode.min.datanode": "3"})
    async with (
        running_scm(conf) as scm,
        channel(scm.datanode_port) as dn_channel,
        channel(scm.client_port, p.MAX_ADMIN_MESSAGE_BYTES) as admin_channel,
    ):
        datanodes = [FakeDatanode(i, dn_channel) for i in (1, 2, 3)]
        for dn in datanodes:
            await dn.register()
        await heartbeat_until(datanodes, lambda: scm.core.pipelines.pipelines(), timeout_s=10)
        admin = admin_stub(admin_channel)
        chunks = [c async for c in admin.streamSnapshot(pb.SnapshotRequestProto(batchRows=2))]
        info = chunks[0].info
        assert chunks[0].WhichOneof("chunk") == "info" and info.clusterId == scm.core.cluster_id
        assert set(info.rows) == set(TABLES) and info.rows["nodes"] == 3 and info.rows["keys"] == 0
        tables = [c.batch.table for c in chunks[1:]]
        assert tables == sorted(tables, key=list(TABLES).index) and tables.count("nodes") == 2
        with pytest.raises(rpc.RpcError) as refused:
            async for _ in admin.streamSnapshot(pb.SnapshotRequestProto(batchRows=1_000_000)):
                pass
        assert refused.value.code() is rpc.StatusCode.INVALID_ARGUMENT
        assert "batchRows: at most 65536" in refused.value.details()


@async_test
async def test_bad_output_directory_and_unreachable_scm_fail_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = tmp_path / "done"
    done.mkdir()
    (done / MANIFEST).write_text("{}")
    code, _, err = await cli(capsys, "admin", "snapshot", "--out", str(done), "--scm", "127.0.0.1:1")
    assert code == 1 and "already holds a snapshot" in err
    fresh = tmp_path / "fresh"
    code, _, err = await cli(capsys, "admin", "snapshot", "--out", str(fresh), "--scm", "127.0.0.1:1")
    assert code == 1 and "cannot reach SCM at 127.0.0.1:1" in err
    assert not (fresh / MANIFEST).exists()


@pytest.mark.parametrize("fault", ["fails", "drops"])
@async_test
async def test_a_stream_cut_short_leaves_no_snapshot(
    fault: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SCM fails after some batches, or a batch goes missing: the CLI fails and writes no manifest."""
    real = snapshot_chunks

    async def faulty(core, batch_rows):
        chunks = [chunk async for chunk in real(core, batch_rows)]
        for chunk in chunks[:2]:
            yield chunk
        if fault == "fails":
            raise RuntimeError("disk on fire")
        for chunk in chunks[3:]:
            yield chunk

    conf = scm_conf(tmp_path / "scm", {"hdds.scm.safemode.min.datanode": "3"})
    async with running_scm(conf, faulty) as scm, channel(scm.datanode_port) as dn_channel:
        for dn in [FakeDatanode(i, dn_channel) for i in (1, 2, 3)]:
            await dn.register()
        out_dir = tmp_path / "snap"
        scm_address = f"127.0.0.1:{scm.client_port}"
        code, _, err = await cli(
            capsys, "admin", "snapshot", "--out", str(out_dir), "--scm", scm_address, "--batch-rows", "1"
        )
    expected = "streamSnapshot: internal error in SCM" if fault == "fails" else "announced rows"
    assert code == 1 and expected in err
    assert (out_dir / "nodes").is_dir() and not (out_dir / MANIFEST).exists()


@async_test
async def test_a_daemon_without_a_snapshot_source_refuses_the_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The daemon never imports analytics: started without a source it says so, and nothing is written."""
    async with running_scm(scm_conf(tmp_path / "scm"), None) as scm:
        out_dir = tmp_path / "snap"
        code, _, err = await cli(
            capsys, "admin", "snapshot", "--out", str(out_dir), "--scm", f"127.0.0.1:{scm.client_port}"
        )
    assert code == 1 and "started without snapshots" in err
    assert not (out_dir / MANIFEST).exists()
