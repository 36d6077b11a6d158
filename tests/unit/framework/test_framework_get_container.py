"""SCM's getContainer has one client path (ScmAdminClient.container_with_pipeline) and one error mapping:
the admin CLI, OM and the datanodes read the same answers and the same failures (issue 29, item 3)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pyozone.common.net import HostPort, scm_client_address
from pyozone.common.scm_ha import ScmAddresses
from pyozone.datanode.xceiver.allocations import ScmContainerLookup, ScmUnreachable
from pyozone.framework.scm_admin import ScmAdminClient
from pyozone.framework.scm_errors import ScmClientError
from pyozone.framework.scm_failover import ScmFailoverPolicy
from pyozone.om.scm import GrpcScm
from tests.unit.scm.server.scm_server_helpers import async_test, running_scm, scm_conf

NOBODY = HostPort("127.0.0.1", 1)


@async_test
async def test_a_missing_container_reads_the_same_to_each_caller(tmp_path: Path) -> None:
    conf = scm_conf(tmp_path)
    async with running_scm(conf) as scm:
        address = HostPort("127.0.0.1", scm.client_port)
        conf.set("ozone.scm.client.address", str(address))
        conf.set("ozone.scm.block.client.address", f"127.0.0.1:{scm.block_port}")
        admin = ScmAdminClient(address, timeout_s=5)
        with pytest.raises(ScmClientError) as missing:
            await asyncio.to_thread(admin.container, 99)
        assert missing.value.not_found and not missing.value.retryable
        assert "99" in str(missing.value)
        om = GrpcScm(ScmAddresses.from_conf(conf), ScmFailoverPolicy.from_conf(conf), timeout_s=5)
        location = await asyncio.to_thread(om.container_location, 99)
        assert location.container_id == 99 and location.state is None
        lookup = ScmContainerLookup(scm_client_address(conf), timeout_s=5)
        assert await asyncio.to_thread(lookup, 99) is None
        for client in (admin, om, lookup):
            await asyncio.to_thread(client.close)


def test_an_unreachable_scm_reads_the_same_to_each_caller() -> None:
    with ScmAdminClient(NOBODY, timeout_s=2) as admin, pytest.raises(ScmClientError) as admin_error:
        admin.container(1)
    assert admin_error.value.retryable
    assert str(admin_error.value).startswith(f"cannot reach SCM at {NOBODY}")
    lookup = ScmContainerLookup(NOBODY, timeout_s=2)
    with pytest.raises(ScmUnreachable) as datanode_error:
        lookup(1)
    lookup.close()
    assert str(datanode_error.value).startswith(f"cannot reach SCM at {NOBODY}")
