"""Ozone configuration: defaults, ozone-site.xml files and -D overrides, typed and validated."""

from pyozone.config.configuration import ConfigError, OzoneConfiguration
from pyozone.config.keys import KEYS, KEYS_BY_NAME, ConfigKey, Kind

__all__ = ["KEYS", "KEYS_BY_NAME", "ConfigError", "ConfigKey", "Kind", "OzoneConfiguration"]
