"""Where a local cluster keeps things, which ports it uses, and the ozone-site.xml it writes.

One data dir holds `conf/ozone-site.xml` (every address, so other commands find the cluster through
`--conf DIR/conf` or OZONE_CONF_DIR), `cluster.json` (the daemons and how to start them again), a
directory per daemon and a log per daemon. A secure cluster's site file also turns on certificates,
mutual TLS, block and container tokens and ACLs, and names the administrator's client certificate that
`scm --init` writes, so every command run with that configuration acts as the administrator; each other
daemon names a JOIN credential of its own (`join_tokens`), which `scm --init` mints before its first start.
With `om_ha` three OMs of one service (`om1`..`om3`, `OM_SERVICE_ID`) take the lone OM's place; the site
file names the service (`om_service_site`), so every client fails over among them. With `scm_ha` three SCMs
of one service (`scm1`..`scm3`, `SCM_SERVICE_ID`) take the lone SCM's place the same way
(`scm_service_site`): OM, the datanodes and the admin tools find them by the service, none by a lone SCM's
address.
"""

from __future__ import annotations

import json
import os
import random
import socket
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pyozone.common.tls import TlsPaths
from pyozone.config import ConfigError, OzoneConfiguration
from pyozone.config.dirs import METADATA_PERMISSIONS_KEY, dir_permissions, private_dir
from pyozone.config.site import write_site_xml
from pyozone.security.config import admin_user

STATE_FILE = "cluster.json"
HOST = "127.0.0.1"


LOWEST_PORT = 10000
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def _ephemeral_start() -> int:
    """Where the kernel's ephemeral ports begin (Linux's default 32768)."""
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


PORT_RANGE_VARIABLE = "PYOZONE_PORT_RANGE"
"""LOW-HIGH: where clusters take their ports (default LOWEST_PORT up to the ephemeral range). A test runner
that starts clusters side by side gives each worker its own range, so a cluster whose daemon is down for a
restart never finds its port taken by another cluster started meanwhile."""


MAX_PORT = 65535


def port_range() -> tuple[int, int]:
    low, high = LOWEST_PORT, _ephemeral_start()
    raw = os.environ.get(PORT_RANGE_VARIABLE)
    if raw:
        first, _, last = raw.partition("-")
        try:
            low, high = int(first), int(last)
        except ValueError:
            low, high = 0, 0
        if not 0 < low < high <= MAX_PORT:
            raise ConfigError(
                f"{PORT_RANGE_VARIABLE}={raw!r}: expected LOW-HIGH, ports LOW below HIGH, e.g. 10000-20000"
            )
    return low, high


def free_ports(n: int) -> list[int]:
    """Ports free now, held open together so no two are the same, taken at random below the kernel's
    ephemeral range: while a daemon is stopped (`cluster kill`, then `start`) no client connection or
    port-0 server on the machine can take its port, as one from the ephemeral range could."""
    rng = random.SystemRandom()
    low, high = port_range()
    sockets: list[socket.socket] = []
    try:
        for port in rng.sample(range(low, high), min(high - low, 64 * n)):  # any range, however narrow
            if len(sockets) == n:
                break
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind((HOST, port))
            except OSError:
                s.close()
                continue
            sockets.append(s)
        while len(sockets) < n:  # the low range is crowded: the kernel's choice
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@dataclass(frozen=True, slots=True)
class Daemon:
    name: str  # "scm", "om", "dn1", ...
    command: list[str]
    log: str
    ports: dict[str, int] = field(default_factory=dict)

    def define(self, key: str) -> str | None:
        """The value the command gives `key` with `-D key=value`, or None."""
        for arg in self.command:
            name, eq, value = arg.partition("=")
            if eq and name == key:
                return value
        return None


JOIN_ROLES = {"scm": "scm", "om": "om", "s3g": "s3g", "dn": "dn"}
"""A daemon's name (prefix) -> the role its JOIN credential is minted for (`scm --init --join-token`); an SCM
of a service other than the primordial one bootstraps its sub-CA with one."""


@dataclass(slots=True)
class ClusterState:
    data_dir: str
    conf_dir: str
    daemons: list[Daemon]
    pids: dict[str, int] = field(default_factory=dict)

    def daemon(self, name: str) -> Daemon:
        for d in self.daemons:
            if d.name == name:
                return d
        names = ", ".join(d.name for d in self.daemons)
        raise KeyError(f"no daemon {name!r} in this cluster (daemons: {names})")

    def datanodes(self) -> list[Daemon]:
        return [d for d in self.daemons if d.name.startswith("dn")]

    def oms(self) -> list[Daemon]:
        """The lone OM, or the OMs of the cluster's HA service (om1, om2, ...)."""
        return [d for d in self.daemons if d.name.rstrip("0123456789") == "om"]

    def scms(self) -> list[Daemon]:
        """The lone SCM, or the SCMs of the cluster's HA service (scm1, scm2, ...)."""
        return [d for d in self.daemons if d.name.rstrip("0123456789") == "scm"]

    def join_tokens(self, conf: OzoneConfiguration) -> list[str]:
        """`scm --init --join-token` arguments (ROLE=FILE; an HA OM's bound to its node,
        om:SERVICE/NODE=FILE; an SCM's of the service, scm:NODE=FILE) for every daemon of a secure cluster
        that has no certificate yet: each gets a JOIN credential of its own, used once (docs/security.md)."""
        tokens = []
        for d in self.daemons:
            join, metadata = d.define("ozone.security.join.credentials.file"), d.define("ozone.metadata.dirs")
            role = JOIN_ROLES.get(d.name.rstrip("0123456789"))
            if join is None or metadata is None or role is None:
                continue
            node = d.define("ozone.om.node.id")
            bound = f":{conf.get('ozone.om.service.ids')}/{node}" if role == "om" and node else ""
            if role == "scm":
                bound = f":{d.define('ozone.scm.node.id')}"
            if not TlsPaths.under(Path(metadata), conf).cert.exists():
                tokens.append(f"{role}{bound}={join}")
        return tokens

    def has(self, name: str) -> bool:
        """Whether the cluster has this daemon (a cluster.json written before OM existed has no "om")."""
        return any(d.name == name for d in self.daemons)

    def save(self) -> None:
        path = Path(self.data_dir) / STATE_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({**asdict(self), "daemons": [asdict(d) for d in self.daemons]}, indent=2))
        os.replace(tmp, path)

    @classmethod
    def load(cls, data_dir: Path) -> ClusterState:
        data = json.loads((data_dir / STATE_FILE).read_text())
        return cls(data["data_dir"], data["conf_dir"], [Daemon(**d) for d in data["daemons"]], data["pids"])


LOCAL_INTERVALS = {
    "hdds.heartbeat.interval": "3s",
    "ozone.scm.stale.node.interval": "30s",
    "ozone.scm.dead.node.interval": "60s",
    "hdds.scm.wait.time.after.safemode.exit": "10s",
    "ozone.scm.pipeline.creation.interval": "10s",
    "hdds.scm.replication.thread.interval": "30s",
    "hdds.container.report.interval": "60s",
}
"""What a local cluster wants instead of Ozone's production intervals (heartbeats every 30 s, STALE after
5 minutes, the container report empty for 5 minutes after safe mode, full container reports hourly): a
one-machine cluster should notice a killed datanode and show its report within a minute (README)."""


OM_SERVICE_ID = "omservice"
"""The OM service `cluster up --om-ha` runs (ozone.om.service.ids), named as in Ozone's docker-compose HA
example."""
OM_HA_NODES = ("om1", "om2", "om3")

LOCAL_OM_HA = {
    "ozone.om.ratis.minimum.timeout": "1s",
    "ozone.client.wait.between.retries.millis": "200",
}
"""What a local OM service wants instead of Ozone's production timing (an election timeout of 5-10 s, a
client waiting 2 s after each round of OMs): on one machine a killed leader's successor serves within
about two seconds (docs/om.md, the failover benchmark)."""


@dataclass(frozen=True, slots=True)
class OmHaPorts:
    """One OM's ports in an HA service."""

    rpc: int
    http: int
    ratis: int


def om_service_site(nodes: dict[str, OmHaPorts], service_id: str = OM_SERVICE_ID) -> dict[str, str]:
    """The site keys of one OM service on this host (Ozone's: ozone.om.service.ids, ozone.om.nodes.SVC,
    ozone.om.address.SVC.NODE, ozone.om.http-address.SVC.NODE, ozone.om.ratis.port.SVC.NODE), with the
    local timing of `LOCAL_OM_HA`. Each OM is told its node id (`om_daemon_defines`): they share a host."""
    site = {"ozone.om.service.ids": service_id, f"ozone.om.nodes.{service_id}": ",".join(nodes)}
    site.update(LOCAL_OM_HA)
    for node, ports in nodes.items():
        site[f"ozone.om.address.{service_id}.{node}"] = f"{HOST}:{ports.rpc}"
        site[f"ozone.om.http-address.{service_id}.{node}"] = f"{HOST}:{ports.http}"
        site[f"ozone.om.ratis.port.{service_id}.{node}"] = str(ports.ratis)
    return site


def om_daemon_defines(node: str, metadata_dir: Path) -> dict[str, str]:
    """What one OM of a service is told on its command line: which node it is, and its own metadata dir
    (its om.db, its Raft log under ratis/, its VERSION)."""
    return {"ozone.om.node.id": node, "ozone.metadata.dirs": str(metadata_dir)}


SCM_SERVICE_ID = "scmservice"
"""The SCM service `cluster up --scm-ha` runs (ozone.scm.service.ids), named as in Ozone's docker-compose
ozone-ha example; its first SCM is the primordial one (ozone.scm.primordial.node.id), which `scm --init`
initializes and the others `scm --bootstrap` from."""
SCM_HA_NODES = ("scm1", "scm2", "scm3")

LOCAL_SCM_HA = {
    "ozone.scm.ha.ratis.leader.election.timeout": "1s",
    "hdds.scmclient.failover.retry.interval": "200ms",
}
"""What a local SCM service wants instead of Ozone's production timing (an election timeout of 5 s, a client
waiting 2 s after each round of SCMs): on one machine a killed leader's successor serves within seconds, as
`LOCAL_OM_HA` does for OMs."""


@dataclass(frozen=True, slots=True)
class ScmHaPorts:
    """One SCM's ports in an HA service (Ozone's per-node ozone.scm.*.port.SERVICE.NODE keys)."""

    client: int
    block: int
    datanode: int
    http: int
    ratis: int
    security: int | None = None  # a secure cluster's: the CA's (ozone.scm.security.service.port)


def scm_service_site(nodes: dict[str, ScmHaPorts], service_id: str = SCM_SERVICE_ID) -> dict[str, str]:
    """The site keys of one SCM service on this host (Ozone's: ozone.scm.service.ids, ozone.scm.nodes.SVC,
    ozone.scm.primordial.node.id, ozone.scm.address.SVC.NODE and each protocol's
    ozone.scm.*.port.SVC.NODE, ozone.scm.security.service.port.SVC.NODE on a secure cluster,
    ozone.scm.http-address.SVC.NODE), with the local timing of `LOCAL_SCM_HA`.
    The first SCM is the primordial one. Each SCM is told its node id (`scm_daemon_defines`): they share a
    host."""
    site = {
        "ozone.scm.service.ids": service_id,
        f"ozone.scm.nodes.{service_id}": ",".join(nodes),
        "ozone.scm.primordial.node.id": next(iter(nodes)),
    }
    site.update(LOCAL_SCM_HA)
    for node, ports in nodes.items():
        site[f"ozone.scm.address.{service_id}.{node}"] = HOST
        site[f"ozone.scm.client.port.{service_id}.{node}"] = str(ports.client)
        site[f"ozone.scm.block.client.port.{service_id}.{node}"] = str(ports.block)
        site[f"ozone.scm.datanode.port.{service_id}.{node}"] = str(ports.datanode)
        site[f"ozone.scm.ratis.port.{service_id}.{node}"] = str(ports.ratis)
        if ports.security is not None:
            site[f"ozone.scm.security.service.port.{service_id}.{node}"] = str(ports.security)
        site[f"ozone.scm.http-address.{service_id}.{node}"] = f"{HOST}:{ports.http}"
    return site


def scm_daemon_defines(node: str, metadata_dir: Path) -> dict[str, str]:
    """What one SCM of a service is told on its command line: which node it is, and its own metadata dir
    (its VERSION, scm.db and Raft log)."""
    return {"ozone.scm.node.id": node, "ozone.metadata.dirs": str(metadata_dir)}


def admin_cert_dir(scm_dir: Path, admin: str) -> Path:
    """Where `scm --init` writes the administrator's client certificate (contract 2 of issue 15), under the
    metadata dir of the SCM it runs on (the lone SCM's, or the primordial one's of a service)."""
    return scm_dir / "ca" / "users" / admin


def join_file(scm_dir: Path, daemon: str) -> Path:
    """Where a secure local cluster keeps the JOIN credential of one daemon: the CA directory of the SCM
    whose `scm --init` mints it (the lone SCM's, or the primordial one's of a service)."""
    return scm_dir / "ca" / "join" / f"{daemon}.pem"


def secure_site(scm_dir: Path, security_port: int | None, overrides: dict[str, str]) -> dict[str, str]:
    """Every security mode on, the lone SCM's security port (an SCM service names each SCM's in
    `scm_service_site`, so `security_port` is None), and the administrator as this configuration's user: the
    one `scm --init` makes a certificate for in `scm_dir` (the first of ozone.administrators when
    `overrides` name them, else the login user). Container tokens keep a user's certificate from closing or
    deleting a container on a datanode's port: only datanodes sign them."""
    admin = admin_user(OzoneConfiguration(overrides))
    certs = admin_cert_dir(scm_dir, admin)
    lone = {} if security_port is None else {"ozone.scm.security.service.address": f"{HOST}:{security_port}"}
    return {
        "ozone.security.enabled": "true",
        "hdds.grpc.tls.enabled": "true",
        "hdds.block.token.enabled": "true",
        "hdds.container.token.enabled": "true",
        "ozone.acl.enabled": "true",
        "ozone.administrators": admin,
        **lone,
        "ozone.client.tls.cert.file": str(certs / "certificate.crt"),
        "ozone.client.tls.key.file": str(certs / "private.pem"),
        "ozone.client.tls.ca.file": str(certs / "ca.crt"),
    }


def plan_cluster(
    data_dir: Path,
    datanodes: int,
    racks: int,
    overrides: dict[str, str],
    secure: bool = False,
    om_ha: bool = False,
    scm_ha: bool = False,
) -> ClusterState:
    """Ports, directories, the site file and the command line of every daemon. `secure`: certificates,
    mutual TLS, block and container tokens and ACLs, with the login user as the administrator unless
    `overrides` name ozone.administrators. `om_ha`: the OMs of `OM_SERVICE_ID` instead of one OM. `scm_ha`:
    the SCMs of `SCM_SERVICE_ID` instead of one SCM; with `secure` each has a security port of its own, and
    each but the primordial one a JOIN credential for its sub-CA."""
    oms = OM_HA_NODES if om_ha else ()
    scms = SCM_HA_NODES if scm_ha else ()
    # held together, so no two daemons get the same one
    ports = iter(free_ports(9 + 3 * len(oms) + 6 * len(scms) + 5 * datanodes))
    data_dir = data_dir.resolve()
    conf_dir = data_dir / "conf"
    logs = data_dir / "logs"
    conf_dir.mkdir(parents=True, exist_ok=True)
    private_dir(logs, dir_permissions(OzoneConfiguration(overrides), METADATA_PERMISSIONS_KEY))
    scm_dir = data_dir / (scms[0] if scm_ha else "scm")  # where `scm --init` writes the CA's files
    scm_client, scm_datanode, scm_http, scm_block, scm_security, om_rpc, om_http, s3g, s3g_admin = (
        next(ports) for _ in range(9)
    )
    om_ports = {node: OmHaPorts(next(ports), next(ports), next(ports)) for node in oms}
    scm_ha_ports = {
        node: ScmHaPorts(*(next(ports) for _ in range(5)), security=next(ports) if secure else None)
        for node in scms
    }
    scm_ports = {"client": scm_client, "datanode": scm_datanode, "http": scm_http, "block": scm_block}
    if secure:
        scm_ports["security"] = scm_security
    site = {
        **(
            scm_service_site(scm_ha_ports)
            if scm_ha
            else {
                "ozone.scm.names": HOST,
                "ozone.scm.client.address": f"{HOST}:{scm_client}",
                "ozone.scm.datanode.address": f"{HOST}:{scm_datanode}",
                "ozone.scm.block.client.address": f"{HOST}:{scm_block}",
                "ozone.scm.http-address": f"{HOST}:{scm_http}",
            }
        ),
        **(
            om_service_site(om_ports)
            if om_ha
            else {"ozone.om.address": f"{HOST}:{om_rpc}", "ozone.om.http-address": f"{HOST}:{om_http}"}
        ),
        "ozone.s3g.http-address": f"{HOST}:{s3g}",
        "ozone.s3g.webadmin.http-address": f"{HOST}:{s3g_admin}",
        # SCM's directory; in a service, the primordial SCM's (each SCM is told its own)
        "ozone.metadata.dirs": str(scm_dir),
        "hdds.scm.safemode.min.datanode": str(min(3, datanodes)),
        "ozone.scm.datanode.pipeline.limit": "2",
        **LOCAL_INTERVALS,
        **(secure_site(scm_dir, None if scm_ha else scm_security, overrides) if secure else {}),
        **overrides,
    }
    python = [sys.executable, "-m", "pyozone"]
    conf_arg = ["--conf", str(conf_dir)]

    def join(name: str) -> list[str]:
        return ["-D", f"ozone.security.join.credentials.file={join_file(scm_dir, name)}"] if secure else []

    def om(node: str, ports: dict[str, int]) -> Daemon:
        if om_ha:
            defines = om_daemon_defines(node, data_dir / node)
        else:
            defines = {"ozone.metadata.dirs": str(data_dir / node)}
        args = [arg for key, value in defines.items() for arg in ("-D", f"{key}={value}")]
        return Daemon(node, [*python, "om", *conf_arg, *args, *join(node)], str(logs / f"{node}.log"), ports)

    def scm(node: str) -> Daemon:
        p = scm_ha_ports[node]
        args = [
            arg
            for key, value in scm_daemon_defines(node, data_dir / node).items()
            for arg in ("-D", f"{key}={value}")
        ]
        ports = {
            "client": p.client,
            "block": p.block,
            "datanode": p.datanode,
            "http": p.http,
            "ratis": p.ratis,
            **({} if p.security is None else {"security": p.security}),
        }
        bootstrap = join(node) if node != scms[0] else []  # the primordial SCM holds the root CA itself
        return Daemon(node, [*python, "scm", *conf_arg, *args, *bootstrap], str(logs / f"{node}.log"), ports)

    daemons = [
        *(
            [scm(node) for node in scms]
            if scm_ha
            else [Daemon("scm", [*python, "scm", *conf_arg], str(logs / "scm.log"), scm_ports)]
        ),
        # OM right after SCM: it waits for SCM's cluster id by itself, and is stopped before SCM.
        *(
            [om(node, {"rpc": p.rpc, "http": p.http, "ratis": p.ratis}) for node, p in om_ports.items()]
            if om_ha
            else [om("om", {"rpc": om_rpc, "http": om_http})]
        ),
        # The S3 gateway is an OM client: it waits for OM by itself, and is stopped first. Its own
        # metadata dir holds its certificate (SCM's dir is the site file's).
        Daemon(
            "s3g",
            [*python, "s3g", *conf_arg, "-D", f"ozone.metadata.dirs={data_dir / 's3g'}", *join("s3g")],
            str(logs / "s3g.log"),
            {"http": s3g, "admin": s3g_admin},
        ),
    ]
    racks_file = conf_dir / "racks.map"
    rack_lines = []
    for i in range(1, datanodes + 1):
        name = f"dn{i}"
        ipc, replication, http, ratis, datastream = (next(ports) for _ in range(5))
        home = data_dir / name
        rack_lines.append(f"{name} /rack{(i - 1) % racks + 1}")
        daemons.append(
            Daemon(
                name,
                [
                    *python,
                    "datanode",
                    *conf_arg,
                    "-D",
                    f"dfs.datanode.hostname={name}",
                    "-D",
                    f"ozone.metadata.dirs={home / 'meta'}",
                    "-D",
                    f"hdds.datanode.dir={home / 'data'}",
                    "-D",
                    f"hdds.container.ipc.port={ipc}",
                    "-D",
                    f"hdds.container.ratis.ipc.port={ratis}",
                    "-D",
                    f"hdds.container.ratis.datastream.port={datastream}",
                    "-D",
                    f"hdds.datanode.replication.port={replication}",
                    "-D",
                    f"hdds.datanode.http-address={HOST}:{http}",
                    *join(name),
                ],
                str(logs / f"{name}.log"),
                {
                    "ipc": ipc,
                    "ratis": ratis,
                    "datastream": datastream,
                    "replication": replication,
                    "http": http,
                },
            )
        )
    racks_file.write_text("\n".join(rack_lines) + "\n")
    if racks > 1:
        site.setdefault("net.topology.node.switch.mapping.file", str(racks_file))
    write_site_xml(conf_dir / "ozone-site.xml", site)
    return ClusterState(str(data_dir), str(conf_dir), daemons)
