"""The datanode: storage layer (pyozone.datanode.storage) and, later, the daemon."""
