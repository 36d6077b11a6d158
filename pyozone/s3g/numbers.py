"""Decimal numbers as the gateway reads them from headers, query parameters, forms and documents.

S3 reads ASCII digits alone. `str.isdigit()` is also true of superscripts, which `int()` refuses (a 500
InternalError), and of other scripts' digits, which `int()` reads (`?partNumber=%D9%A1`, an Arabic-Indic
one, was part 1); and `int()` refuses more than 4,300 digits (R31's F1, R30's P2). One reading for every
number the gateway is sent.
"""

from __future__ import annotations

MAX_DIGITS = 20
BEYOND = 10**MAX_DIGITS
"""What a number of more than MAX_DIGITS significant digits reads as: more than any bound the gateway
checks (a size, an offset, a part number, a count, seconds), so it is refused or capped as too large."""


def decimal(text: str) -> int | None:
    """`text` as a non-negative integer if it is ASCII digits alone (leading zeros allowed), else None."""
    if not text.isascii() or not text.isdigit():
        return None
    significant = text.lstrip("0")
    return BEYOND if len(significant) > MAX_DIGITS else int(significant or "0")
