"""The datanode's data path: requests of XceiverClientProtocolService dispatched to the storage layer."""

from pyozone.datanode.xceiver.dispatcher import Dispatcher
from pyozone.datanode.xceiver.service import XceiverService, add_xceiver_service, xceiver_server

__all__ = ["Dispatcher", "XceiverService", "add_xceiver_service", "xceiver_server"]
