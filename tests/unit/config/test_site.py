"""Loading ozone-site.xml with -D overrides, and writing it back."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from pyozone.config import ConfigError, load_configuration, write_site_xml
from pyozone.config.site import read_site_xml

SiteDir = Callable[[str], Path]
STALE = "ozone.scm.stale.node.interval"


def prop(name: str, value: str) -> str:
    return f"<property><name>{name}</name><value>{value}</value></property>"


def test_defaults_only() -> None:
    conf = load_configuration(None, {})
    assert (conf.get(STALE), conf.source(STALE)) == (300_000, "default")


def test_file_then_override_with_sources(site_dir: SiteDir) -> None:
    d = site_dir(prop(STALE, " 2m ") + prop("ozone.scm.block.size", "128MB"))
    conf = load_configuration(d, {"ozone.scm.block.size": "64MB"})
    assert (conf.get_raw(STALE), conf.get(STALE)) == ("2m", 120_000)
    assert conf.source(STALE) == f"file:{d / 'ozone-site.xml'}"
    assert (conf.get("ozone.scm.block.size"), conf.source("ozone.scm.block.size")) == (64 << 20, "override")
    assert conf.source("ozone.scm.dead.node.interval") == "default"


def test_hadoop_extras_are_ignored_and_names_trimmed(site_dir: SiteDir) -> None:
    body = (
        "<!-- a comment -->"
        f"<property><name>\n  {STALE}\n</name><value>3m</value><final>true</final>"
        "<description>why</description><source>ozone-default.xml</source></property>"
        "<property><name>ozone.om.address</name></property>"  # no <value>: skipped, as Hadoop does
    )
    assert read_site_xml(site_dir(body) / "ozone-site.xml") == {STALE: "3m"}


def test_unknown_file_key_kept_as_text(site_dir: SiteDir) -> None:
    conf = load_configuration(site_dir(prop("ozone.om.address", "om1:9862")), {})
    assert conf.get("ozone.om.address") == "om1:9862"
    assert "ozone.om.address" in conf.names()


def test_unknown_override_rejected_with_suggestion() -> None:
    with pytest.raises(ConfigError, match=r"-D ozone\.scm\.stale\.node\.intervl.*did you mean " + STALE):
        load_configuration(None, {"ozone.scm.stale.node.intervl": "1m"})


def test_ill_typed_file_value_names_key_and_file(site_dir: SiteDir) -> None:
    d = site_dir(prop("ozone.scm.block.size", "lots"))
    with pytest.raises(ConfigError) as e:
        load_configuration(d, {})
    assert "ozone.scm.block.size" in str(e.value)
    assert "'lots'" in str(e.value)
    assert str(d / "ozone-site.xml") in str(e.value)


def test_ill_typed_override_names_source() -> None:
    with pytest.raises(ConfigError, match=r"ozone\.scm\.block\.size: invalid value 'lots' from override"):
        load_configuration(None, {"ozone.scm.block.size": "lots"})


def test_missing_conf_dir_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nope does not exist"):
        load_configuration(tmp_path / "nope", {})


def test_conf_dir_without_site_file_is_fine(tmp_path: Path) -> None:
    assert load_configuration(tmp_path, {}).source(STALE) == "default"


def test_result_is_validated() -> None:
    with pytest.raises(ConfigError, match=f"{STALE}='-1m' \\(override\\): must not be negative"):
        load_configuration(None, {STALE: "-1m"})


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("<configuration><property>", "malformed XML: .*line 1"),
        ("<configuration>\n<property><name>a</value></property></configuration>", "malformed XML: .*line 2"),
        ("<conf><property><name>a</name><value>b</value></property></conf>", "root element is <conf>"),
        ("<configuration><property><value>b</value></property></configuration>", "property #1 has no <name>"),
        ("<configuration><property><name> </name><value>b</value></property></configuration>", "no <name>"),
        ('<?xml version="1.0"?>\n<!DOCTYPE c [<!ENTITY a "aaaa">]><configuration/>', "line 2: DOCTYPE"),
    ],
)
def test_bad_files_rejected_in_one_line(tmp_path: Path, text: str, problem: str) -> None:
    (tmp_path / "ozone-site.xml").write_text(text)
    with pytest.raises(ConfigError, match=problem) as e:
        load_configuration(tmp_path, {})
    assert str(tmp_path / "ozone-site.xml") in str(e.value)
    assert "\n" not in str(e.value)


def test_write_site_xml_round_trip(tmp_path: Path) -> None:
    values = {STALE: "90s", "ozone.metadata.dirs": "/data/meta", "odd.key": 'a<b & "c"'}
    path = tmp_path / "ozone-site.xml"
    path.write_text("old")
    write_site_xml(path, values)
    assert read_site_xml(path) == values
    assert path.read_text().startswith('<?xml version="1.0" encoding="UTF-8"?>\n<configuration>')
    assert [p.name for p in tmp_path.iterdir()] == ["ozone-site.xml"], "no temp file left behind"
    conf = load_configuration(tmp_path, {})
    assert (conf.get(STALE), conf.source(STALE)) == (90_000, f"file:{path}")


@pytest.mark.parametrize("kind", ["fifo", "directory", "broken link"])
def test_a_site_file_that_cannot_be_read_as_one_is_an_error(tmp_path: Path, kind: str) -> None:
    """Something named ozone-site.xml that is no regular file was silently skipped (running on defaults);
    a FIFO would even block a reader. It is an error naming the file."""
    site = tmp_path / "ozone-site.xml"
    if kind == "fifo":
        os.mkfifo(site)
    elif kind == "directory":
        site.mkdir()
    else:
        site.symlink_to(tmp_path / "gone.xml")
    with pytest.raises(ConfigError, match=r"ozone-site\.xml: is "):
        load_configuration(tmp_path, {})


def test_an_ha_key_with_its_service_and_node_suffixes_is_a_known_override() -> None:
    conf = load_configuration(
        None, {"ozone.om.address.omservice.om1": "host1", "ozone.om.nodes.omservice": "om1"}
    )
    assert conf.get("ozone.om.address.omservice.om1") == "host1"
    for name in ("ozone.om.address.omservice", "ozone.om.nodes.a.b", "ozone.om.adress.omservice.om1"):
        with pytest.raises(ConfigError, match="not a configuration key pyozone knows"):
            load_configuration(None, {name: "x"})
