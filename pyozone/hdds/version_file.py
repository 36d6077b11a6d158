"""Java properties files (VERSION files), without escapes: nothing pyozone or Ozone writes there needs one."""

from __future__ import annotations

import re


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
