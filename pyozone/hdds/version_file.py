"""VERSION files, as every Ozone daemon keeps one (SCM, OM, each datanode volume): a Java properties file.

One format and one reader for all three. Properties are read as ISO-8859-1, as Java reads them, and
written in the order and comment style of Java's Properties.store; no escapes, since nothing pyozone or
Ozone writes there needs one.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path


def parse_properties(text: str) -> dict[str, str]:
    """`key=value` or `key:value` lines; `#` and `!` start comments."""
    props: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        match = re.search(r"[=:]", line)
        key, value = (line[: match.start()], line[match.end() :]) if match else (line, "")
        props[key.strip()] = value.strip()
    return props


def format_version_file(ctime_ms: int, fields: Mapping[str, object]) -> bytes:
    """The file's bytes: a creation-time comment, then `key=value` in the order given."""
    stamp = time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(ctime_ms / 1000))
    return "".join([f"#{stamp}\n", *(f"{k}={v}\n" for k, v in fields.items())]).encode("latin-1")


def read_version_file(
    path: Path, required: Iterable[str], error: Callable[[str], Exception]
) -> dict[str, str]:
    """The properties, every `required` one present and non-empty; otherwise `error(message)` is raised
    with a message naming the file and the field."""
    try:
        props = parse_properties(path.read_bytes().decode("latin-1"))
    except OSError as e:
        raise error(f"cannot read {path}: {e.strerror}") from None
    for name in required:
        if not props.get(name):
            raise error(f"corrupt VERSION file {path}: missing field {name}")
    return props
