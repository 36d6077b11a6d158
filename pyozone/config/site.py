"""Loading and writing ozone-site.xml, the Hadoop XML configuration format Ozone operators use."""

from __future__ import annotations

import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

from pyozone.config.configuration import ConfigError, OzoneConfiguration
from pyozone.config.keys import lookup, unknown_key_message
from pyozone.config.validate import validate

SITE_FILE = "ozone-site.xml"
# A DTD can declare entities that expand exponentially; a site file never needs one.
_DTD = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


def load_configuration(conf_dir: Path | None, overrides: Mapping[str, str]) -> OzoneConfiguration:
    """Defaults, then conf_dir/ozone-site.xml, then -D overrides; validated as a whole."""
    conf = OzoneConfiguration()
    if conf_dir is not None:
        if not conf_dir.is_dir():
            problem = "is not a directory" if conf_dir.exists() else "does not exist"
            raise ConfigError(f"configuration directory {conf_dir} {problem}")
        site = conf_dir / SITE_FILE
        if site.is_file():
            source = f"file:{site}"
            for name, value in read_site_xml(site).items():
                conf.set(name, value, source=source)
        elif os.path.lexists(site):
            # Something is there but is no file to read (a directory, a FIFO that would block, a broken
            # link): ignoring it would silently run on defaults.
            kind = (
                "a directory"
                if site.is_dir()
                else "a broken link"
                if not site.exists()
                else "not a regular file"
            )
            raise ConfigError(f"{site}: is {kind}; expected the configuration file")
    for name, value in overrides.items():
        # Unlike a site file, which may carry keys for other Ozone services, -D is typed by hand.
        if lookup(name) is None:
            raise ConfigError(f"-D {unknown_key_message(name)}")
        conf.set(name, value, source="override")
    validate(conf)
    return conf


def read_site_xml(path: Path) -> dict[str, str]:
    """The properties of a Hadoop configuration file, names and values trimmed; the last one wins."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read: {e}") from None
    if m := _DTD.search(text):
        line = text.count("\n", 0, m.start()) + 1
        raise ConfigError(f"{path}: line {line}: DOCTYPE and ENTITY declarations are not allowed")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise ConfigError(f"{path}: malformed XML: {e}") from None
    if root.tag != "configuration":
        raise ConfigError(f"{path}: root element is <{root.tag}>, expected <configuration>")
    values: dict[str, str] = {}
    # Elements other than <property> (such as Hadoop's <include>) are ignored, as Hadoop does.
    for index, prop in enumerate(root.findall("property"), start=1):
        name = (prop.findtext("name") or "").strip()
        if not name:
            raise ConfigError(f"{path}: property #{index} has no <name>")
        value = prop.findtext("value")
        if value is not None:  # Hadoop skips a property without <value>.
            values[name] = value.strip()
    return values


def write_site_xml(path: Path, values: Mapping[str, str]) -> None:
    """Writes `values` as ozone-site.xml; atomic, so a reader never sees half a file."""
    root = ET.Element("configuration")
    for name, value in values.items():
        prop = ET.SubElement(root, "property")
        ET.SubElement(prop, "name").text = name
        ET.SubElement(prop, "value").text = value
    ET.indent(root)
    text = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o644)  # mkstemp's 0600 would hide the file from other users' tools
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
