"""`pyozone cluster up|down|kill|start|status`: a local cluster, one process per daemon, on 127.0.0.1.

`up --secure` runs it with SCM's CA, mutual TLS on every port, block tokens and ACLs; its configuration
names the administrator's client certificate, so commands run with it act as the administrator, and the
readiness probes and the status table speak TLS with that certificate too.

`up --om-ha` runs three OMs of one service (om1..om3 of `omservice`) instead of one: the configuration names
the service, so `pyozone sh`, the S3 gateway and `ofs://omservice/` fail over among them.

`up --scm-ha` runs three SCMs of one service (scm1..scm3 of `scmservice`) instead of one, as Ozone's
ozone-ha example does: `scm --init` on the primordial scm1, which then starts, `scm --bootstrap` on scm2 and
scm3 with its cluster id; the configuration names the service, so OM, the datanodes and the admin tools
fail over among them. With `--secure` the primordial's `scm --init` also mints a JOIN credential for scm2
and scm3, with which their `scm --bootstrap` obtains each one's sub-CA from the primordial's root CA.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pyozone.client.client import AsyncOzoneClient
from pyozone.cluster import space, supervisor
from pyozone.cluster.layout import (
    HOST,
    OM_SERVICE_ID,
    SCM_SERVICE_ID,
    STATE_FILE,
    ClusterState,
    Daemon,
    plan_cluster,
)
from pyozone.cluster.status import (
    cluster_ready,
    om_ready,
    print_status,
    raft_leader,
    s3g_ready,
    scm_ready,
    wait_until,
)
from pyozone.common.cli_options import CLIError, given_path, parse_overrides
from pyozone.common.scm_ha import ScmProtocol
from pyozone.common.tls import TlsStore
from pyozone.common.tls_mode import client_tls, security_enabled
from pyozone.config import OzoneConfiguration
from pyozone.config.site import load_configuration
from pyozone.framework.scm_admin import ScmAdminClient
from pyozone.framework.scm_errors import ScmClientError
from pyozone.framework.scm_failover import ScmNodes
from pyozone.hdds.security.users import login_user

DEFAULT_DATA_DIR = "pyozone-data/cluster"
DATA_DIR_HELP = (
    f"default: the parent of --conf/$OZONE_CONF_DIR if it holds a cluster, else ./{DEFAULT_DATA_DIR}"
)
START_CHECK_S = 3.0  # how long `cluster start` watches a daemon without ports for an immediate exit
START_WAIT_S = 60.0  # how long it waits for a daemon with ports to listen on one (or to exit)
ADMIN_FAILOVER_S = 10.0
"""How long one call of the status table and the readiness probes fails over between the SCMs of a service
(Ozone's hdds.scmclient.max.retry.timeout is 10 minutes): with every SCM down they say so in seconds."""


def register(subparsers, parent: argparse.ArgumentParser) -> None:
    cluster = subparsers.add_parser("cluster", parents=[parent], help="a local cluster on 127.0.0.1")
    commands = cluster.add_subparsers(dest="cluster_command", metavar="COMMAND")
    commands.required = True
    up = commands.add_parser("up", parents=[parent], help="start SCM, OM and datanodes; wait until ready")
    up.add_argument("--datanodes", type=int, default=3, help="number of datanodes (default 3)")
    up.add_argument("--racks", type=int, default=1, help="racks to spread them over (default 1)")
    up.add_argument("--timeout", type=float, default=180, help="seconds to wait for readiness")
    up.add_argument("--background", action="store_true", help="return once ready; stop with `cluster down`")
    up.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help=f"default: ./{DEFAULT_DATA_DIR}")
    up.add_argument(
        "--secure",
        action="store_true",
        help="SCM's CA, mutual TLS on every port, block tokens and ACLs; you are the administrator",
    )
    up.add_argument(
        "--om-ha",
        action="store_true",
        help=f"three OMs of one service ({OM_SERVICE_ID}: om1, om2, om3) instead of one",
    )
    up.add_argument(
        "--scm-ha",
        action="store_true",
        help=f"three SCMs of one service ({SCM_SERVICE_ID}: scm1, scm2, scm3) instead of one",
    )
    up.set_defaults(func=run_up)
    for name, help_text in (("down", "stop every daemon"), ("status", "print the cluster's state once")):
        command = commands.add_parser(name, parents=[parent], help=help_text)
        command.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)
        command.set_defaults(func=run_down if name == "down" else run_status)
    for name, help_text in (
        ("kill", "kill -9 one daemon (scm or scm1..scm3, om or om1..om3, dn1, ...)"),
        ("start", "start one daemon again"),
    ):
        command = commands.add_parser(name, parents=[parent], help=help_text)
        command.add_argument(
            "daemon",
            metavar="NODE",
            help="scm (scm1, scm2, scm3 with --scm-ha), om (om1, om2, om3 with --om-ha), dn1, ...",
        )
        command.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)
        command.set_defaults(func=run_kill if name == "kill" else run_start)


def _data_dir(args: argparse.Namespace) -> str:
    """--data-dir; else the cluster whose conf dir --conf or $OZONE_CONF_DIR names (`cluster up` writes
    DATA_DIR/conf, and prints `export OZONE_CONF_DIR=...`); else the default."""
    if args.data_dir is not None:
        return str(given_path(args.data_dir, "--data-dir"))
    conf_dir = getattr(args, "conf_dir", None) or os.environ.get("OZONE_CONF_DIR")
    if conf_dir and (Path(conf_dir).parent / STATE_FILE).exists():
        return str(Path(conf_dir).parent)
    return DEFAULT_DATA_DIR


def _load(data_dir: str | argparse.Namespace) -> ClusterState:
    if isinstance(data_dir, argparse.Namespace):
        data_dir = _data_dir(data_dir)
    path = Path(data_dir)
    if not (path / STATE_FILE).exists():
        raise CLIError(f"no cluster in {path} (start one with: pyozone cluster up --data-dir {path})")
    return _state(path)


def _state(path: Path) -> ClusterState:
    """The cluster `cluster up` recorded in `path`; a state file it cannot read is one line, not a
    traceback."""
    try:
        return ClusterState.load(path)
    except (OSError, ValueError, KeyError, TypeError) as e:
        why = e.strerror if isinstance(e, OSError) else f"{type(e).__name__}: {e}"
        raise CLIError(f"{path / STATE_FILE} is not a cluster's state ({why}); remove it or use another "
                       "--data-dir") from None  # fmt: skip


def _conf(state: ClusterState) -> OzoneConfiguration:
    return load_configuration(Path(state.conf_dir), {})


def _tls(state: ClusterState) -> TlsStore | None:
    """The administrator's certificate on a secure cluster (the site file names it), else None."""
    return client_tls(_conf(state))


def _http_tls(tls: TlsStore | None) -> ssl.SSLContext | None:
    return tls.client_context() if tls is not None else None


def _admin(state: ClusterState, tls: TlsStore | None) -> ScmAdminClient:
    """SCM's admin client as the site file names SCM: the lone SCM, or the SCMs of the service, failing over
    for at most ADMIN_FAILOVER_S."""
    nodes = ScmNodes.configured(_conf(state), ScmProtocol.CLIENT)
    return ScmAdminClient(nodes.waiting_at_most(ADMIN_FAILOVER_S), timeout_s=5, tls=tls)


OM_SERVICE_KEYS = (
    "ozone.om.service.ids",
    "ozone.om.internal.service.id",
    "ozone.om.address",
    "ozone.om.node.id",
)
OM_SERVICE_PREFIXES = (
    "ozone.om.nodes.",
    "ozone.om.address.",
    "ozone.om.http-address.",
    "ozone.om.ratis.port.",
)
"""Keys `--om-ha` plans itself, and the prefixes of those it plans per service and OM: a -D of one is
refused (it would name another service, or move an OM off the ports planned for it)."""


def _check_om_ha(args: argparse.Namespace, overrides: dict[str, str]) -> None:
    """`--om-ha` with what it cannot run with: a clear error before anything starts."""
    if not args.om_ha:
        return
    planned = sorted(k for k in overrides if k in OM_SERVICE_KEYS or k.startswith(OM_SERVICE_PREFIXES))
    if planned:
        raise CLIError(f"--om-ha plans the OM service itself: drop -D {', '.join(planned)}")


SCM_SERVICE_KEYS = (
    "ozone.scm.service.ids",
    "ozone.scm.default.service.id",
    "ozone.scm.node.id",
    "ozone.scm.primordial.node.id",
    "ozone.scm.names",
    "ozone.scm.client.address",
    "ozone.scm.block.client.address",
    "ozone.scm.datanode.address",
    "ozone.scm.http-address",
    "ozone.scm.security.service.address",
)
SCM_SERVICE_PREFIXES = (
    "ozone.scm.nodes.",
    "ozone.scm.address.",
    "ozone.scm.http-address.",
    "ozone.scm.client.port.",
    "ozone.scm.block.client.port.",
    "ozone.scm.datanode.port.",
    "ozone.scm.ratis.port.",
    "ozone.scm.security.service.port.",
)
"""Keys `--scm-ha` plans itself (the service, each SCM's node, the primordial one; a lone SCM's addresses,
which the site file no longer names), and the prefixes of those it plans per service and SCM: a -D of one
is refused, as `--om-ha` refuses its own."""


def _check_scm_ha(args: argparse.Namespace, overrides: dict[str, str]) -> None:
    """`--scm-ha` with what it cannot run with: a clear error before anything starts."""
    if not args.scm_ha:
        return
    planned = sorted(k for k in overrides if k in SCM_SERVICE_KEYS or k.startswith(SCM_SERVICE_PREFIXES))
    if planned:
        raise CLIError(f"--scm-ha plans the SCM service itself: drop -D {', '.join(planned)}")


def run_up(args: argparse.Namespace) -> int:
    if args.datanodes < 1 or args.racks < 1:
        raise CLIError("--datanodes and --racks must be at least 1")
    if not args.timeout > 0:
        raise CLIError(f"--timeout must be positive, got {args.timeout:g}")
    overrides = parse_overrides(getattr(args, "overrides", []))
    _check_om_ha(args, overrides)
    _check_scm_ha(args, overrides)
    data_dir = Path(str(given_path(args.data_dir, "--data-dir")))
    if (data_dir / STATE_FILE).exists():
        state = _state(data_dir)
        running = [n for n, pid in state.pids.items() if supervisor.is_running(pid)]
        if running:
            raise CLIError(
                f"a cluster is already running in {data_dir} ({', '.join(running)}); "
                "stop it with: pyozone cluster down"
            )
        if args.secure and not security_enabled(_conf(state)):
            raise CLIError(
                f"the cluster in {data_dir} was made without --secure; start it without --secure, "
                "or make a secure one in another --data-dir"
            )
        if args.om_ha and not _om_ha(state):
            raise CLIError(
                f"the cluster in {data_dir} was made with one OM; start it without --om-ha, "
                "or make an --om-ha one in another --data-dir"
            )
        if args.scm_ha and not _scm_ha(state):
            raise CLIError(
                f"the cluster in {data_dir} was made with one SCM; start it without --scm-ha, "
                "or make an --scm-ha one in another --data-dir"
            )
    else:
        try:
            state = plan_cluster(
                data_dir,
                args.datanodes,
                args.racks,
                overrides,
                secure=args.secure,
                om_ha=args.om_ha,
                scm_ha=args.scm_ha,
            )
        except OSError as e:
            if e.filename is None:  # not the directory's fault (a port)
                raise
            raise CLIError(  # not a directory, read-only, /proc, no space
                f"--data-dir {args.data_dir}: cannot create the cluster there: {e.strerror}: {e.filename}"
            ) from None
    _check_space(state)
    _init_scm(state)
    tls = _tls(state)
    https = _http_tls(tls)
    oms, scms = state.oms(), state.scms()
    om = f", {len(oms)} OMs of {OM_SERVICE_ID}" if _om_ha(state) else ", OM" if oms else ""
    scm = f"{len(scms)} SCMs of {SCM_SERVICE_ID}" if _scm_ha(state) else "SCM"
    print(f"Starting {scm}{om} and {len(state.datanodes())} datanode(s) in {state.data_dir}")
    try:
        if _scm_ha(state):
            _bootstrap_scms(state, args.timeout)
        for daemon in state.daemons:
            supervisor.start(state, daemon.name)
        scm_service = SCM_SERVICE_ID if _scm_ha(state) else None
        _wait_for_service(state, scms, scm_ready, _scm_leader, scm_service, args.timeout, https)
        with _admin(state, tls) as admin:
            try:
                wait_until(
                    lambda: cluster_ready(admin, len(state.datanodes())),
                    args.timeout,
                    "safe-mode exit with open pipelines",
                    _check_alive(state),
                )
            except TimeoutError as e:
                raise TimeoutError(f"{e}{_space_hint(state, admin)}") from None
        om_service = OM_SERVICE_ID if _om_ha(state) else None
        _wait_for_service(state, oms, om_ready, _om_leader, om_service, args.timeout, https)
        if state.has("s3g"):
            admin_port = state.daemon("s3g").ports["admin"]
            wait_until(
                lambda: s3g_ready(admin_port, tls=https),
                args.timeout,
                "S3 gateway readiness",
                _check_alive(state),
            )
    except (TimeoutError, CLIError) as e:
        dumped = supervisor.dump_threads(state)
        supervisor.stop_all(state)
        stacks = f" (with the thread stacks of {', '.join(dumped)})" if dumped else ""
        raise CLIError(f"{e}; logs are in {Path(state.data_dir) / 'logs'}{stacks}") from None
    _print_endpoints(state, tls is not None)
    if args.background:
        return 0
    return _watch(state, tls)


def _om_ha(state: ClusterState) -> bool:
    """Whether the cluster runs an OM service (`--om-ha`) rather than one OM."""
    return any(d.name != "om" for d in state.oms())


def _om_leader(state: ClusterState, https: ssl.SSLContext | None) -> str | None:
    """The OM of the cluster's service that leads and executes calls now, if one does."""
    return raft_leader({d.name: d.ports["http"] for d in state.oms()}, https)


def _scm_ha(state: ClusterState) -> bool:
    """Whether the cluster runs an SCM service (`--scm-ha`) rather than one SCM."""
    return any(d.name != "scm" for d in state.scms())


def _scm_leader(state: ClusterState, https: ssl.SSLContext | None) -> str | None:
    """The SCM of the cluster's service that leads and executes calls now, if one does."""
    return raft_leader({d.name: d.ports["http"] for d in state.scms()}, https)


def _check_space(state: ClusterState) -> None:
    """Refuses, before anything starts, a cluster whose datanodes' disk cannot hold a container above
    the free-space floor (SCM would never open a pipeline); warns when it cannot hold one each."""
    try:
        disks = space.datanode_disks(state)
    except OSError as e:
        raise CLIError(f"cannot read the free space of the datanodes' directories: {e}") from None
    refusal = space.space_refusal(disks)
    if refusal is not None:
        raise CLIError(refusal)
    warning = space.space_warning(disks)
    if warning is not None:
        print(warning, file=sys.stderr)


def _space_hint(state: ClusterState, admin: ScmAdminClient) -> str:
    """What SCM's datanode list says about space when the cluster never got its pipelines."""
    try:
        short = space.nodes_without_room(admin.datanodes(), _conf(state))
    except ScmClientError:
        return ""
    if not short:
        return ""
    return (
        f": SCM reports datanodes without room for a container above their free-space floor "
        f"({', '.join(short)}); {space.HOW_TO_FIX}"
    )


def _init_scm(state: ClusterState) -> None:
    """`scm --init` on the lone or primordial SCM, minting a JOIN credential for each daemon of a secure
    cluster still without a certificate (the other SCMs of a service among them: `scm:NODE=FILE`)."""
    conf = _conf(state)
    joins = state.join_tokens(conf) if security_enabled(conf) else []
    init = [*state.scms()[0].command, "--init", *(f"--join-token={j}" for j in joins)]
    result = subprocess.run(init, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise CLIError(f"SCM init failed: {result.stderr.strip()}")


def _bootstrap_scms(state: ClusterState, timeout_s: float) -> None:
    """Starts the primordial SCM (`_init_scm` initialized it), then runs `scm --bootstrap` on the others
    side by side: each takes the cluster id the running SCM answers (Ozone's scmBootstrap), or finds it
    already has it (a restart)."""
    primordial, *others = state.scms()
    supervisor.start(state, primordial.name)
    port = primordial.ports["client"]
    wait_until(
        lambda: _listening(port), timeout_s, f"{primordial.name} listening", _check_alive(state, [primordial])
    )

    def bootstrap(daemon: Daemon) -> str | None:
        try:
            done = subprocess.run(
                [*daemon.command, "--bootstrap"],
                capture_output=True,
                text=True,
                check=False,
                timeout=timeout_s,
            )
        except subprocess.TimeoutExpired:
            return f"SCM {daemon.name} bootstrap did not end within {timeout_s:.0f} s"
        return None if done.returncode == 0 else f"SCM {daemon.name} bootstrap failed: {done.stderr.strip()}"

    with ThreadPoolExecutor(len(others)) as pool:
        failed = [why for why in pool.map(bootstrap, others) if why is not None]
    if failed:
        raise CLIError("; ".join(failed))


def _wait_for_service(
    state: ClusterState,
    daemons: list[Daemon],
    ready: Callable[..., bool],
    leader: Callable[[ClusterState, ssl.SSLContext | None], str | None],
    service: str | None,
    timeout_s: float,
    https: ssl.SSLContext | None,
) -> None:
    """Each daemon of the lone daemon or HA service (`service`, its id) ready on its web port, then a
    service's leader elected."""
    for daemon in daemons:
        port = daemon.ports["http"]
        wait_until(
            lambda port=port: ready(port, tls=https),
            timeout_s,
            f"{daemon.name} readiness" if service is not None else f"{daemon.name.upper()} readiness",
            _check_alive(state),
        )
    if service is not None:
        wait_until(
            lambda: leader(state, https) is not None, timeout_s, f"a leader of {service}", _check_alive(state)
        )


def _check_alive(state: ClusterState, daemons: list[Daemon] | None = None) -> Callable[[], None]:
    """A wait's check that every daemon started (or those of `daemons`) still runs."""

    def check() -> None:
        pids = {d.name: state.pids.get(d.name) for d in (state.daemons if daemons is None else daemons)}
        dead = [
            f"{name} ({supervisor.exit_status(pid)})"
            for name, pid in pids.items()
            if not supervisor.is_running(pid)
        ]
        if dead:
            raise CLIError(f"{', '.join(dead)} exited during start-up")

    return check


def _print_endpoints(state: ClusterState, tls: bool) -> None:
    """Every endpoint; on a secure cluster each is mutual TLS (https:// for the web ones)."""
    web = "https" if tls else "http"
    print("Cluster is ready." + ("  Every port is mutual TLS (client certificates required)." if tls else ""))
    if _scm_ha(state):
        print(f"  SCM service:         {SCM_SERVICE_ID}   (OM, datanodes and admin tools fail over)")
        for scm in state.scms():
            print(
                f"  {scm.name}: client (admin) {HOST}:{scm.ports['client']}"
                f"  block {HOST}:{scm.ports['block']}  datanode {HOST}:{scm.ports['datanode']}"
                f"  ratis {HOST}:{scm.ports['ratis']}"
                + (f"  security (CA) {HOST}:{scm.ports['security']}" if "security" in scm.ports else "")
                + f"  web UI {web}://{HOST}:{scm.ports['http']}/   (its role: /api/v1/ratis)"
            )
        leader = _scm_leader(state, _http_tls(_tls(state)))
        print(f"  SCM leader:          {leader or 'none now'}   (pyozone admin scm roles)")
    else:
        scm = state.daemon("scm")
        print(f"  SCM client (admin):  {HOST}:{scm.ports['client']}")
        print(f"  SCM datanode:        {HOST}:{scm.ports['datanode']}")
        if "block" in scm.ports:
            print(f"  SCM block (OM):      {HOST}:{scm.ports['block']}")
        if "security" in scm.ports:
            print(f"  SCM security (CA):   {HOST}:{scm.ports['security']}")
        print(f"  SCM web UI:          {web}://{HOST}:{scm.ports['http']}/   (readiness /ready)")
    if _om_ha(state):
        print(f"  OM service:          {OM_SERVICE_ID}   (ofs://{OM_SERVICE_ID}/...; clients fail over)")
        for om in state.oms():
            print(
                f"  {om.name}: client {HOST}:{om.ports['rpc']}  ratis {HOST}:{om.ports['ratis']}"
                f"  web UI {web}://{HOST}:{om.ports['http']}/   (its role: /api/v1/ratis)"
            )
        leader = _om_leader(state, _http_tls(_tls(state)))
        print(f"  OM leader:           {leader or 'none now'}   (pyozone admin om roles)")
    elif state.has("om"):
        om = state.daemon("om")
        print(f"  OM client:           {HOST}:{om.ports['rpc']}")
        print(f"  OM web UI:           {web}://{HOST}:{om.ports['http']}/   (readiness /ready)")
    if state.has("s3g"):
        s3g = state.daemon("s3g")
        print(f"  S3 gateway:          {web}://{HOST}:{s3g.ports['http']}   (region us-east-1, path-style)")
        print(f"  S3 gateway admin:    {web}://{HOST}:{s3g.ports['admin']}/prom   (readiness /ready)")
        access_id, secret = default_s3_secret(state)
        print(
            f"  S3 credentials:      export AWS_ACCESS_KEY_ID='{access_id}' AWS_SECRET_ACCESS_KEY='{secret}'"
        )
        print(f"                       (user {access_id}; another user's: pyozone s3 getsecret -u USER)")
    for d in state.datanodes():
        stream = f"  datastream {HOST}:{d.ports['datastream']}" if "datastream" in d.ports else ""
        print(
            f"  {d.name}: data {HOST}:{d.ports['ipc']}  ratis {HOST}:{d.ports['ratis']}{stream}"
            f"  replication {HOST}:{d.ports['replication']}  web UI {web}://{HOST}:{d.ports['http']}/"
        )
    print("  every web port:      /prom (Prometheus), /jmx, /conf, /stacks, /logLevel?log=NAME&level=LEVEL")
    print(f"  configuration:       --conf {state.conf_dir}   (or export OZONE_CONF_DIR={state.conf_dir})")
    print(f"  logs:                {Path(state.data_dir) / 'logs'}")
    if tls:
        _print_users(_conf(state))


def _print_users(conf: OzoneConfiguration) -> None:
    """Who commands act as, and how to act as someone else."""
    print(f"  you act as:          {conf.get('ozone.administrators')} (administrator), with the certificate")
    print(f"                       {conf.get('ozone.client.tls.cert.file')}")
    print("  another user:        pyozone admin cert issue-user bob --out DIR   then, for bob:")
    print(
        "                       export OZONE_CLIENT_CERT=DIR/certificate.crt OZONE_CLIENT_KEY=DIR/private.pem"
        " OZONE_CA_CERT=DIR/ca.crt"
    )


def default_s3_secret(state: ClusterState) -> tuple[str, str]:
    """The S3 key pair of the user running the cluster, made on the first `cluster up` and shown again
    on every later one (OM keeps it)."""
    conf = load_configuration(Path(state.conf_dir), {})

    async def fetch() -> tuple[str, str]:
        async with AsyncOzoneClient(conf) as client:
            return await client.get_s3_secret(login_user())

    return asyncio.run(fetch())


def _watch(state: ClusterState, tls: TlsStore | None) -> int:
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    interactive = sys.stdout.isatty()
    try:
        with _admin(state, tls) as admin:
            while not stop["now"]:
                if interactive:
                    print("\033[2J\033[H", end="")
                try:
                    print_status(admin, {})
                except Exception as e:  # SCM may be down (e.g. after `cluster kill scm`)
                    print(f"SCM not answering: {e}")
                _print_leaders(state, _http_tls(tls))
                print("\nCtrl-C stops the cluster.", flush=True)
                for _ in range(20 if interactive else 100):
                    if stop["now"]:
                        break
                    time.sleep(0.1)
    except KeyboardInterrupt:
        pass
    print("\nStopping the cluster ...")
    left = supervisor.stop_all(state)
    if left:
        raise CLIError(f"could not stop: {', '.join(left)}")
    print("Stopped.")
    return 0


def _print_leaders(state: ClusterState, https: ssl.SSLContext | None) -> None:
    """The leader of each HA service of the cluster."""
    if _scm_ha(state):
        print(f"SCM leader: {_scm_leader(state, https) or 'none now'}")
    if _om_ha(state):
        print(f"OM leader: {_om_leader(state, https) or 'none now'}")


def run_down(args: argparse.Namespace) -> int:
    state = _load(args)
    left = supervisor.stop_all(state)
    if left:
        raise CLIError(f"could not stop: {', '.join(left)}")
    print(f"Stopped the cluster in {state.data_dir}")
    return 0


def run_kill(args: argparse.Namespace) -> int:
    state = _load(args)
    try:
        state.daemon(args.daemon)
    except KeyError as e:
        raise CLIError(str(e.args[0])) from None
    if not supervisor.kill(state, args.daemon):
        raise CLIError(f"{args.daemon} is not running")
    print(f"Killed {args.daemon} (kill -9)")
    return 0


def run_start(args: argparse.Namespace) -> int:
    state = _load(args)
    try:
        state.daemon(args.daemon)
    except KeyError as e:
        raise CLIError(str(e.args[0])) from None
    if supervisor.is_running(state.pids.get(args.daemon)):
        print(f"{args.daemon} is already running (pid {state.pids[args.daemon]})")
        return 0
    pid = supervisor.start(state, args.daemon)
    # A daemon that cannot start (port taken, bad configuration, corrupt metadata, a used JOIN credential)
    # exits before it listens, which may take seconds on a loaded host: watch it until one of its ports
    # listens rather than report a start that did not happen.
    ports = list(state.daemon(args.daemon).ports.values())
    deadline = time.monotonic() + (START_WAIT_S if ports else START_CHECK_S)
    while time.monotonic() < deadline:
        status = supervisor.exit_status(pid)  # our child: waitpid tells how it ended
        if status != "running":
            log = state.daemon(args.daemon).log
            raise CLIError(f"{args.daemon} (pid {pid}) {status} right after starting; see {log}")
        if any(_listening(port) for port in ports):
            break
        time.sleep(0.1)
    print(f"Started {args.daemon} (pid {pid})")
    return 0


def _listening(port: int) -> bool:
    try:
        socket.create_connection((HOST, port), timeout=0.5).close()
    except OSError:
        return False
    return True


def run_status(args: argparse.Namespace) -> int:
    state = _load(args)
    for d in state.daemons:
        print(
            f"{d.name:6} {'running' if supervisor.is_running(state.pids.get(d.name)) else 'stopped':8} "
            f"pid {state.pids.get(d.name, '-')}"
        )
    _print_leaders(state, _http_tls(_tls(state)))
    with _admin(state, _tls(state)) as admin:
        print_status(admin, {})
    return 0
