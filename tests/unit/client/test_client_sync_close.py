"""Closing the synchronous client leaves no task pending on its loop (issue 11 defect 10: `sh key ls`
once printed grpc.aio's "Task was destroyed but it is pending!" at exit)."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from pyozone.client.sync import OzoneClient


def test_close_cancels_tasks_still_running_on_the_loop(caplog: pytest.LogCaptureFixture) -> None:
    client = OzoneClient("127.0.0.1:1")

    async def leave_a_task_behind() -> asyncio.Task[None]:
        return asyncio.get_running_loop().create_task(asyncio.sleep(30))

    task = client.run(leave_a_task_behind())
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        client.close()
        del task
        gc.collect()
    assert "Task was destroyed but it is pending" not in caplog.text
