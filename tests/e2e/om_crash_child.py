"""`freon omkg`'s load on one bucket (generate_om_keys: threads creating and committing empty keys) until
killed or MAX_SECONDS pass, saying what OM was asked and what it answered.

Run by test_crash_om.py as its own process; the test SIGKILLs OM, then this process. Output, one line per
event, each written whole with one write(2) before the next step starts:
  `commit KEY`          before KEY's commitKey is sent: no other key may ever show in a listing;
  `ack KEY OBJECT_ID`   once OM answered the commit: the key must survive the crash.

Usage: om_crash_child.py CONF_DIR VOLUME PREFIX THREADS, then the bucket's name on stdin: the test starts
the child early (its interpreter starts while OM restarts) and names the bucket once it exists.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pyozone.client import OzoneClient
from pyozone.config.site import load_configuration
from pyozone.freon.keys import FreonOptions
from pyozone.freon.om_keys import generate_om_keys
from pyozone.hdds.ids import RATIS_ONE

MAX_SECONDS = 120.0
REPLICATION = RATIS_ONE  # one datanode


def emit(line: str) -> None:
    """One whole line in one write: lines of several threads never interleave (shorter than PIPE_BUF)."""
    os.write(sys.stdout.fileno(), f"{line}\n".encode())


def main(argv: list[str]) -> int:
    conf_dir, volume, prefix, threads = argv
    with OzoneClient(load_configuration(Path(conf_dir), {})) as client:
        bucket = sys.stdin.readline().strip()
        if not bucket:
            return 0
        options = FreonOptions(
            volume=volume, bucket=bucket, prefix=prefix, number=None, threads=int(threads),
            replication=REPLICATION, duration_s=MAX_SECONDS,
        )  # fmt: skip
        generate_om_keys(
            client,
            options,
            acknowledged=lambda key, oid: emit(f"ack {key} {oid}"),
            committing=lambda key: emit(f"commit {key}"),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
