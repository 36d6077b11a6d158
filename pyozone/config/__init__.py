"""Ozone configuration: defaults, ozone-site.xml files and -D overrides, typed and validated."""

from pyozone.config.configuration import ConfigError, OzoneConfiguration
from pyozone.config.keys import KEYS, KEYS_BY_NAME, ConfigKey, Kind
from pyozone.config.site import load_configuration, write_site_xml
from pyozone.config.validate import validate

__all__ = [
    "KEYS",
    "KEYS_BY_NAME",
    "ConfigError",
    "ConfigKey",
    "Kind",
    "OzoneConfiguration",
    "load_configuration",
    "validate",
    "write_site_xml",
]
