"""The hdds kernel: the types every component shares, and no component of its own.

Ids and states, DatanodeDetails, Pipeline, ContainerInfo and replicas, heartbeat messages and reports, one
frozen dataclass per SCM command, the exclude list, checksums, protocol limits and errors, the key-value
store interface, VERSION files, and the rules two sides must agree on (replication_limits). It imports
only pyozone.config; SCM, OM, the datanode, the client and analytics are peers above it
(docs/architecture.md).
"""
