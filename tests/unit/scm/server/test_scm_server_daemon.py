"""The daemon's lifecycle in-process: readiness 503 -> 200, HTTP robustness, tick loop, bind errors."""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.analytics.snapshot_stream import snapshot_chunks
from pyozone.cli.main import main
from pyozone.common.http_server import HttpLimits
from pyozone.framework.scm_admin import ADMIN_SERVICE
from pyozone.hdds.limits import MiB
from pyozone.proto.ScmAdminProtocol_pb2 import GetScmInfoRequestProto
from pyozone.scm.server import ScmDaemon
from pyozone.scm.server.ticker import tick_interval_ms
from pyozone.scm.store.scm_db import open_scm_db
from pyozone.scm.store.version import init_scm, open_scm_store
from tests.polling import wait_for_async
from tests.unit.scm.server.scm_server_helpers import async_test, http_get, running_scm, scm_conf


@async_test
async def test_ready_answers_503_until_both_grpc_servers_serve(tmp_path: Path) -> None:
    conf = scm_conf(tmp_path)
    init_scm(conf)
    daemon = ScmDaemon(conf, *open_scm_store(conf), snapshot_source=snapshot_chunks)
    try:
        await daemon.start_http()
        status, body = await http_get(daemon.http_port, "/ready")
        assert status == 503 and body["ready"] is False
        assert (await http_get(daemon.http_port, "/health"))[0] == 200
        await daemon.start_rpc()
        status, body = await http_get(daemon.http_port, "/ready")
        assert status == 200
        assert body == {
            "ready": True,
            "clusterId": daemon.core.cluster_id,
            "safeMode": True,
            "preCheckPassed": False,
        }
        assert daemon.datanode_port and daemon.client_port and daemon.http_port
    finally:
        await daemon.stop(0)
    open_scm_db(tmp_path).close()  # stop() closed the store: its lock is free


@async_test
async def test_the_http_server_survives_bad_requests(tmp_path: Path) -> None:
    async with running_scm(scm_conf(tmp_path)) as scm:
        port = scm.http_port
        assert (await http_get(port, "/nope"))[0] == 404
        assert (await http_get(port, raw=b"POST /ready HTTP/1.1\r\nHost: x\r\n\r\n"))[0] == 405
        assert (await http_get(port, raw=b"garbage\r\n\r\n"))[0] == 400
        big = b"GET /ready HTTP/1.1\r\nX: " + b"y" * (HttpLimits().max_field_size + 1) + b"\r\n\r\n"
        assert (await http_get(port, raw=big))[0] == 431
        assert await http_get(port, raw=b"GET /rea") == (0, None)  # closed mid-request: no answer
        head = await http_get(port, raw=b"HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert head == (200, None)
        assert (await http_get(port, "/ready?verbose=1"))[0] == 200


@async_test
async def test_a_failing_tick_is_logged_and_the_loop_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with running_scm(scm_conf(tmp_path)) as scm:
        assert tick_interval_ms(scm.core) == 100
        calls = 0

        def tick() -> None:
            nonlocal calls
            calls += 1
            if calls == 1:
                raise RuntimeError("boom")

        scm.core.tick = tick  # type: ignore[method-assign]
        # ~4 ticks in 0.45 s; a loaded machine gets 5 s
        await wait_for_async(lambda: calls >= 3, 5, "three ticks", interval_s=0.05)
        assert "periodic work failed" in caplog.text and "boom" in caplog.text


def test_a_port_in_use_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYOZONE_LOG_LEVEL", "WARNING")
    md = f"ozone.metadata.dirs={tmp_path}"
    assert main(["scm", "--init", "-D", md]) == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        capsys.readouterr()
        overrides = {
            "ozone.metadata.dirs": str(tmp_path),
            "ozone.scm.http-address": "127.0.0.1:0",
            "ozone.scm.client.address": "127.0.0.1:0",
            "ozone.scm.datanode.address": f"127.0.0.1:{port}",
        }
        code = main(["scm", *(arg for key, value in overrides.items() for arg in ("-D", f"{key}={value}"))])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1, err
    assert err.startswith("pyozone scm: error: cannot bind the SCM to 127.0.0.1:")
    assert "ozone.scm.datanode.address" in err
    open_scm_db(tmp_path).close()  # the daemon closed the store on its way out


GARBAGE = (b"\xff" * 64, b"\x0a\xff\xff\xff\xff\x0f" + b"x" * 16)  # a runaway varint; a field past the end
SCM_METHODS = (
    ("client", "/pyozone.hdds.ScmAdminProtocolService/getContainer"),
    ("client", "/pyozone.hdds.ScmAdminProtocolService/streamSnapshot"),  # a streamed answer
    ("datanode", "/pyozone.hdds.StorageContainerDatanodeProtocolService/sendHeartbeat"),
    ("block", "/pyozone.hdds.block.ScmBlockLocationProtocolService/allocateScmBlock"),
)


@async_test
async def test_undecodable_requests_are_invalid_argument_without_a_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Bytes that are no request message are answered INVALID_ARGUMENT with one warning line (grpc.aio
    answered UNKNOWN and logged a traceback), and the servers go on serving."""
    async with running_scm(scm_conf(tmp_path)) as scm:
        ports = {"client": scm.client_port, "datanode": scm.datanode_port, "block": scm.block_port}
        for server, method in SCM_METHODS:
            async with rpc.Channel(f"127.0.0.1:{ports[server]}", rpc.ChannelSettings(MiB)) as channel:
                streamed = method.endswith("streamSnapshot")
                for garbage in GARBAGE:
                    with pytest.raises(rpc.RpcError) as error:
                        if streamed:
                            [m async for m in channel.stream(method, None, False, True, garbage, timeout=10)]
                        else:
                            await channel.unary(method, garbage, None, timeout=10)
                    assert error.value.code() is rpc.StatusCode.INVALID_ARGUMENT, (method, error.value)
                    assert "not a valid request message" in (error.value.details() or "")
        async with rpc.Channel(f"127.0.0.1:{scm.client_port}", rpc.ChannelSettings(MiB)) as channel:
            info = await rpc.Stub(channel, ADMIN_SERVICE).getScmInfo(GetScmInfoRequestProto(), timeout=10)
            assert info.clusterId
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


@async_test
async def test_admin_snapshot_into_an_unwritable_place_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """/proc takes no new directory: the OSError while writing is `--out ...: cannot write`, no traceback."""
    async with running_scm(scm_conf(tmp_path)) as scm:
        args = ["admin", "snapshot", "--out", "/proc/nope", "--scm", f"127.0.0.1:{scm.client_port}"]
        capsys.readouterr()
        code = await asyncio.to_thread(main, args)
    out, err = capsys.readouterr()
    assert (code, out) == (1, ""), err
    assert (
        err == "pyozone admin: error: --out /proc/nope: cannot write /proc/nope: No such file or directory\n"
    )


@pytest.mark.parametrize("mode", [(), ("--init",), ("--bootstrap",)])
def test_a_bad_setting_is_refused_before_the_store_opens_or_the_banner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: tuple[str, ...]
) -> None:
    """`pyozone scm` builds its settings first: a broken rule is one line, with nothing started, written or
    logged (the store is not even looked for: this SCM was never initialized); --init and --bootstrap
    refuse what the SCM they prepare would refuse."""
    md = f"ozone.metadata.dirs={tmp_path / 'scm'}"
    code = main(["scm", *mode, "-D", md, "-D", "ozone.scm.stale.node.interval=20m"])
    captured = capsys.readouterr()
    assert code == 1 and captured.out == "" and not (tmp_path / "scm").exists()
    assert captured.err == (
        "pyozone scm: error: ozone.scm.stale.node.interval='20m' (override), ozone.scm.dead.node.interval="
        "'10m' (default): the stale interval must be less than the dead interval\n"
    )
