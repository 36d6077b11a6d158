"""The Raft core's I/O shell (issue 30): a member of a group on real disks and sockets.

`pyozone.ratis` decides (sans-IO); this package carries out its outputs: the log's segment files and the
member's term and vote on disk (Ratis's SegmentedRaftLog and RaftStorageMetadataFile), and the messages to
the other members over pyozone.rpc with mutual TLS (Ratis's GrpcService); and for the daemon that embeds it,
the RocksDB checkpoints a follower behind the purged log installs (db_checkpoint.py, checkpoint_sender.py).
"""
