"""`pyozone sh`: Ozone's `ozone sh` volume, bucket and key commands against OM.

Addresses are Ozone's: /VOLUME, /VOLUME/BUCKET, /VOLUME/BUCKET/KEY (optionally o3://OM-HOST:PORT/...).
OM is found through ozone.om.address (--conf / -D), or --om. Output is JSON shaped like Ozone's.
ACLs are Ozone's text form (`addacl -a user:bob:rw /vol/bucket/key`, `setacl -al user:a:a,group:g:r`),
quotas Ozone's options (`setquota --space-quota 1GB --namespace-quota 100`, `clrquota --space-quota`).
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
from pathlib import Path

from pyozone.client import OzoneClient
from pyozone.client.json_views import bucket_dict, key_dict, replication_dict, volume_dict
from pyozone.client.progress import ProgressBar
from pyozone.common.cli_options import CLIError, load_configuration
from pyozone.common.output import print_json
from pyozone.config.units import parse_size_bytes
from pyozone.hdds.addresses import KeyAddress
from pyozone.hdds.ids import ReplicationConfig
from pyozone.hdds.security.acl import OzoneAcl, ResourceType, parse_acls
from pyozone.hdds.states import ReplicationType
from pyozone.protocol.acl import ObjectPath


def om_authority(text: str) -> str | None:
    """The OM address an `o3://HOST:PORT/...` path names (None: none, ozone.om.address)."""
    if not text.startswith("o3://"):
        return None
    return text[len("o3://") :].partition("/")[0] or None


def parse_path(text: str, depth: str) -> KeyAddress:
    """`[o3://HOST:PORT]/VOLUME[/BUCKET[/KEY]]`, `depth` ("volume", "bucket" or "key") deep: exactly that
    many parts (a key may contain slashes); its OM address is om_authority's."""
    rest = text
    if rest.startswith("o3://"):
        rest = "/" + rest[len("o3://") :].partition("/")[2]
    parts = rest.strip("/").split("/", 2) if rest.strip("/") else []
    wanted = {"volume": 1, "bucket": 2, "key": 3}[depth]
    shape = {"volume": "/VOLUME", "bucket": "/VOLUME/BUCKET", "key": "/VOLUME/BUCKET/KEY"}[depth]
    if len(parts) != wanted or any(not p for p in parts) or (depth == "key" and rest.endswith("/")):
        raise CLIError(f"{text!r} is not a {depth} address: expected {shape}")
    for kind, name in zip(("volume", "bucket", "key"), parts, strict=False):
        check_utf8(kind, name)
    return KeyAddress(*parts)


def check_utf8(kind: str, name: str) -> None:
    """Ozone names are UTF-8: bytes that are not (which Python hands over as surrogate escapes) are refused
    here, as OM would with INVALID_<KIND>_NAME, rather than failing deep inside the client."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raw = name.encode("utf-8", "surrogateescape")
        raise CLIError(f"INVALID_{kind.upper()}_NAME: {kind} name {raw!r} is not valid UTF-8") from None


# ---------------------------------------------------------------------- parser
def register(subparsers: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    sh = subparsers.add_parser("sh", parents=[parent], help="volumes, buckets and keys (Ozone's `ozone sh`)")
    groups = sh.add_subparsers(dest="sh_group", metavar="GROUP")
    groups.required = True

    def command(group: argparse._SubParsersAction, name: str, help_text: str, func, *paths: str):  # type: ignore[no-untyped-def]
        parser = group.add_parser(name, parents=[parent], help=help_text)
        for path in paths:
            parser.add_argument(path.lower(), metavar=path)
        parser.add_argument("--om", metavar="HOST:PORT", help="OM address (default: ozone.om.address)")
        parser.set_defaults(func=func, path_arg=paths[0].lower() if paths else None)
        return parser

    def listing(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("-p", "--prefix", default="", help="only names starting with this")
        parser.add_argument("-s", "--start", default="", help="only names after this one")
        parser.add_argument("-l", "--length", type=int, default=100, help="at most this many (default 100)")
        parser.add_argument("-a", "--all", action="store_true", help="list everything")

    def transfer(parser: argparse.ArgumentParser) -> None:
        shown = parser.add_mutually_exclusive_group()
        shown.add_argument("--progress", action="store_true", help="show a progress bar even if not a TTY")
        shown.add_argument("-q", "--quiet", action="store_true", help="no progress bar")

    volume = groups.add_parser("volume", parents=[parent], help="volumes").add_subparsers(
        dest="sh_command", metavar="COMMAND"
    )
    volume.required = True
    create = command(volume, "create", "create a volume", run_volume_create, "VOLUME")
    create.add_argument("-u", "--user", default="", help="owner (default: you)")
    create.add_argument("--space-quota", "--quota", dest="quota", default="", help="space quota, e.g. 10GB")
    create.add_argument("--namespace-quota", default="", help="at most this many buckets")
    command(volume, "info", "show a volume", run_volume_info, "VOLUME")
    listing(command(volume, "list", "list volumes", run_volume_list))
    volume.choices["list"].add_argument("root", nargs="?", default="/", metavar="/")
    command(volume, "delete", "delete an empty volume", run_volume_delete, "VOLUME")
    _acl_commands(volume, command, "VOLUME")
    _quota_commands(volume, command, "VOLUME", "buckets")

    bucket = groups.add_parser("bucket", parents=[parent], help="buckets").add_subparsers(
        dest="sh_command", metavar="COMMAND"
    )
    bucket.required = True
    create = command(bucket, "create", "create a bucket", run_bucket_create, "BUCKET")
    _replication_options(create)
    command(bucket, "info", "show a bucket", run_bucket_info, "BUCKET")
    listing(command(bucket, "list", "list the buckets of a volume", run_bucket_list, "VOLUME"))
    command(bucket, "delete", "delete an empty bucket", run_bucket_delete, "BUCKET")
    _acl_commands(bucket, command, "BUCKET")
    _quota_commands(bucket, command, "BUCKET", "keys")

    key = groups.add_parser("key", parents=[parent], help="keys").add_subparsers(
        dest="sh_command", metavar="COMMAND"
    )
    key.required = True
    put = command(key, "put", "write a local file (or - for stdin) as a key", run_key_put, "KEY", "FILE")
    _replication_options(put)
    put.add_argument(
        "--datastream",
        choices=("auto", "true", "false"),
        default="auto",
        help="write by pipeline V2 (true) or V1 (false); auto: V2 from ozone.fs.datastream.auto.threshold "
        "when ozone.fs.datastream.enabled",
    )
    transfer(put)
    get = command(key, "get", "read a key into a local file", run_key_get, "KEY", "FILE")
    get.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    transfer(get)
    command(key, "cat", "write a key to stdout", run_key_cat, "KEY")
    listing(command(key, "list", "list the keys of a bucket", run_key_list, "BUCKET"))
    listing(command(key, "ls", "list the keys of a bucket", run_key_list, "BUCKET"))
    command(key, "info", "show a key and where its blocks are", run_key_info, "KEY")
    command(key, "rename", "rename a key within its bucket", run_key_rename, "BUCKET", "FROM", "TO")
    command(key, "delete", "delete a key", run_key_delete, "KEY")
    command(key, "rm", "delete a key", run_key_delete, "KEY")
    _acl_commands(key, command, "KEY")


def _acl_commands(group: argparse._SubParsersAction, command, what: str) -> None:  # type: ignore[no-untyped-def]
    """Ozone's addacl, removeacl, setacl and getacl of a volume, bucket or key."""
    one = "an ACL, e.g. user:bob:rw, group:staff:r, world::r or user:bob:r[DEFAULT] (inherited by children)"
    add = command(group, "addacl", f"add rights to the {what.lower()}'s ACL", run_add_acl, what)
    add.add_argument("-a", "--acl", required=True, help=one)
    remove = command(group, "removeacl", f"take rights from the {what.lower()}'s ACL", run_remove_acl, what)
    remove.add_argument("-a", "--acl", required=True, help=one)
    replace = command(group, "setacl", f"replace the {what.lower()}'s ACL", run_set_acl, what)
    replace.add_argument(
        "-al", "--acls", required=True, help="comma-separated ACLs, e.g. user:a:a,group:g:rl"
    )
    command(group, "getacl", f"show the {what.lower()}'s ACL (JSON)", run_get_acl, what)


def _quota_commands(group: argparse._SubParsersAction, command, what: str, names: str) -> None:  # type: ignore[no-untyped-def]
    """Ozone's setquota and clrquota of a volume or bucket."""
    set_quota = command(group, "setquota", f"set the {what.lower()}'s quotas", run_set_quota, what)
    set_quota.add_argument("--space-quota", default="", help="replicated bytes at most, e.g. 10GB")
    set_quota.add_argument("--namespace-quota", default="", help=f"at most this many {names}")
    clear = command(group, "clrquota", f"clear the {what.lower()}'s quotas", run_clear_quota, what)
    clear.add_argument("--space-quota", action="store_true", help="clear the space quota")
    clear.add_argument("--namespace-quota", action="store_true", help="clear the namespace quota")


def _replication_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-t",
        "--type",
        default=None,
        type=str.upper,
        choices=REPLICATION_TYPES,
        help="replication type: RATIS or EC (default: the bucket's, or OM's for a bucket)",
    )
    parser.add_argument(
        "-r",
        "--replication",
        default=None,
        help="RATIS: ONE or THREE; EC: CODEC-DATA-PARITY-CHUNKSIZE, e.g. rs-3-2-1024k, rs-6-3-1024k, "
        "rs-10-4-1024k or xor-2-1-1024k",
    )


REPLICATION_TYPES = ("RATIS", "STAND_ALONE", "EC")
_RATIS_HINT = "use -r ONE, THREE or TYPE/FACTOR, or -t EC -r CODEC-DATA-PARITY-CHUNKk such as rs-3-2-1024k"
_EC_HINT = "EC takes -r CODEC-DATA-PARITY-CHUNKk such as rs-3-2-1024k, rs-6-3-1024k or rs-10-4-1024k"


def replication_arg(rtype: str | None, replication: str | None) -> ReplicationConfig | None:
    """The config `-t TYPE -r REPLICATION` name, as Ozone's shell takes them (None: neither given, OM's
    default applies). RATIS takes ONE/THREE (or 1/3); EC takes an EC name ("rs-3-2-1024k"). Without -t,
    an EC name means EC and anything else RATIS; -r TYPE/FACTOR names both. The CLI's one conversion:
    the client takes the ReplicationConfig."""
    if replication is None and rtype is None:
        return None
    shown = " ".join(f"{flag} {value}" for flag, value in (("-t", rtype), ("-r", replication)) if value)
    if rtype is None and _is_ec_name(replication):
        rtype = "EC"
    if rtype == "EC":
        if not replication:
            raise CLIError(f"{shown}: {_EC_HINT}")
        try:
            config = ReplicationConfig.parse(replication)
        except ValueError as e:
            raise CLIError(f"{shown}: {e}; {_EC_HINT}") from None
    elif _is_ec_name(replication):
        raise CLIError(f"{shown}: {replication} is not supported for {rtype} replication type; {_EC_HINT}")
    else:
        text = replication or "THREE"
        if "/" not in text:
            text = f"{rtype or 'RATIS'}/{text}"
        try:
            config = ReplicationConfig.parse(text)
        except ValueError as e:
            raise CLIError(f"{shown}: {e}; {_RATIS_HINT}") from None
    if rtype is not None and config.type.name != rtype:
        raise CLIError(f"{shown}: {replication} is not supported for {rtype} replication type")
    return config


def _is_ec_name(text: str | None) -> bool:
    try:
        return text is not None and ReplicationConfig.parse(text).type is ReplicationType.EC
    except ValueError:
        return False


def _replication_arg(args: argparse.Namespace) -> ReplicationConfig | None:
    return replication_arg(args.type, args.replication)


def _client(args: argparse.Namespace) -> OzoneClient:
    """A client of --om, else of the OM the command's (first) path names, else of ozone.om.address."""
    conf = load_configuration(args)
    path = getattr(args, args.path_arg) if args.path_arg else None
    return OzoneClient(conf, args.om or (om_authority(path) if path else None))


def _show_progress(args: argparse.Namespace) -> bool:
    return not args.quiet and (args.progress or sys.stderr.isatty())


def _limit(args: argparse.Namespace) -> int | None:
    if args.length <= 0 and not args.all:
        raise CLIError(f"--length must be positive, got {args.length}")
    return None if args.all else args.length


# ---------------------------------------------------------------------- volumes
def run_volume_create(args: argparse.Namespace) -> int:
    path = parse_path(args.volume, "volume")
    space = _space_quota(args.quota, "--space-quota")
    namespace = _namespace_quota(args.namespace_quota)
    with _client(args) as client:
        client.run(client.async_client.create_volume(path.volume, args.user, space, namespace))
    return 0


def _space_quota(text: str, flag: str) -> int:
    """A space quota as Ozone's shell takes it ("10GB", "1024"); "" is none."""
    if not text:
        return 0
    try:
        quota = parse_size_bytes(text)
    except ValueError as e:
        raise CLIError(f"{flag} {text!r}: {e}") from None
    if quota <= 0:
        raise CLIError(f"{flag} {text!r}: a quota must be positive, e.g. 10GB")
    return quota


def _namespace_quota(text: str) -> int:
    if not text:
        return 0
    if not text.isdigit() or int(text) <= 0:
        raise CLIError(f"--namespace-quota {text!r}: a namespace quota is a positive count, e.g. 100")
    return int(text)


def run_volume_info(args: argparse.Namespace) -> int:
    path = parse_path(args.volume, "volume")
    with _client(args) as client:
        print_json(volume_dict(client.run(client.async_client.volume_info(path.volume))))
    return 0


def run_volume_list(args: argparse.Namespace) -> int:
    if args.root.strip("/"):
        raise CLIError(f"{args.root!r}: volume list takes / (or nothing)")
    with _client(args) as client:
        volumes = client.list_volumes(args.prefix, args.start, _limit(args))
    print_json([volume_dict(v) for v in volumes])
    return 0


def run_volume_delete(args: argparse.Namespace) -> int:
    path = parse_path(args.volume, "volume")
    with _client(args) as client:
        client.delete_volume(path.volume)
    return 0


# ---------------------------------------------------------------------- buckets
def run_bucket_create(args: argparse.Namespace) -> int:
    path = parse_path(args.bucket, "bucket")
    replication = _replication_arg(args)
    with _client(args) as client:
        client.create_bucket(path.volume, path.bucket, replication)
    return 0


def run_bucket_info(args: argparse.Namespace) -> int:
    path = parse_path(args.bucket, "bucket")
    with _client(args) as client:
        print_json(bucket_dict(client.run(client.async_client.bucket_info(path.volume, path.bucket))))
    return 0


def run_bucket_list(args: argparse.Namespace) -> int:
    path = parse_path(args.volume, "volume")
    with _client(args) as client:
        buckets = client.list_buckets(path.volume, args.prefix, args.start, _limit(args))
    print_json([bucket_dict(b) for b in buckets])
    return 0


def run_bucket_delete(args: argparse.Namespace) -> int:
    path = parse_path(args.bucket, "bucket")
    with _client(args) as client:
        client.delete_bucket(path.volume, path.bucket)
    return 0


# ---------------------------------------------------------------------- keys
def run_key_put(args: argparse.Namespace) -> int:
    path = parse_path(args.key, "key")
    if args.file == "-":
        source, size = sys.stdin.buffer, 0
    else:
        source = Path(args.file)
        size = _readable_source(source)
    replication = _replication_arg(args)
    with (
        _client(args) as client,
        ProgressBar(size, f"put {path.key}", enabled=_show_progress(args)) as bar,
    ):
        datastream = None if args.datastream == "auto" else args.datastream == "true"
        client.put_key(path.volume, path.bucket, path.key, source, bar, replication, datastream)
    return 0


def run_key_get(args: argparse.Namespace) -> int:
    path = parse_path(args.key, "key")
    target = _download_target(Path(args.file), path.key, args.force)
    with _client(args) as client:
        info = client.key_info(path.volume, path.bucket, path.key)
        try:
            with ProgressBar(info.data_size, f"get {path.key}", enabled=_show_progress(args)) as bar:
                client.get_key(path.volume, path.bucket, path.key, target, bar)
        except OSError as e:
            if e.filename is None:
                raise
            raise CLIError(f"{target}: cannot write {e.filename}: {e.strerror}") from None
    return 0


def _readable_source(source: Path) -> int:
    """The size of a local file to upload (its byte count as a hint; 0 for a device or FIFO, which is read
    to its end like stdin, as Ozone reads /dev/null as an empty key); refuses what cannot be read."""
    try:
        st = source.stat()
    except FileNotFoundError:
        raise CLIError(f"{source}: no such file") from None
    except OSError as e:
        raise CLIError(f"{source}: cannot read: {e.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise CLIError(f"{source}: is a directory; key put uploads one file")
    if not os.access(source, os.R_OK):
        raise CLIError(f"{source}: cannot read: permission denied")
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


def _download_target(target: Path, key: str, force: bool) -> Path:
    """Where key get writes: FILE, or FILE/LAST-PART-OF-KEY when FILE is a directory. A key whose last
    part is `.` or `..` has no local name of its own (it would name the directory or its parent), and a
    missing parent directory is not created: both are refused before anything is read."""
    if target.is_dir():
        name = key.rsplit("/", 1)[-1]
        if name in (".", ".."):
            raise CLIError(
                f"key {key!r}: its last part {name!r} is not a local file name; give FILE as a file path"
            )
        target = target / name
    if target.is_dir():
        raise CLIError(f"{target}: is a directory")
    if not target.parent.is_dir():
        raise CLIError(f"{target}: directory {target.parent} does not exist")
    if target.exists() and not force:
        raise CLIError(f"{target} exists; download would overwrite it (use --force)")
    if target.exists() and not target.is_file():
        raise CLIError(f"{target}: is not a regular file; download writes a new file in its place")
    return target


def run_key_cat(args: argparse.Namespace) -> int:
    path = parse_path(args.key, "key")
    out = sys.stdout.buffer
    with _client(args) as client, client.read_key(path.volume, path.bucket, path.key) as reader:
        sys.stdout.flush()
        for piece in reader:
            out.write(piece)
        out.flush()
    return 0


def run_key_list(args: argparse.Namespace) -> int:
    path = parse_path(args.bucket, "bucket")
    with _client(args) as client:
        keys = client.list_keys(path.volume, path.bucket, args.prefix, args.start, _limit(args))
    print_json([key_dict(k) for k in keys])
    return 0


def run_key_info(args: argparse.Namespace) -> int:
    path = parse_path(args.key, "key")
    with _client(args) as client:
        print_json(key_dict(client.key_info(path.volume, path.bucket, path.key), locations=True))
    return 0


def run_key_rename(args: argparse.Namespace) -> int:
    path = parse_path(args.bucket, "bucket")
    for name in (args.__dict__["from"], args.to):
        if not name or name.startswith("/"):
            raise CLIError(f"{name!r}: give key names relative to the bucket")
        check_utf8("key", name)
    with _client(args) as client:
        client.rename_key(path.volume, path.bucket, args.__dict__["from"], args.to)
    return 0


def run_key_delete(args: argparse.Namespace) -> int:
    path = parse_path(args.key, "key")
    with _client(args) as client:
        client.delete_key(path.volume, path.bucket, path.key)
    return 0


# ---------------------------------------------------------------------- ACLs and quotas
def _object_path(args: argparse.Namespace) -> ObjectPath:
    """The object an ACL or quota command names (its one positional argument)."""
    resource = ResourceType[args.sh_group.upper()]
    path = parse_path(getattr(args, args.sh_group), args.sh_group)
    return ObjectPath(resource, path.volume, path.bucket, path.key)


def _acl_arg(text: str, flag: str) -> OzoneAcl:
    try:
        return OzoneAcl.parse(text)
    except ValueError as e:
        raise CLIError(f"{flag}: {e}") from None


def run_add_acl(args: argparse.Namespace) -> int:
    target = _object_path(args)
    acl = _acl_arg(args.acl, "--acl")
    with _client(args) as client:
        changed = client.run(client.async_client.add_acl(target, acl))
    print(f"ACL {acl} added to {target}" if changed else f"ACL {acl} already in {target}")
    return 0


def run_remove_acl(args: argparse.Namespace) -> int:
    target = _object_path(args)
    acl = _acl_arg(args.acl, "--acl")
    with _client(args) as client:
        changed = client.run(client.async_client.remove_acl(target, acl))
    print(f"ACL {acl} removed from {target}" if changed else f"ACL {acl} not in {target}")
    return 0


def run_set_acl(args: argparse.Namespace) -> int:
    target = _object_path(args)
    try:
        acls = parse_acls(args.acls)
    except ValueError as e:
        raise CLIError(f"--acls: {e}") from None
    with _client(args) as client:
        client.run(client.async_client.set_acl(target, acls))
    print(f"ACLs of {target} set to {','.join(map(str, acls))}")
    return 0


def run_get_acl(args: argparse.Namespace) -> int:
    target = _object_path(args)
    with _client(args) as client:
        acls = client.run(client.async_client.get_acl(target))
    print_json([acl.to_json() for acl in acls])
    return 0


def run_set_quota(args: argparse.Namespace) -> int:
    target = _object_path(args)
    space = _space_quota(args.space_quota, "--space-quota")
    namespace = _namespace_quota(args.namespace_quota)
    if not space and not namespace:
        raise CLIError("give --space-quota SIZE and/or --namespace-quota COUNT")
    with _client(args) as client:
        if target.resource is ResourceType.VOLUME:
            client.run(client.async_client.set_volume_quota(target.volume, space, namespace))
        else:
            client.run(client.async_client.set_bucket_quota(target.volume, target.bucket, space, namespace))
    return 0


def run_clear_quota(args: argparse.Namespace) -> int:
    target = _object_path(args)
    if not args.space_quota and not args.namespace_quota:
        raise CLIError("give --space-quota and/or --namespace-quota: which quota to clear")
    with _client(args) as client:
        if target.resource is ResourceType.VOLUME:
            client.run(
                client.async_client.clear_volume_quota(target.volume, args.space_quota, args.namespace_quota)
            )
        else:
            client.run(
                client.async_client.clear_bucket_quota(
                    target.volume, target.bucket, args.space_quota, args.namespace_quota
                )
            )
    return 0


__all__ = [
    "bucket_dict", "key_dict", "om_authority", "parse_path", "register", "replication_arg",
    "replication_dict", "volume_dict",
]  # fmt: skip
