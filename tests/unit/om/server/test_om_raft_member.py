"""OM's Raft member over mutual TLS (om/server/raft_member.py): the OMs of one service on one host hold
certificates alike in role and host, each naming its own "SERVICE/NODE"; a peer speaks for the node its
certificate names only. om2's certificate sending as om1, an OM certificate naming no node or another
service's node, and (as the shell already refuses) a datanode's or a user's certificate are refused with
PERMISSION_DENIED, nothing of it reaches the core, and the group keeps serving on the members' own
certificates."""

from __future__ import annotations

import functools

import pytest

from pyozone import rpc
from pyozone.common.tls import TlsStore
from pyozone.hdds.security import x509 as X
from pyozone.om.server.raft_member import OmRaftMember, om_peer_refusal
from pyozone.ratis.messages import RaftPeerId
from pyozone.ratis_server.server import RaftMember
from tests.tls_certs import CertAuthority
from tests.unit.ratis_server import shell_support
from tests.unit.ratis_server.shell_support import Group
from tests.unit.ratis_server.test_shell_refusals import evil_append, follower, refused, run

SERVICE = "svc"
OM = X.Identity(X.CertRole.OM, "om", "127.0.0.1")


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    return CertAuthority(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
def om_stores(ca: CertAuthority) -> dict[str, TlsStore]:
    return {f"om{i}": ca.store(f"om{i}", OM, om_node=f"{SERVICE}/om{i}") for i in (1, 2, 3)}


@pytest.fixture
def om_members(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shell's test group runs OM's member of service SERVICE."""
    monkeypatch.setattr(shell_support, "RaftMember", functools.partial(OmRaftMember, service_id=SERVICE))


@pytest.mark.parametrize(
    ("name", "identity", "om_node", "why"),
    [
        ("om2-as-om1", OM, f"{SERVICE}/om2", f"om@127.0.0.1 of OM node {SERVICE}/om2 may not speak for om1"),
        ("no-node", OM, None, "om@127.0.0.1 of no OM node may not speak for om1"),
        ("other-service", OM, "other/om1", "om@127.0.0.1 of OM node other/om1 may not speak for om1"),
        (
            "datanode",
            X.Identity(X.CertRole.DATANODE, "dn", "127.0.0.1"),
            None,
            "dn@127.0.0.1 may not send Raft messages",
        ),
        ("user", X.Identity(X.CertRole.USER, "alice"), None, "alice may not send Raft messages"),
    ],
)
def test_a_peer_speaks_only_for_the_om_node_its_certificate_names(
    ca: CertAuthority,
    om_stores: dict[str, TlsStore],
    om_members: None,
    name: str,
    identity: X.Identity,
    om_node: str | None,
    why: str,
) -> None:
    hosts = ("127.0.0.1",) if identity.role.is_service else None
    store = ca.store(f"caller-{name}", identity, hosts=hosts, om_node=om_node)

    async def scenario(group: Group) -> tuple[rpc.StatusCode, str, RaftMember]:
        assert all(isinstance(m, OmRaftMember) for m in group.running())
        target = await follower(group, not_named="om1")
        return await refused(group, target, evil_append("om1", target.me), tls=store)

    code, details, _ = run(scenario, tls=om_stores)
    assert code is rpc.StatusCode.PERMISSION_DENIED
    assert why in details


def test_om_peer_refusal_names_the_node_expected(ca: CertAuthority, om_stores: dict[str, TlsStore]) -> None:
    om1 = X.cert_from_pem(om_stores["om1"].paths.cert.read_bytes())
    assert om_peer_refusal(om1, SERVICE, RaftPeerId("om1")) is None
    why = om_peer_refusal(om1, SERVICE, RaftPeerId("om3"))
    assert (
        why
        == f"om@127.0.0.1 of OM node {SERVICE}/om1 may not speak for om3 ({SERVICE}/om3): each OM for itself"
    )
