"""`pyozone admin cert list|info|issue-user|join-token|revoke`: the certificates SCM's CA issued, a user's
new one, a new daemon's JOIN credential, and revocation.

Ozone's `ozone admin cert list|info` over SCM's security protocol (port 9961). That port is always mutual
TLS, so these commands present the caller's client certificate (ozone.client.tls.* or OZONE_CLIENT_CERT,
OZONE_CLIENT_KEY, OZONE_CA_CERT): an administrator's, as `pyozone scm --init` made one.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from cryptography import x509

from pyozone.client import OzoneClient
from pyozone.client.errors import OMException, OzoneClientError
from pyozone.common.cli_options import CLIError, given_path, load_configuration
from pyozone.common.fsutil import write_file
from pyozone.common.net import HostPort, parse_host_port
from pyozone.common.output import print_json
from pyozone.common.tls import TlsPaths, TlsStore
from pyozone.common.tls_mode import security_enabled
from pyozone.config import OzoneConfiguration
from pyozone.framework.scm_failover import ScmNodes
from pyozone.framework.scm_security import MAX_LIST_COUNT, SCMSecurityClient, scm_security_nodes
from pyozone.hdds.security import x509 as X
from pyozone.hdds.security.errors import SecurityError
from pyozone.hdds.security.x509 import CertRole, Identity
from pyozone.security.cert_client import certificate_hosts
from pyozone.security.join import JoinCredential

ROLES = {role.value: role for role in CertRole}
JOIN_ROLES = {role.value: role for role in (CertRole.OM, CertRole.DATANODE, CertRole.S3G)}
REVOCATION_REASONS = {
    "unspecified": 0,
    "keyCompromise": 1,
    "affiliationChanged": 3,
    "superseded": 4,
    "cessationOfOperation": 5,
    "certificateHold": 6,
    "privilegeWithdrawn": 9,
}
"""RFC 5280's CRLReason names and codes (what Ozone's revokeCertificates takes)."""
LIST_FORMAT = "{:<17} {:<30} {:<30} {:<60} {}"
"""Ozone's ListSubcommand columns: serial, valid from, expiry, subject, issuer."""

KEY_FILE, CERT_FILE, CA_FILE = "private.pem", "certificate.crt", "ca.crt"

T = TypeVar("T")


def register(groups, parent: argparse.ArgumentParser) -> None:
    cert = groups.add_parser(
        "cert", parents=[parent], help="certificates of SCM's CA: list, info, issue-user, join-token, revoke"
    )
    commands = cert.add_subparsers(dest="cert_command", metavar="COMMAND")
    commands.required = True

    listing = commands.add_parser("list", parents=[parent], help="list the valid certificates")
    listing.add_argument("-r", "--role", choices=sorted(ROLES), help="only certificates of this role")
    listing.add_argument("-s", "--start", type=int, default=0, metavar="SERIAL", help="first serial id")
    listing.add_argument("-c", "--count", type=int, default=20, help="at most this many (default 20)")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.add_argument(
        "-t", "--type", choices=("valid", "revoked"), default="valid", help="valid (default) or revoked ones"
    )
    _add_connection_option(listing)
    listing.set_defaults(func=run_list)

    info = commands.add_parser("info", parents=[parent], help="show one certificate")
    info.add_argument("serial", metavar="SERIAL", help="serial id: decimal as listed, or hex with 0x")
    _add_connection_option(info)
    info.set_defaults(func=run_info)

    issue = commands.add_parser(
        "issue-user", parents=[parent], help="make a user's key pair and have SCM's CA sign it"
    )
    issue.add_argument("name", metavar="NAME", help="the user the certificate names")
    issue.add_argument("--out", metavar="DIR", help="where to write the files (default: ./NAME)")
    _add_connection_option(issue)
    issue.set_defaults(func=run_issue_user)

    join = commands.add_parser(
        "join-token",
        parents=[parent],
        help="mint a JOIN credential: one certificate for one new daemon, within hdds.x509.join.token.expiry",
    )
    join.add_argument("--role", required=True, choices=sorted(JOIN_ROLES), help="the daemon's role")
    join.add_argument("--name", default="", metavar="HOST", help="only for a daemon on this host")
    join.add_argument(
        "--datanode",
        default="",
        metavar="UUID",
        help="bring back this known datanode (its data kept) once every certificate of it is revoked",
    )
    join.add_argument(
        "--node",
        default="",
        metavar="SERVICE/NODE",
        help="with --role om: only for this OM node of an HA service (each OM of a service needs its own)",
    )
    join.add_argument("--out", required=True, metavar="FILE", help="where to write it (mode 0600)")
    _add_connection_option(join)
    join.set_defaults(func=run_join_token)

    revoke = commands.add_parser(
        "revoke", parents=[parent], help="revoke certificates: every port refuses them, they renew nothing"
    )
    revoke.add_argument(
        "serials", nargs="*", metavar="SERIAL", help="serial ids: decimal as listed, or hex with 0x"
    )
    revoke.add_argument(
        "--name",
        dest="names",
        action="append",
        default=[],
        metavar="NAME",
        help="also every valid certificate of this common name (bob, om@host, dn@host: every OM of the "
        "host); repeatable",
    )
    revoke.add_argument(
        "--om-node",
        dest="om_nodes",
        action="append",
        default=[],
        metavar="SERVICE/NODE",
        help="also the valid certificate of this HA OM node alone (admin cert list shows each OM's node); "
        "repeatable",
    )
    revoke.add_argument(
        "--reason", choices=sorted(REVOCATION_REASONS), default="unspecified", help="RFC 5280 CRLReason"
    )
    _add_connection_option(revoke)
    revoke.set_defaults(func=run_revoke)


def _add_connection_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scm",
        metavar="HOST[:PORT]",
        help="SCM's security service (default: ozone.scm.security.service.address, else ozone.scm.names)",
    )


def connect(args: argparse.Namespace) -> tuple[OzoneConfiguration, SCMSecurityClient]:
    conf = load_configuration(args)
    if not security_enabled(conf):
        raise CLIError(
            "ozone.security.enabled is false: without it SCM runs no certificate authority and no security "
            "service, so there are no certificates to list or issue (a secure cluster: pyozone cluster up "
            "--secure)"
        )
    if args.scm:
        address: HostPort | ScmNodes = parse_host_port(
            args.scm, conf.get("ozone.scm.security.service.port"), "--scm"
        )
    else:
        address = scm_security_nodes(conf)
    try:
        paths = TlsPaths.for_client(conf)
    except ValueError as e:
        raise CLIError(str(e)) from None
    if paths is None:
        raise CLIError(
            "SCM's security service takes mutual TLS only: give a client certificate with "
            "ozone.client.tls.cert.file, ozone.client.tls.key.file and ozone.client.tls.ca.file "
            "(or OZONE_CLIENT_CERT, OZONE_CLIENT_KEY, OZONE_CA_CERT); `pyozone scm --init` made the "
            "administrator's under <scm metadata dir>/ca/users/<name>/"
        )
    store = TlsStore(paths)
    try:
        store.check()
    except (OSError, ValueError) as e:
        raise CLIError(f"the client certificate is unusable: {e}") from None
    return conf, SCMSecurityClient(address, store)


# ---------------------------------------------------------------------- list
def run_list(args: argparse.Namespace) -> int:
    if args.count < 1:
        raise CLIError(f"--count {args.count}: at least 1")
    if args.start < 0:
        raise CLIError(f"--start {args.start}: a serial id is not negative")
    _, client = connect(args)
    revoked = args.type == "revoked"
    with client:
        pems = _security(
            lambda: client.list_certificates(ROLES.get(args.role), args.start, args.count, revoked)
        )
    certs = [X.cert_from_pem(p) for p in pems]
    if len(certs) == args.count:
        print(
            f"The certificate list could be longer than the batch size: {args.count}. "
            'Please use the "-c" option to see more certificates.',
            file=sys.stderr,
        )
    header = f"Certificate list:(Type={args.type.upper()}, BatchSize={args.count}, CertCount={len(certs)})"
    if args.json:
        print(header, file=sys.stderr)
        print_json([_summary(c) for c in certs])
        return 0
    print(header)
    print(LIST_FORMAT.format("SerialNumber", "Valid From", "Expiry", "Subject", "Issuer").rstrip())
    for c in certs:
        s = _summary(c)
        print(
            LIST_FORMAT.format(
                s["serialNumber"], s["validFrom"], s["expiry"], _subject(s), s["issuerDN"]
            ).rstrip()
        )
    return 0


def _summary(cert: X.Certificate) -> dict[str, object]:
    """Ozone's JSON fields for a listed certificate, and pyozone's `node` when it names one (a datanode's
    UUID, an HA OM's SERVICE/NODE: what tells the daemons of one common name apart)."""
    node = X.node_of(cert)
    return {
        "serialNumber": cert.serial_number,
        "validFrom": _java_date(cert.not_valid_before_utc),
        "expiry": _java_date(cert.not_valid_after_utc),
        "subjectDN": _dn(cert.subject),
        "issuerDN": _dn(cert.issuer),
        **({"node": node} if node else {}),
    }


def _subject(summary: dict[str, object]) -> str:
    """The listing's subject column: the DN, and the node it names."""
    node = summary.get("node")
    return f"{summary['subjectDN']}{f' [{node}]' if node else ''}"


def _java_date(when: dt.datetime) -> str:
    """As Java's Date.toString prints it in UTC (Ozone's listing): "Tue Nov 26 09:21:59 UTC 2026"."""
    return when.astimezone(dt.UTC).strftime("%a %b %d %H:%M:%S UTC %Y")


def _dn(name: x509.Name) -> str:
    """The attributes in their order, as Java prints a DN: "CN=om@host, OU=<scm id>, O=<cluster id>"."""
    return ", ".join(f"{a.rfc4514_attribute_name}={a.value}" for a in name)


# ---------------------------------------------------------------------- info
def parse_serial(text: str) -> int:
    """A serial id as `admin cert list` prints it (decimal), or hex with 0x: hex without it (as openssl
    prints serials) is refused rather than read as another certificate's decimal serial."""
    digits, base = (text[2:], 16) if text[:2].lower() == "0x" else (text, 10)
    allowed = "0123456789abcdefABCDEF" if base == 16 else "0123456789"
    if not digits or any(c not in allowed for c in digits):
        raise CLIError(
            f"{text!r} is not a serial id: decimal, as `admin cert list` prints it, or hex with 0x"
        )
    return int(digits, base)


def run_info(args: argparse.Namespace) -> int:
    serial = parse_serial(args.serial)
    _, client = connect(args)
    with client:
        cert = X.cert_from_pem(_security(lambda: client.get_certificate(serial)))
    print(f"Certificate id: {serial}")
    print(f"  Subject: {_dn(cert.subject)}")
    print(f"  Issuer: {_dn(cert.issuer)}")
    print(f"  Serial number: {cert.serial_number}")
    print(f"  Valid from: {_java_date(cert.not_valid_before_utc)}")
    print(f"  Expiry: {_java_date(cert.not_valid_after_utc)}")
    print(f"  Role: {X.identity_of(cert).role.value}")
    if X.om_node(cert):
        print(f"  OM node: {X.om_node(cert)}")
    if X.datanode_id(cert):
        print(f"  Datanode: {X.datanode_id(cert)}")
    hosts = certificate_hosts(cert)
    if hosts:
        print(f"  Hosts: {', '.join(hosts)}")
    digest = cert.signature_hash_algorithm
    print(f"  Signature algorithm: {digest.name.upper() if digest else 'unknown'}withRSA")
    print(X.cert_to_pem(cert).decode().rstrip())
    return 0


# ---------------------------------------------------------------------- issue-user
def run_issue_user(args: argparse.Namespace) -> int:
    try:
        name = X.check_user_name(args.name)
    except ValueError as e:
        raise CLIError(str(e)) from None
    out = Path(given_path(args.out, "--out") or name).absolute()
    files = TlsPaths(out / KEY_FILE, out / CERT_FILE, out / CA_FILE)
    present = [str(p) for p in (files.key, files.cert, files.ca) if p.exists()]
    if present:
        raise CLIError(f"{', '.join(present)} already exist: remove them or choose another --out")
    conf, client = connect(args)
    key = X.generate_private_key(conf.get("hdds.key.len"))
    csr = X.csr_to_pem(X.build_csr(key, Identity(CertRole.USER, name)))
    with client:
        cert_pem, ca_pem = _security(lambda: client.sign_csr(csr))
    write_file(files.key, X.key_to_pem(key), private=True)
    write_file(files.ca, ca_pem)
    write_file(files.cert, cert_pem)
    cert = X.cert_from_pem(cert_pem)
    print(
        f"Certificate {cert.serial_number} of user {name}, valid until "
        f"{_java_date(cert.not_valid_after_utc)}, written to {out} (private key mode 0600). To act as {name}:"
    )
    print(f"export OZONE_CLIENT_CERT={files.cert}")
    print(f"export OZONE_CLIENT_KEY={files.key}")
    print(f"export OZONE_CA_CERT={files.ca}")
    return 0


# ---------------------------------------------------------------------- join-token
def run_join_token(args: argparse.Namespace) -> int:
    out = Path(args.out).absolute()
    if out.exists():
        raise CLIError(f"{out} already exists: remove it or choose another --out")
    role = JOIN_ROLES[args.role]
    if args.node:
        if role is not CertRole.OM:
            raise CLIError(f"--node {args.node}: only an OM's JOIN credential names an OM node (--role om)")
        try:
            X.check_om_node(args.node)
        except ValueError as e:
            raise CLIError(f"--node: {e}") from None
    conf, client = connect(args)
    key = X.generate_private_key(conf.get("hdds.key.len"))
    csr = X.csr_to_pem(X.build_csr(key, Identity(CertRole.JOIN, CertRole.JOIN.value, role.value)))
    with client:
        cert_pem, ca_pem = _security(
            lambda: client.create_join_token(role, args.name, csr, args.datanode, args.node)
        )
    JoinCredential(X.key_to_pem(key), cert_pem, ca_pem).write(out)
    cert = X.cert_from_pem(cert_pem)
    where = f" on {args.name}" if args.name else ""
    which = (
        f"datanode {args.datanode} again"
        if args.datanode
        else f"OM node {args.node}"
        if args.node
        else f"one new {role.name}"
    )
    print(
        f"JOIN credential {cert.serial_number} for {which}{where}, valid until "
        f"{_java_date(cert.not_valid_after_utc)}, written to {out} (mode 0600). The daemon names it in "
        "ozone.security.join.credentials.file; it obtains one certificate, once."
    )
    return 0


# ---------------------------------------------------------------------- revoke
def run_revoke(args: argparse.Namespace) -> int:
    serials = [parse_serial(s) for s in args.serials]
    if not serials and not args.names and not args.om_nodes:
        raise CLIError("name a SERIAL, --name NAME or --om-node SERVICE/NODE to revoke")
    for node in args.om_nodes:
        try:
            X.check_om_node(node)
        except ValueError as e:
            raise CLIError(f"--om-node: {e}") from None
    conf, client = connect(args)
    with client:
        om_names = any(n.startswith(f"{CertRole.OM.value}@") for n in args.names)
        oms = _valid_certificates(client, CertRole.OM) if args.om_nodes or om_names else []
        for node in args.om_nodes:
            held = [c.serial_number for c in oms if X.om_node(c) == node]
            if not held:
                raise CLIError(f"--om-node {node}: no valid certificate names OM node {node}")
            serials += held
        serials = list(dict.fromkeys(serials))
        by_name = {
            n: [_described(c) for c in oms if X.common_name(c) == n and X.om_node(c)] for n in args.names
        }
        crl = _security(
            lambda: client.revoke_certificates(serials, REVOCATION_REASONS[args.reason], args.names)
        )
        users = [n for n in args.names if "@" not in n]
        named = []
        for serial in serials:  # a revoked certificate is still read by its serial
            cert = X.cert_from_pem(_security(lambda s=serial: client.get_certificate(s)))
            identity = X.identity_of(cert)
            users += [identity.principal] if identity.role is CertRole.USER else []
            named.append(_described(cert))
    what = [*named, *(f"every certificate of {n}{_of_om_nodes(by_name[n])}" for n in args.names)]
    print(
        f"Revoked certificate(s) {', '.join(what)} ({args.reason}); CRL {crl} lists them, and their "
        "holders renew nothing until an administrator issues again. Every daemon refuses them once it "
        "fetched it (hdds.x509.crl.refresh.interval)."
    )
    return _revoke_s3_secrets(conf, list(dict.fromkeys(users)))


def _valid_certificates(client: SCMSecurityClient, role: CertRole) -> list[X.Certificate]:
    """Every valid certificate of `role`, batch after batch."""
    certs: list[X.Certificate] = []
    while True:
        start = certs[-1].serial_number + 1 if certs else 0
        batch = [X.cert_from_pem(p) for p in _security(lambda s=start: client.list_certificates(role, s))]
        certs += batch
        if len(batch) < MAX_LIST_COUNT:
            return certs


def _described(cert: X.Certificate) -> str:
    """ "SERIAL (COMMON NAME)", with the HA OM node it names: the OMs of one host share a common name."""
    node = X.om_node(cert)
    return f"{cert.serial_number} ({X.common_name(cert)}{f', OM node {node}' if node else ''})"


def _of_om_nodes(described: list[str]) -> str:
    """What a `--name om@HOST` revokes: every OM of the host, each its own certificate(s)."""
    if not described:
        return ""
    return f" ({', '.join(described)}: every HA OM of the host; --om-node SERVICE/NODE revokes one)"


def _revoke_s3_secrets(conf: OzoneConfiguration, users: list[str]) -> int:
    """A revoked user's S3 secret is revoked in OM too (Ozone's revokeS3Secret): the gateway would take
    it otherwise. 1 when OM could not be told (the certificates stay revoked)."""
    if not users:
        return 0
    failed = []
    with OzoneClient(conf) as om:
        for user in users:
            try:
                om.run(om.async_client.revoke_s3_secret(user))
                print(f"S3 secret of {user} revoked.")
            except OMException as e:
                if e.result != "S3_SECRET_NOT_FOUND":  # none to revoke
                    failed.append(f"{user}: {e}")
            except OzoneClientError as e:
                failed.append(f"{user}: {e}")
    for failure in failed:
        print(
            f"pyozone admin cert revoke: the S3 secret of {failure} was not revoked; run "
            "`pyozone s3 revokesecret -u USER -y` once OM answers",
            file=sys.stderr,
        )
    return 1 if failed else 0


def _security(call: Callable[[], T]) -> T:
    """Runs a call to SCM's security service; its refusal is one line for the operator."""
    try:
        return call()
    except SecurityError as e:
        raise CLIError(str(e)) from None
