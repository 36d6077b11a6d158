"""`pyozone om --init` (Ozone's OzoneManager.omInit): SCM's cluster id into om/current/VERSION and an empty
om.db, then exit; a second --init reuses the identity. The mode flags are checked before anything starts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pyozone.cli.main import main
from pyozone.om.server import OmDaemon
from pyozone.om.storage import read_om_storage
from tests.unit.om.om_fakes import FakeScm
from tests.unit.om.test_om_server import conf


def init(tmp_path: Path, scm: FakeScm) -> tuple[str, bool]:
    async def run() -> tuple[str, bool]:
        daemon = OmDaemon(conf(tmp_path), scm)
        try:
            storage, created = await daemon.initialize()
        finally:
            await daemon.stop(0)
        return storage.om_uuid, created

    return asyncio.run(run())


def test_init_writes_the_identity_and_an_empty_om_db_once(tmp_path: Path) -> None:
    scm = FakeScm()
    om_uuid, created = init(tmp_path, scm)
    assert created
    stored = read_om_storage(tmp_path)
    assert stored is not None and stored.om_uuid == om_uuid
    assert stored.cluster_id == scm.scm_info().cluster_id
    assert (tmp_path / "om.db").is_dir()
    again, created = init(tmp_path, scm)
    assert (again, created) == (om_uuid, False)


def test_the_mode_flags_are_checked_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = ["-D", f"ozone.metadata.dirs={tmp_path}"]
    assert main(["om", *site, "--force"]) == 1
    assert "--force only applies to --bootstrap" in capsys.readouterr().err
    assert main(["om", *site, "--bootstrap"]) == 1
    assert "ozone.om.service.ids is not set" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["om", *site, "--init", "--bootstrap"])
