"""A request's answer waits for its transaction's flush; a failed flush fails the waiting requests."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pyozone.om.metadata import VOLUME_TABLE, OMMetadataStore, OMStoreError
from pyozone.om.server.durability import DurableGate


def test_waiters_resume_once_their_epochs_are_flushed(tmp_path: Path) -> None:
    store = OMMetadataStore(tmp_path / "om.db")

    async def main() -> list[int]:
        gate = DurableGate(store)
        epochs = [store.write([(VOLUME_TABLE, f"/v{i}", b"x")]) for i in range(20)]
        await asyncio.wait_for(asyncio.gather(*(gate.wait(e) for e in epochs)), 10)
        return epochs

    epochs = asyncio.run(main())
    assert store.flushed_epoch >= max(epochs)
    store.close()


def test_a_failed_flush_fails_the_waiting_request(tmp_path: Path) -> None:
    store = OMMetadataStore(tmp_path / "om.db", on_failure=lambda e: None)

    async def main() -> None:
        gate = DurableGate(store)
        store._backend.close()  # the next flush fails
        epoch = store.write([(VOLUME_TABLE, "/v", b"x")])
        await asyncio.wait_for(gate.wait(epoch), 10)

    with pytest.raises(OMStoreError, match="write failed"):
        asyncio.run(main())
