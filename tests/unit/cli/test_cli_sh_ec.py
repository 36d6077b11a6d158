"""`pyozone sh` with EC configs: -t/-r as Ozone's shell takes them, Ozone's replicationConfig JSON, and
bucket create / info / key list / key info against an in-process OM (with a fake SCM)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pyozone.cli.sh import replication_arg, replication_dict
from pyozone.common.cli_options import CLIError
from pyozone.hdds.ids import RATIS_THREE, ReplicationConfig
from pyozone.om.server import OmDaemon
from tests.cli_support import Result
from tests.unit.om.test_om_ec_keys import EcScm
from tests.unit.om.test_om_server import conf

RS_3_2 = ReplicationConfig.parse("rs-3-2-1024k")


@pytest.mark.parametrize(
    ("rtype", "replication", "expected"),
    [
        (None, None, None),
        (None, "ONE", "RATIS/ONE"),
        (None, "3", "RATIS/THREE"),
        ("RATIS", None, "RATIS/THREE"),
        ("RATIS", "ONE", "RATIS/ONE"),
        ("EC", "rs-3-2-1024k", "EC/RS-3-2-1024k"),
        ("EC", "RS-6-3-1024K", "EC/RS-6-3-1024k"),
        ("EC", "xor-2-1-1024k", "EC/XOR-2-1-1024k"),
        (None, "rs-10-4-1024k", "EC/RS-10-4-1024k"),  # an EC name alone means EC
        (None, "EC/RS-3-2-1024k", "EC/RS-3-2-1024k"),
        (None, "RATIS/ONE", "RATIS/ONE"),
        ("STAND_ALONE", "ONE", "STAND_ALONE/ONE"),
    ],
)
def test_type_and_replication_as_ozones_shell_takes_them(rtype, replication, expected) -> None:  # type: ignore[no-untyped-def]
    assert replication_arg(rtype, replication) == (expected and ReplicationConfig.parse(expected))


@pytest.mark.parametrize(
    ("rtype", "replication", "fragments"),
    [
        ("EC", None, ("-t EC:", "rs-3-2-1024k")),
        ("EC", "THREE", ("-t EC -r THREE:", "EC takes -r CODEC-DATA-PARITY-CHUNKk")),
        ("EC", "rs-3-2", ("-t EC -r rs-3-2:", "EC takes")),
        ("EC", "foo-3-2-1024k", ("codec 'foo'", "RS, XOR")),
        ("EC", "xor-3-2-1024k", ("XOR has exactly one parity",)),
        ("EC", "RATIS/THREE", ("RATIS/THREE is not supported for EC replication type",)),
        ("RATIS", "rs-3-2-1024k", ("rs-3-2-1024k is not supported for RATIS replication type",)),
        ("RATIS", "EC/RS-3-2-1024k", ("is not supported for RATIS replication type",)),
        (None, "FIVE", ("-r FIVE", "ONE, THREE")),
        ("RATIS", "5", ("ONE or THREE",)),
    ],
)
def test_bad_combinations_are_clear_errors(rtype, replication, fragments) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CLIError) as refused:
        replication_arg(rtype, replication)
    for fragment in fragments:
        assert fragment in str(refused.value), (fragment, str(refused.value))


def test_replication_config_json_is_ozones() -> None:
    ec = replication_dict(RS_3_2)
    assert list(ec.items()) == [
        ("data", 3),
        ("parity", 2),
        ("ecChunkSize", 1048576),
        ("codec", "RS"),
        ("replicationType", "EC"),
        ("requiredNodes", 5),
    ]
    assert replication_dict(RATIS_THREE) == {
        "replicationFactor": "THREE",
        "requiredNodes": 3,
        "replicationType": "RATIS",
    }
    assert replication_dict(ReplicationConfig.parse("STAND_ALONE/ONE"))["replicationType"] == "STANDALONE"


@pytest.fixture
def om(tmp_path: Path) -> Iterator[OmDaemon]:
    """An OM daemon on its own event loop thread, so the synchronous CLI can talk to it."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    daemon = OmDaemon(conf(tmp_path), EcScm())
    asyncio.run_coroutine_threadsafe(daemon.start(), loop).result(20)
    try:
        yield daemon
    finally:
        asyncio.run_coroutine_threadsafe(daemon.stop(0.5), loop).result(20)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@pytest.fixture
def sh(cli: Callable[..., Result], om: OmDaemon) -> Callable[..., Result]:
    return lambda *args: cli("sh", *args, "--om", f"127.0.0.1:{om.rpc_port}")


def one_line_error(result: Result, *fragments: str) -> None:
    assert result.code == 1 and result.err.count("\n") == 1, result
    for fragment in fragments:
        assert fragment in result.err, (fragment, result.err)


def test_ec_buckets_and_keys_in_the_shell(sh: Callable[..., Result], om: OmDaemon) -> None:
    assert sh("volume", "create", "/vol").code == 0
    assert sh("bucket", "create", "/vol/ec3", "--type", "EC", "--replication", "rs-3-2-1024k").code == 0
    assert sh("bucket", "create", "/vol/ec6", "-t", "EC", "-r", "rs-6-3-1024k").code == 0
    assert sh("bucket", "create", "/vol/one", "-r", "ONE").code == 0
    info = json.loads(sh("bucket", "info", "/vol/ec3").out)
    assert info["replicationConfig"] == replication_dict(RS_3_2)
    listed = json.loads(sh("bucket", "list", "/vol").out)
    assert [(b["name"], b["replicationConfig"]["requiredNodes"]) for b in listed] == [
        ("ec3", 5),
        ("ec6", 9),
        ("one", 1),
    ]
    assert om.core is not None  # a key of its own config in a RATIS bucket, and one taking its bucket's
    for bucket, key, config in (("one", "ec-key", RS_3_2), ("ec3", "inherits", None)):
        session = om.core.keys.open("vol", bucket, key, 0, config)
        om.core.keys.commit("vol", bucket, key, session.client_id, 0, [])
    keys = json.loads(sh("key", "list", "/vol/one").out)
    assert [(k["name"], k["replicationConfig"]) for k in keys] == [("ec-key", replication_dict(RS_3_2))]
    key = json.loads(sh("key", "info", "/vol/ec3/inherits").out)
    assert key["replicationConfig"]["codec"] == "RS" and key["replicationConfig"]["data"] == 3
    assert json.loads(sh("key", "info", "/vol/one/ec-key").out)["replicationConfig"]["parity"] == 2


def test_refusals_in_the_shell(sh: Callable[..., Result], tmp_path: Path) -> None:
    sh("volume", "create", "/vol")
    one_line_error(
        sh("bucket", "create", "/vol/rs42", "-t", "EC", "-r", "rs-4-2-1024k"),
        "INVALID_REQUEST: Invalid replication config EC/4-2-1024k",
        "ozone.replication.allowed-configs",
    )
    one_line_error(sh("bucket", "create", "/vol/bad", "-t", "EC", "-r", "THREE"), "EC takes")
    one_line_error(sh("bucket", "create", "/vol/bad", "-t", "RATIS", "-r", "rs-3-2-1024k"), "not supported")
    source = tmp_path / "in"
    source.write_bytes(b"data")
    one_line_error(sh("key", "put", "/vol/bkt/k", str(source), "-t", "EC"), "EC takes")
    with pytest.raises(SystemExit) as usage:
        sh("bucket", "create", "/vol/bad", "-t", "ERASURE", "-r", "rs-3-2-1024k")
    assert usage.value.code == 2
    assert sh("bucket", "create", "/vol/lower", "-t", "ec", "-r", "rs-3-2-1024k").code == 0
    assert json.loads(sh("bucket", "list", "/vol").out)[0]["replicationConfig"]["replicationType"] == "EC"


def test_a_bucket_default_without_options_is_oms(sh: Callable[..., Result]) -> None:
    sh("volume", "create", "/vol")
    assert sh("bucket", "create", "/vol/bkt").code == 0
    assert json.loads(sh("bucket", "info", "/vol/bkt").out)["replicationConfig"] == replication_dict(
        RATIS_THREE
    )
