"""`pyozone om --init` (Ozone's OzoneManager.omInit): SCM's cluster id into om/current/VERSION and an empty
om.db, then exit; a second --init reuses the identity. The mode flags are checked before anything starts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pyozone.cli.main import main
from pyozone.om.master_keys import KEYSTORE_FILE, MasterKeyStore
from pyozone.om.server import OmDaemon, ServerStartError
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


def test_a_lone_om_refuses_to_start_without_the_keystore_its_om_db_names(tmp_path: Path) -> None:
    """R36 F2: a keystore lost at a restart is never replaced by a new one (every SSE-S3 key om.db holds
    would be unreadable), nor is another keystore taken for it."""
    scm = FakeScm()
    init(tmp_path, scm)
    keystore = tmp_path / KEYSTORE_FILE
    saved = keystore.read_bytes()

    async def start() -> None:
        daemon = OmDaemon(conf(tmp_path), scm)
        try:
            await daemon.start()
        finally:
            await daemon.stop(0)

    asyncio.run(start())
    keystore.rename(tmp_path / "moved-away")
    with pytest.raises(ServerStartError, match=f"{keystore}: missing, while om.db's SSE-S3 data keys"):
        asyncio.run(start())
    assert not keystore.exists()
    MasterKeyStore.create(keystore)
    with pytest.raises(ServerStartError, match=f"{keystore}: keystore [0-9a-f]+, while om.db's"):
        asyncio.run(start())
    keystore.unlink()
    (tmp_path / "moved-away").rename(keystore)
    asyncio.run(start())
    assert keystore.read_bytes() == saved
