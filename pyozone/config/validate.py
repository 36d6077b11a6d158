"""Cross-key and range rules Ozone enforces at startup; each rule is one row of `RULES`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pyozone.config.configuration import ConfigError, OzoneConfiguration
from pyozone.config.keys import CB, KEYS, Kind

RM = "hdds.scm.replication."

# (keys, predicate over their typed values, the rule in words). Fraction keys are range-checked by
# their Kind when parsed, so they have no row here.
Rule = tuple[tuple[str, ...], Callable[..., bool], str]

RULES: tuple[Rule, ...] = (
    *(((k.name,), lambda v: v >= 0, "must not be negative") for k in KEYS if k.kind is Kind.DURATION),
    (("ozone.scm.heartbeat.thread.interval",), lambda v: v > 0, "must be > 0"),
    (
        ("ozone.scm.stale.node.interval", "ozone.scm.dead.node.interval"),
        lambda s, d: s < d,
        "the stale interval must be less than the dead interval",
    ),
    (
        (RM + "event.timeout.datanode.offset", RM + "event.timeout"),
        lambda o, t: 0 <= o < t,
        "the datanode offset must be >= 0 and less than the event timeout",
    ),
    ((RM + "datanode.reconstruction.weight",), lambda v: v > 0, "must be > 0"),
    ((RM + "datanode.ops.limit",), lambda v: v >= 1, "must be >= 1"),
    (
        (RM + "datanode.replication.limit", RM + "datanode.reconstruction.weight"),
        lambda lim, w: lim >= w,
        "the replication limit must be >= the reconstruction weight",
    ),
    ((CB + "utilization.threshold",), lambda v: 0 <= v < 100, "must be a percentage from 0 to below 100"),
    ((CB + "datanodes.involved.max.percentage.per.iteration",), lambda v: 0 <= v <= 100, "must be 0 to 100"),
    ((CB + "iterations",), lambda v: v == -1 or v > 0, "must be > 0, or -1 to run until balanced"),
    ((CB + "size.moved.max.per.iteration",), lambda v: v > 0, "must be > 0"),
    (("hdds.scm.block.deletion.per-interval.max",), lambda v: v > 0, "must be > 0"),
    (("ozone.scm.block.size",), lambda v: v > 0, "must be > 0"),
    (("ozone.scm.container.size",), lambda v: v > 0, "must be > 0"),
    (
        ("ozone.scm.block.size", "ozone.scm.container.size"),
        lambda b, c: b <= c,
        "the block size must not exceed the container size",
    ),
    (("ozone.scm.pipeline.owner.container.count",), lambda v: v >= 1, "must be >= 1"),
    (("ozone.scm.datanode.pipeline.limit",), lambda v: v >= 0, "must be >= 0"),
    (("ozone.scm.pipeline.per.metadata.disk",), lambda v: v >= 1, "must be >= 1"),
    (("ozone.scm.ratis.pipeline.limit",), lambda v: v >= 0, "must be >= 0"),
    (("hdds.scm.safemode.min.datanode",), lambda v: v >= 0, "must be >= 0"),
    (("ozone.scm.sequence.id.batch.size",), lambda v: v >= 1, "must be >= 1"),
    (("hdds.scm.unknown-container.action",), lambda v: v in {"WARN", "DELETE"}, "must be WARN or DELETE"),
    (
        ("ozone.client.checksum.type",),
        lambda v: v in {"NONE", "CRC32", "CRC32C", "SHA256", "MD5"},
        "must be one of NONE, CRC32, CRC32C, SHA256, MD5",
    ),
)


def validate(conf: OzoneConfiguration, rules: Iterable[Rule] = RULES) -> None:
    """Raises one ConfigError listing every broken rule, so an operator fixes them in one pass. `rules`: a
    component's own, where its settings are built (the datanode's: datanode/settings.py).

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
    if problems:
        raise ConfigError("; ".join(problems))
