"""EC reconstruction on the coordinator datanode (Ozone's ECReconstructionCoordinator): rebuilds the missing
replica indexes of an EC container from the surviving ones and writes them to the target datanodes.

`peers.py` talks to the other datanodes (sources and targets, this one included) over the xceiver RPC API
with the requests of pyozone/protocol/ec.py, `groups.py` lists the block groups the sources agree on,
`stripes.py` rebuilds one block group stripe by stripe, and `coordinator.py` runs a whole container: create
RECOVERING replicas, rebuild every block group, close them, or delete them all on any failure.
"""

from pyozone.datanode.ec.coordinator import ReconstructionError, reconstruct_container
from pyozone.datanode.ec.peers import Connect, Peer, PeerError, RpcPeers

__all__ = ["Connect", "Peer", "PeerError", "ReconstructionError", "RpcPeers", "reconstruct_container"]
