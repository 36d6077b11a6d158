"""Where a table lives: an `ofs://OM_HOST[:PORT]/volume/bucket/table` URL, the key layout under it, and
the process's client to its OM.

A table is every key under `<table>/`. Data objects are the keys whose path below the table has no part
starting with `_` or `.` (the rule Spark, pyarrow and pandas apply to hidden files), so a job's
`_temporary/<job-id>/...` output and the `_SUCCESS` marker are never read as data.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyozone.client import OzoneClient
from pyozone.fs.clients import ClientSpec, shared_client
from pyozone.fs.paths import parse_ofs, split_url
from pyozone.hdds.addresses import Level

SCHEME = "ofs"
TEMPORARY = "_temporary"
SUCCESS = "_SUCCESS"


class TableLocationError(ValueError):
    """The path is not an `ofs://OM_HOST[:PORT]/volume/bucket/table` URL."""


@dataclass(frozen=True)
class TableLocation:
    om_address: str  # host[:port]; the client fills in OM's default port
    volume: str
    bucket: str
    table: str  # the key prefix, without a trailing slash

    @property
    def prefix(self) -> str:
        return f"{self.table}/"

    @property
    def success_key(self) -> str:
        return f"{self.prefix}{SUCCESS}"

    def job_prefix(self, job_id: str) -> str:
        """Where a job's tasks write before the job commit moves their objects into place."""
        return f"{self.prefix}{TEMPORARY}/{job_id}/"

    def is_data(self, key: str) -> bool:
        """A key of the table that readers read: none of its parts below the table is hidden."""
        relative = key.removeprefix(self.prefix)
        return key.startswith(self.prefix) and not any(p.startswith(("_", ".")) for p in relative.split("/"))

    def __str__(self) -> str:
        return f"{SCHEME}://{self.om_address}/{self.volume}/{self.bucket}/{self.table}"


def parse_table_url(url: str) -> TableLocation:
    """`ofs://OM_HOST[:PORT]/volume/bucket/table[/...]` -> TableLocation; the table may be nested."""
    authority, path = split_url(url, SCHEME)
    if not url.startswith(f"{SCHEME}://") or not authority:
        raise TableLocationError(f"{url!r} is not an {SCHEME}://OM_HOST[:PORT]/volume/bucket/table URL")
    if "?" in url or "#" in url:
        raise TableLocationError(f"{url!r}: a table URL has no query or fragment")
    parsed = parse_ofs(path)
    if parsed.level is not Level.KEY:
        raise TableLocationError(f"{url!r} names no table: expected {SCHEME}://OM_HOST/volume/bucket/table")
    return TableLocation(authority, parsed.volume, parsed.bucket, parsed.key)


def client_for(om_address: str) -> OzoneClient:
    """This process's client to the OM at `om_address`: one per Python worker, reused by its tasks, closed
    before a fork and at exit (pyozone.fs.clients)."""
    return shared_client(ClientSpec.of(om_address, None, None))
