"""The key table against Ozone's defaults (ozone-default.xml, ScmConfigKeys), and typed parsing of every
Kind."""

from __future__ import annotations

import pytest

from pyozone.config import KEYS, KEYS_BY_NAME, ConfigError, Kind, OzoneConfiguration
from pyozone.config.keys import unknown_key_message

RM = "hdds.scm.replication."
MIN, GB, MB = 60_000, 1 << 30, 1 << 20


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("hdds.heartbeat.interval", 30_000),
        ("ozone.scm.heartbeat.thread.interval", 3_000),
        ("ozone.scm.stale.node.interval", 5 * MIN),
        ("ozone.scm.dead.node.interval", 10 * MIN),
        ("hdds.container.report.interval", 60 * MIN),
        ("hdds.datanode.replication.outofservice.limit.factor", 2.0),
        ("ozone.scm.pipeline.destroy.timeout", 66_000),
        ("ozone.scm.pipeline.creation.interval", 120_000),
        ("ozone.scm.container.size", 5 * GB),
        ("ozone.scm.block.size", 256 * MB),
        ("ozone.scm.datanode.ratis.volume.free-space.min", GB),
        ("ozone.scm.datanode.pipeline.limit", 2),
        ("ozone.scm.pipeline.per.metadata.disk", 2),
        ("ozone.scm.ratis.pipeline.limit", 0),
        ("ozone.scm.pipeline.owner.container.count", 3),
        ("ozone.scm.datanode.disallow.same.peers", False),
        ("hdds.scm.safemode.enabled", True),
        ("hdds.scm.safemode.min.datanode", 3),
        ("hdds.scm.safemode.threshold.pct", 0.99),
        ("hdds.scm.safemode.healthy.pipeline.pct", 0.10),
        ("hdds.scm.safemode.atleast.one.node.reported.pipeline.pct", 0.90),
        ("hdds.scm.wait.time.after.safemode.exit", 5 * MIN),
        (RM + "thread.interval", 300_000),
        (RM + "event.timeout", 12 * MIN),
        (RM + "event.timeout.datanode.offset", 6 * MIN),
        (RM + "maintenance.replica.minimum", 2),
        (RM + "datanode.replication.limit", 20),
        (RM + "datanode.reconstruction.weight", 3),
        (RM + "datanode.delete.container.limit", 40),
        (RM + "inflight.limit.factor", 0.75),
        ("hdds.scm.block.deletion.per-interval.max", 500_000),
        ("ozone.scm.ha.ratis.log.appender.queue.byte-limit", 32 * MB),
        ("ozone.client.read.retry.interval", 1_000),
        ("ozone.client.exclude.nodes.expiry.time", 600_000),
        ("ozone.client.bytes.per.checksum", 16 << 10),
        ("ozone.client.checksum.type", "CRC32"),
        ("ozone.metadata.dirs", None),
    ],
)
def test_defaults_match_ozone_default_xml(name: str, value: object) -> None:
    assert OzoneConfiguration().get(name) == value


def test_every_default_parses() -> None:
    conf = OzoneConfiguration()
    for key in KEYS:
        conf.get(key.name)
    assert len(KEYS_BY_NAME) == len(KEYS), "duplicate key names"


@pytest.mark.parametrize(
    ("name", "kind", "raw", "value"),
    [
        ("ozone.scm.stale.node.interval", Kind.DURATION, "90s", 90_000),
        ("ozone.scm.block.size", Kind.SIZE, "128MB", 128 * MB),
        ("ozone.scm.datanode.pipeline.limit", Kind.INT, " 4 ", 4),
        ("ozone.scm.ec.pipeline.per.volume.factor", Kind.FLOAT, "1.5", 1.5),
        ("hdds.scm.safemode.threshold.pct", Kind.FRACTION, "1", 1.0),
        ("hdds.scm.safemode.enabled", Kind.BOOL, "FALSE", False),
        ("ozone.replication.type", Kind.STRING, " EC ", "EC"),
    ],
)
def test_every_kind_parses(name: str, kind: Kind, raw: str, value: object) -> None:
    assert KEYS_BY_NAME[name].kind is kind
    assert OzoneConfiguration({name: raw}).get(name) == value


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("ozone.scm.stale.node.interval", "soon"),
        ("ozone.scm.block.size", "big"),
        ("ozone.scm.datanode.pipeline.limit", "2.5"),
        ("ozone.scm.ec.pipeline.per.volume.factor", "inf"),
        ("hdds.scm.safemode.threshold.pct", "1.01"),
        ("hdds.scm.safemode.healthy.pipeline.pct", "-0.1"),
        ("hdds.scm.safemode.atleast.one.node.reported.pipeline.pct", "nan"),
        (RM + "inflight.limit.factor", "2"),
        ("hdds.scm.safemode.enabled", "maybe"),
    ],
)
def test_ill_typed_value_names_key_value_type_and_source(name: str, raw: str) -> None:
    with pytest.raises(ConfigError) as e:
        OzoneConfiguration().set(name, raw, source="file:/etc/ozone/ozone-site.xml")
    message = str(e.value)
    assert name in message
    assert repr(raw) in message
    assert KEYS_BY_NAME[name].kind.value in message
    assert "file:/etc/ozone/ozone-site.xml" in message


def test_sources_and_copy() -> None:
    conf = OzoneConfiguration({"ozone.scm.block.size": "64MB"})
    other = conf.copy()
    other.set("ozone.scm.block.size", "32MB", source="file:x")
    assert (conf.get("ozone.scm.block.size"), conf.source("ozone.scm.block.size")) == (64 * MB, "override")
    assert (other.get("ozone.scm.block.size"), other.source("ozone.scm.block.size")) == (32 * MB, "file:x")
    assert conf.source("ozone.metadata.dirs") == "unset"


def test_unknown_key_suggests_the_closest() -> None:
    assert "did you mean ozone.scm.dead.node.interval?" in unknown_key_message("ozone.scm.dead.node.intrval")
    assert "did you mean" not in unknown_key_message("completely.different")
    with pytest.raises(ConfigError, match="not a configuration key"):
        OzoneConfiguration().get("no.such.key")
