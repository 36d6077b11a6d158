"""Cross-key and range rules Ozone enforces at startup; each rule is one row of a rules table.

The rows here are those of every process: durations; the heartbeat interval, which SCM and the datanodes
both read; the block and container sizes, which OM, SCM and the datanodes read. A component's own rows sit
next to the fields of its settings (pyozone/scm/settings.py, pyozone/datanode/settings.py) and run through
the same `broken_rules` where those settings are built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pyozone.config.configuration import ConfigError, OzoneConfiguration
from pyozone.config.keys import KEYS, Kind

# (keys, predicate over their typed values, the rule in words). Fraction keys are range-checked by
# their Kind when parsed, so they have no row here.
Rule = tuple[tuple[str, ...], Callable[..., bool], str]

RULES: tuple[Rule, ...] = (
    *(((k.name,), lambda v: v >= 0, "must not be negative") for k in KEYS if k.kind is Kind.DURATION),
    (("hdds.heartbeat.interval",), lambda v: v > 0, "must be > 0"),
    # sizes OM (blocks), SCM and the datanodes (containers) all read
    (("ozone.scm.block.size",), lambda v: v > 0, "must be > 0"),
    (("ozone.scm.container.size",), lambda v: v > 0, "must be > 0"),
    (
        ("ozone.scm.block.size", "ozone.scm.container.size"),
        lambda b, c: b <= c,
        "the block size must not exceed the container size",
    ),
)


def broken_rules(conf: OzoneConfiguration, rules: Iterable[Rule]) -> list[str]:
    """One line per broken rule, naming each key's raw value and source.

    A key that broke a rule is not checked by later rules, which would only repeat the same mistake.
    """
    problems: list[str] = []
    broken: set[str] = set()
    for names, predicate, rule in rules:
        values: list[Any] = [conf.get(name) for name in names]
        if broken.intersection(names) or None in values or predicate(*values):
            continue
        broken.update(names)
        shown = ", ".join(f"{name}={conf.get_raw(name)!r} ({conf.source(name)})" for name in names)
        problems.append(f"{shown}: {rule}")
    return problems


def raise_broken(problems: list[str]) -> None:
    """Raises one ConfigError listing every problem, so an operator fixes them in one pass."""
    if problems:
        raise ConfigError("; ".join(problems))


def validate(conf: OzoneConfiguration) -> None:
    """Checks `RULES`, every broken one in one ConfigError."""
    raise_broken(broken_rules(conf, RULES))
