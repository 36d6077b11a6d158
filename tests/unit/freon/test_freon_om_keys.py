"""omkg against a real OM daemon (fake SCM), in-process: empty keys committed, each acknowledged once with
its object id, and a stop event ends the load (as the crash harness drives it)."""

from __future__ import annotations

import threading
from pathlib import Path

from pyozone.client import OzoneClient
from pyozone.freon import FreonOptions, generate_om_keys
from tests.unit.om.om_thread import om_on_thread


def test_omkg_commits_empty_keys_and_acknowledges_each_with_its_object_id(tmp_path: Path) -> None:
    acknowledged: dict[str, int] = {}
    lock = threading.Lock()

    def ack(name: str, object_id: int) -> None:
        with lock:
            assert name not in acknowledged
            acknowledged[name] = object_id

    with om_on_thread(tmp_path) as address, OzoneClient(address) as client:
        options = FreonOptions("vol", "bucket", "omkg", number=25, threads=4)
        report = generate_om_keys(client, options, acknowledged=ack)
        listed = client.list_keys("vol", "bucket", "omkg/")
        looked = client.key_info("vol", "bucket", "omkg/7")
    assert (report.operation, report.unit, report.keys, report.bytes, report.ok) == (
        "omkg",
        "keys",
        25,
        0,
        True,
    )
    assert {k.name: k.object_id for k in listed} == acknowledged
    assert set(acknowledged) == {f"omkg/{i}" for i in range(25)}
    assert len(set(acknowledged.values())) == 25 and 0 not in acknowledged.values()
    assert {k.data_size for k in listed} == {0} and (looked.data_size, looked.locations) == (0, ())


def test_omkg_runs_until_stopped(tmp_path: Path) -> None:
    stop = threading.Event()
    acknowledged: list[str] = []

    def ack(name: str, object_id: int) -> None:
        acknowledged.append(name)
        if len(acknowledged) == 12:
            stop.set()

    with om_on_thread(tmp_path) as address, OzoneClient(address) as client:
        options = FreonOptions("vol", "bucket", "stop", number=None, threads=2)
        report = generate_om_keys(client, options, acknowledged=ack, stop=stop)
        listed = client.list_keys("vol", "bucket", "stop/")
    assert 12 <= report.keys <= 13 and report.keys == len(acknowledged) == len(listed)
