"""An in-process secure SCM (its CA, mutual TLS on every port) and certificates its CA issues to whoever a
test plays: what the SCM server tests of service and admin authorization share."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from pyozone import rpc
from pyozone.analytics.snapshot_stream import snapshot_chunks
from pyozone.common.fsutil import write_file
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.x509 import Identity
from pyozone.scm.server import ScmDaemon
from pyozone.scm.server.ca_files import init_security
from pyozone.scm.store.version import init_scm, open_scm_store
from tests.unit.scm.server.scm_server_helpers import scm_conf

SECURE = {
    "ozone.security.enabled": "true",
    "hdds.grpc.tls.enabled": "true",
    "ozone.scm.names": "127.0.0.1",
    "ozone.scm.security.service.address": "127.0.0.1:0",
    "ozone.administrators": "ada",
}


@asynccontextmanager
async def secure_scm(tmp_path: Path, overrides: Mapping[str, str] | None = None) -> AsyncIterator[ScmDaemon]:
    conf = scm_conf(tmp_path / "scm", {**SECURE, **(overrides or {})})
    storage, _ = init_scm(conf)
    init_security(conf, storage)
    daemon = ScmDaemon(conf, *open_scm_store(conf), snapshot_source=snapshot_chunks)
    await daemon.start()
    try:
        yield daemon
    finally:
        await daemon.stop(0.5)


def certificate(scm: ScmDaemon, root: Path, identity: Identity, datanode: str | None = None) -> TlsStore:
    """A certificate SCM's CA issues to `identity` (in process), as files a TlsStore reads."""
    assert scm.secure is not None
    ca = scm.secure.security.ca
    key = X.generate_private_key()
    hosts = ("127.0.0.1",) if identity.role.is_service else ()
    cert = ca.issue(X.build_csr(key, identity, hosts, datanode))
    where = root / f"{identity.principal}-{datanode}"
    paths = TlsPaths(where / "private.pem", where / "certificate.crt", where / "ca.crt")
    write_file(paths.key, X.key_to_pem(key), private=True)
    write_file(paths.cert, ca.file_pem(cert))  # the leaf and the sub-CA, as SCM's sign answers
    write_file(paths.ca, ca.material.pem)
    return TlsStore(paths)


async def refused(call, request, **kwargs) -> str:
    """Calls expecting PERMISSION_DENIED; returns the refusal's words."""
    with pytest.raises(rpc.RpcError) as error:
        await call(request, **kwargs)
    assert error.value.code() is rpc.StatusCode.PERMISSION_DENIED, error.value
    return error.value.details() or ""
