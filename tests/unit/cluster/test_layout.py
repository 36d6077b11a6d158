"""The local cluster's plan: its site file carries the short intervals a one-machine cluster wants."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from pyozone.cluster import layout
from pyozone.cluster.layout import LOCAL_INTERVALS, plan_cluster
from pyozone.common.fsutil import write_file
from pyozone.common.om_ha import client_om_service, local_om_node, om_service_nodes
from pyozone.common.scm_ha import local_scm_node, primordial_scm_node, scm_service_id, scm_service_nodes
from pyozone.common.tls import TlsPaths
from pyozone.config.site import load_configuration
from pyozone.hdds.security.x509 import CertRole
from pyozone.scm.server.ca_files import JoinRequest, ScmSecurityFiles
from pyozone.scm.settings import ScmSettings
from pyozone.security.config import SecurityConfig, admin_user


def test_local_intervals_are_in_the_site_file_and_overrides_win(tmp_path: Path) -> None:
    state = plan_cluster(tmp_path, 3, 1, {"ozone.scm.dead.node.interval": "90s"})
    conf = load_configuration(Path(state.conf_dir), {})
    assert conf.get_raw("hdds.scm.wait.time.after.safemode.exit") == "10s"  # issue 11 defect 9
    assert conf.get_raw("hdds.heartbeat.interval") == LOCAL_INTERVALS["hdds.heartbeat.interval"]
    assert conf.get_raw("ozone.scm.dead.node.interval") == "90s"


def test_local_intervals_need_no_sanitising(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    conf = load_configuration(Path(plan_cluster(tmp_path, 3, 1, {}).conf_dir), {})
    with caplog.at_level(logging.WARNING):
        intervals = ScmSettings.from_conf(conf).health
    assert caplog.records == []
    assert (intervals.stale_ms, intervals.dead_ms) == (30_000, 60_000)


def test_cluster_ports_are_distinct_and_below_the_ephemeral_range(tmp_path, monkeypatch):
    monkeypatch.delenv(layout.PORT_RANGE_VARIABLE, raising=False)  # a test worker's own slice
    ports = layout.free_ports(40)
    assert len(set(ports)) == 40
    assert all(layout.LOWEST_PORT <= p < layout._ephemeral_start() for p in ports)
    monkeypatch.setattr(layout, "EPHEMERAL_RANGE", tmp_path / "missing")
    assert layout._ephemeral_start() == 32768  # Linux's default when the kernel does not say


def test_a_port_range_keeps_side_by_side_clusters_apart(monkeypatch):
    monkeypatch.setenv(layout.PORT_RANGE_VARIABLE, "20000-22000")
    assert all(20000 <= p < 22000 for p in layout.free_ports(30))
    monkeypatch.setenv(layout.PORT_RANGE_VARIABLE, "20100-20150")  # R9: 1000 or fewer were ignored
    assert all(20100 <= p < 20150 for p in layout.free_ports(10))
    monkeypatch.setenv(layout.PORT_RANGE_VARIABLE, "20000")
    with pytest.raises(ValueError, match="PYOZONE_PORT_RANGE"):
        layout.free_ports(1)


def test_a_secure_plan_turns_every_mode_on_and_names_the_administrators_certificate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HADOOP_USER_NAME", "carol")
    state = plan_cluster(tmp_path, 3, 1, {}, secure=True)
    conf = load_configuration(Path(state.conf_dir), {})
    for key in (
        "ozone.security.enabled",
        "hdds.grpc.tls.enabled",
        "hdds.block.token.enabled",
        "hdds.container.token.enabled",
        "ozone.acl.enabled",
    ):
        assert conf.get(key) is True, key
    assert conf.get("ozone.administrators") == "carol"
    users = tmp_path.resolve() / "scm" / "ca" / "users" / "carol"
    assert conf.get("ozone.client.tls.cert.file") == str(users / "certificate.crt")
    assert conf.get("ozone.client.tls.key.file") == str(users / "private.pem")
    assert conf.get("ozone.client.tls.ca.file") == str(users / "ca.crt")
    # each daemon joins with a JOIN credential of its own, which `scm --init` mints before its first start
    assert conf.get("ozone.security.join.credentials.file") is None
    joins = tmp_path.resolve() / "scm" / "ca" / "join"
    for name in ("om", "s3g", "dn1", "dn2", "dn3"):
        assert f"ozone.security.join.credentials.file={joins / name}.pem" in state.daemon(name).command
    assert state.join_tokens(conf) == [
        f"om={joins}/om.pem",
        f"s3g={joins}/s3g.pem",
        *(f"dn={joins}/dn{i}.pem" for i in (1, 2, 3)),
    ]
    dn1 = TlsPaths.under(tmp_path.resolve() / "dn1" / "meta", conf)
    write_file(dn1.cert, b"a certificate")  # dn1 joined: no second credential on the next `cluster up`
    assert f"dn={joins}/dn1.pem" not in state.join_tokens(conf)
    scm = state.daemon("scm").ports
    assert conf.get("ozone.scm.security.service.address") == f"127.0.0.1:{scm['security']}"
    ports = [p for d in state.daemons for p in d.ports.values()]
    assert len(ports) == len(set(ports))
    # the gateway keeps its certificate in a directory of its own, not in SCM's (the site file's)
    assert f"ozone.metadata.dirs={tmp_path.resolve() / 's3g'}" in state.daemon("s3g").command


def test_a_secure_plan_names_the_certificate_scm_init_makes_for_the_administrators_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cluster up --secure -D ozone.administrators=alice,bob`: scm --init issues alice's certificate
    (ca_files.admin_user), so the site file must name alice's, not the login user's."""
    monkeypatch.setenv("HADOOP_USER_NAME", "carol")
    state = plan_cluster(tmp_path, 1, 1, {"ozone.administrators": "alice,bob"}, secure=True)
    conf = load_configuration(Path(state.conf_dir), {})
    assert conf.get("ozone.administrators") == "alice,bob"
    files = ScmSecurityFiles.from_conf(conf, SecurityConfig.from_conf(conf)).user(admin_user(conf))
    assert admin_user(conf) == "alice"
    assert conf.get("ozone.client.tls.cert.file") == str(files.cert)
    assert conf.get("ozone.client.tls.key.file") == str(files.key)
    assert conf.get("ozone.client.tls.ca.file") == str(files.ca)


def test_an_insecure_plan_has_no_security_port_or_keys(tmp_path: Path) -> None:
    state = plan_cluster(tmp_path, 1, 1, {})
    conf = load_configuration(Path(state.conf_dir), {})
    assert "security" not in state.daemon("scm").ports
    assert conf.get("ozone.security.enabled") is False and conf.get("ozone.client.tls.cert.file") is None


def test_an_om_ha_plan_runs_three_oms_of_one_service_that_every_client_finds(tmp_path: Path) -> None:
    state = plan_cluster(tmp_path, 3, 1, {}, om_ha=True)
    assert [d.name for d in state.oms()] == list(layout.OM_HA_NODES)
    assert not state.has("om")
    conf = load_configuration(Path(state.conf_dir), {})
    assert client_om_service(conf) == layout.OM_SERVICE_ID
    nodes = om_service_nodes(conf, layout.OM_SERVICE_ID)
    assert [n.node_id for n in nodes] == list(layout.OM_HA_NODES)
    ports = [p for d in state.daemons for p in d.ports.values()]
    assert len(set(ports)) == len(ports)
    for node in nodes:
        daemon = state.daemon(node.node_id)
        assert (node.rpc_address.port, node.http_address.port, node.ratis_address.port) == (
            daemon.ports["rpc"],
            daemon.ports["http"],
            daemon.ports["ratis"],
        )
        # each OM knows which node it is (they share a host) and keeps its own om.db and Raft log
        assert daemon.define("ozone.om.node.id") == node.node_id
        assert daemon.define("ozone.metadata.dirs") == str(tmp_path.resolve() / node.node_id)
        assert local_om_node(load_configuration(Path(state.conf_dir), {"ozone.om.node.id": node.node_id}))
    assert "<name>ozone.om.address</name>" not in (Path(state.conf_dir) / "ozone-site.xml").read_text()
    for key, value in layout.LOCAL_OM_HA.items():
        assert conf.get_raw(key) == value


def test_a_secure_om_ha_plan_mints_each_om_a_join_credential_bound_to_its_node(tmp_path: Path) -> None:
    """R12 D3: the OMs' credentials named their role only, so om1's could take om2's node first."""
    state = plan_cluster(tmp_path, 3, 1, {}, secure=True, om_ha=True)
    conf = load_configuration(Path(state.conf_dir), {})
    joins = tmp_path.resolve() / "scm" / "ca" / "join"
    tokens = state.join_tokens(conf)
    assert [t for t in tokens if t.startswith("om")] == [
        f"om:{layout.OM_SERVICE_ID}/{node}={joins}/{node}.pem" for node in layout.OM_HA_NODES
    ]
    requests = [JoinRequest.parse(t) for t in tokens if t.startswith("om")]
    assert [(r.role, r.name, r.om_node) for r in requests] == [
        (CertRole.OM, "", f"{layout.OM_SERVICE_ID}/{node}") for node in layout.OM_HA_NODES
    ]


def test_an_scm_ha_plan_runs_three_scms_of_one_service_that_every_client_finds(tmp_path: Path) -> None:
    state = plan_cluster(tmp_path, 3, 1, {}, scm_ha=True)
    assert [d.name for d in state.scms()] == list(layout.SCM_HA_NODES)
    assert not state.has("scm")
    conf = load_configuration(Path(state.conf_dir), {})
    assert scm_service_id(conf) == layout.SCM_SERVICE_ID
    primordial = primordial_scm_node(conf, layout.SCM_SERVICE_ID)
    assert primordial is not None and primordial.node_id == "scm1"
    nodes = scm_service_nodes(conf, layout.SCM_SERVICE_ID)
    assert [n.node_id for n in nodes] == list(layout.SCM_HA_NODES)
    ports = [p for d in state.daemons for p in d.ports.values()]
    assert len(set(ports)) == len(ports)
    for node in nodes:
        daemon = state.daemon(node.node_id)
        assert daemon.command[3] == "scm" and daemon.log.endswith(f"logs/{node.node_id}.log")
        assert {
            "client": node.client_address.port,
            "block": node.block_client_address.port,
            "datanode": node.datanode_address.port,
            "http": node.http_address.port,
            "ratis": node.ratis_address.port,
        } == daemon.ports
        # each SCM knows which node it is (they share a host) and keeps its own scm.db and Raft log
        assert daemon.define("ozone.scm.node.id") == node.node_id
        assert daemon.define("ozone.metadata.dirs") == str(tmp_path.resolve() / node.node_id)
        here = local_scm_node(load_configuration(Path(state.conf_dir), {"ozone.scm.node.id": node.node_id}))
        assert here == node
    site = (Path(state.conf_dir) / "ozone-site.xml").read_text()
    for lone in ("ozone.scm.names", "ozone.scm.client.address", "ozone.scm.datanode.address"):
        assert f"<name>{lone}</name>" not in site  # no daemon or tool finds a lone SCM
    for key, value in layout.LOCAL_SCM_HA.items():
        assert conf.get_raw(key) == value
    assert conf.get("ozone.metadata.dirs") == str(tmp_path.resolve() / "scm1")


def test_an_scm_ha_plan_with_an_om_service_runs_both_services(tmp_path: Path) -> None:
    state = plan_cluster(tmp_path, 3, 1, {}, om_ha=True, scm_ha=True)
    names = [d.name for d in state.daemons]
    assert names[:6] == [*layout.SCM_HA_NODES, *layout.OM_HA_NODES]
    conf = load_configuration(Path(state.conf_dir), {})
    assert (scm_service_id(conf), client_om_service(conf)) == (layout.SCM_SERVICE_ID, layout.OM_SERVICE_ID)
    ports = [p for d in state.daemons for p in d.ports.values()]
    assert len(set(ports)) == len(ports)


def test_a_secure_scm_ha_plan_gives_each_scm_a_security_port_and_scm2_scm3_join_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three SCMs on one host would share the default security port, and the administrator's certificate
    and the JOIN credentials are where the primordial's `scm --init` writes them (its dir is scm1)."""
    monkeypatch.setenv("HADOOP_USER_NAME", "carol")
    state = plan_cluster(tmp_path, 3, 1, {}, secure=True, scm_ha=True)
    conf = load_configuration(Path(state.conf_dir), {})
    ports = [p for d in state.daemons for p in d.ports.values()]
    assert len(set(ports)) == len(ports)
    assert conf.get("ozone.scm.security.service.address") is None  # the service names each SCM's
    for node in scm_service_nodes(conf, layout.SCM_SERVICE_ID):
        assert node.security_address.port == state.daemon(node.node_id).ports["security"]
        assert conf.get_raw(f"ozone.scm.security.service.port.{layout.SCM_SERVICE_ID}.{node.node_id}")
    primordial = tmp_path.resolve() / "scm1"
    users = ScmSecurityFiles.from_conf(conf, SecurityConfig.from_conf(conf)).user("carol")
    assert users.cert == primordial / "ca" / "users" / "carol" / "certificate.crt"
    assert conf.get("ozone.client.tls.cert.file") == str(users.cert)
    joins = primordial / "ca" / "join"
    assert state.daemon("scm1").define("ozone.security.join.credentials.file") is None  # it holds the root
    for node in ("scm2", "scm3"):
        assert state.daemon(node).define("ozone.security.join.credentials.file") == f"{joins / node}.pem"
    tokens = state.join_tokens(conf)
    assert tokens[:2] == [f"scm:scm2={joins}/scm2.pem", f"scm:scm3={joins}/scm3.pem"]
    assert [(r.role, r.scm_node) for r in map(JoinRequest.parse, tokens[:2])] == [
        (CertRole.SCM, "scm2"),
        (CertRole.SCM, "scm3"),
    ]
    assert f"om={joins}/om.pem" in tokens
    write_file(TlsPaths.under(tmp_path.resolve() / "scm2", conf).cert, b"a sub-CA")  # scm2 bootstrapped
    assert f"scm:scm2={joins}/scm2.pem" not in state.join_tokens(conf)
