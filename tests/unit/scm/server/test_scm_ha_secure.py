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

import pytest

from pyozone.common.fsutil import write_file
from pyozone.common.net import HostPort
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.framework.scm_security import SCMSecurityClient, scm_security_nodes
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.scm.security.certificates import RevocationReason
from pyozone.scm.server import ScmDaemon
from pyozone.scm.server.ca_files import ScmSecurityFiles
from pyozone.scm.store.layout import scm_metadata_dir
from pyozone.security.config import SecurityConfig, admin_user
from tests.polling import wait_for_async
from tests.unit.ratis_server.shell_support import ports_of
from tests.unit.scm.server.test_scm_ha import NODES, Service, planned

SECURE = {"ozone.security.enabled": "true", "hdds.x509.crl.refresh.interval": "1s"}


def secure_service(tmp_path: Path, mtls: bool = False) -> Service:
    """`mtls`: hdds.grpc.tls.enabled, every port (the Raft port, /dbCheckpoint) mutual TLS."""
    svc = planned(tmp_path, **SECURE, **({"hdds.grpc.tls.enabled": "true"} if mtls else {}))
    # 300 ms elections flip under load (RSA key generation in this process): a leader stays put here
    svc.values["ozone.scm.ha.ratis.leader.election.timeout"] = "1s"
    for node, port in zip(NODES, ports_of(len(NODES)), strict=True):
        svc.values[f"ozone.scm.security.service.port.scmservice.{node}"] = str(port)
    return svc


def join_file(svc: Service, node: str) -> Path:
    return svc.tmp_path / f"{node}-join.pem"


def admin_client(svc: Service) -> SCMSecurityClient:
    conf = svc.conf("scm1")
    files = ScmSecurityFiles.from_conf(conf, SecurityConfig.from_conf(conf))
    return SCMSecurityClient(scm_security_nodes(conf), TlsStore(files.user(admin_user(conf))), timeout_s=5)


def init_primordial(svc: Service) -> None:
    joins = [a for n in NODES[1:] for a in ("--join-token", f"scm:{n}={join_file(svc, n)}")]
    assert svc.cli("scm1", "--init", *joins) == 0


def bootstrap(svc: Service, node: str, join: Path) -> int:
    return svc.cli(node, "--bootstrap", extra={"ozone.security.join.credentials.file": str(join)})


async def start_all(svc: Service) -> None:
    await svc.start("scm1")
    for node in NODES[1:]:
        assert await asyncio.to_thread(bootstrap, svc, node, join_file(svc, node)) == 0
        await svc.start(node)


def user_csr(name: str) -> tuple[X.PrivateKey, bytes]:
    key = X.generate_private_key(2048)
    return key, X.csr_to_pem(X.build_csr(key, Identity(CertRole.USER, name)))


def root_of(svc: Service) -> X.Certificate:
    root = scm_metadata_dir(svc.conf("scm1")) / "ca" / "certs" / "certificate.crt"
    return X.cert_from_pem(root.read_bytes())


def sub_ca(daemon: ScmDaemon) -> X.Certificate:
    assert daemon.secure is not None
    return daemon.secure.security.ca.material.cert


def sign(svc: Service, name: str) -> X.Certificate:
    """An administrator has a user's certificate issued (whichever SCM leads signs it)."""
    with admin_client(svc) as client:
        pem, ca = client.sign_csr(user_csr(name)[1])
    assert X.cert_from_pem(ca) == root_of(svc) and X.chain_verifies(pem, root_of(svc))
    return X.cert_from_pem(pem)


def holder(svc: Service, name: str) -> TlsPaths:
    """A user `name` holding a certificate the leader issued (its files under the test's directory)."""
    key, csr = user_csr(name)
    with admin_client(svc) as client:
        pem, ca = client.sign_csr(csr)
    paths = TlsPaths(
        svc.tmp_path / f"{name}.key", svc.tmp_path / f"{name}.crt", svc.tmp_path / f"{name}-ca.crt"
    )
    write_file(paths.key, X.key_to_pem(key), private=True)
    write_file(paths.cert, pem)
    write_file(paths.ca, ca)
    return paths


def renew(svc: Service, paths: TlsPaths) -> X.Certificate:
    """The holder renews its own certificate (a new key), over mutual TLS with the one it holds."""
    name = X.common_name(X.cert_from_pem(paths.cert.read_bytes()))
    with SCMSecurityClient(scm_security_nodes(svc.conf("scm1")), TlsStore(paths), timeout_s=5) as client:
        pem, _ = client.sign_csr(user_csr(name)[1])
    return X.cert_from_pem(pem)


def ask_follower(svc: Service, node: str) -> tuple[str, bytes]:
    """A follower's refusal of a CSR, and its CRL bundle."""
    conf = svc.conf("scm1")
    files = ScmSecurityFiles.from_conf(conf, SecurityConfig.from_conf(conf))
    port = int(svc.values[f"ozone.scm.security.service.port.scmservice.{node}"])
    tls = TlsStore(files.user(admin_user(conf)))
    with SCMSecurityClient(HostPort("127.0.0.1", port), tls, timeout_s=5) as client:
        with pytest.raises(SecurityError) as refused:
            client.sign_csr(user_csr("eve")[1])
        return refused.value.message, client.get_crl()[1]


def on_every_scm(svc: Service, table: str, serial: int) -> bool:
    return all(
        d.store.backend.get(table, serial.to_bytes(8, "big")) is not None for d in svc.daemons.values()
    )


def run(coro: Any) -> None:
    asyncio.run(asyncio.wait_for(coro, 120))


@pytest.mark.parametrize("mtls", [False, True], ids=["security-port-tls", "every-port-tls"])
def test_any_leader_signs_with_its_own_sub_ca_and_every_scm_knows_what_was_issued_and_revoked(
    tmp_path: Path, mtls: bool, capsys: Any
) -> None:
    async def scenario() -> None:
        svc = secure_service(tmp_path, mtls)
        init_primordial(svc)
        try:
            await start_all(svc)
            first = await svc.leader(writable=False)
            assert {d.secure.security.ca.material.root for d in svc.daemons.values()} == {root_of(svc)}  # type: ignore[union-attr]
            assert len({sub_ca(d).serial_number for d in svc.daemons.values()}) == 3
            bob = await asyncio.to_thread(sign, svc, "bob")
            dave = await asyncio.to_thread(holder, svc, "dave")
            follower = next(n for n in NODES if n != svc.node_of(first))
            refusal, bundle = await asyncio.to_thread(ask_follower, svc, follower)
            leader_port = svc.values[f"ozone.scm.security.service.port.scmservice.{svc.node_of(first)}"]
            assert f"ServerNotLeaderException: Server:{follower} is not the leader" in refusal
            assert f"Suggested leader is Server:127.0.0.1:{leader_port}" in refusal
            assert (
                len(X.crl_issuers(bundle, root_of(svc))) >= 2
            )  # any SCM answers getCrl: the root's, a sub-CA's
            assert bob.issuer == sub_ca(first).subject
            await wait_for_async(
                lambda: asyncio.sleep(0, on_every_scm(svc, "validCerts", bob.serial_number)),
                10,
                "bob's record",
            )
            keys = {d.secure.security.secret_keys.current() for d in svc.daemons.values()}  # type: ignore[union-attr]
            assert len(keys) == 1 and None not in keys

            gone = svc.node_of(first)
            await svc.stop(gone)
            second = await svc.leader(writable=False)
            carol = await asyncio.to_thread(sign, svc, "carol")
            # dave, whose certificate the stopped leader's sub-CA signed, renews with the next leader
            renewed = await asyncio.to_thread(renew, svc, dave)
            assert renewed.issuer == sub_ca(second).subject and X.common_name(renewed) == "dave"
            old_dave = X.cert_from_pem(dave.cert.read_bytes()).serial_number
            held = second.secure.security.ca.certs.held_by(("dave", None))  # type: ignore[union-attr]
            assert {r.serial for r in held} == {old_dave, renewed.serial_number}  # a holder keeps two
            assert carol.issuer == sub_ca(second).subject and carol.serial_number > bob.serial_number
            assert second.secure.security.secret_keys.current() in keys  # type: ignore[union-attr]
            with admin_client(svc) as client:
                listed = await asyncio.to_thread(client.list_certificates, CertRole.USER)
                assert {bob.serial_number, carol.serial_number} <= {
                    X.cert_from_pem(p).serial_number for p in listed
                }
                serials = [bob.serial_number, carol.serial_number]
                await asyncio.to_thread(
                    client.revoke_certificates, serials, RevocationReason.KEY_COMPROMISE.value
                )
            await wait_for_async(
                lambda: asyncio.sleep(0, on_every_scm(svc, "revokedCerts", carol.serial_number)),
                10,
                "carol's revocation on every SCM",
            )
            listed_by_leader = X.crl_serials(second.secure.security.crl()[1], root_of(svc))  # type: ignore[union-attr]
            assert carol.serial_number in listed_by_leader  # its own sub-CA's list
            # bob's issuer lists him once it runs again, and the leader carries that list
            await svc.start(gone)

            async def bob_listed() -> bool:
                return bob.serial_number in X.crl_serials(second.secure.security.crl()[1], root_of(svc))  # type: ignore[union-attr]

            await wait_for_async(bob_listed, 20, "bob in the leader's CRL bundle", 0.2)
        finally:
            for node in list(svc.daemons):
                await svc.stop(node)
        # the service ran: what --init would write now would be in no Raft log
        capsys.readouterr()
        assert svc.cli("scm1", "--init", "--join-token", f"scm:scm2={tmp_path / 'late.pem'}") != 0
        assert "scm1 of service scmservice has applied its Raft log up to" in capsys.readouterr().err
        assert not (tmp_path / "late.pem").exists()

    run(scenario())


def test_a_bootstrap_with_another_clusters_credential_or_anothers_node_or_cluster_id_is_refused(
    tmp_path: Path, capsys: Any
) -> None:
    async def scenario() -> None:
        svc = secure_service(tmp_path / "ours")
        init_primordial(svc)
        other = secure_service(tmp_path / "theirs")
        init_primordial(other)
        try:
            await svc.start("scm1")
            capsys.readouterr()
            assert await asyncio.to_thread(bootstrap, svc, "scm2", join_file(other, "scm2")) != 0
            err = capsys.readouterr().err
            assert "SCM scm2 cannot bootstrap: the primordial SCM scm1" in err and "another CA" in err
            assert await asyncio.to_thread(bootstrap, svc, "scm2", join_file(svc, "scm3")) != 0
            assert "is for SCM node scm3 only, not scm2" in capsys.readouterr().err
            assert (
                await asyncio.to_thread(bootstrap, svc, "scm2", join_file(svc, "scm2")) == 0
            )  # then its own
            assert "a sub-CA of the root CA signed by the primordial SCM scm1" in capsys.readouterr().out
            mine = svc.conf("scm3")
            wrong = {"ozone.scm.node.id": "scm3"}
            assert other.cli("scm1", "--init") == 0  # (already made) scm3 initialised on the other cluster
            assert svc.cli("scm3", "--init", extra={"ozone.scm.primordial.node.id": "scm3", **wrong}) == 0
            assert await asyncio.to_thread(bootstrap, svc, "scm3", join_file(svc, "scm3")) != 0
            assert "already initialized with cluster id" in capsys.readouterr().err
            assert scm_metadata_dir(mine).exists()
        finally:
            for node in list(svc.daemons):
                await svc.stop(node)

    run(scenario())
