"""The Ozone client: volumes, buckets and keys through OM and the datanodes' write pipeline.

`AsyncOzoneClient` is the asyncio implementation; `OzoneClient` is the same on a private loop thread for
synchronous callers. Point either at OM with `ozone.om.address` in the configuration or `om_address=`.
"""

from pyozone.client.client import AsyncOzoneClient
from pyozone.client.config import ClientConfig
from pyozone.client.errors import (
    BlockReadError,
    BlockWriteError,
    OMException,
    OMUnavailableError,
    OzoneClientError,
    SafeModeException,
)
from pyozone.client.key_input import KeyInputStream
from pyozone.client.key_output import KeyOutputStream
from pyozone.client.sync import KeyReader, KeyWriter, OzoneClient
from pyozone.hdds.locations import DatanodeRef, KeyLocation, PipelineRef
from pyozone.hdds.om_views import BucketInfo, KeyInfo, VolumeInfo

__all__ = [
    "AsyncOzoneClient",
    "BlockReadError",
    "BlockWriteError",
    "BucketInfo",
    "ClientConfig",
    "DatanodeRef",
    "KeyInfo",
    "KeyInputStream",
    "KeyLocation",
    "KeyOutputStream",
    "KeyReader",
    "KeyWriter",
    "OMException",
    "OMUnavailableError",
    "OzoneClient",
    "OzoneClientError",
    "PipelineRef",
    "SafeModeException",
    "VolumeInfo",
]
