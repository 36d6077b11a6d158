"""The CA in SCM HA in one process (issue 31 item 4): three secure SCM daemons of one service on real sockets.
`scm --init` on the primordial makes the root CA, its sub-CA and a JOIN credential per other SCM; `scm
--bootstrap` on each other SCM obtains its sub-CA from the primordial's root and copies its scm.db. The
leader signs with its own sub-CA; every certificate it issues and revokes, and the secret keys, reach every
SCM through the log; a follower refuses the signing calls naming the leader; after the leader stops, the
next one signs with its own sub-CA and knows what the first issued."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pyozone.common.tls import TlsStore
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.server import ScmDaemon
from pyozone.scm.server.ca_files import ScmSecurityFiles
from pyozone.scm.store.layout import scm_metadata_dir
from pyozone.security.config import SecurityConfig, admin_user
from pyozone.framework.scm_security import SCMSecurityClient, scm_security_nodes
from tests.polling import wait_for_async
from tests.unit.scm.server.test_scm_ha import NODES, Service, planned

SECURE = {"ozone.security.enabled": "true", "hdds.x509.crl.refresh.interval": "1s"}


def secure_service(tmp_path: Path) -> Service:
    svc = planned(tmp_path, **SECURE)
    from tests.unit.ratis_server.shell_support import ports_of

    for node, port in zip(NODES, ports_of(len(NODES)), strict=True):
        svc.values[f"ozone.scm.security.service.port.scmservice.{node}"] = str(port)
    return svc


def join_file(svc: Service, node: str) -> Path:
    return svc.tmp_path / f"{node}-join.pem"


def admin_client(svc: Service) -> SCMSecurityClient:
    conf = svc.conf("scm1")
    files = ScmSecurityFiles.from_conf(conf, SecurityConfig.from_conf(conf))
    return SCMSecurityClient(scm_security_nodes(conf), TlsStore(files.user(admin_user(conf))), timeout_s=5)


def init_and_bootstrap(svc: Service) -> None:
    joins = [a for n in NODES[1:] for a in ("--join-token", f"scm:{n}={join_file(svc, n)}")]
    assert svc.cli("scm1", "--init", *joins) == 0


async def start_all(svc: Service) -> None:
    await svc.start("scm1")
    for node in NODES[1:]:
        extra = {"ozone.security.join.credentials.file": str(join_file(svc, node))}
        assert await asyncio.to_thread(svc.cli, node, "--bootstrap", extra=extra) == 0
        await svc.start(node)


def user_csr(name: str) -> tuple[X.PrivateKey, bytes]:
    key = X.generate_private_key(2048)
    return key, X.csr_to_pem(X.build_csr(key, Identity(CertRole.USER, name)))


def root_of(svc: Service) -> X.Certificate:
    return X.cert_from_pem((scm_metadata_dir(svc.conf("scm1")) / "ca" / "certs" / "certificate.crt").read_bytes())


def run(coro: Any) -> None:
    asyncio.run(asyncio.wait_for(coro, 120))


def test_any_leader_signs_with_its_own_sub_ca_and_every_scm_knows_what_was_issued(tmp_path: Path) -> None:
    async def scenario() -> None:
        svc = secure_service(tmp_path)
        init_and_bootstrap(svc)
        try:
            await start_all(svc)
            first = await svc.leader(writable=False)
            assert {d.secure.security.ca.material.root for d in svc.daemons.values()} == {root_of(svc)}  # type: ignore[union-attr]
            subs = {d.secure.security.ca.material.cert.serial_number for d in svc.daemons.values()}  # type: ignore[union-attr]
            assert len(subs) == 3

            def sign(name: str) -> X.Certificate:
                with admin_client(svc) as client:
                    pem, ca = client.sign_csr(user_csr(name)[1])
                assert X.cert_from_pem(ca) == root_of(svc)
                assert X.chain_verifies(pem, root_of(svc))
                return X.cert_from_pem(pem)

            bob = await asyncio.to_thread(sign, "bob")
            assert bob.issuer == first.secure.security.ca.material.cert.subject  # type: ignore[union-attr]

            async def everywhere(serial: int) -> bool:
                return all(d.store.backend.get("validCerts", serial.to_bytes(8, "big")) is not None
                           for d in svc.daemons.values())

            await wait_for_async(lambda: everywhere(bob.serial_number), 10, "bob's record on every SCM", 0.05)
            keys = {d.secure.security.secret_keys.current() for d in svc.daemons.values()}  # type: ignore[union-attr]
            assert len(keys) == 1 and None not in keys

            await svc.stop(svc.node_of(first))
            second = await svc.leader(writable=False)
            carol = await asyncio.to_thread(sign, "carol")
            assert carol.issuer == second.secure.security.ca.material.cert.subject  # type: ignore[union-attr]
            assert carol.serial_number > bob.serial_number
            with admin_client(svc) as client:
                listed = await asyncio.to_thread(client.list_certificates, CertRole.USER)
            assert {X.cert_from_pem(p).serial_number for p in listed} >= {bob.serial_number, carol.serial_number}
        finally:
            for node in list(svc.daemons):
                await svc.stop(node)

    run(scenario())
