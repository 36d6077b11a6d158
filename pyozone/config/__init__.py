"""Ozone configuration: defaults, ozone-site.xml files and -D overrides, typed and validated."""

from pyozone.config.configuration import ConfigError, OzoneConfiguration
from pyozone.config.keys import KEYS, KEYS_BY_NAME, ConfigKey, Kind
from pyozone.config.site import load_configuration, write_site_xml
from pyozone.config.validate import out_of_service_factor, validate

__all__ = [
    "KEYS",
    "KEYS_BY_NAME",
    "ConfigError",
    "ConfigKey",
    "Kind",
    "OzoneConfiguration",
    "load_configuration",
    "out_of_service_factor",
    "validate",
    "write_site_xml",
]
