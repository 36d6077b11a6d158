"""The datanode: its storage (storage), data path (xceiver), pipeline log (ratis), replication, SCM's commands
and the daemon that runs them (daemon, scm_endpoint)."""
