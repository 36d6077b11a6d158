"""The "pyozone" PySpark data source: Spark tables as Parquet objects in pyozone (ofs:// URLs)."""

from pyozone.analytics.datasource.commit import TableExistsError
from pyozone.analytics.datasource.location import TableLocation, TableLocationError, parse_table_url
from pyozone.analytics.datasource.options import SaveMode
from pyozone.analytics.datasource.read import TableNotFoundError
from pyozone.analytics.datasource.source import NAME, OzoneDataSource, register, save

__all__ = [
    "NAME",
    "OzoneDataSource",
    "SaveMode",
    "TableExistsError",
    "TableLocation",
    "TableLocationError",
    "TableNotFoundError",
    "parse_table_url",
    "register",
    "save",
]
