"""`pyozone s3`: a user's S3 key pair in OM (Ozone's `ozone s3 getsecret` and `ozone s3 revokesecret`).

The access id is the user name; USER defaults to the OS user, as Ozone's defaults to the current (Kerberos)
user. Output is Ozone's, so `eval $(pyozone s3 getsecret -e)` sets the variables the AWS tools read.
"""

from __future__ import annotations

import argparse
import sys

from pyozone.client import OzoneClient
from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.common.tls_mode import client_tls
from pyozone.config import ConfigError
from pyozone.hdds.security.users import login_user
from pyozone.hdds.security.x509 import cert_from_pem, identity_of


def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    s3 = subparsers.add_parser("s3", parents=[parent], help="S3 secrets (Ozone's `ozone s3`)")
    commands = s3.add_subparsers(dest="s3_command", metavar="COMMAND")
    commands.required = True

    get = commands.add_parser(
        "getsecret", aliases=["get-secret"], parents=[parent], help="create (or show) a user's S3 secret"
    )
    _common(get)
    get.add_argument(
        "-e",
        dest="export",
        action="store_true",
        help="print the variables with an 'export' prefix, for eval $(pyozone s3 getsecret -e)",
    )
    get.set_defaults(func=run_getsecret)

    revoke = commands.add_parser("revokesecret", parents=[parent], help="revoke a user's S3 secret")
    _common(revoke)
    revoke.add_argument("-y", dest="yes", action="store_true", help="do not ask for confirmation")
    revoke.set_defaults(func=run_revokesecret)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-u", dest="user", default=None, help="the user (access id); default: you")
    parser.add_argument("--om", metavar="HOST:PORT", help="OM address (default: ozone.om.address)")


def _user(args: argparse.Namespace) -> str:
    """-u, else who the client is to OM: its certificate's user over TLS, else the login user. An empty
    or blank -u is refused: taking it for "you" would hand out the caller's own key pair."""
    if args.user is not None:
        if not args.user.strip():
            raise CLIError(f"-u {args.user!r}: an empty or blank user name")
        return args.user
    try:
        tls = client_tls(load_configuration(args))
    except ConfigError as e:
        raise CLIError(str(e)) from None
    if tls is not None:
        return identity_of(cert_from_pem(tls.material().cert_pem)).principal
    try:
        return login_user()
    except Exception:  # no login name and no $USER: nothing to default to
        raise CLIError("cannot tell the current user; give one with -u USER") from None


def _client(args: argparse.Namespace) -> OzoneClient:
    return OzoneClient(load_configuration(args), args.om)


def run_getsecret(args: argparse.Namespace) -> int:
    user = _user(args)
    with _client(args) as client:
        access_id, secret = client.run(client.async_client.get_s3_secret(user))
    if args.export:
        print(f"export AWS_ACCESS_KEY_ID='{access_id}'")
        print(f"export AWS_SECRET_ACCESS_KEY='{secret}'")
    else:
        print(f"awsAccessKey={access_id}")
        print(f"awsSecret={secret}")
    return 0


def run_revokesecret(args: argparse.Namespace) -> int:
    user = _user(args)
    if not args.yes:
        print(f"Enter 'y' to confirm S3 secret revocation for '{user}': ", end="", flush=True)
        answer = sys.stdin.readline().strip().lower()
        if answer != "y":
            print("Operation cancelled.")
            return 0
    with _client(args) as client:
        client.run(client.async_client.revoke_s3_secret(user))
    print("S3 secret revoked.")
    return 0
